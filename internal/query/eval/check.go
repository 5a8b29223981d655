package eval

import (
	"math"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/query/ast"
)

// Check validates a parsed query before execution and returns the first
// problem in source order as an *Error wrapping ErrInvalidQuery and one of:
//
//   - ErrUnknownFunction: a call to a function Cosmos DB does not have,
//     named as written ("unknown function FOO");
//   - ErrUnsupported: a Cosmos DB function this engine does not implement
//     (ST_DISTANCE, VectorDistance, FullTextContains, ...);
//   - ErrArgCount: a built-in or aggregate with the wrong number of
//     arguments ("SUBSTRING expects 3 arguments, got 2");
//   - ErrAggregatePlacement: an aggregate in WHERE, GROUP BY or ORDER BY, or
//     inside another aggregate (aggregates in a subquery belong to the
//     subquery and are checked there);
//   - ErrBadArgument: a TOP, OFFSET or LIMIT literal that is not a
//     non-negative integer, or a LIKE ESCAPE that is not one character.
//
// UDF calls are not checked (their definitions live in the container).
// Check does not resolve names; Eval reports unbound ones.
func Check(q *ast.Query) error {
	c := checker{}
	return c.query(q)
}

// CheckParams is Check plus parameters: every @name in q must be a key of
// params (names without '@'), else ErrUndeclaredParam; and a parameter used
// as TOP, OFFSET or LIMIT must be a non-negative integer, else
// ErrBadArgument. A nil map declares nothing.
func CheckParams(q *ast.Query, params map[string]Value) error {
	c := checker{params: params, checkParams: true}
	return c.query(q)
}

type checker struct {
	params      map[string]Value
	checkParams bool
}

// scope is where an expression sits: the clause that forbids aggregates
// ("" where they are allowed) and the enclosing aggregate, if any.
type scope struct {
	noAggIn string
	inAgg   string
	// rank: the expression is an ORDER BY RANK item or a component of
	// its RRF, where FullTextScore (and, for the item, RRF) may appear.
	rank, rankItem bool
}

func (c *checker) query(q *ast.Query) error {
	s := q.Select
	if s.Top != nil {
		if err := c.count(s.Top, "TOP"); err != nil {
			return err
		}
	}
	switch s.Kind {
	case ast.SelectList:
		for _, it := range s.Items {
			if err := c.expr(it.X, scope{}); err != nil {
				return err
			}
		}
	case ast.SelectValue:
		if err := c.expr(s.Value, scope{}); err != nil {
			return err
		}
	}
	if q.From != nil {
		for _, src := range append([]*ast.Source{q.From.Source}, q.From.Joins...) {
			if src.Coll.Query != nil {
				if err := c.query(src.Coll.Query); err != nil {
					return err
				}
			}
		}
	}
	if q.Where != nil {
		if err := c.expr(q.Where, scope{noAggIn: "WHERE"}); err != nil {
			return err
		}
	}
	for _, g := range q.GroupBy {
		if err := c.expr(g, scope{noAggIn: "GROUP BY"}); err != nil {
			return err
		}
	}
	if q.OrderBy != nil {
		if q.OrderBy.Rank {
			if err := c.rank(q.OrderBy); err != nil {
				return err
			}
		}
		for _, it := range q.OrderBy.Items {
			if err := c.expr(it.X, scope{noAggIn: "ORDER BY", rank: q.OrderBy.Rank, rankItem: q.OrderBy.Rank}); err != nil {
				return err
			}
		}
	}
	if q.Offset != nil {
		if err := c.count(q.Offset, "OFFSET"); err != nil {
			return err
		}
		if err := c.count(q.Limit, "LIMIT"); err != nil {
			return err
		}
	}
	return nil
}

// rank checks the form of ORDER BY RANK: one FullTextScore or RRF call,
// without a sort order (the service: hybrid-search.md, full-text-search.md).
func (c *checker) rank(o *ast.OrderBy) error {
	for _, it := range o.Items {
		if it.Dir != ast.DirNone {
			return errorf(o.At, ErrBadArgument, "Specifying a sort order (ASC or DESC) in the ORDER BY RANK clause is not allowed.")
		}
	}
	if len(o.Items) != 1 {
		return errorf(o.At, ErrBadArgument, "ORDER BY RANK takes one FullTextScore or RRF call; combine several scores with RRF")
	}
	call, ok := o.Items[0].X.(*ast.Call)
	if !ok || !IsFullTextScore(call) && !IsRRF(call) {
		return errorf(o.Items[0].X.Pos(), ErrBadArgument, "ORDER BY RANK takes a FullTextScore or RRF call")
	}
	return nil
}

