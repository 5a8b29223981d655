package ast

import (
	"testing"

	"github.com/parsecdb/parsec/internal/query/token"
)

func num(s string) *NumberLit { return &NumberLit{Text: s} }
func id(s string) *Ident      { return &Ident{Name: s} }

func TestEqual(t *testing.T) {
	at := token.Pos{Offset: 5, Line: 2, Col: 3}
	a := &Binary{Op: Add, L: &Ident{At: at, Name: "c"}, R: num("1"), OpPos: at}
	b := &Binary{Op: Add, L: id("c"), R: num("1")}
	if !Equal(a, b) {
		t.Error("positions must not matter")
	}
	f := func(x, y Node, want bool) {
		t.Helper()
		if got := Equal(x, y); got != want {
			t.Errorf("Equal(%v, %v) = %v", Tree(x), Tree(y), got)
		}
	}
	f(a, &Binary{Op: Sub, L: id("c"), R: num("1")}, false)
	f(num("1"), num("1.0"), false)
	f(&StringLit{Value: "a"}, &StringLit{Value: "a"}, true)
	f(id("a"), &StringLit{Value: "a"}, false)
	f(&Like{X: id("a"), Pattern: id("b")}, &Like{X: id("a"), Pattern: id("b"), Escape: &StringLit{Value: "!"}}, false)
	f(&Like{X: id("a"), Pattern: id("b")}, &Like{X: id("a"), Pattern: id("b")}, true)
	f(&Query{Select: &Select{Kind: SelectStar}}, &Query{Select: &Select{Kind: SelectStar}, Where: id("x")}, false)
	f(&Query{Select: &Select{Kind: SelectStar}}, &Query{Select: &Select{Kind: SelectStar, Distinct: true}}, false)
	f(&Query{Select: &Select{Kind: SelectStar}, GroupBy: []Expr{id("x")}},
		&Query{Select: &Select{Kind: SelectStar}, GroupBy: []Expr{id("y")}}, false)
	f(&Subquery{Kind: Exists, Query: &Query{Select: &Select{Kind: SelectStar}}},
		&Subquery{Kind: Array, Query: &Query{Select: &Select{Kind: SelectStar}}}, false)
	f((*Query)(nil), nil, true)
	f((*From)(nil), &From{Source: &Source{Coll: &Collection{Root: "c"}}}, false)
	f(&Source{Coll: &Collection{Root: "c"}}, &Source{Coll: &Collection{Root: "c"}, Alias: "c"}, false)
	f(&Collection{Root: "c", Path: []*PathSeg{{Kind: SegName, Text: "a"}}},
		&Collection{Root: "c", Path: []*PathSeg{{Kind: SegKey, Text: "a"}}}, false)
}

func TestPrintHandBuilt(t *testing.T) {
	f := func(n Node, want string) {
		t.Helper()
		if got := n.String(); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	// Names that are not identifiers fall back to brackets.
	f(&Dot{X: id("c"), Name: "value"}, `c["value"]`)
	f(&Dot{X: id("c"), Name: "a b"}, `c["a b"]`)
	f(&Collection{Root: "c", Path: []*PathSeg{{Kind: SegName, Text: "order"}}}, `c["order"]`)
	f(&Dot{X: num("1"), Name: "x"}, "(1).x")
	f(&Index{X: num("1"), Index: num("0")}, "1[0]")
	f(&Unary{Op: Neg, X: &Unary{Op: Neg, X: num("1")}}, "- -1")
	f(&Unary{Op: Neg, X: &Unary{Op: Not, X: id("a")}}, "-NOT a")
	f(&Unary{Op: Not, X: &Binary{Op: Eq, L: id("a"), R: id("b")}}, "NOT (a = b)")
	f(&Binary{Op: Sub, L: id("a"), R: &Unary{Op: Neg, X: id("b")}}, "a - -b")
	f(&StringLit{Value: "\"\\\b\f\n\r\t\x00\x1f'é\xff/"}, "\"\\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f'é\xff/\"")
	f(&Conditional{Cond: &Conditional{Cond: id("a"), Then: id("b"), Else: id("c")}, Then: id("d"),
		Else: &Binary{Op: Coalesce, L: id("e"), R: id("f")}}, "(a ? b : c) ? d : (e ?? f)")
	f(&Binary{Op: Coalesce, L: &Conditional{Cond: id("a"), Then: id("b"), Else: id("c")},
		R: &Binary{Op: Coalesce, L: id("d"), R: id("e")}}, "a ? b : c ?? (d ?? e)")
	f(&In{X: &In{X: id("a"), List: []Expr{num("1")}}, Not: true, List: []Expr{&Binary{Op: Or, L: id("b"), R: id("c")}}},
		"(a IN (1)) NOT IN (b OR c)")
	f(&Select{Kind: SelectList, Top: &Param{Name: "n"}, Items: []*SelectItem{{X: id("a"), Alias: "b"}, {X: id("c")}}},
		"SELECT TOP @n a AS b, c")
	f(&OrderBy{Rank: true, Items: []*OrderItem{{X: &Call{Name: "f"}, Dir: Desc}}}, "ORDER BY RANK f() DESC")
	f(&From{Source: &Source{Iter: true, Alias: "t", Coll: &Collection{Root: "c", Path: []*PathSeg{{Kind: SegIndex, Text: "0"}}}}},
		"FROM t IN c[0]")
	f(&Prop{Key: "k", X: num("1")}, `"k": 1`)
}

func TestTreeNodes(t *testing.T) {
	f := func(n Node, want string) {
		t.Helper()
		if got := Tree(n); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	f(&SelectItem{X: id("a"), Alias: "b"}, "(as a b)")
	f(&OrderItem{X: id("a"), Dir: Asc}, "(asc a)")
	f(&Source{Alias: "x", Coll: &Collection{Root: "c"}}, "(as c x)")
	f(&PathSeg{Kind: SegKey, Text: "k"}, `["k"]`)
	f(&Prop{Key: "k", X: num("1")}, `("k" 1)`)
	f(&Call{UDF: true, Name: "f", Args: []Expr{num("1")}}, "(call udf.f 1)")
	f(&Subquery{Kind: Last, Query: &Query{Select: &Select{Kind: SelectStar}}}, "(last (query (select *)))")
}

func TestNumberFloat(t *testing.T) {
	for text, want := range map[string]float64{"1": 1, "1.5e2": 150, ".25": 0.25, "0x10": 16} {
		if got := num(text).Float(); got != want {
			t.Errorf("%s: %v", text, got)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a bad literal did not panic")
		}
	}()
	num("x").Float()
}

func TestPrec(t *testing.T) {
	// Tightest first, as in sql.g4's binary_scalar_expression, with the shifts
	// (absent from sql.g4) between additive and relational.
	order := [][]BinaryOp{{Mul, Div, Mod}, {Add, Sub}, {Shl, Shr, ShrZero}, {Lt, Gt, Le, Ge}, {Eq, Ne},
		{BitAnd}, {BitXor}, {BitOr}, {Concat}, {And}, {Or}, {Coalesce}}
	last := PrecPrimary
	for _, group := range order {
		p := group[0].Prec()
		if p >= last {
			t.Errorf("%v binds as tight as or tighter than the group before", group)
		}
		for _, op := range group {
			if op.Prec() != p {
				t.Errorf("%v and %v differ in precedence", op, group[0])
			}
		}
		last = p
	}
	if !(PrecOr > PrecConditional && PrecConditional > PrecCoalesce && PrecPredicate > PrecAnd && PrecConcat > PrecPredicate) {
		t.Error("scalar/logical levels out of order")
	}
}
