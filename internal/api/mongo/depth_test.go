package mongo

import (
	"encoding/binary"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// nested returns a document nesting depth levels, itself included:
// {a: {a: ... {}}}, built without recursion.
func nested(depth int) []byte {
	const wrap = 1 + 2 + 4 + 1 // type, key "a", length, terminating zero
	b := make([]byte, 0, 5+(depth-1)*wrap)
	n := 5 + (depth-1)*wrap
	for range depth - 1 {
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
		b = append(b, 0x03, 'a', 0)
		n -= wrap
	}
	b = append(b, 5, 0, 0, 0, 0)
	for range depth - 1 {
		b = append(b, 0)
	}
	return b
}

// deepCommand is {name: 1, $db: "d", x: nested(depth - 1)}: depth levels
// in all.
func deepCommand(t testing.TB, name string, depth int) []byte {
	return mustMarshal(t, bson.D{{Key: name, Value: 1}, {Key: "$db", Value: "d"}, {Key: "x", Value: bson.Raw(nested(depth - 1))}})
}

func TestCheckDepth(t *testing.T) {
	f := func(doc []byte, max int, want error) {
		t.Helper()
		if err := checkDepth(doc, max); err != want {
			t.Fatalf("checkDepth of %d bytes, max %d: %v, want %v", len(doc), max, err, want)
		}
	}
	f(nested(1), 1, nil)
	f(nested(200), 200, nil)
	f(nested(201), 200, errTooDeep)
	// Arrays and code with scope count as levels.
	arr := mustMarshal(t, bson.D{{Key: "a", Value: bson.A{bson.A{1}}}})
	f(arr, 3, nil)
	f(arr, 2, errTooDeep)
	cws := mustMarshal(t, bson.D{{Key: "c", Value: bson.CodeWithScope{Code: "f", Scope: bson.D{{Key: "s", Value: bson.D{}}}}}})
	f(cws, 3, nil)
	f(cws, 2, errTooDeep)
	// A length that does not match the bytes is malformed, not a panic.
	bad := nested(3)
	bad[7] = 0xff
	if err := checkDepth(bad, 10); err == nil || err == errTooDeep {
		t.Fatalf("a bad inner length: %v", err)
	}
}

// TestWireDeepCommand sends commands nesting a million levels (7 MB): each
// is answered code 15 before anything recurses into it, and the
// connection and the process live on. A command at the limit runs.
func TestWireDeepCommand(t *testing.T) {
	env := newEnv(t, envOptions{})
	c := dialRaw(t, env)
	const deep = 1_000_000
	f := func(what string, msg []byte, wantCode int32) {
		t.Helper()
		_, d := c.roundTrip(msg)
		m := toMap(d)
		if wantCode == 0 {
			if m["ok"] != 1.0 {
				t.Fatalf("%s: %v", what, d)
			}
			return
		}
		if m["ok"] != 0.0 || m["code"] != wantCode {
			t.Fatalf("%s: %v, want code %d", what, d, wantCode)
		}
	}
	f("a ping 200 levels deep", opMsg(1, 0, deepCommand(t, "ping", MaxCommandDepth), ""), 0)
	f("a ping 201 levels deep", opMsg(2, 0, deepCommand(t, "ping", MaxCommandDepth+1), ""), 15)
	f("a ping a million levels deep", opMsg(3, 0, deepCommand(t, "ping", deep), ""), 15)
	f("a document sequence a million levels deep", opMsg(4, 0, mustMarshal(t, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "d"}}), "documents", nested(deep)), 15)
	f("an OP_QUERY hello a million levels deep", opQueryMsg(5, "admin.$cmd", deepCommand(t, "hello", deep)), 15)
	f("a ping after them", opMsg(6, 0, mustMarshal(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "d"}}), ""), 0)
}

// TestWireUnauthenticatedNotDecoded: before authentication, a command that
// is not part of the handshake is refused by its name, whatever it holds,
// and so is a document sequence.
func TestWireUnauthenticatedNotDecoded(t *testing.T) {
	env := newEnv(t, envOptions{cfg: func(c *Config) { c.PrimaryKey, c.RequireAuth = testPrimaryKey, true }})
	c := dialRaw(t, env)
	f := func(what string, msg []byte) {
		t.Helper()
		_, d := c.roundTrip(msg)
		if m := toMap(d); m["ok"] != 0.0 || m["code"] != int32(13) {
			t.Fatalf("%s: %v, want code 13", what, d)
		}
	}
	f("a deep find", opMsg(1, 0, deepCommand(t, "find", 1000), ""))
	f("an insert with a document sequence", opMsg(2, 0, mustMarshal(t, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "d"}}), "documents", nested(1000)))
	_, d := c.roundTrip(opMsg(3, 0, mustMarshal(t, bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}}), ""))
	if toMap(d)["ok"] != 1.0 {
		t.Fatalf("hello: %v", d)
	}
}

func TestWireRefusedMoreToCome(t *testing.T) {
	env := newEnv(t, envOptions{})
	c := dialRaw(t, env)
	// A refused moreToCome message gets no reply either.
	if _, err := c.nc.Write(opMsg(1, wiremessage.MoreToCome, deepCommand(t, "ping", MaxCommandDepth+1), "")); err != nil {
		t.Fatal(err)
	}
	_, d := c.roundTrip(opMsg(2, 0, mustMarshal(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "d"}}), ""))
	if toMap(d)["ok"] != 1.0 {
		t.Fatalf("the ping after a refused moreToCome message: %v", d)
	}
}
