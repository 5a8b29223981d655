package exec

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/token"
)

// Options is the outside world a query may look at. The zero Options is
// valid: the date functions and RAND then fail with eval.ErrMissingEnv and
// udf calls with eval.ErrNeedsExecutor.
type Options struct {
	// Now returns the current time (GetCurrentDateTime ...).
	Now func() time.Time
	// QueryStart is the time the query started, for the *Static date
	// functions. Keep it fixed across the pages of one query.
	QueryStart time.Time
	// Rand returns a uniform float64 in [0, 1) for RAND.
	Rand func() float64
	// UDF calls a user-defined function by name (without "udf.").
	UDF func(name string, args []eval.Value) (eval.Value, error)
	// Tag is the caller's own value, kept with the plan (Plan.Tag): for
	// instance what accounts for the UDF calls of its pages.
	Tag any
	// Search holds the container's vector embedding and full-text
	// policies (Embeddings, Text; the other fields are the plan's own).
	// nil: no policies.
	Search *eval.Search
}

// Shape is how a query's rows are produced per partition and merged across
// partitions; it decides what a Partial holds and what a State records.
type Shape uint8

const (
	// Streaming: no ORDER BY, DISTINCT, GROUP BY or aggregate. Rows come in
	// document key order; the state is the position of the last row
	// consumed.
	Streaming Shape = iota
	// Ordered: ORDER BY. Rows come sorted by the ORDER BY values, then by
	// document key and fan-out position; the state is the sort key of the
	// last row consumed.
	Ordered
	// Distinct: DISTINCT without ORDER BY, GROUP BY or aggregates. Distinct
	// rows come in value order (eval.Compare); the state is the last row
	// consumed.
	Distinct
	// OrderedDistinct: DISTINCT with ORDER BY. Rows come sorted by the
	// ORDER BY values then by row value, and a row equal to the row before
	// it is dropped; the state is the last (values, row) consumed.
	OrderedDistinct
	// Grouped: GROUP BY. Groups come in group-key order with mergeable
	// accumulator states; the state is the last group key consumed. With
	// DISTINCT the groups are computed in full every page (see doc.go).
	Grouped
	// Aggregate: aggregates without GROUP BY: one row, one page.
	Aggregate
	// Ranked: ORDER BY RANK RRF(...). Each partition keeps its best
	// candidates per component; the merge keeps the best per component
	// over all partitions, fuses their ranks and orders by the fused
	// score; the state is the number of rows consumed (see rank.go).
	Ranked
)

var shapeNames = [...]string{"streaming", "ordered", "distinct", "ordered-distinct", "grouped", "aggregate", "ranked"}

// String returns the shape's name.
func (s Shape) String() string { return shapeNames[s] }

// Plan is a compiled query: the analysed clauses of the query and of every
// subquery in it, its parameters and its shape. A Plan is immutable after
// Compile and safe for concurrent use by the goroutines that run its
// partitions.
type Plan struct {
	top    *query
	params map[string]eval.Value
	subs   map[*ast.Query]*query
	base   *eval.Env
	shape  Shape
	fp     uint64
	// sortPath: see SortPath (Ordered and OrderedDistinct only).
	sortPath []string
	tag      any
	// search is the plan's eval.Search (also in base); rank describes
	// ORDER BY RANK (nil without).
	search *eval.Search
	rank   *rankInfo
}

// Tag returns Options.Tag of the plan's compilation.
func (p *Plan) Tag() any { return p.tag }

// query is one compiled SELECT: the top-level query or a subquery.
type query struct {
	ast *ast.Query

	noFrom  bool
	sources []*source // FROM source then JOINs
	where   ast.Expr

	kind     ast.SelectKind
	star     string // SelectStar: the alias whose value is the row
	items    []item // SelectList
	value    ast.Expr
	distinct bool

	top, offset, limit int64 // -1 when absent

	groupBy  []ast.Expr
	aggs     []*ast.Call
	aggKinds []eval.AggKind
	aggIndex map[*ast.Call]int
	grouped  bool // GROUP BY or an aggregate in the select clause

	orderBy []orderKey
	// rrf: ORDER BY RANK RRF(...); orderBy then holds its components and
	// weights their weights.
	rrf     bool
	weights []float64
}

