package index

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/query/eval"
)

// randomScalar returns a random indexable value, biased towards collisions
// and edge cases.
func randomScalar(r *rand.Rand) eval.Value {
	switch r.IntN(4) {
	case 0:
		return eval.NullValue()
	case 1:
		return eval.BoolValue(r.IntN(2) == 0)
	case 2:
		switch r.IntN(5) {
		case 0:
			return eval.IntValue(r.Int64N(7) - 3)
		case 1:
			return eval.IntValue(r.Int64() - r.Int64())
		case 2:
			return eval.NumberValue(math.Copysign(0, -1))
		case 3:
			return eval.NumberValue((r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20)))
		}
		return eval.NumberValue(float64(r.IntN(5)) - 2.5)
	}
	const alphabet = "ab\x00\x01\xffé"
	n := r.IntN(6)
	if r.IntN(20) == 0 {
		n = MaxStringBytes + r.IntN(3) - 1
	}
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return eval.StringValue(b.String())
}

// TestEncodingKeepsOrder checks the promise the lookups rely on: x < y in
// the query language's order implies enc(x) <= enc(y), equal values encode
// equally, and every encoding is self-delimiting.
func TestEncodingKeepsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		x, y := randomScalar(r), randomScalar(r)
		ex, ey := AppendValue(nil, x), AppendValue(nil, y)
		c := eval.Compare(x, y)
		bc := bytes.Compare(ex, ey)
		if c < 0 && bc > 0 || c > 0 && bc < 0 || c == 0 && bc != 0 {
			t.Fatalf("order not kept: %v vs %v compare %d, encodings %x vs %x compare %d", x, y, c, ex, ey, bc)
		}
		exact := !(x.Kind() == eval.String && len(x.AsString()) > MaxStringBytes) && !(x.Kind() == eval.Number && x.IsExactInt() && float64(int64(x.AsFloat())) != x.AsFloat())
		if exact && y.Kind() == x.Kind() && !(y.Kind() == eval.String && len(y.AsString()) > MaxStringBytes) && bc == 0 && c != 0 {
			t.Fatalf("distinct values %v and %v encode equally", x, y)
		}
		if n := ValueLen(append(ex, 0x7f, 0x00)); n != len(ex) {
			t.Fatalf("ValueLen(%x...) = %d, want %d", ex, n, len(ex))
		}
		if !(bytes.Compare(AppendTypeStart(nil, x.Kind()), ex) <= 0 && bytes.Compare(ex, AppendTypeEnd(nil, x.Kind())) < 0) {
			t.Fatalf("%v encodes outside its type's span", x)
		}
	}
}

// TestBucketsKeepOrder checks the promise ORDER BY over the index relies
// on, for every kind of value: x < y implies bucket(x) <= bucket(y), and
// buckets of different kinds differ.
func TestBucketsKeepOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	value := func() eval.Value {
		switch r.IntN(6) {
		case 0:
			return eval.Value{}
		case 1:
			v, _ := eval.FromJSON([]byte([]string{`[]`, `[1]`, `[null,"a"]`, `[[2]]`}[r.IntN(4)]))
			return v
		case 2:
			v, _ := eval.FromJSON([]byte([]string{`{}`, `{"a":1}`, `{"b":[1]}`, `{"a":{"c":null}}`}[r.IntN(4)]))
			return v
		}
		return randomScalar(r)
	}
	for range 100000 {
		x, y := value(), value()
		bx, by := AppendBucket(nil, x), AppendBucket(nil, y)
		c, bc := eval.Compare(x, y), bytes.Compare(bx, by)
		if c < 0 && bc > 0 || c > 0 && bc < 0 || c == 0 && bc != 0 {
			t.Fatalf("order not kept: %v vs %v compare %d, buckets %x vs %x compare %d", x, y, c, bx, by, bc)
		}
		if x.Kind() != y.Kind() && bc == 0 {
			t.Fatalf("%v and %v share bucket %x", x, y, bx)
		}
		if x.IsDefined() && ValueLen(append(bx, 0x7f)) != len(bx) {
			t.Fatalf("ValueLen(%x...) != %d", bx, len(bx))
		}
	}
}

func TestPathEncodingIsPrefixFree(t *testing.T) {
	paths := [][]string{{"a"}, {"a", "b"}, {"ab"}, {"a\x00"}, {"a", ""}, {""}, {"a\x00", "b"}}
	for i, p := range paths {
		for j, q := range paths {
			ep, eq := AppendPath(nil, p), AppendPath(nil, q)
			if i != j && bytes.HasPrefix(eq, ep) {
				t.Errorf("path %q encodes as a prefix of %q (%x, %x)", p, q, ep, eq)
			}
		}
	}
}

