package graph

import (
	"testing"

	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

func p(op string, args ...lang.Value) lang.P { return lang.P{Op: op, Args: args} }

func TestEqualAndCompare(t *testing.T) {
	// Numbers compare by value whatever their type (TinkerPop 3.6+
	// "equality and comparability" in the reference's semantics section).
	if !Equal(int32(1), int64(1)) || !Equal(int64(2), 2.0) || Equal(1.0, "1") {
		t.Fatal("numeric equality")
	}
	if !Equal([]any{int32(1), "a"}, []any{int64(1), "a"}) || Equal([]any{1}, []any{1, 2}) {
		t.Fatal("list equality")
	}
	m1, m2 := &Map{}, &Map{}
	m1.Put("a", int32(1))
	m1.Put("b", "x")
	m2.Put("b", "x")
	m2.Put("a", 1.0)
	if !Equal(m1, m2) {
		t.Fatal("map equality ignores order and numeric type")
	}
	if c, ok := Compare(int32(3), 2.5); !ok || c != 1 {
		t.Fatal("numeric compare")
	}
	if _, ok := Compare(int32(3), "a"); ok {
		t.Fatal("a number and a string are not comparable")
	}
	if c, _ := Compare(nil, false); c != -1 {
		t.Fatal("null sorts first")
	}
}

func TestPredicates(t *testing.T) {
	cases := []struct {
		p    lang.P
		v    any
		want bool
	}{
		{p("eq", int32(29)), int64(29), true},
		{p("neq", "a"), int32(1), true},
		{p("gt", int32(30)), "x", false}, // incomparable: false, not an error
		{p("between", int32(1), int32(3)), int32(3), false},
		{p("between", int32(1), int32(3)), int32(1), true},
		{p("inside", int32(1), int32(3)), int32(1), false},
		{p("outside", int32(1), int32(3)), int32(4), true},
		{p("within", "a", "b"), "b", true},
		{p("without", "a", "b"), "c", true},
		{p("startingWith", "ma"), "marko", true},
		{p("notContaining", "o"), "vadas", true},
		{p("containing", "o"), int32(1), false},
		{p("regex", "^m.*o$"), "marko", true},
		{p("and", p("gt", int32(1)), p("lt", int32(5))), int32(3), true},
		{p("or", p("lt", int32(1)), p("gt", int32(5))), int32(3), false},
		{p("not", p("eq", "x")), "y", true},
	}
	for _, c := range cases {
		got, err := Test(c.p, c.v)
		if err != nil || got != c.want {
			t.Errorf("%v on %v: %v, %v", c.p, c.v, got, err)
		}
	}
	for _, bad := range []lang.P{p("regex", "("), p("startingWith", int32(1)), p("frob"), p("between", int32(1)), p("and", "x")} {
		if _, err := Test(bad, "s"); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	deep := p("eq", "x")
	for i := 0; i < 100; i++ {
		deep = p("not", deep)
	}
	if _, err := Test(deep, "x"); err == nil {
		t.Error("deep predicate: no error")
	}
}
