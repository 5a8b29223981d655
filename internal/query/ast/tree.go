package ast

import (
	"strconv"
	"strings"
)

// Tree returns n as a compact, deterministic S-expression on one line, the
// form the golden tests store. Positions are left out. The shapes:
//
//	(query SELECT [FROM] [(where E)] [(group-by E...)] [(order-by [rank] ITEM...)] [(offset E) (limit E)])
//	(select [distinct] [(top E)] * | (value E) | ITEM...)   ITEM: E or (as E alias)
//	(from SRC [(join SRC)...])      SRC: COLL, (as COLL alias) or (in alias COLL)
//	COLL: a path in query syntax (c, c.a[0]["k"]) or a (query ...)
//	order items: E, (asc E) or (desc E)
//	names and @params bare; strings Go-quoted; numbers as written
//	(. E name) (index E E) (call f E...) (call udf.f E...)
//	(- E) (+ E) (~ E) (not E) and binary (OP L R) with OP as printed, AND/OR lowercase
//	(in E E...) (not-in ...) (between E lo hi) (not-between ...) (like E pat ["esc"]) (not-like ...)
//	(? cond then else) (array E...) (object ("key" E)...)
//	(subquery Q) (exists Q) (array-subquery Q) (all Q) (first Q) (last Q)
func Tree(n Node) string {
	var t treeWriter
	t.node(n)
	return t.String()
}

// Dump is Tree for a whole query, with each clause of the outermost query
// on its own line (subqueries stay on one line).
func Dump(q *Query) string {
	t := treeWriter{indent: true}
	t.query(q)
	return t.String()
}

type treeWriter struct {
	strings.Builder
	indent bool // break the next query's clauses onto lines
}

func (t *treeWriter) open(head string) {
	t.WriteByte('(')
	t.WriteString(head)
}

func (t *treeWriter) node(n Node) {
	switch n := n.(type) {
	case *Query:
		t.query(n)
	case *Select:
		t.selectClause(n)
	case *SelectItem:
		t.selectItem(n)
	case *From:
		t.from(n)
	case *Source:
		t.source(n)
	case *Collection:
		t.collection(n)
	case *PathSeg:
		var p printer
		p.pathSeg(n)
		t.WriteString(p.String())
	case *OrderBy:
		t.orderBy(n)
	case *OrderItem:
		t.orderItem(n)
	case *Prop:
		t.prop(n)
	case Expr:
		t.expr(n)
	default:
		panic("BUG: ast: unknown node type")
	}
}

func (t *treeWriter) query(q *Query) {
	sep := " "
	if t.indent {
		sep = "\n  "
		t.indent = false
	}
	t.open("query")
	t.WriteString(sep)
	t.selectClause(q.Select)
	if q.From != nil {
		t.WriteString(sep)
		t.from(q.From)
	}
	if q.Where != nil {
		t.WriteString(sep)
		t.open("where ")
		t.expr(q.Where)
		t.WriteByte(')')
	}
	if q.GroupBy != nil {
		t.WriteString(sep)
		t.open("group-by")
		t.exprs(q.GroupBy)
		t.WriteByte(')')
	}
	if q.OrderBy != nil {
		t.WriteString(sep)
		t.orderBy(q.OrderBy)
	}
	if q.Offset != nil {
		t.WriteString(sep)
		t.open("offset ")
		t.expr(q.Offset)
		t.WriteString(")")
		t.WriteString(sep)
		t.open("limit ")
		t.expr(q.Limit)
		t.WriteByte(')')
	}
	t.WriteByte(')')
}

func (t *treeWriter) selectClause(s *Select) {
	t.open("select")
	if s.Distinct {
		t.WriteString(" distinct")
	}
	if s.Top != nil {
		t.WriteString(" (top ")
		t.expr(s.Top)
		t.WriteByte(')')
	}
	switch s.Kind {
	case SelectStar:
		t.WriteString(" *")
	case SelectValue:
		t.WriteString(" (value ")
		t.expr(s.Value)
		t.WriteByte(')')
	case SelectList:
		for _, it := range s.Items {
			t.WriteByte(' ')
			t.selectItem(it)
		}
	}
	t.WriteByte(')')
}

func (t *treeWriter) selectItem(it *SelectItem) {
	if it.Alias == "" {
		t.expr(it.X)
		return
	}
	t.open("as ")
	t.expr(it.X)
	t.WriteByte(' ')
	t.WriteString(it.Alias)
	t.WriteByte(')')
}

func (t *treeWriter) from(f *From) {
	t.open("from ")
	t.source(f.Source)
	for _, j := range f.Joins {
		t.WriteString(" (join ")
		t.source(j)
		t.WriteByte(')')
	}
	t.WriteByte(')')
}

