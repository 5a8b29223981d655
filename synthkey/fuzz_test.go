package synthkey

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

var fuzzSeeds = []string{
	"/date",
	"/a/b",
	`/"a b"/"c/d"/é`,
	`/"\x41"/"\u00a0"`,
	"[/tenant, /user]",
	"[/t,/u,/s]",
	`concat(/deviceId, "-", /date)`,
	`concat(/date, ".", random(1, 400))`,
	`concat(/date, ".", hash(/vin, 400))`,
	`[/tenant, concat(/user, "-", /tenant), concat(/d, ".", random(1, 9))]`,
	`concat(/a, "\u00e9\n\"\\\/\ud83d\ude00\ud800")`,
	`concat(/a, random(1, 2), random(3, 4))`,
	`concat(/a, random(01, 1e3))`,
	`Concat(/a, /b)`,
	`[/a, [/b]]`,
	`/"ab`,
	"/a\xff",
	"",
}

// FuzzParse checks that Parse never panics, that its errors are
// *SyntaxError values inside the input, and that accepted input has a
// canonical text that parses back to the same expression.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %v is a %T", s, err, err)
			}
			if se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("Parse(%q) error offset %d is outside the input", s, se.Offset)
			}
			return
		}
		canon := e.String()
		e2, err := Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its canonical text %q fails: %v", s, canon, err)
		}
		if !reflect.DeepEqual(e, e2) {
			t.Fatalf("Parse(%q) = %#v\nParse(%q) = %#v", s, e, canon, e2)
		}
		if got := e2.String(); got != canon {
			t.Fatalf("canonical text of %q: %q, then %q", s, canon, got)
		}
		if n := e.Levels(); n < 1 || n > MaxLevels {
			t.Fatalf("Parse(%q) has %d levels", s, n)
		}
	})
}

// FuzzCompute checks that Compute never panics on any document and reports
// only the documented error types.
func FuzzCompute(f *testing.F) {
	f.Add(0, `{"date":"2018-08-09","vin":"1HGCM82633A004352"}`)
	f.Add(1, `{"date":2018.50,"vin":{"a":1}}`)
	f.Add(2, `{"tenant":"t","user":null,"d":-0}`)
	f.Add(3, `{"a":{"b":"\u00e9\ud800"}}`)
	f.Add(4, `[1]`)
	exprs := []*Expr{
		MustParse(`concat(/date, ".", hash(/vin, 400))`),
		MustParse(`concat(/date, ".", random(1, 400))`),
		MustParse(`[/tenant, concat(/user, "-", /d)]`),
		MustParse(`/a/b`),
		MustParse(`[/a, /b, concat(/c, hash(/a, 7))]`),
	}
	r := rand.New(rand.NewPCG(1, 1))
	f.Fuzz(func(t *testing.T, which int, doc string) {
		e := exprs[uint(which)%uint(len(exprs))]
		k, err := e.Compute([]byte(doc), r)
		if err != nil {
			var ve *ValueError
			if !errors.As(err, &ve) && !errors.Is(err, ErrDocument) {
				t.Fatalf("%s over %q: unexpected error %v (%T)", e, doc, err, err)
			}
			return
		}
		if len(k) != e.Levels() {
			t.Fatalf("%s over %q: %d components", e, doc, len(k))
		}
		_ = k.String()
	})
}
