package lang

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
)

func wantLimit(t *testing.T, err error, name string, max int) *LimitError {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("got %v (%T), want a *LimitError %s", err, err, name)
	}
	if le.Name != name || le.Max != max {
		t.Fatalf("got limit %s max %d, want %s max %d", le.Name, le.Max, name, max)
	}
	return le
}

// padded returns a valid script of exactly n bytes.
func padded(n int) string {
	head, tail := "g.inject('", "')"
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// Cosmos DB gremlin/limits.md: "Script length 64 KB: maximum length of a
// Gremlin traversal script per request".
func TestLimitScriptLength(t *testing.T) {
	if _, err := Parse(padded(64*1024), nil, Limits{}); err != nil {
		t.Fatalf("a 64 KB script: %v", err)
	}
	_, err := Parse(padded(64*1024+1), nil, Limits{})
	le := wantLimit(t, err, LimitScriptLength, 65536)
	if le.Value != 65537 || !strings.Contains(le.Error(), "65537 bytes exceeds the script length limit of 65536") {
		t.Errorf("got %+v: %v", le, le)
	}
	_, err = Parse(padded(20), nil, Limits{ScriptBytes: 19})
	wantLimit(t, err, LimitScriptLength, 19)
	// The limit is checked before anything is read: even bad text gets
	// the limit error.
	_, err = Parse(strings.Repeat("(", 70000), nil, Limits{})
	wantLimit(t, err, LimitScriptLength, 65536)
}

// Cosmos DB gremlin/limits.md: "Operator depth 400: total number of unique
// steps in a traversal. For example, g.V().out() has an operator count of
// 2: V() and out(), g.V('label').repeat(out()).times(100) has operator
// depth of 3: V(), repeat(), and out() because .times(100) is a parameter to
// .repeat() operator."
func TestCountOperators(t *testing.T) {
	cases := []struct {
		script string
		want   int
	}{
		{"g.V().out()", 2},
		{"g.V('label').repeat(out()).times(100)", 3},
		{"g.V()", 1},
		{"g.withSideEffect('a', __.out()).V().iterate()", 2}, // source steps are not operators, their traversals are
		{"g.V().as('a').out().as('b').select('a', 'b').by('name').by(values('x'))", 4},
		{"g.V().repeat(out()).until(has('x')).emit(hasLabel('y'))", 5},
		{"g.V().choose(values('age')).option(1, __.in()).option(none, identity())", 5},
		{"g.addV('a').addE('e').from(__.V(1)).to(g.V(2))", 4},
		{"g.V().coalesce(__, out()).where(not(within('a')))", 4},
		{"g.inject([__.out(), [b: __.in().out()]])", 4},
		{"g.V().has('a', within(1, 2)).project('x', 'y').by(__.count()).by(__.fold().unfold())", 6},
		{"g.withStrategies(new SubgraphStrategy(vertices: __.has('x'))).V()", 2},
	}
	for _, c := range cases {
		tr, err := Parse(c.script, nil, Limits{})
		if err != nil {
			t.Errorf("%s: %v", c.script, err)
			continue
		}
		if got := CountOperators(tr); got != c.want {
			t.Errorf("%s: %d operators, want %d", c.script, got, c.want)
		}
	}
}

func TestLimitOperatorDepth(t *testing.T) {
	chain := func(n int) string { return "g.V()" + strings.Repeat(".out()", n-1) }
	if _, err := Parse(chain(400), nil, Limits{}); err != nil {
		t.Fatalf("400 operators: %v", err)
	}
	_, err := Parse(chain(401), nil, Limits{})
	if le := wantLimit(t, err, LimitOperatorDepth, 400); le.Value != 401 {
		t.Errorf("value %d, want 401", le.Value)
	}
	// Nested steps count too; modulators do not.
	nested := func(n int) string { return "g.V().union(" + strings.Repeat("out(),", n-1) + "out()).by('x')" }
	if _, err := Parse(nested(398), nil, Limits{}); err != nil {
		t.Errorf("V, union and 398 nested out(): %v", err)
	}
	if _, err := Parse(nested(399), nil, Limits{}); err == nil || !strings.Contains(err.Error(), "401 steps") {
		t.Errorf("V, union and 399 nested out(): got %v, want 401 steps over the limit", err)
	}
	if _, err := Parse("g.V().out()", nil, Limits{Operators: 2}); err != nil {
		t.Errorf("2 operators under a limit of 2: %v", err)
	}
	_, err = Parse("g.V().out().times(3).out()", nil, Limits{Operators: 2})
	wantLimit(t, err, LimitOperatorDepth, 2)
}

func TestLimitNesting(t *testing.T) {
	lists := func(n int) string { return "g.inject(" + strings.Repeat("[", n) + strings.Repeat("]", n) + ")" }
	if _, err := Parse(lists(100), nil, Limits{}); err != nil {
		t.Fatalf("100 nested lists: %v", err)
	}
	_, err := Parse(lists(101), nil, Limits{})
	wantLimit(t, err, LimitNesting, 100)

	// Every way to nest counts: traversals, predicates, maps, sets,
	// strategies, predicate chains.
	deep := []string{
		"g.V().where(" + strings.Repeat("not(", 30) + "out()" + strings.Repeat(")", 30) + ")",
		"g.V().has('a', " + strings.Repeat("P.not(", 30) + "eq(1)" + strings.Repeat(")", 30) + ")",
		"g.inject(" + strings.Repeat("[a: ", 30) + "1" + strings.Repeat("]", 30) + ")",
		"g.inject(" + strings.Repeat("{", 30) + strings.Repeat("}", 30) + ")",
		"g.V().has('a', gt(1)" + strings.Repeat(".negate()", 30) + ")",
		"g.V().has('a', gt(1)" + strings.Repeat(".and(lt(2)).or(lt(3))", 15) + ")",
		"g.withStrategies(new S(a: " + strings.Repeat("[", 29) + strings.Repeat("]", 29) + ")).V()",
	}
	for _, s := range deep {
		if _, err := Parse(s, nil, Limits{}); err != nil {
			t.Errorf("%.60s... under the default: %v", s, err)
		}
		_, err := Parse(s, nil, Limits{Nesting: 20})
		var le *LimitError
		if !errors.As(err, &le) || le.Name != LimitNesting {
			t.Errorf("%.60s... under a nesting limit of 20: got %v", s, err)
		}
	}
	// A script of nothing but brackets stops at the limit, not deep in
	// the stack.
	_, err = Parse("g.inject("+strings.Repeat("[", 60000), nil, Limits{})
	wantLimit(t, err, LimitNesting, 100)
}

func TestLimitRangeLength(t *testing.T) {
	tr, err := Parse("g.inject(1..10000)", nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Steps[0].Args[0].([]Value); len(got) != 10000 || got[9999] != int32(10000) {
		t.Fatalf("1..10000 gave %d elements", len(got))
	}
	_, err = Parse("g.inject(0..10000)", nil, Limits{})
	wantLimit(t, err, LimitRangeLength, MaxRangeLength)
	// The budget is for the whole script, so that many small ranges
	// cannot multiply a short script into a large tree.
	_, err = Parse("g.inject("+strings.Repeat("1..5000,", 2)+"1..2)", nil, Limits{})
	wantLimit(t, err, LimitRangeLength, MaxRangeLength)
}

func TestBindings(t *testing.T) {
	type custom struct{ A int }
	bindings := map[string]any{
		"s":      "1",
		"i":      7,
		"big":    int64(1) << 40,
		"u":      uint64(math.MaxUint64),
		"f":      2.5,
		"n":      json.Number("12"),
		"nl":     json.Number("12345678901"),
		"nf":     json.Number("1.5e3"),
		"xs":     []any{"a", 1},
		"strs":   []string{"x", "y"},
		"obj":    map[string]any{"b": 2, "a": []any{true, nil}},
		"bad":    custom{1},
		"fn":     func() {},
		"trav":   anon(st("out")),
		"nested": nestAny(200),
		"id":     "shadowed",
		"path":   "/a",
		"day":    5,
		"string": "text",
	}
	cases := []struct {
		script string
		want   string // canonical text
	}{
		{"g.V(s)", "g.V('1')"},
		{"g.V(i, big, u, f)", "g.V(7,1099511627776L,18446744073709551615n,2.5)"},
		{"g.V(n, nl, nf)", "g.V(12,12345678901L,1500.0)"},
		{"g.V(xs).has('x', strs)", "g.V(['a',1]).has('x',['x','y'])"},
		{"g.inject(obj)", "g.inject(['a':[true,null],'b':2])"},
		{"g.V().has('pk', within(xs))", "g.V().has('pk',P.within('a',1))"},
		{"g.V().limit(i).next(i)", "g.V().limit(7).next(7)"},
		// Grammar constants win over bindings, as in gremlin-lang, where
		// id is a keyword.
		{"g.V().values(id)", "g.V().values(T.id)"},
		// Naked map keys are strings, not binding lookups.
		{"g.inject([s: s])", "g.inject(['s':'1'])"},
		// GType and DT words yield to bindings; unbound, they are
		// constants.
		{"g.V().has('p', path).has('d', day).is(typeOf(string))", "g.V().has('p','/a').has('d',5).is(P.typeOf('text'))"},
		{"g.V().has('x', vertex).dateAdd(hour, 1)", "g.V().has('x',GType.VERTEX).dateAdd(DT.hour,1)"},
	}
	for _, c := range cases {
		tr, err := Parse(c.script, bindings, Limits{})
		if err != nil {
			t.Errorf("%s: %v", c.script, err)
			continue
		}
		if got := Format(tr); got != c.want {
			t.Errorf("%s: got %s, want %s", c.script, got, c.want)
		}
	}
	for _, name := range []string{"bad", "fn", "trav", "nested"} {
		_, err := Parse("g.V("+name+")", bindings, Limits{})
		var be *BindingError
		if !errors.As(err, &be) || be.Name != name || !strings.Contains(err.Error(), "cannot use the binding "+name) {
			t.Errorf("binding %s: got %v, want a *BindingError naming it", name, err)
		}
	}
	// A binding named many times is converted once and shared.
	tr, err := Parse("g.inject(xs, xs)", bindings, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := tr.Steps[0].Args[0].([]Value), tr.Steps[0].Args[1].([]Value)
	if &a[0] != &b[0] {
		t.Errorf("the two uses of one binding do not share its value")
	}
	if _, err := Parse("g.V(x)", nil, Limits{}); err == nil || !strings.Contains(err.Error(), "unknown identifier x") {
		t.Errorf("no bindings: got %v", err)
	}
	// big values are copied, not aliased to the caller's.
	bi := big.NewInt(5)
	tr, err = Parse("g.inject(b)", map[string]any{"b": bi}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	bi.SetInt64(6)
	if got := tr.Steps[0].Args[0].(*big.Int); got.Int64() != 5 {
		t.Errorf("the tree follows the caller's big.Int: %v", got)
	}
}

func nestAny(n int) any {
	var v any = 1
	for i := 0; i < n; i++ {
		v = []any{v}
	}
	return v
}
