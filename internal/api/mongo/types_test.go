package mongo

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
)

// everyType is a document holding every BSON type, and top-level names the
// engine gives a meaning to.
func everyType(t testing.TB) bson.D {
	dec, err := bson.ParseDecimal128("1234.5678901234567890")
	if err != nil {
		t.Fatal(err)
	}
	oid, _ := bson.ObjectIDFromHex("5f1a2b3c4d5e6f7a8b9c0d1e")
	return bson.D{
		{Key: "_id", Value: oid},
		{Key: "i32", Value: int32(5)},
		{Key: "i32neg", Value: int32(math.MinInt32)},
		{Key: "i64", Value: int64(5)},
		{Key: "i64big", Value: int64(math.MaxInt64)},
		{Key: "dbl", Value: 5.0},
		{Key: "dblfrac", Value: 1.5},
		{Key: "dblneg0", Value: math.Copysign(0, -1)},
		{Key: "dblbig", Value: 1e300},
		{Key: "dbltiny", Value: 5e-324},
		{Key: "dblinf", Value: math.Inf(1)},
		{Key: "dblninf", Value: math.Inf(-1)},
		{Key: "dec", Value: dec},
		{Key: "date", Value: bson.NewDateTimeFromTime(time.Date(2024, 2, 29, 12, 30, 45, 123e6, time.UTC))},
		{Key: "dateold", Value: bson.DateTime(-62135596800001)},
		{Key: "oid", Value: oid},
		{Key: "bin0", Value: bson.Binary{Subtype: 0, Data: []byte{0, 1, 2, 255}}},
		{Key: "binuuid", Value: bson.Binary{Subtype: 4, Data: bytes.Repeat([]byte{0xab}, 16)}},
		{Key: "binmd5", Value: bson.Binary{Subtype: 5, Data: bytes.Repeat([]byte{1}, 16)}},
		{Key: "binuser", Value: bson.Binary{Subtype: 0x80, Data: []byte("x")}},
		{Key: "regex", Value: bson.Regex{Pattern: `^a.*/b\d$`, Options: "im"}},
		{Key: "ts", Value: bson.Timestamp{T: 1700000000, I: 7}},
		{Key: "min", Value: bson.MinKey{}},
		{Key: "max", Value: bson.MaxKey{}},
		{Key: "null", Value: nil},
		{Key: "undef", Value: bson.Undefined{}},
		{Key: "bool", Value: true},
		{Key: "str", Value: "héllo \"wörld\" \n\t<&> \u2028"},
		{Key: "empty", Value: ""},
		{Key: "js", Value: bson.JavaScript("function() { return 1 }")},
		{Key: "sym", Value: bson.Symbol("sym")},
		{Key: "cws", Value: bson.CodeWithScope{Code: "x", Scope: bson.D{{Key: "x", Value: int32(1)}}}},
		{Key: "dbp", Value: bson.DBPointer{DB: "db.c", Pointer: oid}},
		{Key: "nested", Value: bson.D{{Key: "z", Value: int32(1)}, {Key: "a", Value: bson.A{int32(1), int64(2), 3.0, bson.A{"x", bson.D{{Key: "deep", Value: bson.A{}}}}}}, {Key: "e", Value: bson.D{}}}},
		{Key: "dbref", Value: bson.D{{Key: "$ref", Value: "other"}, {Key: "$id", Value: oid}, {Key: "$db", Value: "db"}}},
		{Key: "dbref2", Value: bson.D{{Key: "$ref", Value: "other"}, {Key: "$id", Value: int32(5)}, {Key: "x", Value: true}}},
		{Key: "id", Value: "the document's own id field"},
		{Key: "id~", Value: int32(1)},
		{Key: "ttl", Value: "not a time to live"},
		{Key: "_ts", Value: "not a timestamp"},
		{Key: "_etag", Value: int32(3)},
	}
}

