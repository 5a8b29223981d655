package table

import (
	"bytes"
	"fmt"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"hash/fnv"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/api/table/edm"
)

// engineMembers stands for the members the engine adds to a stored item.
const engineMembers = `,"_rid":"AbCdAA==","_self":"dbs/x/colls/y/docs/z/","_etag":"\"00000a0b-0000-0000-0000-000000000000\"","_attachments":"attachments/","_ts":1700000000}`

// stored is the item the engine holds for e.
func stored(e *entity) []byte {
	b := encodeEntity(e)
	return append(b[:len(b)-1], engineMembers...)
}

// slowEntityJSON is the point read's rendering through the full decode.
func slowEntityJSON(t testing.TB, s *Server, req *request, raw []byte, etag string) ([]byte, string, bool) {
	t.Helper()
	e, err := decodeEntity(raw)
	if err != nil {
		return nil, "", false
	}
	e.etag = etag
	e.tag = tableETag(e.ts, e.etag)
	return s.entityJSON(req, "tbl", e, nil, true), e.tag, true
}

var metadataLevels = []metadata{noMetadata, minimalMetadata, fullMetadata}

func testRequest(m metadata) *request {
	return &request{meta: m, base: "http://127.0.0.1:1/acct", account: "acct"}
}

// checkSame renders raw both ways at every metadata level and fails when
// they differ; it reports whether the direct rendering took it at every
// level.
func checkSame(t *testing.T, s *Server, raw []byte) bool {
	t.Helper()
	all := true
	for _, m := range metadataLevels {
		req := testRequest(m)
		want, wantTag, decoded := slowEntityJSON(t, s, req, raw, `"0000abcd-0000-0000-0000-000000000000"`)
		got, gotTag, ok := s.rawEntityJSON(req, "tbl", raw, `"0000abcd-0000-0000-0000-000000000000"`)
		if !ok {
			all = false
			continue
		}
		if !decoded {
			t.Fatalf("metadata %d: the direct rendering took an item the decode refuses: %s", m, raw)
		}
		if !bytes.Equal(got, want) || gotTag != wantTag {
			t.Fatalf("metadata %d, item %s:\n direct %s (%s)\n decode %s (%s)", m, raw, got, gotTag, want, wantTag)
		}
	}
	return all
}

