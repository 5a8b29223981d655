package parser

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/query/ast"
)

// TestRandomTrees builds random trees, prints them and parses the text: the
// result must be an equal tree. Unlike the golden corpus this reaches
// shapes nobody wrote down, such as a Between inside a Like inside a Dot,
// so it checks the printer's parenthesization against the parser.
func TestRandomTrees(t *testing.T) {
	g := treeGen{r: rand.New(rand.NewPCG(1, 2))}
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		q := g.query(3)
		checkRoundTrip(t, q, q.String())
		e := g.expr(4)
		checkRoundTrip(t, e, e.String())
	}
}

type treeGen struct{ r *rand.Rand }

var (
	genNames   = []string{"c", "x", "_a1", "first", "ALL", "Last", "TRUE", "Null", "root"}
	genNumbers = []string{"0", "1", "42", "1.5", ".5", "1.", "1e3", "2.5E-3", "0x1F"}
	genStrings = []string{"", "a", "it's", `say "hi"`, `back\slash`, "tab\tnl\n", "\x00\x1f", "é中😀", "-- no comment", "\xff"}
	genCalls   = []string{"COUNT", "ABS", "first", "all", "LEFT", "right", "ARRAY_CONTAINS", "f"}
)

func (g *treeGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *treeGen) expr(depth int) ast.Expr {
	if depth <= 0 || g.r.IntN(4) == 0 {
		return g.leaf()
	}
	d := depth - 1
	switch g.r.IntN(14) {
	case 0:
		a := &ast.ArrayCreate{}
		for range g.r.IntN(3) {
			a.Elems = append(a.Elems, g.expr(d))
		}
		return a
	case 1:
		o := &ast.ObjectCreate{}
		for range g.r.IntN(3) {
			o.Props = append(o.Props, &ast.Prop{Key: g.pick(genStrings), X: g.expr(d)})
		}
		return o
	case 2:
		return &ast.Dot{X: g.expr(d), Name: g.pick(genNames)}
	case 3:
		return &ast.Index{X: g.expr(d), Index: g.expr(d)}
	case 4:
		c := &ast.Call{Name: g.pick(genCalls)}
		if c.Name != "LEFT" && c.Name != "right" {
			c.UDF = g.r.IntN(3) == 0
		}
		for range g.r.IntN(3) {
			c.Args = append(c.Args, g.expr(d))
		}
		return c
	case 5:
		return &ast.Unary{Op: ast.UnaryOp(g.r.IntN(4)), X: g.expr(d)}
	case 6, 7, 8:
		return &ast.Binary{Op: ast.BinaryOp(g.r.IntN(int(ast.Coalesce) + 1)), L: g.expr(d), R: g.expr(d)}
	case 9:
		in := &ast.In{X: g.expr(d), Not: g.r.IntN(2) == 0}
		for range 1 + g.r.IntN(2) {
			in.List = append(in.List, g.expr(d))
		}
		return in
	case 10:
		return &ast.Between{X: g.expr(d), Not: g.r.IntN(2) == 0, Lo: g.expr(d), Hi: g.expr(d)}
	case 11:
		l := &ast.Like{X: g.expr(d), Not: g.r.IntN(2) == 0, Pattern: g.expr(d)}
		if g.r.IntN(2) == 0 {
			l.Escape = &ast.StringLit{Value: g.pick(genStrings)}
		}
		return l
	case 12:
		return &ast.Conditional{Cond: g.expr(d), Then: g.expr(d), Else: g.expr(d)}
	default:
		return &ast.Subquery{Kind: ast.SubqueryKind(g.r.IntN(6)), Query: g.query(d - 1)}
	}
}

func (g *treeGen) leaf() ast.Expr {
	switch g.r.IntN(7) {
	case 0:
		return &ast.Ident{Name: g.pick(genNames)}
	case 1:
		return &ast.Param{Name: g.pick(genNames)}
	case 2:
		return &ast.StringLit{Value: g.pick(genStrings)}
	case 3:
		return &ast.NumberLit{Text: g.pick(genNumbers)}
	case 4:
		return &ast.BoolLit{Value: g.r.IntN(2) == 0}
	case 5:
		return &ast.NullLit{}
	default:
		return &ast.UndefinedLit{}
	}
}

func (g *treeGen) count() ast.Expr {
	if g.r.IntN(2) == 0 {
		return &ast.Param{Name: g.pick(genNames)}
	}
	return &ast.NumberLit{Text: g.pick(genNumbers)}
}

func (g *treeGen) query(depth int) *ast.Query {
	d := max(depth, 0)
	s := &ast.Select{Distinct: g.r.IntN(3) == 0, Kind: ast.SelectKind(g.r.IntN(3))}
	if g.r.IntN(3) == 0 {
		s.Top = g.count()
	}
	switch s.Kind {
	case ast.SelectValue:
		s.Value = g.expr(d)
	case ast.SelectList:
		for range 1 + g.r.IntN(3) {
			it := &ast.SelectItem{X: g.expr(d)}
			if g.r.IntN(2) == 0 {
				it.Alias = g.pick(genNames)
			}
			s.Items = append(s.Items, it)
		}
	}
	q := &ast.Query{Select: s}
	if g.r.IntN(3) > 0 {
		q.From = &ast.From{Source: g.source(d)}
		for range g.r.IntN(3) {
			q.From.Joins = append(q.From.Joins, g.source(d))
		}
	}
	if g.r.IntN(2) == 0 {
		q.Where = g.expr(d)
	}
	if g.r.IntN(4) == 0 {
		for range 1 + g.r.IntN(2) {
			q.GroupBy = append(q.GroupBy, g.expr(d))
		}
	}
	if g.r.IntN(3) == 0 {
		o := &ast.OrderBy{Rank: g.r.IntN(4) == 0}
		for range 1 + g.r.IntN(2) {
			it := &ast.OrderItem{X: g.expr(d), Dir: ast.Direction(g.r.IntN(3))}
			if o.Rank {
				it.X = &ast.Call{Name: g.pick(genCalls), Args: []ast.Expr{g.expr(d)}}
			}
			o.Items = append(o.Items, it)
		}
		q.OrderBy = o
	}
	if g.r.IntN(4) == 0 {
		q.Offset, q.Limit = g.count(), g.count()
	}
	return q
}