func TestPolicy(t *testing.T) {
	cases := []struct {
		policy  string
		indexed []string // paths joined by "/"
		not     []string
	}{
		{``, []string{"a", "a/b", "_ts", "id"}, []string{"_etag"}},
		{`{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/big/*"}]}`,
			[]string{"a", "bigger"}, []string{"big", "big/x/y"}},
		{`{"includedPaths":[{"path":"/name/?"},{"path":"/addr/*"}],"excludedPaths":[{"path":"/*"},{"path":"/addr/zip/?"}]}`,
			[]string{"name", "addr/city", "addr/geo/lat"}, []string{"other", "name/x", "addr/zip"}},
		{`{"includedPaths":[{"path":"/\"a b\"/?"}],"excludedPaths":[{"path":"/*"}]}`, []string{"a b"}, []string{"a"}},
		{`{"indexingMode":"none"}`, nil, []string{"a", "id"}},
		{`{"includedPaths":[{"path":"/tags/[]/?"}],"excludedPaths":[{"path":"/*"}]}`, nil, []string{"tags", "a"}},
	}
	for _, c := range cases {
		p, err := Compile(json.RawMessage(c.policy))
		if err != nil {
			t.Fatalf("%s: %v", c.policy, err)
		}
		for _, s := range c.indexed {
			if !p.Indexed(strings.Split(s, "/")) {
				t.Errorf("%s: /%s is not indexed", c.policy, s)
			}
		}
		for _, s := range c.not {
			if p.Indexed(strings.Split(s, "/")) {
				t.Errorf("%s: /%s is indexed", c.policy, s)
			}
		}
	}
	for _, bad := range []string{`{"indexingMode":"sometimes"}`, `{"includedPaths":[{"path":"a/*"}]}`, `{"includedPaths":[{"path":"/a"}]}`, `{"includedPaths":[{"path":"/?"}]}`, `[1]`} {
		if _, err := Compile(json.RawMessage(bad)); err == nil {
			t.Errorf("Compile(%s) accepted a bad policy", bad)
		}
	}
}

func TestTerms(t *testing.T) {
	doc, err := eval.FromJSON([]byte(`{"id":"x","a":{"b":5,"c":[1,2],"d":{"e":null}},"s":"t","_etag":"\"1\"","skip":{"x":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	p := MustCompile(json.RawMessage(`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"},{"path":"/skip/*"}]}`))
	var got []string
	p.Terms(doc, func(path []string, v eval.Value) { got = append(got, "/"+strings.Join(path, "/")+"="+v.String()) })
	want := []string{"/id=\"x\"", `/a={"b":5,"c":[1,2],"d":{"e":null}}`, "/a/b=5", "/a/c=[1,2]", `/a/d={"e":null}`, "/a/d/e=null", "/s=\"t\""}
	if !slices.Equal(got, want) {
		t.Fatalf("terms = %q, want %q", got, want)
	}
	var none *Policy
	none.Terms(doc, func([]string, eval.Value) { t.Fatal("a nil policy gave a term") })
}

// TestTermsAreBounded: however long the names and values of a document,
// each term is at most MaxPathBytes of names plus MaxStringBytes of value.
// A document with 60 KB property names used to give terms of megabytes.
func TestTermsAreBounded(t *testing.T) {
	long := strings.Repeat("n", 60<<10)
	raw := `{"id":"x","` + long + `":{"` + long + `":{"` + long + `":"` + strings.Repeat("v", 100<<10) + `"}},"ok":{"` +
		strings.Repeat("m", MaxPathBytes-2) + `":1,"` + strings.Repeat("m", MaxPathBytes-1) + `":2},"s":"` + strings.Repeat("w", 1<<20) + `"}`
	doc, err := eval.FromJSON([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	p := MustCompile(json.RawMessage(`{"includedPaths":[{"path":"/*"}]}`))
	var paths []string
	p.Terms(doc, func(path []string, v eval.Value) {
		term := AppendValue(AppendPath(nil, path), v)
		if max := MaxPathBytes + 3*len(path) + 1 + MaxStringBytes + 3; len(term) > max {
			t.Errorf("term of %d bytes at a path of %d segments, want at most %d", len(term), len(path), max)
		}
		paths = append(paths, fmt.Sprintf("%d:%d", len(path), len(strings.Join(path, ""))))
	})
	want := []string{"1:2", "1:2", "2:512", "1:1"} // id, ok, ok/mmm (510+2), s
	if !slices.Equal(paths, want) {
		t.Errorf("terms at (segments:bytes) %q, want %q", paths, want)
	}
	for _, path := range [][]string{{long}, {"ok", strings.Repeat("m", MaxPathBytes-1)}, slices.Repeat([]string{"a"}, MaxDepth+1)} {
		if p.Indexed(path) {
			t.Errorf("Indexed(path of %d segments, %d bytes) = true: queries would look up terms that are never written", len(path), len(strings.Join(path, "")))
		}
	}
	if !p.Indexed(slices.Repeat([]string{"a"}, MaxDepth)) || !p.Indexed([]string{"ok", strings.Repeat("m", MaxPathBytes-2)}) {
		t.Errorf("paths within the limits are not indexed")
	}
}

// TestTermLen checks that a term's length is read back from any suffix:
// random paths (with zero, escape and terminator bytes in their names) and
// values, followed by arbitrary bytes, and that cut terms are refused.
func TestTermLen(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const alphabet = "a\x00\x01\xff"
	for range 5000 {
		var path []string
		for range r.IntN(4) {
			var b strings.Builder
			for range r.IntN(4) {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			}
			path = append(path, b.String())
		}
		term := AppendValue(AppendPath(nil, path), randomScalar(r))
		tail := []byte{byte(r.IntN(256)), 0, 1}[:r.IntN(4)]
		if n := TermLen(append(slices.Clone(term), tail...)); n != len(term) {
			t.Fatalf("path %q: TermLen %d, want %d (%x)", path, n, len(term), term)
		}
		if n := TermLen(term[:r.IntN(len(term))]); n != -1 {
			t.Fatalf("a cut term %x read as %d bytes", term, n)
		}
	}
	if TermLen(nil) != -1 || TermLen([]byte{0x01, 'a'}) != -1 || TermLen([]byte{0x00, 0x09}) != -1 {
		t.Fatal("malformed terms accepted")
	}
}
