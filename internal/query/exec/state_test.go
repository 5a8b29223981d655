package exec

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// codecValues are values whose exact form must survive a state's encoding.
func codecValues(t testing.TB) []eval.Value {
	t.Helper()
	vals := []eval.Value{
		{}, eval.NullValue(), eval.BoolValue(false), eval.BoolValue(true),
		eval.IntValue(0), eval.IntValue(-1), eval.IntValue(math.MaxInt64), eval.IntValue(math.MinInt64),
		eval.NumberValue(0.5), eval.NumberValue(math.Copysign(0, -1)), eval.NumberValue(math.NaN()),
		eval.NumberValue(math.Inf(1)), eval.NumberValue(math.Inf(-1)), eval.NumberValue(1e300),
		eval.StringValue(""), eval.StringValue("Ω\x00\"x"),
	}
	for _, j := range []string{`[]`, `{}`, `[1, "a", [null, {"k": [true]}]]`, `{"b": 1, "a": {"c": [1.5, -2]}, "": ""}`} {
		v, err := eval.FromJSON([]byte(j))
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	return vals
}

func sameValue(a, b eval.Value) bool {
	return bytes.Equal(appendValue(nil, a), appendValue(nil, b)) && a.String() == b.String()
}

func TestValueCodec(t *testing.T) {
	for _, v := range codecValues(t) {
		b := appendValue(nil, v)
		d := &decoder{binfmt.NewReader(b, errCorrupt)}
		got := d.value(0)
		if d.Err() != nil || d.Len() != 0 || !sameValue(got, v) || got.IsExactInt() != v.IsExactInt() {
			t.Errorf("%s: decoded %s (err %v, %d bytes left)", v, got, d.Err(), d.Len())
		}
		for i := range b {
			d := &decoder{binfmt.NewReader(b[:i], errCorrupt)}
			d.value(0)
			if d.Err() == nil {
				t.Errorf("%s: a prefix of %d bytes decoded", v, i)
			}
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	p, err := compile(`SELECT DISTINCT VALUE c.n FROM c ORDER BY c.a, c.b DESC`, "")
	if err != nil {
		t.Fatal(err)
	}
	vals := codecValues(t)
	for i := 0; i+3 <= len(vals); i++ {
		st := &State{fp: p.fp, started: true, pos: pos{key: []byte("k\x00\xff"), fan: int64(i)},
			vals: vals[i : i+3], last: vals[i], hasLast: i%2 == 0, offset: int64(i), limit: int64(i - 1)}
		b, err := st.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.UnmarshalState(b)
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		if got.String() != st.String() {
			t.Errorf("round trip:\n got %s\nwant %s", got, st)
		}
		b2, _ := got.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Errorf("%s: re-encoding differs", st)
		}
	}
}

func TestStateRejected(t *testing.T) {
	p, _ := compile(`SELECT VALUE c.id FROM c ORDER BY c.n`, "")
	other, _ := compile(`SELECT VALUE c.id FROM c ORDER BY c.m`, "")
	withParam, _ := compile(`SELECT VALUE c.id FROM c ORDER BY c.n`, `{"@x": 1}`)
	docs := loadDataset(t)
	_, st, err := Exec(p, sources([][]doc{docs}, true), nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.MarshalBinary()
	if _, err := p.UnmarshalState(b); err != nil {
		t.Fatalf("own state refused: %v", err)
	}
	for name, bad := range map[string]func() ([]byte, *Plan){
		"other query":   func() ([]byte, *Plan) { return b, other },
		"other params":  func() ([]byte, *Plan) { return b, withParam },
		"truncated":     func() ([]byte, *Plan) { return b[:len(b)-1], p },
		"trailing":      func() ([]byte, *Plan) { return append(bytes.Clone(b), 0), p },
		"version":       func() ([]byte, *Plan) { c := bytes.Clone(b); c[0] = 9; return c, p },
		"empty":         func() ([]byte, *Plan) { return nil, p },
		"bad flags":     func() ([]byte, *Plan) { c := bytes.Clone(b); c[9] |= 0x80; return c, p },
		"sort key size": func() ([]byte, *Plan) { s := *st; s.vals = nil; c, _ := s.MarshalBinary(); return c, p },
	} {
		data, plan := bad()
		if _, err := plan.UnmarshalState(data); !errors.Is(err, ErrBadContinuation) {
			t.Errorf("%s: got %v, want ErrBadContinuation", name, err)
		}
	}
}

// FuzzUnmarshalState: no input panics, what decodes re-encodes to the same
// state, and a query can run from it.
func FuzzUnmarshalState(f *testing.F) {
	p, err := compile(`SELECT DISTINCT VALUE c.n FROM c ORDER BY c.a`, "")
	if err != nil {
		f.Fatal(err)
	}
	docs := synthetic(1, 50)
	var st *State
	for !st.Done() {
		_, next, err := Exec(p, sources([][]doc{docs}, true), st, 7)
		if err != nil {
			f.Fatal(err)
		}
		b, _ := next.MarshalBinary()
		f.Add(b)
		st = next
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := p.UnmarshalState(b)
		if err != nil {
			if !errors.Is(err, ErrBadContinuation) {
				t.Fatalf("error without ErrBadContinuation: %v", err)
			}
			return
		}
		b2, _ := s.MarshalBinary()
		s2, err := p.UnmarshalState(b2)
		if err != nil || s2.String() != s.String() {
			t.Fatalf("re-encoding %s gives %s, %v", s, s2, err)
		}
		// A decoded state can be run from.
		if _, _, err := Exec(p, sources([][]doc{docs}, true), s, 3); err != nil {
			t.Fatalf("running from %s: %v", s, err)
		}
	})
}
