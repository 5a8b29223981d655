package jsondoc

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestTerms(t *testing.T) {
	f := func(doc string, want int) {
		t.Helper()
		if got := Terms([]byte(doc)); got != want {
			t.Errorf("Terms(%s) = %d, want %d", doc, got, want)
		}
	}
	f(`{}`, 0)
	f(`{"id":"a"}`, 1)
	f(`{"id":"a","pk":7,"ok":true,"no":false,"nil":null}`, 5)
	f(`{"a":{},"b":[],"c":[[],{}]}`, 0)                         // empty containers are not terms
	f(`{"tags":["x","y","z"],"m":[[1,2],[3,{"d":-1.5e3}]]}`, 7) // array elements at any depth
	f(`{"a":{"b":{"c":{"d":"deep"}}}}`, 1)                      // member names are not terms
	f(` { "a" : "x:y" , "b" : "{\"c\":[1,2]}" } `, 2)           // structure inside strings is text
	f(`{"s":"a\"b\\","t":"\u00e9\ud83d\ude00"}`, 2)             // escapes
	f(`{"id":"a","_rid":"r","_self":"s","_etag":"\"e\"","_ts":1,"_attachments":"attachments/"}`, 1)
	f(`{"_attachments":{"a":[1,2,{"b":3}]},"x":1}`, 1)     // a system member's whole value is skipped
	f(`{"\u005frid":"r","_t\u0073":1,"x":1}`, 1)           // names compared after unescaping
	f(`{"o":{"_rid":"r","_ts":1},"a":[{"_etag":"e"}]}`, 3) // only top-level system members are excluded
	f(`{"_rid2":1,"rid":2,"_RID":3,"_":4}`, 4)             // near misses count
	f(`{"a":1,"a":2}`, 2)                                  // repeated names each count
	f(`{"x":[1,"two",null,true,{"y":false}]}`, 5)
	f(`[1,2,{"_rid":"r"}]`, 3) // not an object: no system members at top level
	f(`"lone"`, 1)
	f(`-0.5`, 1)
	f(``, 0)
}

// modelTerms counts the scalar leaves of a decoded value.
func modelTerms(v any, top bool) int {
	switch v := v.(type) {
	case map[string]any:
		n := 0
		for k, e := range v {
			if top && isSystemName(k) {
				continue
			}
			n += modelTerms(e, false)
		}
		return n
	case []any:
		n := 0
		for _, e := range v {
			n += modelTerms(e, false)
		}
		return n
	}
	return 1
}

func TestTermsMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 20000; i++ {
		var sb strings.Builder
		writeJSON(rng, &sb, randomObject(rng, 5), false)
		doc := sb.String()
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatalf("generated invalid JSON %s: %v", doc, err)
		}
		if got, want := Terms([]byte(doc)), modelTerms(v, true); got != want {
			t.Fatalf("Terms(%s) = %d, model says %d", doc, got, want)
		}
	}
}

func TestTermsInvalidInputDoesNotPanic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	alphabet := []byte(`{}[]",:\ u0_ridtsn1-.eE` + "\x00\xff\n")
	for i := 0; i < 50000; i++ {
		b := make([]byte, rng.IntN(40))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		Terms(b)
	}
	// Truncations of a valid document.
	for i := range benchDoc {
		Terms(benchDoc[:i])
	}
}

func TestTermsDoesNotAllocate(t *testing.T) {
	escaped := []byte(`{"\u005f\u0061ttachments":{"a":1},"x":"y"}`)
	if n := testing.AllocsPerRun(100, func() { Terms(benchDoc); Terms(escaped) }); n != 0 {
		t.Errorf("Terms allocates %v times per call", n)
	}
	if got := Terms(escaped); got != 1 {
		t.Errorf("Terms(%s) = %d, want 1", escaped, got)
	}
}

func FuzzTerms(f *testing.F) {
	f.Add([]byte(`{"id":"a","_rid":"r","x":[1,{"y":null}]}`))
	f.Add(benchDoc)
	f.Fuzz(func(t *testing.T, data []byte) {
		n := Terms(data) // must not panic on anything
		var v any
		if json.Unmarshal(data, &v) != nil || hasDuplicateNames(data) {
			return
		}
		if want := modelTerms(v, true); n != want {
			t.Fatalf("Terms(%q) = %d, model says %d", data, n, want)
		}
	})
}

func BenchmarkTerms(b *testing.B) {
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n = Terms(benchDoc)
	}
	if n != 43 {
		b.Fatalf("Terms(benchDoc) = %d", n)
	}
}

func BenchmarkTermsCompact(b *testing.B) {
	var buf strings.Builder
	var v any
	if err := json.Unmarshal(benchDoc, &v); err != nil {
		b.Fatal(err)
	}
	enc, _ := json.Marshal(v)
	buf.Write(enc)
	doc := []byte(buf.String())
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		Terms(doc)
	}
}