// count checks a TOP, OFFSET or LIMIT operand: a literal or a parameter
// holding a non-negative integer.
func (c *checker) count(e ast.Expr, what string) error {
	switch e := e.(type) {
	case *ast.NumberLit:
		if !isCount(numberLit(e.Text)) {
			return errorf(e.At, ErrBadArgument, "%s must be a non-negative integer, not %s", what, e.Text)
		}
	case *ast.Param:
		if err := c.expr(e, scope{}); err != nil {
			return err
		}
		if v, ok := c.params[e.Name]; ok && c.checkParams && !isCount(v) {
			return errorf(e.At, ErrBadArgument, "%s must be a non-negative integer, but @%s is %s", what, e.Name, v)
		}
	}
	return nil
}

func isCount(v Value) bool {
	i, ok := v.AsInt()
	return ok && i >= 0 && i <= math.MaxInt32
}

func (c *checker) exprs(es []ast.Expr, s scope) error {
	for _, e := range es {
		if err := c.expr(e, s); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) expr(e ast.Expr, s scope) error {
	switch e := e.(type) {
	case *ast.Param:
		if c.checkParams {
			if _, ok := c.params[e.Name]; !ok {
				return errorf(e.At, ErrUndeclaredParam, "parameter @%s is not declared", e.Name)
			}
		}
	case *ast.ArrayCreate:
		return c.exprs(e.Elems, s)
	case *ast.ObjectCreate:
		for _, p := range e.Props {
			if err := c.expr(p.X, s); err != nil {
				return err
			}
		}
	case *ast.Dot:
		return c.expr(e.X, s)
	case *ast.Index:
		if err := c.expr(e.X, s); err != nil {
			return err
		}
		return c.expr(e.Index, s)
	case *ast.Call:
		_, isAgg, err := checkCall(e)
		if err != nil {
			return err
		}
		switch {
		case IsRRF(e) && !s.rankItem:
			return errorf(e.At, ErrBadArgument, "RRF is only allowed in an ORDER BY RANK clause")
		case IsFullTextScore(e) && !s.rank:
			return errorf(e.At, ErrBadArgument, "FullTextScore is only allowed in an ORDER BY RANK clause")
		case IsRRF(e):
			s.rankItem = false
			for i, a := range e.Args {
				if w, ok := a.(*ast.ArrayCreate); ok && i == len(e.Args)-1 && i > 0 {
					if err := c.exprs(w.Elems, scope{noAggIn: s.noAggIn}); err != nil {
						return err
					}
					continue
				}
				if call, ok := a.(*ast.Call); !ok || !IsFullTextScore(call) && !IsVectorDistance(call) {
					return errorf(a.Pos(), ErrBadArgument, "the arguments of RRF are FullTextScore and VectorDistance calls, then optionally an array of weights")
				}
				if err := c.expr(a, s); err != nil {
					return err
				}
			}
			return nil
		}
		s.rank, s.rankItem = false, false
		if isAgg {
			name := upperASCII(e.Name)
			switch {
			case s.inAgg != "":
				return errorf(e.At, ErrAggregatePlacement, "aggregate %s cannot be nested inside aggregate %s", name, s.inAgg)
			case s.noAggIn != "":
				return errorf(e.At, ErrAggregatePlacement, "aggregate %s is not allowed in %s", name, s.noAggIn)
			}
			s.inAgg = name
		}
		return c.exprs(e.Args, s)
	case *ast.Unary:
		return c.expr(e.X, s)
	case *ast.Binary:
		if err := c.expr(e.L, s); err != nil {
			return err
		}
		return c.expr(e.R, s)
	case *ast.In:
		if err := c.expr(e.X, s); err != nil {
			return err
		}
		return c.exprs(e.List, s)
	case *ast.Between:
		return c.exprs([]ast.Expr{e.X, e.Lo, e.Hi}, s)
	case *ast.Like:
		if err := c.exprs([]ast.Expr{e.X, e.Pattern}, s); err != nil {
			return err
		}
		if e.Escape != nil && utf8.RuneCountInString(e.Escape.Value) != 1 {
			return errorf(e.Escape.At, ErrBadArgument, "the ESCAPE of LIKE must be one character, not %s", ast.Quote(e.Escape.Value))
		}
	case *ast.Conditional:
		return c.exprs([]ast.Expr{e.Cond, e.Then, e.Else}, s)
	case *ast.Subquery:
		return c.query(e.Query)
	}
	return nil
}