type item struct {
	name string
	x    ast.Expr
}

type orderKey struct {
	x    ast.Expr
	desc bool
}

// source is one FROM or JOIN input.
type source struct {
	alias string
	iter  bool // alias IN collection
	// A subquery collection, or a path: root (an alias in scope, or the
	// container's name when container is set) followed by path.
	sub       *query
	root      string
	path      []*ast.PathSeg
	container bool      // root names the container: the current document
	at        token.Pos // where it is in the query, for budget errors
}

// Compile analyses q with the parameter values params (keyed by name
// without '@') and returns its plan. It runs eval.CheckParams first and then
// checks what only the executor knows: that every name is bound, that
// SELECT * has exactly one input, that aliases are unique, that the select
// list of an aggregate or GROUP BY query refers to the input only through
// aggregates and GROUP BY expressions, and what is not supported (ORDER BY
// RANK, ORDER BY with GROUP BY, a FROM subquery that spans documents).
// Errors are *eval.Error values wrapping eval.ErrInvalidQuery.
func Compile(q *ast.Query, params map[string]eval.Value) (*Plan, error) {
	return CompileWith(q, params, Options{})
}

// CompileWith is Compile with an environment for the date functions, RAND
// and UDFs.
func CompileWith(q *ast.Query, params map[string]eval.Value, opts Options) (*Plan, error) {
	if err := eval.CheckParams(q, params); err != nil {
		return nil, err
	}
	search, err := newSearch(q, params, opts.Search)
	if err != nil {
		return nil, err
	}
	c := &compiler{subs: make(map[*ast.Query]*query), params: params, search: search}
	top, err := c.query(q, nil, true)
	if err != nil {
		return nil, err
	}
	p := &Plan{top: top, params: params, subs: c.subs, tag: opts.Tag, search: search}
	if p.rank, err = c.rankInfo(top); err != nil {
		return nil, err
	}
	p.base = &eval.Env{
		Search:     search,
		Params:     params,
		Subquery:   p.subquery,
		UDF:        opts.UDF,
		Now:        opts.Now,
		QueryStart: opts.QueryStart,
		Rand:       opts.Rand,
		Cache:      eval.NewCache(),
	}
	switch {
	case top.rrf:
		p.shape = Ranked
	case top.grouped && len(top.groupBy) == 0:
		p.shape = Aggregate
	case top.grouped:
		p.shape = Grouped
	case top.distinct && len(top.orderBy) > 0:
		p.shape = OrderedDistinct
	case top.distinct:
		p.shape = Distinct
	case len(top.orderBy) > 0:
		p.shape = Ordered
	default:
		p.shape = Streaming
	}
	if p.shape == Ordered || p.shape == OrderedDistinct {
		p.sortPath = top.sortPath()
	}
	p.fp = fingerprint(q, params)
	return p, nil
}

// Shape returns how the query is executed and merged.
func (p *Plan) Shape() Shape { return p.shape }

// Query returns the query the plan was compiled from.
func (p *Plan) Query() *ast.Query { return p.top.ast }

// fingerprint identifies a query and its parameters, so that a state is
// only accepted by the plan that made it.
func fingerprint(q *ast.Query, params map[string]eval.Value) uint64 {
	h := fnv.New64a()
	h.Write([]byte("parsec-exec-1\x00"))
	h.Write([]byte(q.String()))
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	slices.Sort(names)
	var buf []byte
	for _, n := range names {
		buf = append(buf[:0], 0)
		buf = append(buf, n...)
		buf = append(buf, 0)
		buf = appendValue(buf, params[n])
		h.Write(buf)
	}
	return h.Sum64()
}

// subquery is the Env.Subquery hook: it runs a compiled subquery in env.
func (p *Plan) subquery(q *ast.Query, env *eval.Env) ([]eval.Value, error) {
	cq := p.subs[q]
	if cq == nil {
		panic("BUG: exec: subquery was not compiled: " + q.String())
	}
	return p.runLocal(cq, env, eval.Value{})
}

// compiler analyses queries; scope tracks the aliases visible to an
// expression.
type compiler struct {
	subs   map[*ast.Query]*query
	params map[string]eval.Value
	search *eval.Search
}

