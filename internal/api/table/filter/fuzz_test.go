package filter

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/parsecdb/parsec/internal/api/table/edm"
)

var fuzzSeeds = []string{
	"PartitionKey eq 'a'",
	"PartitionKey eq 'a' and RowKey ge 'b' and RowKey lt 'c'",
	"Name eq 'it''s' or not (Age lt 5L) and D eq 2.0 and B eq X'0aff'",
	"T gt datetime'2020-01-01T00:00:00.1234567Z' and G eq guid'6bc44494-d2b7-4738-8f87-acd692226a5c'",
	"T le datetime'2020-01-01T01:00:00+01:00' or T ge DateTime'2020-01-01T00:00:00'",
	"D eq 1e300 or D eq -1.5E-7D or D eq 5d or D eq -0.0",
	"D eq NaN or D lt INF or D gt -INF or D ne NaND or D eq -INFd", "NaN eq D", "D eq -INFx", "D eq -IN",
	"Active", "not Active", "not not Active", "true", "false", "not (true)",
	"'x' eq Name", "5 lt Age", "-2147483648 ge Age",
	"a eq 1 or (b eq 2 or c eq 3)", "a eq 1 and (b eq 2 and c eq 3)", "(a eq 1 or b eq 2) and c eq 3",
	"not (a eq 1 and b eq 2) or not (c eq 3 or d eq 4)",
	"((((a eq 1))))", "X eq binary''", "Größe eq 'ß'", "S eq '\U0001F600'",
	"", " ", "(", ")", "'", "''", "a eq", "eq eq eq", "a eq 1 and", "not", "startswith(a,'b')",
	"a eq 2147483648", "a eq 1.5M", "a eq null", "a eq \"x\"", "a eq 1e999", "a eq -", "a\x00",
	"a eq '\xff'", "a eq X'0'", "a eq guid'x'", "a eq datetime'2020'",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T %v, want *SyntaxError", s, err, err)
			}
			if se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("Parse(%q): offset %d outside the input", s, se.Offset)
			}
			return
		}
		printed := e.String()
		lim := DefaultLimits
		lim.MaxLength = 1 << 30 // printing may lengthen literals; nothing else
		e2, err := lim.Parse(printed)
		if err != nil {
			t.Fatalf("Parse(%q) printed %q which does not parse: %v", s, printed, err)
		}
		if !equalExpr(e, e2) {
			t.Fatalf("Parse(%q) = %#v\nprinted %q\nreparsed %#v", s, e, printed, e2)
		}
		if p2 := e2.String(); p2 != printed {
			t.Fatalf("printing is not stable: %q then %q", printed, p2)
		}
		if n := Comparisons(e); n > DefaultLimits.MaxComparisons {
			t.Fatalf("Parse(%q) accepted %d comparisons", s, n)
		}
	})
}

// equalExpr is reflect.DeepEqual except that a NaN equals a NaN.
func equalExpr(a, b Expr) bool {
	switch a := a.(type) {
	case *Compare:
		b, ok := b.(*Compare)
		if !ok || a.Prop != b.Prop || a.Op != b.Op {
			return false
		}
		if a.Value.Type == edm.Double && b.Value.Type == edm.Double && math.IsNaN(a.Value.F) {
			return math.IsNaN(b.Value.F)
		}
		return reflect.DeepEqual(a.Value, b.Value)
	case *And:
		b, ok := b.(*And)
		return ok && equalExpr(a.L, b.L) && equalExpr(a.R, b.R)
	case *Or:
		b, ok := b.(*Or)
		return ok && equalExpr(a.L, b.L) && equalExpr(a.R, b.R)
	case *Not:
		b, ok := b.(*Not)
		return ok && equalExpr(a.X, b.X)
	}
	return reflect.DeepEqual(a, b)
}

// TestRoundTrip checks the fuzz property on the seeds and on random
// filters in ordinary test runs.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	inputs := slices.Clone(fuzzSeeds)
	for range 500 {
		inputs = append(inputs, randFilter(r, 5))
	}
	for _, s := range inputs {
		e, err := Parse(s)
		if err != nil {
			continue
		}
		e2, err := Parse(e.String())
		if err != nil || !equalExpr(e, e2) {
			t.Errorf("%q printed %q: reparse %v, %v", s, e.String(), e2, err)
		}
	}
}