func (t *treeWriter) source(s *Source) {
	switch {
	case s.Iter:
		t.open("in ")
		t.WriteString(s.Alias)
		t.WriteByte(' ')
		t.collection(s.Coll)
		t.WriteByte(')')
	case s.Alias != "":
		t.open("as ")
		t.collection(s.Coll)
		t.WriteByte(' ')
		t.WriteString(s.Alias)
		t.WriteByte(')')
	default:
		t.collection(s.Coll)
	}
}

func (t *treeWriter) collection(c *Collection) {
	if c.Query != nil {
		t.query(c.Query)
		return
	}
	var p printer
	p.collection(c)
	t.WriteString(p.String())
}

func (t *treeWriter) orderBy(o *OrderBy) {
	t.open("order-by")
	if o.Rank {
		t.WriteString(" rank")
	}
	for _, it := range o.Items {
		t.WriteByte(' ')
		t.orderItem(it)
	}
	t.WriteByte(')')
}

func (t *treeWriter) orderItem(it *OrderItem) {
	switch it.Dir {
	case Asc:
		t.open("asc ")
	case Desc:
		t.open("desc ")
	default:
		t.expr(it.X)
		return
	}
	t.expr(it.X)
	t.WriteByte(')')
}

func (t *treeWriter) prop(p *Prop) {
	t.WriteByte('(')
	t.WriteString(strconv.Quote(p.Key))
	t.WriteByte(' ')
	t.expr(p.X)
	t.WriteByte(')')
}

// exprs writes " e1 e2 ...".
func (t *treeWriter) exprs(es []Expr) {
	for _, e := range es {
		t.WriteByte(' ')
		t.expr(e)
	}
}

func (t *treeWriter) expr(e Expr) {
	switch e := e.(type) {
	case *Ident:
		t.WriteString(e.Name)
	case *Param:
		t.WriteByte('@')
		t.WriteString(e.Name)
	case *StringLit:
		t.WriteString(strconv.Quote(e.Value))
	case *NumberLit:
		t.WriteString(e.Text)
	case *BoolLit:
		t.WriteString(strconv.FormatBool(e.Value))
	case *NullLit:
		t.WriteString("null")
	case *UndefinedLit:
		t.WriteString("undefined")
	case *ArrayCreate:
		t.open("array")
		t.exprs(e.Elems)
		t.WriteByte(')')
	case *ObjectCreate:
		t.open("object")
		for _, p := range e.Props {
			t.WriteByte(' ')
			t.prop(p)
		}
		t.WriteByte(')')
	case *Dot:
		t.open(". ")
		t.expr(e.X)
		t.WriteByte(' ')
		t.WriteString(e.Name)
		t.WriteByte(')')
	case *Index:
		t.open("index ")
		t.expr(e.X)
		t.WriteByte(' ')
		t.expr(e.Index)
		t.WriteByte(')')
	case *Call:
		t.open("call ")
		if e.UDF {
			t.WriteString("udf.")
		}
		t.WriteString(e.Name)
		t.exprs(e.Args)
		t.WriteByte(')')
	case *Unary:
		t.open(strings.ToLower(e.Op.String()) + " ")
		t.expr(e.X)
		t.WriteByte(')')
	case *Binary:
		t.open(strings.ToLower(e.Op.String()) + " ")
		t.expr(e.L)
		t.WriteByte(' ')
		t.expr(e.R)
		t.WriteByte(')')
	case *In:
		t.open(negated(e.Not, "in") + " ")
		t.expr(e.X)
		t.exprs(e.List)
		t.WriteByte(')')
	case *Between:
		t.open(negated(e.Not, "between") + " ")
		t.expr(e.X)
		t.exprs([]Expr{e.Lo, e.Hi})
		t.WriteByte(')')
	case *Like:
		t.open(negated(e.Not, "like") + " ")
		t.expr(e.X)
		t.WriteByte(' ')
		t.expr(e.Pattern)
		if e.Escape != nil {
			t.WriteByte(' ')
			t.expr(e.Escape)
		}
		t.WriteByte(')')
	case *Conditional:
		t.open("? ")
		t.expr(e.Cond)
		t.exprs([]Expr{e.Then, e.Else})
		t.WriteByte(')')
	case *Subquery:
		head := "subquery"
		switch e.Kind {
		case Exists:
			head = "exists"
		case Array:
			head = "array-subquery"
		case All:
			head = "all"
		case First:
			head = "first"
		case Last:
			head = "last"
		}
		t.open(head + " ")
		t.query(e.Query)
		t.WriteByte(')')
	default:
		panic("BUG: ast: unknown expression type")
	}
}

func negated(not bool, s string) string {
	if not {
		return "not-" + s
	}
	return s
}