func (g *treeGen) source(depth int) *ast.Source {
	s := &ast.Source{Iter: g.r.IntN(2) == 0}
	if s.Iter || g.r.IntN(2) == 0 {
		s.Alias = g.pick(genNames)
	}
	c := &ast.Collection{}
	if depth > 0 && g.r.IntN(4) == 0 {
		c.Query = g.query(depth - 1)
	} else {
		c.Root = g.pick(genNames)
		for range g.r.IntN(3) {
			seg := &ast.PathSeg{Kind: ast.SegKind(g.r.IntN(3))}
			switch seg.Kind {
			case ast.SegName:
				seg.Text = g.pick(genNames)
			case ast.SegIndex:
				seg.Text = g.pick(genNumbers)
			case ast.SegKey:
				seg.Text = g.pick(genStrings)
			}
			c.Path = append(c.Path, seg)
		}
	}
	s.Coll = c
	return s
}

func TestDepthLimit(t *testing.T) {
	ok := func(src string) {
		t.Helper()
		if _, err := Parse(src); err != nil {
			t.Errorf("%.60q...: %v", src, err)
		}
	}
	tooDeep := func(src string) {
		t.Helper()
		_, err := Parse(src)
		if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("%.60q...: got %v, want a nesting error", src, err)
		}
	}
	n := MaxDepth / 2
	ok("SELECT VALUE " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n))
	ok("SELECT VALUE " + strings.Repeat("- ", n) + "1")
	ok("SELECT VALUE " + strings.Repeat("[", n) + strings.Repeat("]", n))
	// Long flat chains are loops, not recursion: no limit.
	ok("SELECT VALUE 1" + strings.Repeat(" + 1", 20000))
	ok("SELECT VALUE c" + strings.Repeat(".a", 20000))
	ok("SELECT * FROM c" + strings.Repeat(" JOIN x IN c.a", 2000))
	n = MaxDepth + 1
	tooDeep("SELECT VALUE " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n))
	tooDeep("SELECT VALUE " + strings.Repeat("NOT ", n) + "1")
	tooDeep("SELECT VALUE " + strings.Repeat("{'a': ", n) + "1" + strings.Repeat("}", n))
	tooDeep(strings.Repeat("SELECT VALUE (", n) + "SELECT 1" + strings.Repeat(")", n))
	tooDeep("SELECT * FROM " + strings.Repeat("(SELECT * FROM ", n) + "c" + strings.Repeat(")", n))
}

func TestPositions(t *testing.T) {
	q, err := Parse("SELECT c.a,\n  COUNT(1) AS n\nFROM root r JOIN t IN r.tags\nWHERE r.x >= @p")
	if err != nil {
		t.Fatal(err)
	}
	f := func(what string, n ast.Node, line, col int) {
		t.Helper()
		if p := n.Pos(); p.Line != line || p.Col != col {
			t.Errorf("%s %s at %d:%d, want %d:%d", what, n, p.Line, p.Col, line, col)
		}
	}
	f("query", q, 1, 1)
	f("item", q.Select.Items[0], 1, 8)
	f("item", q.Select.Items[1], 2, 3)
	f("from", q.From, 3, 1)
	f("source", q.From.Source, 3, 6)
	f("join", q.From.Joins[0], 3, 18)
	f("join collection", q.From.Joins[0].Coll, 3, 23)
	f("where", q.Where, 4, 7)
	b := q.Where.(*ast.Binary)
	f("param", b.R, 4, 14)
	if b.OpPos.Line != 4 || b.OpPos.Col != 11 || b.OpPos.Offset != len("SELECT c.a,\n  COUNT(1) AS n\nFROM root r JOIN t IN r.tags\nWHERE r.x ") {
		t.Errorf("operator at %+v", b.OpPos)
	}
	if d := b.L.(*ast.Dot); d.NamePos.Col != 9 {
		t.Errorf("name x at %+v", d.NamePos)
	}
	if it := q.Select.Items[1]; it.AliasPos.Line != 2 || it.AliasPos.Col != 15 {
		t.Errorf("alias n at %+v", it.AliasPos)
	}
}

func TestErrorType(t *testing.T) {
	_, err := Parse("SELECT *\nFROM c\nWHERE c.a = = 1")
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("%T is not *Error", err)
	}
	if perr.Pos.Line != 3 || perr.Pos.Col != 13 || perr.Pos.Offset != 28 {
		t.Errorf("position %+v", perr.Pos)
	}
	if perr.Msg != `expected an expression, found "="` {
		t.Errorf("message %q", perr.Msg)
	}
	if _, err := ParseExpr("1 +"); !errors.Is(err, ErrSyntax) {
		t.Errorf("ParseExpr error %v does not wrap ErrSyntax", err)
	}
}