func TestBSONTypesRoundTrip(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("types").Collection("all")
	doc := everyType(t)
	if _, err := c.InsertOne(ctx, doc); err != nil {
		t.Fatal(err)
	}
	nan := bson.D{{Key: "_id", Value: "nan"}, {Key: "v", Value: math.NaN()}}
	if _, err := c.InsertOne(ctx, nan); err != nil {
		t.Fatal(err)
	}
	var got bson.D
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: doc[0].Value}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, doc) {
		for i := range max(len(got), len(doc)) {
			if i >= len(got) || i >= len(doc) || !reflect.DeepEqual(got[i], doc[i]) {
				t.Errorf("field %d: got %#v, want %#v", i, at(got, i), at(doc, i))
			}
		}
		t.Fatal("document changed in the round trip")
	}
	var gotNaN bson.Raw
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: "nan"}}).Decode(&gotNaN); err != nil {
		t.Fatal(err)
	}
	wantNaN, _ := bson.Marshal(nan)
	if !bytes.Equal(gotNaN, wantNaN) {
		t.Fatalf("NaN document: got %v, want %v", gotNaN, bson.Raw(wantNaN))
	}

	// The stored item, as the NoSQL API reads it.
	f, err := mustContainer(t, env, "types", "all").ReadFeed("", nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	var item []byte
	for _, d := range f.Docs {
		if bytes.Contains(d, []byte(`"5f1a2b3c4d5e6f7a8b9c0d1e"`)) && bytes.HasPrefix(d, []byte(`{"id":"5f1a2b3c4d5e6f7a8b9c0d1e"`)) {
			item = d
		}
	}
	if item == nil {
		t.Fatalf("no stored item with the ObjectId as its id in %q", f.Docs)
	}
	for _, want := range []string{
		`"_id":{"$oid":"5f1a2b3c4d5e6f7a8b9c0d1e"}`,
		`"i32":5,`, `"i32neg":-2147483648,`,
		`"i64":{"$numberLong":"5"}`, `"i64big":{"$numberLong":"9223372036854775807"}`,
		`"dbl":5.0,`, `"dblfrac":1.5,`, `"dblneg0":-0.0,`, `"dblbig":1e+300,`,
		`"dblinf":{"$numberDouble":"Infinity"}`,
		`"dec":{"$numberDecimal":"1234.5678901234567890"}`,
		`"date":{"$date":{"$numberLong":"1709209845123"}}`,
		`"binuuid":{"$binary":{"base64":"q6urq6urq6urq6urq6urqw==","subType":"04"}}`,
		`"regex":{"$regularExpression":{"pattern":"^a.*/b\\d$","options":"im"}}`,
		`"ts":{"$timestamp":{"t":1700000000,"i":7}}`,
		`"min":{"$minKey":1}`, `"max":{"$maxKey":1}`, `"null":null,`, `"bool":true,`,
		`"id~":"the document's own id field"`, `"id~~":1`, `"ttl~":"not a time to live"`, `"_ts~":"not a timestamp"`, `"_etag~":3`,
	} {
		if !bytes.Contains(item, []byte(want)) {
			t.Errorf("stored item lacks %s:\n%s", want, item)
		}
	}
	var generic map[string]any
	if err := json.Unmarshal(item, &generic); err != nil {
		t.Fatalf("stored item is not JSON: %v", err)
	}
	for _, sys := range []string{"_rid", "_etag", "_ts", "_self"} {
		if _, ok := generic[sys]; !ok {
			t.Errorf("stored item lacks the system property %s", sys)
		}
	}
	if strings.Contains(string(gotNaN), "_rid") {
		t.Fatal("system properties leaked to the client")
	}
}

func at(d bson.D, i int) any {
	if i < len(d) {
		return d[i]
	}
	return nil
}

