package filter

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/api/table/edm"
)

// Expr is a boolean filter expression: *Compare, *Prop, *Const, *And, *Or
// or *Not. Trees are immutable once built; String prints a filter that
// parses back to an equal tree.
type Expr interface {
	String() string
	expr()
}

// Op is a comparison operator.
type Op uint8

// The comparison operators of $filter.
const (
	Eq Op = iota // eq
	Ne           // ne
	Gt           // gt
	Ge           // ge
	Lt           // lt
	Le           // le
)

var opNames = [...]string{Eq: "eq", Ne: "ne", Gt: "gt", Ge: "ge", Lt: "lt", Le: "le"}

// String is the operator's keyword.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Flip returns the operator that gives the same result with the operands
// swapped: 5 lt Age is Age gt 5.
func (o Op) Flip() Op {
	switch o {
	case Gt:
		return Lt
	case Ge:
		return Le
	case Lt:
		return Gt
	case Le:
		return Ge
	}
	return o
}

// Negate returns the operator whose result is the opposite for two values
// that compare (lt becomes ge). It is not a negation when the comparison
// fails for a missing property or a type mismatch, where every operator
// gives false.
func (o Op) Negate() Op {
	switch o {
	case Eq:
		return Ne
	case Ne:
		return Eq
	case Gt:
		return Le
	case Ge:
		return Lt
	case Lt:
		return Ge
	case Le:
		return Gt
	}
	return o
}

// Compare is "Prop Op Value". The parser always puts the property on the
// left: 'x' eq Name becomes Name eq 'x', 5 lt Age becomes Age gt 5.
type Compare struct {
	Prop  string
	Op    Op
	Value edm.Value
}

// Prop is a bare property used as a boolean: it is true when the entity
// has the property, it is an Edm.Boolean, and it is true.
type Prop struct {
	Name string
}

// Const is the literal true or false used as a boolean expression.
type Const struct {
	V bool
}

// And is "L and R".
type And struct{ L, R Expr }

// Or is "L or R".
type Or struct{ L, R Expr }

// Not is "not X".
type Not struct{ X Expr }

func (*Compare) expr() {}
func (*Prop) expr()    {}
func (*Const) expr()   {}
func (*And) expr()     {}
func (*Or) expr()      {}
func (*Not) expr()     {}

func (c *Compare) String() string {
	var b strings.Builder
	b.WriteString(c.Prop)
	b.WriteByte(' ')
	b.WriteString(c.Op.String())
	b.WriteByte(' ')
	b.WriteString(Literal(c.Value))
	return b.String()
}

func (p *Prop) String() string { return p.Name }

func (c *Const) String() string { return strconv.FormatBool(c.V) }

// And and Or are left-associative ("a and b and c" is And{And{a,b},c}),
// and binds tighter than or, and not takes the comparison or group that
// follows it. A child is parenthesised only where reading it back needs
// it, so the printed text never nests deeper than the tree is high and
// parses back within the same Limits.MaxDepth (though it may be longer
// than the text it was parsed from: 1e300 prints in full).
func (a *And) String() string {
	return wrapIf(a.L, isOr) + " and " + wrapIf(a.R, isAndOr)
}

func (o *Or) String() string {
	return o.L.String() + " or " + wrapIf(o.R, isOr)
}

func (n *Not) String() string {
	return "not " + wrapIf(n.X, isAndOr)
}

func isOr(e Expr) bool {
	_, ok := e.(*Or)
	return ok
}

func isAndOr(e Expr) bool {
	switch e.(type) {
	case *And, *Or:
		return true
	}
	return false
}

func wrapIf(e Expr, need func(Expr) bool) string {
	if need(e) {
		return "(" + e.String() + ")"
	}
	return e.String()
}

// Literal writes v as a $filter literal that parses back to v: a string
// in single quotes with each inner quote doubled, 42, 42L, 2.0, true,
// datetime'2020-01-02T03:04:05.0000000Z', guid'…', X'0aff'. The Double
// specials are written as OData's NaN, INF and -INF.
func Literal(v edm.Value) string {
	switch v.Type {
	case edm.String:
		return "'" + strings.ReplaceAll(v.S, "'", "''") + "'"
	case edm.Int32:
		return strconv.FormatInt(v.I, 10)
	case edm.Int64:
		return strconv.FormatInt(v.I, 10) + "L"
	case edm.Double:
		return formatDoubleLiteral(v.F)
	case edm.Boolean:
		return strconv.FormatBool(v.B)
	case edm.DateTime:
		return "datetime'" + edm.FormatDateTime(v.T) + "'"
	case edm.Guid:
		return "guid'" + v.S + "'"
	case edm.Binary:
		return "X'" + hex.EncodeToString(v.Bin) + "'"
	}
	return "<" + v.Type.Name() + ">"
}

// formatDoubleLiteral relies on edm.FormatDouble giving either fixed
// notation with a '.' or exponent notation with an 'e' for finite values;
// both lex as a Double literal.
func formatDoubleLiteral(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	return edm.FormatDouble(f)
}
