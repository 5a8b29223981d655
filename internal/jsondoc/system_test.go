package jsondoc

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

var testSys = System{
	Rid:  "DJB7AI1lZHoBAAAAAAAAAA==",
	Self: "dbs/DJB7AA==/colls/DJB7AI1lZHo=/docs/DJB7AI1lZHoBAAAAAAAAAA==/",
	Etag: `"6201c25e-0000-0100-0000-6ac9ff4d0000"`,
	Ts:   1700000000,
}

const testSysSuffix = `"_rid":"DJB7AI1lZHoBAAAAAAAAAA==","_self":"dbs/DJB7AA==/colls/DJB7AI1lZHo=/docs/DJB7AI1lZHoBAAAAAAAAAA==/",` +
	`"_etag":"\"6201c25e-0000-0100-0000-6ac9ff4d0000\"","_attachments":"attachments/","_ts":1700000000`

func TestWithSystem(t *testing.T) {
	f := func(in, wantStripped string) {
		t.Helper()
		if _, err := Scan([]byte(in), nil); err != nil {
			t.Fatalf("bad test input %q: %v", in, err)
		}
		got := string(WithSystem(nil, []byte(in), testSys))
		want := "{" + wantStripped + "," + testSysSuffix + "}"
		if wantStripped == "" {
			want = "{" + testSysSuffix + "}"
		}
		if got != want {
			t.Errorf("WithSystem(%q)\n got %s\nwant %s", in, got, want)
		}
		if s := string(StripSystem(nil, []byte(in))); s != "{"+wantStripped+"}" {
			t.Errorf("StripSystem(%q) = %s, want {%s}", in, s, wantStripped)
		}
		// Idempotent: adding system properties to the result replaces them.
		again := string(WithSystem(nil, []byte(got), testSys))
		if again != want {
			t.Errorf("WithSystem twice = %s", again)
		}
	}
	f(`{}`, ``)
	f(" \n{ \n } \n", ``)
	f(`{"id":"a"}`, `"id":"a"`)
	f("{\n  \"id\" : \"a\",\n  \"n\": [1, 2,\n 3],\n  \"o\": {\"_rid\": \"nested stays\"}\n}\n",
		`"id" : "a","n": [1, 2,`+"\n"+` 3],"o": {"_rid": "nested stays"}`)
	f(`{"_rid":"old","id":"a","_ts":1,"_self":"s","x":1.50,"_etag":"e","_attachments":"att"}`,
		`"id":"a","x":1.50`)
	f(`{"_rid":"only"}`, ``)
	f(`{"\u005frid":"escaped name","_tsx":1,"_Rid":2,"rid":3}`, `"_tsx":1,"_Rid":2,"rid":3`)
	f(`{"a":"\"}","b":"{\"_rid\":1}"}`, `"a":"\"}","b":"{\"_rid\":1}"`)
}

func TestWithSystemAppendsToDst(t *testing.T) {
	buf := []byte("prefix:")
	out := WithSystem(buf, []byte(`{"a":1}`), System{Rid: "r", Self: "s", Etag: `"e"`, Ts: -5})
	want := `prefix:{"a":1,"_rid":"r","_self":"s","_etag":"\"e\"","_attachments":"attachments/","_ts":-5}`
	if string(out) != want {
		t.Fatalf("got %s\nwant %s", out, want)
	}
	// Reuse: append(dst[:0], ...) style with enough capacity does not allocate.
	dst := make([]byte, 0, 512)
	doc := []byte(`{"id":"x","_rid":"y","v":[1,2,3]}`)
	allocs := testing.AllocsPerRun(100, func() { dst = WithSystem(dst[:0], doc, testSys) })
	if allocs != 0 {
		t.Errorf("WithSystem allocates %v times with a large enough dst", allocs)
	}
	// Strings needing escapes are encoded.
	out = WithSystem(nil, []byte(`{}`), System{Rid: "a\"b\\c\n", Etag: "\x01"})
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil || m["_rid"] != "a\"b\\c\n" || m["_etag"] != "\x01" {
		t.Fatalf("escaping: %s, %v, %v", out, err, m)
	}
}

func TestWithSystemPanicsOnInvalid(t *testing.T) {
	for _, in := range []string{``, `[]`, `{"a":}`, `{"a":1} x`, `{"a":1`} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.HasPrefix(r.(string), "BUG: ") {
					t.Errorf("WithSystem(%q) recovered %v, want a BUG panic", in, r)
				}
			}()
			WithSystem(nil, []byte(in), testSys)
		}()
	}
}

// TestWithSystemRoundTrip: on random documents, the result is valid JSON,
// carries each system member once with the given values at the end, and
// keeps every other top-level member in order with its exact bytes.
func TestWithSystemRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 3000; iter++ {
		doc := []byte(randomDocJSON(rng))
		out := WithSystem(nil, doc, testSys)
		if !json.Valid(out) {
			t.Fatalf("invalid output for %s:\n%s", doc, out)
		}
		if !bytes.HasSuffix(out, []byte(","+testSysSuffix+"}")) && !bytes.Equal(out, []byte("{"+testSysSuffix+"}")) {
			t.Fatalf("system suffix missing: %s", out)
		}
		in := topMembers(t, doc)
		got := topMembers(t, out)
		var kept []string
		for _, m := range in {
			if !isSystemName(m.name) {
				kept = append(kept, m.raw)
			}
		}
		counts := map[string]int{}
		for i, m := range got {
			if isSystemName(m.name) {
				counts[m.name]++
				continue
			}
			if i >= len(kept) || m.raw != kept[i] {
				t.Fatalf("member %d = %q, want %q\nin:  %s\nout: %s", i, m.raw, kept, doc, out)
			}
		}
		if len(got)-5 != len(kept) {
			t.Fatalf("kept %d members, want %d", len(got)-5, len(kept))
		}
		for _, k := range []string{"_rid", "_self", "_etag", "_ts", "_attachments"} {
			if counts[k] != 1 {
				t.Fatalf("%s appears %d times in %s", k, counts[k], out)
			}
		}
		stripped := StripSystem(nil, out)
		if !json.Valid(stripped) || len(topMembers(t, stripped)) != len(kept) {
			t.Fatalf("StripSystem(%s) = %s", out, stripped)
		}
	}
}

type rawMember struct{ name, raw string }

// topMembers lists the top-level members of an object with their exact text
// from the name's opening quote to the end of the value (test oracle built on
// encoding/json's Decoder offsets).
func topMembers(t *testing.T, data []byte) []rawMember {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", data)
	}
	var out []rawMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		name := tok.(string)
		// InputOffset is just past the name; find its opening quote by
		// scanning back over the string token.
		end := int(dec.InputOffset())
		start := nameStart(data, end)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, rawMember{name: name, raw: string(data[start:dec.InputOffset()])})
	}
	return out
}

// nameStart finds the opening quote of the string token ending at end.
func nameStart(data []byte, end int) int {
	for i := end - 2; i >= 0; i-- {
		if data[i] == '"' {
			bs := 0
			for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
				bs++
			}
			if bs%2 == 0 {
				return i
			}
		}
	}
	return -1
}
