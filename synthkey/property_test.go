package synthkey

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The property test builds random expressions over a fixed set of paths and
// random documents, and checks that every way of computing a key agrees:
// Compute over the raw text, ComputeMap over the document decoded by
// encoding/json (with and without UseNumber), and FromBase (or Expand, for
// random suffixes) over the base values read out of the document
// independently of this package.

// propPaths are the paths the generated expressions use, with their
// property names. /c is an object when /c/d or /c/e are present.
var propPaths = []struct {
	text string
	segs []string
}{
	{"/a", []string{"a"}},
	{"/b", []string{"b"}},
	{"/c/d", []string{"c", "d"}},
	{"/c/e", []string{"c", "e"}},
	{`/"x y"`, []string{"x y"}},
	{"/n/m/o", []string{"n", "m", "o"}},
	{"/c", []string{"c"}},
}

// pnode is a generated JSON object: members in order, each value either a
// *pnode or raw JSON text.
type pnode struct {
	names []string
	vals  []any
}

func (n *pnode) child(name string) *pnode {
	if i := slices.Index(n.names, name); i >= 0 {
		if c, ok := n.vals[i].(*pnode); ok {
			return c
		}
		c := &pnode{}
		n.vals[i] = c
		return c
	}
	c := &pnode{}
	n.names = append(n.names, name)
	n.vals = append(n.vals, c)
	return c
}

func (n *pnode) set(segs []string, raw string) {
	for _, s := range segs[:len(segs)-1] {
		n = n.child(s)
	}
	last := segs[len(segs)-1]
	if i := slices.Index(n.names, last); i >= 0 {
		n.vals[i] = raw
		return
	}
	n.names = append(n.names, last)
	n.vals = append(n.vals, raw)
}

func (n *pnode) write(b *bytes.Buffer, r *rand.Rand) {
	ws := func() {
		if r.IntN(4) == 0 {
			b.WriteString([]string{" ", "\n", "\t ", "\r\n"}[r.IntN(4)])
		}
	}
	b.WriteByte('{')
	for i, name := range n.names {
		if i > 0 {
			b.WriteByte(',')
		}
		ws()
		q, _ := json.Marshal(name)
		b.Write(q)
		ws()
		b.WriteByte(':')
		ws()
		switch v := n.vals[i].(type) {
		case *pnode:
			v.write(b, r)
		case string:
			b.WriteString(v)
		}
		ws()
	}
	b.WriteByte('}')
}

// lookupBase finds the value at segs in the generated tree and decodes it
// with encoding/json: the base value the key is computed from.
func (n *pnode) lookupBase(t *testing.T, segs []string) any {
	var cur any = n
	for _, s := range segs {
		node, ok := cur.(*pnode)
		if !ok {
			return Undefined
		}
		i := slices.Index(node.names, s)
		if i < 0 {
			return Undefined
		}
		cur = node.vals[i]
	}
	switch v := cur.(type) {
	case *pnode:
		return map[string]any{}
	case string:
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			t.Fatalf("generated invalid JSON %q: %v", v, err)
		}
		return x
	}
	panic("unreachable")
}

var propRunes = []rune{'a', 'b', 'Z', '0', '7', '-', '.', ' ', '"', '\\', '/', '\n', '\t', '\x01', 'é', '€', '😀', '<', '&', '\u2028'}

