package eval

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// randomText writes random JSON text: canonical most of the time, with
// whitespace, other escapes and number spellings mixed in.
func randomText(r *rand.Rand, b *strings.Builder, depth int) {
	odd := func() bool { return r.IntN(30) == 0 }
	if odd() {
		b.WriteByte(' ')
	}
	k := r.IntN(9)
	if depth == 0 {
		k = 0
	}
	if depth > 6 {
		k = 2 + r.IntN(7)
	}
	switch k {
	case 0:
		b.WriteByte('{')
		n := r.IntN(5)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			writeText(r, b, []string{"a", "b", "id", "é", "a\"b", "\n", "x"}[r.IntN(7)])
			b.WriteByte(':')
			randomText(r, b, depth+1)
		}
		b.WriteByte('}')
	case 1:
		b.WriteByte('[')
		n := r.IntN(4)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			randomText(r, b, depth+1)
		}
		b.WriteByte(']')
	case 2:
		b.WriteString([]string{"null", "true", "false"}[r.IntN(3)])
	case 3, 4:
		b.WriteString([]string{"0", "-0", "1", "-1", "1.5", "1.0", "1e2", "1E2", "1e21", "1e+21", "1e-7", "0.000001",
			"123456789012345678901", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
			"10000000000000000000", "0.1", "2.5e-8", "1e400", "01",
			strconv.FormatInt(r.Int64()-r.Int64(), 10), strconv.FormatFloat(r.NormFloat64()*1e6, 'g', -1, 64)}[r.IntN(23)])
	default:
		writeText(r, b, []string{"", "a", "héllo", "tab\there", "q\"", "\\", "\x01", "\x1f", "\u2028", "😀", "/", "\x7f"}[r.IntN(12)])
	}
	if odd() {
		b.WriteByte('\n')
	}
}

func writeText(r *rand.Rand, b *strings.Builder, s string) {
	if r.IntN(4) != 0 {
		b.Write(appendQuoteForTest(s))
		return
	}
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20 || r.IntN(3) == 0:
			fmt.Fprintf(b, []string{"\\u%04x", "\\u%04X"}[r.IntN(2)], c)
		case c == '/' && r.IntN(2) == 0:
			b.WriteString(`\/`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
}

func appendQuoteForTest(s string) []byte { return appendQuoted(nil, s) }

// TestCanonicalJSON checks CanonicalJSON against decoding and encoding: it
// may only say yes when AppendJSON gives raw back, and then with JSONSize.
func TestCanonicalJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	yes, no := 0, 0
	for range 20000 {
		var b strings.Builder
		randomText(r, &b, 0)
		checkCanonical(t, []byte(b.String()))
		v, err := FromJSON([]byte(b.String()))
		if err != nil {
			continue
		}
		// The encoding of any value is canonical.
		enc := v.AppendJSON(nil)
		if _, ok := CanonicalJSON(enc); ok {
			yes++
		} else {
			no++
			if !strings.Contains(string(enc), `"a":`) { // repeated names are refused
				t.Errorf("CanonicalJSON refuses AppendJSON's own output %s", enc)
			}
		}
	}
	if yes < 10000 {
		t.Errorf("only %d of %d encodings were found canonical", yes, yes+no)
	}
}

func checkCanonical(t *testing.T, raw []byte) {
	t.Helper()
	size, ok := CanonicalJSON(raw)
	if !ok {
		return
	}
	v, err := FromJSON(raw)
	if err != nil {
		t.Fatalf("CanonicalJSON accepts %q, FromJSON does not: %v", raw, err)
	}
	if enc := v.AppendJSON(nil); string(enc) != string(raw) {
		t.Fatalf("CanonicalJSON accepts %q, but it encodes as %q", raw, enc)
	}
	if want := JSONSize(v); size != want {
		t.Fatalf("CanonicalJSON(%q) size %d, JSONSize %d", raw, size, want)
	}
}

func FuzzCanonicalJSON(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[true,null,"x\n"],"c":{"d":-1.5}}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`"\u001f"`))
	f.Fuzz(func(t *testing.T, raw []byte) { checkCanonical(t, raw) })
}