type scope struct {
	names []string
	outer *scope
}

func (s *scope) has(name string) bool {
	for ; s != nil; s = s.outer {
		if slices.Contains(s.names, name) {
			return true
		}
	}
	return false
}

// query compiles q, whose expressions see the aliases of outer. When
// container is set, the root of q's FROM source names the container (the
// current document) instead of an alias.
func (c *compiler) query(q *ast.Query, outer *scope, container bool) (*query, error) {
	cq := &query{ast: q, top: -1, offset: -1, limit: -1, kind: q.Select.Kind, distinct: q.Select.Distinct}
	sc := &scope{outer: outer}
	if q.From == nil {
		cq.noFrom = true
	} else {
		srcs := append([]*ast.Source{q.From.Source}, q.From.Joins...)
		for i, s := range srcs {
			cs, err := c.source(s, sc, container && i == 0)
			if err != nil {
				return nil, err
			}
			if slices.Contains(sc.names, cs.alias) {
				return nil, queryError(s.At, ErrAlias, "the alias %s is used twice in the FROM clause", cs.alias)
			}
			sc.names = append(sc.names, cs.alias)
			cq.sources = append(cq.sources, cs)
		}
	}

	sel := q.Select
	switch sel.Kind {
	case ast.SelectStar:
		switch {
		case cq.noFrom:
			return nil, queryError(sel.At, ErrSelectStar, "'SELECT *' is not valid if FROM clause is omitted")
		case len(cq.sources) > 1:
			return nil, queryError(sel.At, ErrSelectStar, "'SELECT *' is only valid with a single input set")
		case len(q.GroupBy) > 0:
			return nil, queryError(sel.At, ErrSelectStar, "'SELECT *' is not allowed with GROUP BY")
		}
		cq.star = cq.sources[0].alias
	case ast.SelectValue:
		if err := c.resolve(sel.Value, sc); err != nil {
			return nil, err
		}
		cq.value = sel.Value
	case ast.SelectList:
		unnamed := 0
		for _, it := range sel.Items {
			if err := c.resolve(it.X, sc); err != nil {
				return nil, err
			}
			name := it.Alias
			if name == "" {
				var ok bool
				if name, ok = itemName(it.X); !ok {
					unnamed++
					name = "$" + strconv.Itoa(unnamed)
				}
			}
			for _, prev := range cq.items {
				if prev.name == name {
					return nil, queryError(it.Pos(), ErrAlias, "the select list has two items named %s", name)
				}
			}
			cq.items = append(cq.items, item{name: name, x: it.X})
		}
	}

	if q.Where != nil {
		if err := c.resolve(q.Where, sc); err != nil {
			return nil, err
		}
		cq.where = q.Where
	}
	for _, g := range q.GroupBy {
		if err := c.resolve(g, sc); err != nil {
			return nil, err
		}
	}
	cq.groupBy = q.GroupBy
	if q.OrderBy != nil {
		for _, it := range q.OrderBy.Items {
			if err := c.resolve(it.X, sc); err != nil {
				return nil, err
			}
		}
		if q.OrderBy.Rank {
			if err := c.rankKeys(cq, q, container); err != nil {
				return nil, err
			}
		} else {
			for _, it := range q.OrderBy.Items {
				cq.orderBy = append(cq.orderBy, orderKey{x: it.X, desc: c.descending(it)})
			}
		}
	}
	if sel.Top != nil {
		cq.top = c.count(sel.Top)
	}
	if q.Offset != nil {
		cq.offset = c.count(q.Offset)
		cq.limit = c.count(q.Limit)
	}

	// Aggregates of the select clause (those of subqueries belong to them).
	for _, e := range cq.selectExprs() {
		walk(e, func(x ast.Expr) bool {
			if call, ok := x.(*ast.Call); ok && isAggregate(call) {
				kind, _ := eval.ParseAggKind(call.Name)
				cq.aggs = append(cq.aggs, call)
				cq.aggKinds = append(cq.aggKinds, kind)
				return false
			}
			_, isSub := x.(*ast.Subquery)
			return !isSub
		})
	}
	cq.aggIndex = make(map[*ast.Call]int, len(cq.aggs))
	for i, a := range cq.aggs {
		cq.aggIndex[a] = i
	}
	cq.grouped = len(cq.aggs) > 0 || len(q.GroupBy) > 0
	if cq.grouped && q.OrderBy != nil && q.OrderBy.Rank {
		return nil, queryError(q.OrderBy.At, eval.ErrUnsupported, "ORDER BY RANK is not supported with aggregates or GROUP BY")
	}
	if cq.grouped {
		for _, e := range cq.selectExprs() {
			if err := checkGrouped(e, q.GroupBy); err != nil {
				return nil, err
			}
		}
		if q.OrderBy != nil {
			if len(q.GroupBy) > 0 {
				return nil, queryError(q.OrderBy.At, eval.ErrUnsupported, "ORDER BY is not supported together with GROUP BY")
			}
			// An aggregate without GROUP BY is one row: ORDER BY is moot.
			cq.orderBy = nil
		}
	}
	return cq, nil
}

