package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// modelTerms is the reference for RawTerms: the document decoded into values
// and walked by Terms, each term encoded with AppendPath and AppendValue.
func modelTerms(p *Policy, doc []byte) ([]string, error) {
	v, err := eval.FromJSON(doc)
	if err != nil {
		return nil, err
	}
	var out []string
	p.Terms(v, func(path []string, val eval.Value) {
		out = append(out, string(AppendValue(AppendPath(nil, path), val)))
	})
	return out, nil
}

func rawTerms(t testing.TB, p *Policy, doc []byte) []string {
	t.Helper()
	var out []string
	var buf []byte
	err := p.RawTerms(doc, &buf, func(term []byte, pathLen int, path []string) error {
		if want := AppendPath(nil, path); !bytes.Equal(term[:pathLen], want) {
			t.Fatalf("term %x: path part %x, want %x", term, term[:pathLen], want)
		}
		out = append(out, string(term))
		return nil
	})
	if err != nil {
		t.Fatalf("RawTerms(%s): %v", doc, err)
	}
	return out
}

// randomJSON writes a random JSON value with random spacing, escapes,
// number spellings and nesting, biased towards the edges of the index
// (long strings and names, deep objects).
func randomJSON(r *rand.Rand, b *strings.Builder, depth int, object bool) {
	sp := func() {
		if r.IntN(8) == 0 {
			b.WriteString([]string{" ", "\n", "\t ", "\r\n"}[r.IntN(4)])
		}
	}
	kind := r.IntN(10)
	if object {
		kind = 0
	}
	if depth > 40 {
		kind = 2 + r.IntN(8)
	}
	switch kind {
	case 0, 1:
		if kind == 1 && !object {
			b.WriteByte('[')
			n := r.IntN(4)
			for i := range n {
				if i > 0 {
					b.WriteByte(',')
				}
				sp()
				randomJSON(r, b, depth+1, false)
				sp()
			}
			b.WriteByte(']')
			return
		}
		b.WriteByte('{')
		n := r.IntN(5)
		if depth > 3 && r.IntN(3) == 0 {
			n = 1 // deep chains of single members reach MaxDepth
		}
		seen := map[string]bool{}
		for i := 0; i < n; i++ {
			name := randomString(r)
			if seen[name] {
				continue
			}
			seen[name] = true
			if i > 0 && len(seen) > 1 {
				b.WriteByte(',')
			}
			sp()
			writeQuoted(r, b, name)
			sp()
			b.WriteByte(':')
			sp()
			randomJSON(r, b, depth+1, false)
			sp()
		}
		b.WriteByte('}')
	case 2:
		b.WriteString("null")
	case 3:
		b.WriteString([]string{"true", "false"}[r.IntN(2)])
	case 4, 5:
		b.WriteString([]string{"0", "-0", "1", "-1", "1.5", "-2.25e3", "1E2", "1e-7", "123456789012345678901234567890",
			"9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551616",
			"0.1", "3.0", "1e308", "-1.7976931348623157e308", "5e-324",
			strconv.FormatInt(r.Int64()-r.Int64(), 10), strconv.FormatFloat(r.NormFloat64()*1e6, 'g', -1, 64)}[r.IntN(20)])
	default:
		writeQuoted(r, b, randomString(r))
	}
}

func randomString(r *rand.Rand) string {
	alphabet := []string{"a", "b", "_", "id", "_etag", "_rid", "é", "😀", "\x00", "\"", "\\", "/", "\n", "\u2028", "pk"}
	n := r.IntN(5)
	switch r.IntN(25) {
	case 0:
		n = MaxStringBytes + r.IntN(5) - 2
	case 1:
		n = 300
	}
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	s := b.String()
	if r.IntN(20) == 0 {
		s = strings.Repeat("x", MaxPathBytes/2+r.IntN(10))
	}
	return s
}

