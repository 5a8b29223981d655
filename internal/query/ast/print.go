package ast

import (
	"strings"

	"github.com/parsecdb/parsec/internal/query/token"
)

// printer writes canonical query text.
type printer struct {
	strings.Builder
}

func (p *printer) query(q *Query) {
	p.selectClause(q.Select)
	if q.From != nil {
		p.WriteString(" FROM ")
		p.source(q.From.Source)
		for _, j := range q.From.Joins {
			p.WriteString(" JOIN ")
			p.source(j)
		}
	}
	if q.Where != nil {
		p.WriteString(" WHERE ")
		p.expr(q.Where, 0)
	}
	if q.GroupBy != nil {
		p.WriteString(" GROUP BY ")
		p.list(q.GroupBy)
	}
	if q.OrderBy != nil {
		p.WriteString(" ORDER BY ")
		if q.OrderBy.Rank {
			p.WriteString("RANK ")
		}
		for i, it := range q.OrderBy.Items {
			if i > 0 {
				p.WriteString(", ")
			}
			p.orderItem(it)
		}
	}
	if q.Offset != nil {
		p.WriteString(" OFFSET ")
		p.expr(q.Offset, 0)
		p.WriteString(" LIMIT ")
		p.expr(q.Limit, 0)
	}
}

func (p *printer) selectClause(s *Select) {
	p.WriteString("SELECT")
	if s.Distinct {
		p.WriteString(" DISTINCT")
	}
	if s.Top != nil {
		p.WriteString(" TOP ")
		p.expr(s.Top, 0)
	}
	switch s.Kind {
	case SelectStar:
		p.WriteString(" *")
	case SelectValue:
		p.WriteString(" VALUE ")
		p.expr(s.Value, 0)
	case SelectList:
		for i, it := range s.Items {
			if i > 0 {
				p.WriteByte(',')
			}
			p.WriteByte(' ')
			p.selectItem(it)
		}
	}
}

func (p *printer) selectItem(it *SelectItem) {
	p.expr(it.X, 0)
	if it.Alias != "" {
		p.WriteString(" AS ")
		p.WriteString(it.Alias)
	}
}

func (p *printer) orderItem(it *OrderItem) {
	p.expr(it.X, 0)
	switch it.Dir {
	case Asc:
		p.WriteString(" ASC")
	case Desc:
		p.WriteString(" DESC")
	}
}

func (p *printer) source(s *Source) {
	if s.Iter {
		p.WriteString(s.Alias)
		p.WriteString(" IN ")
		p.collection(s.Coll)
		return
	}
	p.collection(s.Coll)
	if s.Alias != "" {
		p.WriteString(" AS ")
		p.WriteString(s.Alias)
	}
}

func (p *printer) collection(c *Collection) {
	if c.Query != nil {
		p.WriteByte('(')
		p.query(c.Query)
		p.WriteByte(')')
		return
	}
	p.WriteString(c.Root)
	for _, s := range c.Path {
		p.pathSeg(s)
	}
}

func (p *printer) pathSeg(s *PathSeg) {
	switch s.Kind {
	case SegName:
		if token.IsIdentifier(s.Text) {
			p.WriteByte('.')
			p.WriteString(s.Text)
			return
		}
		p.WriteByte('[')
		p.quote(s.Text)
		p.WriteByte(']')
	case SegIndex:
		p.WriteByte('[')
		p.WriteString(s.Text)
		p.WriteByte(']')
	case SegKey:
		p.WriteByte('[')
		p.quote(s.Text)
		p.WriteByte(']')
	}
}

func (p *printer) list(es []Expr) {
	for i, e := range es {
		if i > 0 {
			p.WriteString(", ")
		}
		p.expr(e, 0)
	}
}