// source compiles one FROM or JOIN source in scope sc.
func (c *compiler) source(s *ast.Source, sc *scope, container bool) (*source, error) {
	cs := &source{alias: s.Alias, iter: s.Iter, at: s.Pos()}
	coll := s.Coll
	if coll.Query != nil {
		var err error
		if container {
			cs.container = true
			if cs.sub, err = c.query(coll.Query, nil, true); err != nil {
				return nil, err
			}
			if err := perDocument(cs.sub); err != nil {
				return nil, err
			}
		} else if cs.sub, err = c.query(coll.Query, sc, false); err != nil {
			return nil, err
		}
		if cs.alias == "" {
			// JOIN (SELECT ...) without alias only multiplies the rows;
			// the name cannot clash with an identifier.
			cs.alias = fmt.Sprintf("$%d", len(sc.names)+1)
		}
		return cs, nil
	}
	cs.root, cs.path, cs.container = coll.Root, coll.Path, container
	if !container && !sc.has(coll.Root) {
		return nil, queryError(coll.At, eval.ErrUnbound, "identifier %s could not be resolved", coll.Root)
	}
	if cs.alias == "" {
		switch {
		case len(coll.Path) == 0:
			cs.alias = coll.Root
		case coll.Path[len(coll.Path)-1].Kind == ast.SegName:
			cs.alias = coll.Path[len(coll.Path)-1].Text
		default:
			return nil, queryError(coll.At, ErrAlias, "the FROM source %s needs an alias", coll)
		}
	}
	return cs, nil
}

// perDocument reports an error if q, used as the FROM source of a query
// over the container, has a clause that spans documents: it is run once per
// document, so it may only filter and project.
func perDocument(q *query) error {
	if q.grouped || len(q.orderBy) > 0 || q.distinct || q.top >= 0 || q.offset >= 0 {
		return queryError(q.ast.Pos(), eval.ErrUnsupported,
			"a subquery in the FROM clause may not use TOP, OFFSET, ORDER BY, DISTINCT, GROUP BY or aggregates")
	}
	return nil
}

// resolve checks that every name in e is bound in sc and compiles the
// subqueries in e.
func (c *compiler) resolve(e ast.Expr, sc *scope) error {
	var err error
	walk(e, func(x ast.Expr) bool {
		if err != nil {
			return false
		}
		switch x := x.(type) {
		case *ast.Ident:
			if !sc.has(x.Name) && x.Name != "NaN" && x.Name != "Infinity" {
				err = queryError(x.At, eval.ErrUnbound, "identifier %s could not be resolved", x.Name)
			}
		case *ast.Subquery:
			var cq *query
			if cq, err = c.query(x.Query, sc, false); err == nil {
				c.subs[x.Query] = cq
			}
			return false
		}
		return true
	})
	return err
}

// count returns the value of a TOP, OFFSET or LIMIT operand, which
// eval.CheckParams has verified to be a non-negative integer.
func (c *compiler) count(e ast.Expr) int64 {
	v, err := eval.Eval(e, &eval.Env{Params: c.params})
	if err != nil {
		panic("BUG: exec: count not checked: " + err.Error())
	}
	n, ok := v.AsInt()
	if !ok || n < 0 {
		panic("BUG: exec: count not checked: " + v.String())
	}
	return n
}