// genValue returns the raw JSON text of a random scalar (rarely an array or
// object).
func genValue(r *rand.Rand) string {
	switch r.IntN(12) {
	case 0, 1, 2, 3:
		var rs []rune
		for range r.IntN(6) {
			rs = append(rs, propRunes[r.IntN(len(propRunes))])
		}
		s := string(rs)
		switch r.IntN(3) {
		case 0:
			q, _ := json.Marshal(s) // escapes < > & and U+2028
			return string(q)
		case 1: // every character as \u escapes (surrogate pairs for astral ones)
			var b strings.Builder
			b.WriteByte('"')
			for _, c := range rs {
				if c > 0xFFFF {
					c -= 0x10000
					b.WriteString(`\u` + strconv.FormatInt(int64(0xD800+(c>>10)), 16) + `\u` + strconv.FormatInt(int64(0xDC00+(c&0x3FF)), 16))
					continue
				}
				b.WriteString(`\u` + strings.Repeat("0", 4-len(strconv.FormatInt(int64(c), 16))) + strconv.FormatInt(int64(c), 16))
			}
			if r.IntN(5) == 0 {
				b.WriteString(`\ud800`) // a lone surrogate decodes to U+FFFD
			}
			b.WriteByte('"')
			return b.String()
		default:
			return string(jsonQuoteMinimal(s))
		}
	case 4, 5, 6, 7:
		return genNumber(r)
	case 8:
		return []string{"true", "false", "null"}[r.IntN(3)]
	case 9:
		return []string{"[]", "[1,2]", `{"k":1}`, "{}"}[r.IntN(4)]
	default:
		return strconv.Itoa(r.IntN(1000))
	}
}