func TestIDEncoding(t *testing.T) {
	oid, _ := bson.ObjectIDFromHex("5f1a2b3c4d5e6f7a8b9c0d1e")
	cases := []struct {
		v    any
		want string
	}{
		{oid, "5f1a2b3c4d5e6f7a8b9c0d1e"},
		{"alice", "alice"},
		{"5f1a2b3c4d5e6f7a8b9c0d1e", "~s:5f1a2b3c4d5e6f7a8b9c0d1e"},
		{"~x", "~s:~x"},
		{"a/b#c?d%e\\", "~s:a%2Fb%23c%3Fd%25e%5C"},
		{int32(1), "~n:1"},
		{int64(1), "~n:1"},
		{1.0, "~n:1"},
		{1.5, "~n:1.5"},
		{true, `~bool:true`},
		{nil, `~null:null`},
		{bson.DateTime(0), `~date:{"$date":{"$numberLong":"0"}}`},
		{bson.D{{Key: "a", Value: "x/y"}}, `~doc:{"a":"x%2Fy"}`},
	}
	seen := map[string]any{}
	for _, c := range cases {
		got, err := idString(c.v)
		if err != nil {
			t.Fatalf("%v: %v", c.v, err)
		}
		if got != c.want {
			t.Errorf("idString(%#v) = %q, want %q", c.v, got, c.want)
		}
		if prev, ok := seen[got]; ok && mqlCompare(prev, c.v) != 0 {
			t.Errorf("%#v and %#v share the id %q", prev, c.v, got)
		}
		seen[got] = c.v
	}
	for _, bad := range []any{bson.A{int32(1)}, bson.Regex{Pattern: "a"}, strings.Repeat("/", 400)} {
		if _, err := idString(bad); err == nil {
			t.Errorf("idString(%v) accepted", bad)
		}
	}
}

// TestNoSQLItemsReadable: an item written through the engine's NoSQL side
// reads as a document whose _id is the item's id, and can be updated.
func TestNoSQLItemsReadable(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("mix").Collection("c")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "m"}}); err != nil {
		t.Fatal(err)
	}
	ec := mustContainer(t, env, "mix", "c")
	op, err := ec.PrepareWrite(engine.OpCreate, []byte(`{"id":"plain","n":1,"f":2.5,"s":"x"}`), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if res, _, err := ec.Execute(&engine.Command{Ops: []engine.Op{op}}, ""); err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	got := findID(t, c, "plain")
	want := bson.D{{Key: "_id", Value: "plain"}, {Key: "n", Value: int32(1)}, {Key: "f", Value: 2.5}, {Key: "s", Value: "x"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("NoSQL item read as %v, want %v", got, want)
	}
	if r, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "plain"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil || r.ModifiedCount != 1 {
		t.Fatalf("update of a NoSQL item: %+v %v", r, err)
	}
	if v, _ := lookupField(findID(t, c, "plain"), "n"); v != int32(2) {
		t.Fatalf("after $inc: %v", v)
	}

	// An item whose members look like Extended JSON wrappers but are not
	// valid ones is read as its literal JSON, and a scan over it goes on.
	op, err = ec.PrepareWrite(engine.OpCreate, []byte(`{"id":"odd","when":{"$date":"soon"},"x":{"$foo":1},"big":12345678901,"arr":[1,"a",{"b":null}],"f":0.5}`), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if res, _, err := ec.Execute(&engine.Command{Ops: []engine.Op{op}}, ""); err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	got = findID(t, c, "odd")
	want = bson.D{{Key: "_id", Value: "odd"}, {Key: "when", Value: bson.D{{Key: "$date", Value: "soon"}}}, {Key: "x", Value: bson.D{{Key: "$foo", Value: int32(1)}}},
		{Key: "big", Value: int64(12345678901)}, {Key: "arr", Value: bson.A{int32(1), "a", bson.D{{Key: "b", Value: nil}}}}, {Key: "f", Value: 0.5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("a NoSQL item with wrapper-like members read as %v, want %v", got, want)
	}
	n, err := c.CountDocuments(ctx, bson.D{{Key: "big", Value: bson.D{{Key: "$gt", Value: 1}}}})
	if err != nil || n != 1 {
		t.Fatalf("a scan over it: %d, %v", n, err)
	}
}