// TestRawEntityJSONMatchesDecode: the direct rendering of a point read is
// byte for byte what the full decode renders, for every EDM type at every
// metadata level, for items written through this API (which it must take
// directly) and through the NoSQL API (which it may hand to the decode).
func TestRawEntityJSONMatchesDecode(t *testing.T) {
	s := New(Config{})
	ts := time.Date(2026, 11, 28, 20, 1, 2, 345678900, time.UTC)
	at := func(y int) time.Time { return time.Date(y, 3, 4, 5, 6, 7, 800, time.UTC) }
	values := []prop{
		{"S", edm.Value{Type: edm.String, S: "plain"}},
		{"SEmpty", edm.Value{Type: edm.String, S: ""}},
		{"SEsc", edm.Value{Type: edm.String, S: "quote \" back \\ nl \n tab \t ctl \x01"}},
		{"SUni", edm.Value{Type: edm.String, S: "héllo wörld 日本 😀 \u2028"}},
		{"SNum", edm.Value{Type: edm.String, S: "123"}},
		{"I", edm.Value{Type: edm.Int32, I: 42}},
		{"IZero", edm.Value{Type: edm.Int32, I: 0}},
		{"IMax", edm.Value{Type: edm.Int32, I: math.MaxInt32}},
		{"IMin", edm.Value{Type: edm.Int32, I: math.MinInt32}},
		{"L", edm.Value{Type: edm.Int64, I: 9007199254740993}},
		{"LZero", edm.Value{Type: edm.Int64, I: 0}},
		{"LMax", edm.Value{Type: edm.Int64, I: math.MaxInt64}},
		{"LMin", edm.Value{Type: edm.Int64, I: math.MinInt64}},
		{"D", edm.Value{Type: edm.Double, F: 1.5}},
		{"DWhole", edm.Value{Type: edm.Double, F: 2}},
		{"DNaN", edm.Value{Type: edm.Double, F: math.NaN()}},
		{"DInf", edm.Value{Type: edm.Double, F: math.Inf(1)}},
		{"DNegInf", edm.Value{Type: edm.Double, F: math.Inf(-1)}},
		{"DBig", edm.Value{Type: edm.Double, F: 1e300}},
		{"DSmall", edm.Value{Type: edm.Double, F: -1.5e-7}},
		{"B", edm.Value{Type: edm.Boolean, B: true}},
		{"BFalse", edm.Value{Type: edm.Boolean}},
		{"T", edm.Value{Type: edm.DateTime, T: at(2020)}},
		{"TMin", edm.Value{Type: edm.DateTime, T: edm.MinDateTime}},
		{"TMax", edm.Value{Type: edm.DateTime, T: time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)}},
		{"G", edm.Value{Type: edm.Guid, S: "0e9c5a3c-2b1f-4c7e-9a47-4f8c2e6d9b10"}},
		{"Y", edm.Value{Type: edm.Binary, Bin: []byte{0, 1, 2, 0xff}}},
		{"YEmpty", edm.Value{Type: edm.Binary, Bin: []byte{}}},
		{"id", edm.Value{Type: edm.String, S: "a property named id"}},
		{"ttl", edm.Value{Type: edm.Int64, I: 5}},
		{"_ts", edm.Value{Type: edm.Int32, I: 7}},
		{"Ünïcode_名前", edm.Value{Type: edm.Int32, I: 1}},
	}
	for _, keys := range [][2]string{{"p0001", "r000001"}, {"", "r"}, {"quote'd é", "日本 \"x\""}, {"tab\tpk", "r"}} {
		e := &entity{pk: keys[0], rk: keys[1], ts: ts, props: values}
		raw := stored(e)
		// Keys that need escaping in JSON are the one thing it hands on.
		plainKeys := !strings.ContainsAny(keys[0]+keys[1], "\"\t")
		if got := checkSame(t, s, raw); got != plainKeys {
			t.Errorf("keys %q: took the direct rendering %v, want %v", keys, got, plainKeys)
		}
		// Each property alone, too, so that each type's own path is taken.
		for _, p := range values {
			e := &entity{pk: keys[0], rk: keys[1], ts: ts, props: []prop{p}}
			if got := checkSame(t, s, stored(e)); got != plainKeys {
				t.Errorf("keys %q, property %s: took the direct rendering %v, want %v", keys, p.name, got, plainKeys)
			}
		}
	}

	// Items written through the NoSQL API: whatever they hold, the two
	// renderings agree whenever the direct one takes the item.
	const head = `{"id":"r","PartitionKey":"p","Timestamp":"2026-11-28T20:01:02.3456789Z"`
	nosql := []struct {
		members string
		direct  bool // must be taken directly
	}{
		{`,"a":1.0,"b":-0,"c":1e2,"d":12345678901,"e":-2147483649,"f":2147483648,"g":-2147483648`, true},
		{`,"a":"\u00e9\n","b":"é","c":{"x":[1,2,{"y":null}]},"d":[],"e":null,"f":true`, true},
		{`,"a@odata.type":"Edm.Int64","a":"zz","b@odata.type":"Edm.Int64","b":5,"c@odata.type":"Edm.Int64","c":"007","d@odata.type":"Edm.Int64","d":"-0","e@odata.type":"Edm.Int64","e":"9223372036854775808"`, true},
		{`,"a@odata.type":"Edm.Guid","a":"0E9C5A3C-2B1F-4C7E-9A47-4F8C2E6D9B10","b@odata.type":"Edm.Guid","b":"nope"`, true},
		{`,"a@odata.type":"Edm.DateTime","a":"1500-01-01T00:00:00.0000000Z","b@odata.type":"Edm.DateTime","b":"2020-01-02T03:04:05Z","c@odata.type":"Edm.DateTime","c":"2020-02-30T00:00:00.0000000Z","d@odata.type":"Edm.DateTime","d":"2020-01-02T03:04:05.1234567+01:00"`, true},
		{`,"a@odata.type":"Edm.Int32","a":"5","b@odata.type":"Edm.Int32","b":5,"c@odata.type":"Edm.Boolean","c":"true","d@odata.type":"Edm.String","d":5,"e@odata.type":"Edm.Nope","e":1,"f@odata.type":7,"f":"x"`, true},
		{`,"a@odata.type":"Edm.Int32","a@odata.type":"Edm.Int64","a":"5","a":"6","a":7`, true},
		{`,"a@odata.type":"Edm.Double","a":"1","b@odata.type":"Edm.Double","b":1,"c@odata.type":"Edm.Binary","c":"!!"`, true},
		{`,"long":"` + strings.Repeat("x", MaxStringUnits+1) + `","ok":"` + strings.Repeat("y", MaxStringUnits) + `"`, true},
		{`,"RowKey":"other","ttl":5,"ttl~":"t","id~":"i","x~":"y","odata.etag":"z","a@b":1`, true},
		{` , "spaced" : 1 , "t" : true }`, true},
		{`,"n\u0061me":1`, false},
		{`,"Timestamp":"2026-11-28T20:01:02Z"`, false},
		{`,"Timestamp":5`, false},
	}
	for _, c := range nosql {
		raw := []byte(head + c.members)
		if !bytes.HasSuffix(raw, []byte("}")) {
			raw = append(raw, '}')
		}
		if got := checkSame(t, s, raw); c.direct && !got {
			t.Errorf("item %.120s: not taken directly", raw)
		}
	}
	for _, raw := range []string{
		`{"id":"r","PartitionKey":5}`, `{"id":"r"}`, `{"PartitionKey":"p"}`, `{}`, `[]`,
		`{"id":"r","PartitionKey":"p"}`, `{"PartitionKey":"p","id":"r","Timestamp":"0001-01-01T00:00:00.0000000Z"}`,
		`{"id":"r\u0041","PartitionKey":"p"}`, `{"id":"r","PartitionKey":"p"} x`,
	} {
		checkSame(t, s, []byte(raw))
	}
}