func jsonQuoteMinimal(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

var propNumbers = []float64{0, 1, -1, 7, 1.5, 0.1, 100, 1e20, 1e21, 1.5e21, 1e-6, 1e-7, 1.5e-7, 123456789.125, 1 << 53, 12345678901234567890, 5e-324, math.MaxFloat64, 2.5e-100}

func genNumber(r *rand.Rand) string {
	var f float64
	switch r.IntN(3) {
	case 0:
		f = propNumbers[r.IntN(len(propNumbers))]
	case 1:
		f = math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 3
		}
	default:
		f = float64(r.IntN(2000000)-1000000) / float64([]int{1, 2, 4, 10, 1000}[r.IntN(5)])
	}
	if r.IntN(4) == 0 {
		f = -f
	}
	switch r.IntN(5) {
	case 0:
		return strconv.FormatFloat(f, 'e', -1, 64)
	case 1:
		s := strconv.FormatFloat(f, 'E', -1, 64)
		return strings.Replace(s, "E+", "E", 1)
	case 2:
		if math.Abs(f) < 1e30 && math.Abs(f) > 1e-30 || f == 0 {
			s := strconv.FormatFloat(f, 'f', -1, 64)
			if !strings.Contains(s, ".") {
				s += ".0"
			}
			return s
		}
	case 3:
		if f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return strconv.FormatFloat(f, 'f', -1, 64) + "e0"
		}
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// genExpr returns the text of a random valid expression.
func genExpr(r *rand.Rand) string {
	random := false
	level := func() string {
		if r.IntN(3) == 0 {
			return propPaths[r.IntN(len(propPaths))].text
		}
		var args []string
		hasComputed := false
		for n := 2 + r.IntN(4); len(args) < n || !hasComputed; {
			switch k := r.IntN(6); {
			case k < 2:
				args = append(args, propPaths[r.IntN(len(propPaths))].text)
				hasComputed = true
			case k < 4:
				args = append(args, []string{`"-"`, `"."`, `""`, `"\u00e9|\n"`}[r.IntN(4)])
			case k == 4:
				args = append(args, "hash("+propPaths[r.IntN(len(propPaths))].text+", "+strconv.Itoa(1+r.IntN(500))+")")
				hasComputed = true
			default:
				if !random {
					random = true
					lo := 1 + r.IntN(20)
					args = append(args, "random("+strconv.Itoa(lo)+", "+strconv.Itoa(lo+r.IntN(10))+")")
					hasComputed = true
				}
			}
		}
		return "concat(" + strings.Join(args, ", ") + ")"
	}
	if r.IntN(3) > 0 {
		return level()
	}
	n := 2 + r.IntN(2)
	levels := []string{}
	for len(levels) < n {
		lv := level()
		if !slices.Contains(levels, lv) {
			levels = append(levels, lv)
		}
	}
	return "[" + strings.Join(levels, ", ") + "]"
}

func keyOrError(k Key, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return k.String()
}

func TestComputeProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const iterations = 5000
	var computed, randomComputed int
	for iter := range iterations {
		src := genExpr(r)
		e, err := Parse(src)
		if err != nil {
			t.Fatalf("generated expression %s does not parse: %v", src, err)
		}
		root := &pnode{}
		for _, p := range propPaths {
			if r.IntN(5) > 0 {
				root.set(p.segs, genValue(r))
			}
		}
		var doc bytes.Buffer
		root.write(&doc, r)

		// The base values, read from the document without this package.
		var base []any
		for _, p := range e.Paths() {
			i := slices.IndexFunc(propPaths, func(pp struct {
				text string
				segs []string
			}) bool {
				return pp.text == p
			})
			if i < 0 {
				t.Fatalf("%s: unexpected base path %s", src, p)
			}
			base = append(base, root.lookupBase(t, propPaths[i].segs))
		}

		seed := r.Uint64()
		k, err := e.Compute(doc.Bytes(), rand.New(rand.NewPCG(seed, 0)))
		got := keyOrError(k, err)
		if err == nil {
			computed++
			if _, _, random := e.RandomRange(); random {
				randomComputed++
			}
		} else {
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("%s over %s: error %v is not a *ValueError", src, doc.Bytes(), err)
			}
		}

		// Decoded documents agree.
		dec := json.NewDecoder(bytes.NewReader(doc.Bytes()))
		dec.UseNumber()
		var m1, m2 map[string]any
		if err := dec.Decode(&m1); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(doc.Bytes(), &m2); err != nil {
			t.Fatal(err)
		}
		for _, m := range []map[string]any{m1, m2} {
			k2, err2 := e.ComputeMap(m, rand.New(rand.NewPCG(seed, 0)))
			if got2 := keyOrError(k2, err2); got2 != got {
				t.Fatalf("iteration %d: %s over %s:\nCompute    %s\nComputeMap %s", iter, src, doc.Bytes(), got, got2)
			}
		}

		// The base values give the same key.
		keys, errx := e.Expand(base)
		if (err == nil) != (errx == nil) || err != nil && err.Error() != errx.Error() {
			t.Fatalf("iteration %d: %s over %s:\nCompute %s\nExpand error %v", iter, src, doc.Bytes(), got, errx)
		}
		if _, _, random := e.RandomRange(); !random {
			kb, errb := e.FromBase(base)
			if gotb := keyOrError(kb, errb); gotb != got {
				t.Fatalf("iteration %d: %s over %s:\nCompute  %s\nFromBase %s", iter, src, doc.Bytes(), got, gotb)
			}
			if err == nil && (len(keys) != 1 || !keys[0].Equal(k)) {
				t.Fatalf("iteration %d: %s: Expand = %v, want [%v]", iter, src, keys, k)
			}
		} else {
			if _, errb := e.FromBase(base); !errors.Is(errb, ErrRandom) {
				t.Fatalf("%s: FromBase error = %v, want ErrRandom", src, errb)
			}
			if err == nil {
				if len(keys) != e.KeyCount() || !slices.ContainsFunc(keys, k.Equal) {
					t.Fatalf("iteration %d: %s over %s: Compute = %v, not among the %d keys of Expand %v", iter, src, doc.Bytes(), k, len(keys), keys)
				}
				seen := map[string]bool{}
				for _, x := range keys {
					seen[x.String()] = true
				}
				if len(seen) != len(keys) {
					t.Fatalf("%s: Expand returned duplicate keys %v", src, keys)
				}
			}
		}

		// Raw values, as a caller that scanned the document would pass them.
		var raw [][]byte
		for _, b := range base {
			if b == Undefined {
				raw = append(raw, nil)
				continue
			}
			j, _ := json.Marshal(b)
			raw = append(raw, j)
		}
		kr, errr := e.FromRaw(raw, rand.New(rand.NewPCG(seed, 0)))
		if gotr := keyOrError(kr, errr); gotr != got {
			t.Fatalf("iteration %d: %s from raw %q:\nCompute %s\nFromRaw %s", iter, src, raw, got, gotr)
		}
	}
	t.Logf("%d of %d documents had a key (%d with a random suffix)", computed, iterations, randomComputed)
	if computed < iterations/4 || randomComputed < iterations/20 {
		t.Fatalf("too few documents had a key for the test to mean much: %d, %d with random", computed, randomComputed)
	}
}
