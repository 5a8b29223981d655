package filter

import (
	"errors"
	"strings"
	"testing"
)

func chain(n int, op string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = "a eq 1"
	}
	return strings.Join(parts, " "+op+" ")
}

func TestLimits(t *testing.T) {
	ok := func(l Limits, s string) {
		t.Helper()
		if _, err := l.Parse(s); err != nil {
			t.Errorf("Parse(%.60q): %v", s, err)
		}
	}
	limited := func(l Limits, s, msg string) {
		t.Helper()
		_, err := l.Parse(s)
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrLimit) || !strings.Contains(se.Msg, msg) {
			t.Errorf("Parse(%.60q) = %v, want a limit error about %q", s, err, msg)
		}
	}
	// Comparisons: Storage's 15, the default 100.
	ok(StorageLimits, chain(15, "and"))
	limited(StorageLimits, chain(16, "or"), "more than 15 comparisons")
	ok(DefaultLimits, chain(100, "and"))
	limited(DefaultLimits, chain(101, "and"), "more than 100 comparisons")
	limited(DefaultLimits, strings.Repeat("Flag and ", 100)+"Flag", "more than 100 comparisons")
	// A zero field takes the default.
	limited(Limits{}, chain(101, "and"), "more than 100 comparisons")
	// Length.
	long := "a eq '" + strings.Repeat("x", 64<<10) + "'"
	limited(DefaultLimits, long, "at most 65536")
	ok(Limits{MaxLength: 1 << 20}, long)
	// Depth: parentheses, not, and the height of and/or chains.
	l := Limits{MaxDepth: 10}
	ok(l, strings.Repeat("(", 10)+"a eq 1"+strings.Repeat(")", 10))
	limited(l, strings.Repeat("(", 11)+"a eq 1"+strings.Repeat(")", 11), "more than 10 levels")
	ok(l, strings.Repeat("not ", 9)+"a eq 1")
	limited(l, strings.Repeat("not ", 11)+"a eq 1", "more than 10 levels")
	ok(l, chain(10, "and"))
	limited(l, chain(12, "or"), "more than 10 levels")
	// Unbounded nesting in the input fails fast, without deep recursion.
	limited(DefaultLimits, strings.Repeat("(", 60000), "levels")
	limited(DefaultLimits, strings.Repeat("not ", 16000), "levels")
	limited(DefaultLimits, strings.Repeat("true and ", 7000)+"true", "levels")
}
