package exec

import (
	"strings"

	"github.com/parsecdb/parsec/internal/fulltext"
	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// Filter is a condition on one property of the document that every row of
// the query requires: the property at Path (names only) equals one of
// Values, or, when Values is nil, lies between Lo and Hi in the order of
// the comparison operators (values of Lo's or Hi's type only). An
// undefined Lo or Hi leaves that side open. Storage uses filters to read
// only the documents that can match (by partition key, or through an
// index); the query still evaluates its whole WHERE clause on them.
type Filter struct {
	Path           []string
	Values         []eval.Value
	Lo, Hi         eval.Value
	LoIncl, HiIncl bool
}

// IsEquality reports whether f is an equality or IN filter.
func (f *Filter) IsEquality() bool { return f.Values != nil }

// Filters returns the filters of the WHERE clause on the documents of the
// container: the conjuncts of the form path = constant, path IN
// (constants), path < constant (and <=, >, >=, either way round), path
// BETWEEN constant AND constant, where path is a chain of property names
// from the alias of FROM's container source, and a constant is a literal or
// a parameter with a null, boolean, number or string value. Other conjuncts
// are left to the evaluator.
func (p *Plan) Filters() []Filter {
	q := p.top
	alias, ok := q.documentAlias()
	if !ok || q.where == nil {
		return nil
	}
	var out []Filter
	var conj func(e ast.Expr)
	conj = func(e ast.Expr) {
		switch x := e.(type) {
		case *ast.Binary:
			if x.Op == ast.And {
				conj(x.L)
				conj(x.R)
				return
			}
			if f, ok := p.comparison(alias, x); ok {
				out = append(out, f)
			}
		case *ast.In:
			path, ok := propertyPath(alias, x.X)
			if !ok || x.Not || len(x.List) == 0 {
				return
			}
			f := Filter{Path: path, Values: make([]eval.Value, 0, len(x.List))}
			for _, e := range x.List {
				v, ok := p.constant(e)
				if !ok {
					return
				}
				f.Values = append(f.Values, v)
			}
			out = append(out, f)
		case *ast.Between:
			path, ok := propertyPath(alias, x.X)
			if !ok || x.Not {
				return
			}
			lo, ok1 := p.constant(x.Lo)
			hi, ok2 := p.constant(x.Hi)
			if ok1 && ok2 && lo.Kind() == hi.Kind() {
				out = append(out, Filter{Path: path, Lo: lo, Hi: hi, LoIncl: true, HiIncl: true})
			}
		}
	}
	conj(q.where)
	return out
}

// documentAlias returns the alias of FROM's source when that source is the
// container's documents themselves (FROM c), not a path in them, an
// iteration or a subquery.
func (q *query) documentAlias() (string, bool) {
	if len(q.sources) == 0 {
		return "", false
	}
	src := q.sources[0]
	if !src.container || src.sub != nil || src.iter || len(src.path) != 0 {
		return "", false
	}
	return src.alias, true
}

// SortPath returns the property path of the document by which an ORDER BY
// query (Ordered or OrderedDistinct) sorts first, and whether it sorts
// descending; ok is false when the first ORDER BY key is not such a path.
// Storage that can read a partition's documents in that order gives a
// SortedSource, and the query then reads only as far as its page needs.
func (p *Plan) SortPath() (path []string, desc bool, ok bool) {
	if p.sortPath == nil {
		return nil, false, false
	}
	return p.sortPath, p.top.orderBy[0].desc, true
}

// sortPath is SortPath's path, or nil.
func (q *query) sortPath() []string {
	alias, ok := q.documentAlias()
	if !ok || len(q.orderBy) == 0 {
		return nil
	}
	path, _ := propertyPath(alias, q.orderBy[0].x)
	return path
}

// comparison turns path op constant (or constant op path) into a filter.
func (p *Plan) comparison(alias string, x *ast.Binary) (Filter, bool) {
	op := x.Op
	switch op {
	case ast.Eq, ast.Lt, ast.Le, ast.Gt, ast.Ge:
	default:
		return Filter{}, false
	}
	path, ok := propertyPath(alias, x.L)
	other := x.R
	if !ok {
		if path, ok = propertyPath(alias, x.R); !ok {
			return Filter{}, false
		}
		other = x.L
		switch op { // constant op path: mirror
		case ast.Lt:
			op = ast.Gt
		case ast.Le:
			op = ast.Ge
		case ast.Gt:
			op = ast.Lt
		case ast.Ge:
			op = ast.Le
		}
	}
	v, ok := p.constant(other)
	if !ok {
		return Filter{}, false
	}
	f := Filter{Path: path}
	switch op {
	case ast.Eq:
		f.Values = []eval.Value{v}
	case ast.Lt, ast.Le:
		f.Hi, f.HiIncl = v, op == ast.Le
	case ast.Gt, ast.Ge:
		f.Lo, f.LoIncl = v, op == ast.Ge
	}
	return f, true
}

// constant evaluates a literal or parameter to a scalar value.
func (p *Plan) constant(e ast.Expr) (eval.Value, bool) {
	switch x := e.(type) {
	case *ast.StringLit, *ast.NumberLit, *ast.BoolLit, *ast.NullLit, *ast.Param:
	case *ast.Unary:
		if _, ok := x.X.(*ast.NumberLit); !ok || (x.Op != ast.Neg && x.Op != ast.Plus) {
			return eval.Value{}, false
		}
	default:
		return eval.Value{}, false
	}
	v, err := eval.Eval(e, p.base)
	if err != nil {
		return eval.Value{}, false
	}
	switch v.Kind() {
	case eval.Null, eval.Bool, eval.Number, eval.String:
		return v, true
	}
	return eval.Value{}, false
}

// propertyPath returns the property names of a chain alias.a["b"].c.
func propertyPath(alias string, e ast.Expr) ([]string, bool) {
	var rev []string
	for {
		switch x := e.(type) {
		case *ast.Dot:
			rev = append(rev, x.Name)
			e = x.X
		case *ast.Index:
			s, ok := x.Index.(*ast.StringLit)
			if !ok {
				return nil, false
			}
			rev = append(rev, s.Value)
			e = x.X
		case *ast.Ident:
			if x.Name != alias || len(rev) == 0 {
				return nil, false
			}
			path := make([]string, len(rev))
			for i, s := range rev {
				path[len(rev)-1-i] = s
			}
			return path, true
		default:
			return nil, false
		}
	}
}

// Matches reports whether the document doc satisfies f. A document that
// does not is never part of the query's result.
func (f *Filter) Matches(doc eval.Value) bool {
	v := doc
	for _, name := range f.Path {
		v = v.Property(name)
	}
	if !v.IsDefined() {
		return false
	}
	if f.Values != nil {
		for _, want := range f.Values {
			if v.Kind() == want.Kind() && eval.Compare(v, want) == 0 {
				return true
			}
		}
		return false
	}
	if f.Lo.IsDefined() {
		if v.Kind() != f.Lo.Kind() {
			return false
		}
		if c := eval.Compare(v, f.Lo); c < 0 || c == 0 && !f.LoIncl {
			return false
		}
	}
	if f.Hi.IsDefined() {
		if v.Kind() != f.Hi.Kind() {
			return false
		}
		if c := eval.Compare(v, f.Hi); c > 0 || c == 0 && !f.HiIncl {
			return false
		}
	}
	return true
}

// TextFilter is a FullTextContains, FullTextContainsAll or
// FullTextContainsAny call that the WHERE clause requires to be true (a
// conjunct), on a property path of the document, with constant search
// terms: storage with an inverted index on the path can give the
// documents that may satisfy it.
type TextFilter struct {
	Path []string
	// All: every query must match (Contains, ContainsAll); else one
	// (ContainsAny).
	All     bool
	Queries []fulltext.Query
}

// TextFilters lists the WHERE clause's full-text conjuncts. The query still
// evaluates them on every document it reads.
func (p *Plan) TextFilters() []TextFilter {
	q := p.top
	alias, ok := q.documentAlias()
	if !ok || q.where == nil {
		return nil
	}
	var out []TextFilter
	var conj func(e ast.Expr)
	conj = func(e ast.Expr) {
		switch x := e.(type) {
		case *ast.Binary:
			if x.Op == ast.And {
				conj(x.L)
				conj(x.R)
			}
		case *ast.Call:
			if x.UDF || len(x.Args) < 2 {
				return
			}
			var all bool
			switch strings.ToUpper(x.Name) {
			case "FULLTEXTCONTAINS", "FULLTEXTCONTAINSALL":
				all = true
			case "FULLTEXTCONTAINSANY":
			default:
				return
			}
			path, ok := propertyPath(alias, x.Args[0])
			if !ok {
				return
			}
			qs, err := p.search.ScoreQueries(x, p.params)
			if err != nil {
				return
			}
			out = append(out, TextFilter{Path: path, All: all, Queries: qs})
		}
	}
	conj(q.where)
	return out
}