// expr writes e, in parentheses if its precedence is below min.
func (p *printer) expr(e Expr, min int) {
	if Prec(e) < min {
		p.WriteByte('(')
		p.expr(e, 0)
		p.WriteByte(')')
		return
	}
	switch e := e.(type) {
	case *Ident:
		p.WriteString(e.Name)
	case *Param:
		p.WriteByte('@')
		p.WriteString(e.Name)
	case *StringLit:
		p.quote(e.Value)
	case *NumberLit:
		p.WriteString(e.Text)
	case *BoolLit:
		if e.Value {
			p.WriteString("true")
		} else {
			p.WriteString("false")
		}
	case *NullLit:
		p.WriteString("null")
	case *UndefinedLit:
		p.WriteString("undefined")
	case *ArrayCreate:
		p.WriteByte('[')
		p.list(e.Elems)
		p.WriteByte(']')
	case *ObjectCreate:
		p.WriteByte('{')
		for i, pr := range e.Props {
			if i > 0 {
				p.WriteString(", ")
			}
			p.quote(pr.Key)
			p.WriteString(": ")
			p.expr(pr.X, 0)
		}
		p.WriteByte('}')
	case *Dot:
		if _, ok := e.X.(*NumberLit); ok {
			// "1.x" would scan as the number "1." and an identifier.
			p.WriteByte('(')
			p.expr(e.X, 0)
			p.WriteByte(')')
		} else {
			p.expr(e.X, postfixMin)
		}
		if token.IsIdentifier(e.Name) {
			p.WriteByte('.')
			p.WriteString(e.Name)
		} else {
			// Not produced by the parser; keeps hand-built trees printable.
			p.WriteByte('[')
			p.quote(e.Name)
			p.WriteByte(']')
		}
	case *Index:
		p.expr(e.X, postfixMin)
		p.WriteByte('[')
		p.expr(e.Index, 0)
		p.WriteByte(']')
	case *Call:
		if e.UDF {
			p.WriteString("udf.")
		}
		p.WriteString(e.Name)
		p.WriteByte('(')
		p.list(e.Args)
		p.WriteByte(')')
	case *Unary:
		p.WriteString(e.Op.String())
		if x, ok := e.X.(*Unary); e.Op == Not || ok && (x.Op == Neg || x.Op == Plus) {
			// NOT needs a space; "- -x" too, as "--" starts a comment.
			p.WriteByte(' ')
		}
		p.expr(e.X, unaryMin)
	case *Binary:
		l, r := operandPrec(e.Op.Prec())
		p.expr(e.L, l)
		p.WriteByte(' ')
		p.WriteString(e.Op.String())
		p.WriteByte(' ')
		p.expr(e.R, r)
	case *In:
		p.expr(e.X, predicateMin)
		if e.Not {
			p.WriteString(" NOT")
		}
		p.WriteString(" IN (")
		p.list(e.List)
		p.WriteByte(')')
	case *Between:
		p.expr(e.X, predicateMin)
		if e.Not {
			p.WriteString(" NOT")
		}
		p.WriteString(" BETWEEN ")
		p.expr(e.Lo, predicateMin)
		p.WriteString(" AND ")
		p.expr(e.Hi, predicateMin)
	case *Like:
		p.expr(e.X, predicateMin)
		if e.Not {
			p.WriteString(" NOT")
		}
		p.WriteString(" LIKE ")
		p.expr(e.Pattern, predicateMin)
		if e.Escape != nil {
			p.WriteString(" ESCAPE ")
			p.quote(e.Escape.Value)
		}
	case *Conditional:
		p.expr(e.Cond, condMin)
		p.WriteString(" ? ")
		p.expr(e.Then, 0)
		p.WriteString(" : ")
		p.expr(e.Else, elseMin)
	case *Subquery:
		p.WriteString(e.Kind.String())
		p.WriteByte('(')
		p.query(e.Query)
		p.WriteByte(')')
	default:
		panic("BUG: ast: unknown expression type")
	}
}

// quote writes s as a double-quoted string literal. It escapes '"', '\' and
// control characters and writes everything else, invalid UTF-8 included,
// as is, so that scanning the result gives back s exactly.
func (p *printer) quote(s string) {
	const hex = "0123456789abcdef"
	p.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var esc string
		switch {
		case c == '"':
			esc = `\"`
		case c == '\\':
			esc = `\\`
		case c == '\b':
			esc = `\b`
		case c == '\f':
			esc = `\f`
		case c == '\n':
			esc = `\n`
		case c == '\r':
			esc = `\r`
		case c == '\t':
			esc = `\t`
		case c < 0x20:
			esc = `\u00` + string(hex[c>>4]) + string(hex[c&15])
		default:
			continue
		}
		p.WriteString(s[start:i])
		p.WriteString(esc)
		start = i + 1
	}
	p.WriteString(s[start:])
	p.WriteByte('"')
}

// Quote returns s as a double-quoted query string literal.
func Quote(s string) string {
	var p printer
	p.quote(s)
	return p.String()
}

func exprString(e Expr) string {
	var p printer
	p.expr(e, 0)
	return p.String()
}

// String methods: canonical query text.

func (q *Query) String() string {
	var p printer
	p.query(q)
	return p.String()
}

func (n *Select) String() string {
	var p printer
	p.selectClause(n)
	return p.String()
}

func (n *SelectItem) String() string {
	var p printer
	p.selectItem(n)
	return p.String()
}

func (n *From) String() string {
	var p printer
	p.WriteString("FROM ")
	p.source(n.Source)
	for _, j := range n.Joins {
		p.WriteString(" JOIN ")
		p.source(j)
	}
	return p.String()
}

func (n *Source) String() string {
	var p printer
	p.source(n)
	return p.String()
}

func (n *Collection) String() string {
	var p printer
	p.collection(n)
	return p.String()
}

func (n *PathSeg) String() string {
	var p printer
	p.pathSeg(n)
	return p.String()
}

func (n *OrderBy) String() string {
	var p printer
	p.WriteString("ORDER BY ")
	if n.Rank {
		p.WriteString("RANK ")
	}
	for i, it := range n.Items {
		if i > 0 {
			p.WriteString(", ")
		}
		p.orderItem(it)
	}
	return p.String()
}

func (n *OrderItem) String() string {
	var p printer
	p.orderItem(n)
	return p.String()
}

func (n *Prop) String() string {
	var p printer
	p.quote(n.Key)
	p.WriteString(": ")
	p.expr(n.X, 0)
	return p.String()
}

func (n *Ident) String() string        { return exprString(n) }
func (n *Param) String() string        { return exprString(n) }
func (n *StringLit) String() string    { return exprString(n) }
func (n *NumberLit) String() string    { return exprString(n) }
func (n *BoolLit) String() string      { return exprString(n) }
func (n *NullLit) String() string      { return exprString(n) }
func (n *UndefinedLit) String() string { return exprString(n) }
func (n *ArrayCreate) String() string  { return exprString(n) }
func (n *ObjectCreate) String() string { return exprString(n) }
func (n *Dot) String() string          { return exprString(n) }
func (n *Index) String() string        { return exprString(n) }
func (n *Call) String() string         { return exprString(n) }
func (n *Unary) String() string        { return exprString(n) }
func (n *Binary) String() string       { return exprString(n) }
func (n *In) String() string           { return exprString(n) }
func (n *Between) String() string      { return exprString(n) }
func (n *Like) String() string         { return exprString(n) }
func (n *Conditional) String() string  { return exprString(n) }
func (n *Subquery) String() string     { return exprString(n) }