// selectExprs returns the expressions of the select clause.
func (q *query) selectExprs() []ast.Expr {
	switch q.kind {
	case ast.SelectValue:
		return []ast.Expr{q.value}
	case ast.SelectList:
		es := make([]ast.Expr, len(q.items))
		for i, it := range q.items {
			es[i] = it.x
		}
		return es
	}
	return nil
}

// itemName is the name a select item gets without AS: the last property
// name of a path, or the name of an alias.
func itemName(x ast.Expr) (string, bool) {
	switch x := x.(type) {
	case *ast.Ident:
		return x.Name, true
	case *ast.Dot:
		return x.Name, true
	case *ast.Index:
		if s, ok := x.Index.(*ast.StringLit); ok {
			return s.Value, true
		}
	}
	return "", false
}

func isAggregate(call *ast.Call) bool { return !call.UDF && eval.IsAggregate(call.Name) }

// checkGrouped reports a reference to the input in e that is neither inside
// an aggregate nor one of the GROUP BY expressions.
func checkGrouped(e ast.Expr, groupBy []ast.Expr) error {
	var err error
	walk(e, func(x ast.Expr) bool {
		if err != nil {
			return false
		}
		for _, g := range groupBy {
			if ast.Equal(x, g) {
				return false
			}
		}
		switch x := x.(type) {
		case *ast.Call:
			if isAggregate(x) {
				return false
			}
		case *ast.Subquery:
			err = queryError(x.At, eval.ErrUnsupported, "a subquery in the select list of an aggregate or GROUP BY query is not supported")
		case *ast.Dot, *ast.Index, *ast.Ident:
			if root, ok := pathRoot(x); ok && root.Name != "NaN" && root.Name != "Infinity" {
				err = queryError(x.Pos(), ErrNotGrouped,
					"%s is invalid in the select list because it is not contained in an aggregate function or the GROUP BY clause", x)
			}
		}
		return true
	})
	return err
}

// pathRoot returns the identifier at the root of a property path such as
// c.a[0]["b"], if e is one.
func pathRoot(e ast.Expr) (*ast.Ident, bool) {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x, true
		case *ast.Dot:
			e = x.X
		case *ast.Index:
			switch x.Index.(type) {
			case *ast.NumberLit, *ast.StringLit:
				e = x.X
			default:
				return nil, false
			}
		default:
			return nil, false
		}
	}
}

// walk calls f on e and, while f returns true, on the subexpressions of e
// (not into subqueries, which are not expressions).
func walk(e ast.Expr, f func(ast.Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	switch e := e.(type) {
	case *ast.ArrayCreate:
		for _, x := range e.Elems {
			walk(x, f)
		}
	case *ast.ObjectCreate:
		for _, p := range e.Props {
			walk(p.X, f)
		}
	case *ast.Dot:
		walk(e.X, f)
	case *ast.Index:
		walk(e.X, f)
		walk(e.Index, f)
	case *ast.Call:
		for _, x := range e.Args {
			walk(x, f)
		}
	case *ast.Unary:
		walk(e.X, f)
	case *ast.Binary:
		walk(e.L, f)
		walk(e.R, f)
	case *ast.In:
		walk(e.X, f)
		for _, x := range e.List {
			walk(x, f)
		}
	case *ast.Between:
		walk(e.X, f)
		walk(e.Lo, f)
		walk(e.Hi, f)
	case *ast.Like:
		walk(e.X, f)
		walk(e.Pattern, f)
	case *ast.Conditional:
		walk(e.Cond, f)
		walk(e.Then, f)
		walk(e.Else, f)
	}
}

// limits returns the initial OFFSET to skip and the number of rows to
// return after it (-1 for no limit): OFFSET, then LIMIT, then TOP, as the
// SDKs' pipelines apply them.
func (q *query) limits() (offset, limit int64) {
	offset, limit = 0, -1
	if q.offset >= 0 {
		offset, limit = q.offset, q.limit
	}
	if q.top >= 0 && (limit < 0 || q.top < limit) {
		limit = q.top
	}
	return offset, limit
}

// maxInt bounds counts computed from OFFSET and LIMIT.
const maxInt = math.MaxInt32 * 4