// TestTableETag pins the ETag's text, which clients send back in If-Match.
func TestTableETag(t *testing.T) {
	ts := time.Date(2020, 1, 2, 3, 4, 5, 123456700, time.UTC)
	if got, want := tableETag(ts, ""), `W/"datetime'2020-01-02T03%3A04%3A05.1234567Z'"`; got != want {
		t.Errorf("tableETag without an engine etag = %s, want %s", got, want)
	}
	// With one, the fraction is FNV-1a (hash/fnv's) of the engine etag
	// modulo 10^7.
	h := fnv.New32a()
	h.Write([]byte(`"abc"`))
	if got, want := tableETag(ts, `"abc"`), fmt.Sprintf(`W/"datetime'2020-01-02T03%%3A04%%3A05.%07dZ'"`, h.Sum32()%10_000_000); got != want {
		t.Errorf("tableETag with an engine etag = %s, want %s", got, want)
	}
}

// FuzzRawEntityJSON: for any stored item the direct rendering takes, it
// renders what the full decode renders.
func FuzzRawEntityJSON(f *testing.F) {
	f.Add([]byte(`{"id":"r","PartitionKey":"p","Timestamp":"2026-11-28T20:01:02.3456789Z","a":1,"b@odata.type":"Edm.Int64","b":"5"}`))
	f.Add([]byte(`{"id":"r","PartitionKey":"p","g@odata.type":"Edm.Guid","g":"0e9c5a3c-2b1f-4c7e-9a47-4f8c2e6d9b10","t@odata.type":"Edm.DateTime","t":"2020-01-02T03:04:05.1234567Z","x":{"a":[1]}}`))
	f.Add([]byte(`{"id":"r","PartitionKey":"p","s":"\u00e9","d@odata.type":"Edm.Double","d":"NaN","n":null,"ttl~":1}`))
	s := New(Config{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		// Stored items are valid JSON: the engine validates every item
		// it writes, and the fast path relies on it (it does not check a
		// string's characters again).
		if jsondoc.Validate(raw) != nil {
			return
		}
		for _, m := range metadataLevels {
			req := testRequest(m)
			got, gotTag, ok := s.rawEntityJSON(req, "tbl", raw, "e")
			if !ok {
				continue
			}
			want, wantTag, decoded := slowEntityJSON(t, s, req, raw, "e")
			if !decoded || !bytes.Equal(got, want) || gotTag != wantTag {
				t.Fatalf("metadata %d, item %q:\n direct %s (%s)\n decode %s (%s, %v)", m, raw, got, gotTag, want, wantTag, decoded)
			}
		}
	})
}

// TestPlainText checks the word-at-a-time scan against the plain
// definition, for every byte value at every place of a 17-byte text.
func TestPlainText(t *testing.T) {
	naive := func(s []byte) bool {
		for _, c := range s {
			if c < 0x20 || c == '"' || c == '\\' {
				return false
			}
		}
		return utf8.Valid(s)
	}
	base := []byte("abcdefghijklmnopq")
	for i := range base {
		for c := 0; c < 256; c++ {
			s := bytes.Clone(base)
			s[i] = byte(c)
			if got, want := plainText(s), naive(s); got != want {
				t.Fatalf("plainText(%q) = %v, want %v", s, got, want)
			}
		}
	}
	for _, s := range []string{"", "é", "héllo wörld, 日本語 text of some length", "ab\xffcdefghij", "abcdefgh日本"} {
		if got, want := plainText([]byte(s)), naive([]byte(s)); got != want {
			t.Errorf("plainText(%q) = %v, want %v", s, got, want)
		}
	}
}
