package cosmos

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/query/parser"
)

// TestSessionToken pins the session token format.
func TestSessionToken(t *testing.T) {
	f := func(ss []engine.Session, want string) {
		t.Helper()
		if got := sessionTokens(ss); got != want {
			t.Errorf("sessionTokens(%v) = %q, want %q", ss, got, want)
		}
	}
	f(nil, "")
	f([]engine.Session{{}}, "")
	f([]engine.Session{{RangeID: "0", LSN: 0}}, "0:-1#0")
	f([]engine.Session{{RangeID: "12", LSN: 18446744073709551615}}, "12:-1#18446744073709551615")
	f([]engine.Session{{RangeID: "1", LSN: 7}, {RangeID: "2", LSN: 9}}, "1:-1#7,2:-1#9")
}

// TestFeedToken pins the read-feed continuation token: clients hold tokens
// across server versions, so these strings must keep decoding.
func TestFeedToken(t *testing.T) {
	f := func(rid, rangeID string, after []byte, token string) {
		t.Helper()
		if got := encodeFeedToken(rid, rangeID, after); got != token {
			t.Errorf("encodeFeedToken(%q, %q, %x) = %q, want %q", rid, rangeID, after, got, token)
		}
		got, err := decodeFeedToken(token, rid, rangeID)
		if err != nil || !bytes.Equal(got, after) {
			t.Errorf("decodeFeedToken(%q) = %x, %v, want %x", token, got, err, after)
		}
	}
	// base64url of {"rid":"AAAAAA==","range":"3","after":"0102ff"}
	f("AAAAAA==", "3", []byte{1, 2, 0xff}, "eyJyaWQiOiJBQUFBQUE9PSIsInJhbmdlIjoiMyIsImFmdGVyIjoiMDEwMmZmIn0")
	// base64url of {"rid":"AAAAAA==","after":""}
	f("AAAAAA==", "", []byte{}, "eyJyaWQiOiJBQUFBQUE9PSIsImFmdGVyIjoiIn0")

	bad := func(token, rid, rangeID string) {
		t.Helper()
		if _, err := decodeFeedToken(token, rid, rangeID); err == nil {
			t.Errorf("decodeFeedToken(%q, %q, %q) succeeded", token, rid, rangeID)
		} else if status, _, _ := statusOf(err); status != 400 {
			t.Errorf("decodeFeedToken(%q): status %d, want 400", token, status)
		}
	}
	bad("not base64!", "AAAAAA==", "")
	bad("eyJyaWQiOiJBQUFBQUE9PSIsImFmdGVyIjoiIn0", "BBBBBB==", "")
	bad("eyJyaWQiOiJBQUFBQUE9PSIsImFmdGVyIjoiIn0", "AAAAAA==", "3")
}

// TestQueryToken pins the query continuation token: base64url of JSON
// whose "state" is the standard base64 of the binary query state.
func TestQueryToken(t *testing.T) {
	q, err := parser.Parse("SELECT * FROM c ORDER BY c.n")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := engine.CompileQuery(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := plan.Start()
	bin, err := state.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := base64.RawURLEncoding.EncodeToString([]byte(`{"rid":"AAAAAA==","range":"4","state":"` + base64.StdEncoding.EncodeToString(bin) + `"}`))
	token, err := encodeQueryToken("AAAAAA==", "4", state)
	if err != nil || token != want {
		t.Fatalf("encodeQueryToken = %q, %v, want %q", token, err, want)
	}
	got, err := decodeQueryToken(token, "AAAAAA==", "4", plan)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := got.MarshalBinary(); !bytes.Equal(again, bin) {
		t.Errorf("decoded state %x, want %x", again, bin)
	}
	if _, err := decodeQueryToken(token, "AAAAAA==", "", plan); err == nil {
		t.Error("a token of range 4 decoded for the whole container")
	}
	if _, err := decodeQueryToken("%%%", "AAAAAA==", "4", plan); err == nil {
		t.Error("a malformed token decoded")
	}
}

// TestNoPartitionKeyMessage pins the message of a request without a
// partition key: the engine's error, with the header named here.
func TestNoPartitionKeyMessage(t *testing.T) {
	err := withKeyHeader(engine.ErrNoPartitionKey)
	if got, want := messageOf(err), "the partition key is required: send it in the x-ms-documentdb-partitionkey header"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if status, sub, _ := statusOf(err); status != 400 || sub != 1001 {
		t.Errorf("status %d substatus %d, want 400 1001", status, sub)
	}
}