// writeQuoted writes s as a JSON string, escaping a random choice of
// characters (and the ones that must be).
func writeQuoted(r *rand.Rand, b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20:
			fmt.Fprintf(b, "\\u%04x", c)
		case r.IntN(8) == 0 && c < 0x10000:
			fmt.Fprintf(b, "\\u%04X", c)
		case r.IntN(8) == 0 && c == '/':
			b.WriteString(`\/`)
		case r.IntN(8) == 0 && c >= 0x10000:
			c -= 0x10000
			fmt.Fprintf(b, "\\u%04x\\u%04x", 0xD800+(c>>10), 0xDC00+(c&0x3FF))
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
}

var rawPolicies = []*Policy{
	Default,
	MustCompile([]byte(`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/*"},{"path":"/\"_rid\"/?"}]}`)),
	MustCompile([]byte(`{"includedPaths":[{"path":"/a/?"},{"path":"/b/a/*"},{"path":"/id/?"}],"excludedPaths":[{"path":"/*"}]}`)),
	MustCompile([]byte(`{"includedPaths":[{"path":"/a/[]/?"},{"path":"/_etag/?"},{"path":"/é/*"}],"excludedPaths":[{"path":"/*"},{"path":"/é/a/?"}]}`)),
	MustCompile([]byte(`{"indexingMode":"none"}`)),
}

// TestRawTermsModel checks RawTerms against the decode-and-walk model on
// random documents, under several policies.
func TestRawTermsModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 5000
	if testing.Short() {
		n = 500
	}
	for i := range n {
		var b strings.Builder
		randomJSON(r, &b, 0, true)
		doc := []byte(b.String())
		if i%3 == 0 {
			// Add system properties as stored documents carry them.
			doc = jsondoc.WithSystem(nil, doc, jsondoc.System{Rid: "AAAAAA==", Self: "dbs/x/colls/y/docs/AAAAAA==/", Etag: `"00000000-0000"`, Ts: r.Int64N(1 << 40)})
		}
		if _, err := jsondoc.Scan(doc, nil); err != nil {
			continue // e.g. a number out of range
		}
		for pi, p := range rawPolicies {
			want, err := modelTerms(p, doc)
			if err != nil {
				t.Fatalf("model on %s: %v", doc, err)
			}
			got := rawTerms(t, p, doc)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("policy %d, document %s:\nRawTerms %q\nmodel    %q", pi, doc, got, want)
			}
		}
	}
}

// FuzzRawTerms checks RawTerms against the model on every input Scan
// accepts, and that it never panics on the others.
func FuzzRawTerms(f *testing.F) {
	f.Add([]byte(`{"id":"a","pk":"b","n":1,"o":{"x":[1,2],"y":null},"s":"\u00e9\ud83d\ude00"}`))
	f.Add([]byte(`{"a":{"b":{"c":{}}},"_etag":"x","":-0}`))
	f.Add([]byte(`{"a":1e400}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var buf []byte
		for _, p := range rawPolicies {
			_ = p.RawTerms(doc, &buf, func([]byte, int, []string) error { return nil })
		}
		if _, err := jsondoc.Scan(doc, nil); err != nil {
			return
		}
		for pi, p := range rawPolicies {
			want, err := modelTerms(p, doc)
			if err != nil {
				t.Fatalf("Scan accepted %q, the model did not: %v", doc, err)
			}
			if got := rawTerms(t, p, doc); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("policy %d, document %q:\nRawTerms %q\nmodel    %q", pi, doc, got, want)
			}
		}
	})
}

func BenchmarkRawTerms(b *testing.B) {
	doc := []byte(`{"id":"item-000123","pk":"p123","n":123,"v":0,"pad":"` + strings.Repeat("x", 960) + `","_rid":"AAAAAA==","_self":"dbs/x/colls/y/docs/AAAAAA==/","_etag":"\"00000000-0000\"","_attachments":"attachments/","_ts":1763900000}`)
	var buf []byte
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Default.RawTerms(doc, &buf, func([]byte, int, []string) error { return nil })
	}
}

func BenchmarkModelTerms(b *testing.B) {
	doc := []byte(`{"id":"item-000123","pk":"p123","n":123,"v":0,"pad":"` + strings.Repeat("x", 960) + `","_rid":"AAAAAA==","_self":"dbs/x/colls/y/docs/AAAAAA==/","_etag":"\"00000000-0000\"","_attachments":"attachments/","_ts":1763900000}`)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = modelTerms(Default, doc)
	}
}
