package filter

import (
	"fmt"
	"math"

	"github.com/parsecdb/parsec/internal/api/table/edm"
)

// Eval reports whether an entity matches e. get returns the entity's
// property prop and whether the entity has it; the server must answer
// PartitionKey, RowKey (Edm.String) and Timestamp (Edm.DateTime) too.
//
// A comparison is false when the entity lacks the property or when the
// property's type differs from the literal's (edm.Compare's ok is false),
// whatever the operator, ne included. Between Doubles a comparison with
// NaN is false except ne, which is true. and, or and not are two-valued:
// not of a false comparison is true, even when the comparison was false
// for a missing property. A bare property is true when it is an
// Edm.Boolean that is true.
//
// Eval recurses as deep as the tree is high, which Parse bounds by
// Limits.MaxDepth.
func Eval(e Expr, get func(prop string) (edm.Value, bool)) bool {
	switch e := e.(type) {
	case *Compare:
		v, ok := get(e.Prop)
		if !ok {
			return false
		}
		return compareOp(v, e.Op, e.Value)
	case *Prop:
		v, ok := get(e.Name)
		return ok && v.Type == edm.Boolean && v.B
	case *Const:
		return e.V
	case *And:
		return Eval(e.L, get) && Eval(e.R, get)
	case *Or:
		return Eval(e.L, get) || Eval(e.R, get)
	case *Not:
		return !Eval(e.X, get)
	}
	panic(fmt.Sprintf("BUG: filter.Eval: unknown node %T", e))
}

// compareOp applies op to a property value v and a literal lit.
func compareOp(v edm.Value, op Op, lit edm.Value) bool {
	if v.Type == edm.Double && lit.Type == edm.Double && (math.IsNaN(v.F) || math.IsNaN(lit.F)) {
		return op == Ne
	}
	c, ok := edm.Compare(v, lit)
	if !ok {
		return false
	}
	switch op {
	case Eq:
		return c == 0
	case Ne:
		return c != 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	}
	panic(fmt.Sprintf("BUG: filter: unknown operator %d", op))
}

// Comparisons counts the comparisons in e: its Compare and bare Prop
// terms. This is what Limits.MaxComparisons bounds.
func Comparisons(e Expr) int {
	switch e := e.(type) {
	case *Compare, *Prop:
		return 1
	case *And:
		return Comparisons(e.L) + Comparisons(e.R)
	case *Or:
		return Comparisons(e.L) + Comparisons(e.R)
	case *Not:
		return Comparisons(e.X)
	}
	return 0
}
