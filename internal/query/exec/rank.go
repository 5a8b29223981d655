package exec

import (
	"fmt"
	"math"
	"slices"

	"github.com/parsecdb/parsec/internal/fulltext"
	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// DefaultRankWindow is how many candidates each component of an ORDER BY
// RANK RRF query contributes when the query has neither TOP nor LIMIT:
// the SDKs that fuse hybrid results cap what they fetch the same way (the
// Python SDK's AZURE_COSMOS_HYBRID_SEARCH_MAX_ITEMS, 1000 by default).
const DefaultRankWindow = 1000

// rankInfo describes ORDER BY RANK: the FullTextScore calls whose BM25
// statistics must be gathered over the whole container first, with their
// analysed search terms.
type rankInfo struct {
	scores  []*ast.Call
	queries [][]fulltext.Query
}

// newSearch builds a plan's eval.Search from the container's policies
// (base) and resolves every VectorDistance call of q.
func newSearch(q *ast.Query, params map[string]eval.Value, base *eval.Search) (*eval.Search, error) {
	s := &eval.Search{Vectors: map[*ast.Call]*eval.VectorCall{}, Work: &eval.SearchWork{}}
	if base != nil {
		s.Embeddings, s.Text = base.Embeddings, base.Text
	}
	var err error
	walkQuery(q, func(x ast.Expr) bool {
		if call, ok := x.(*ast.Call); ok && err == nil && eval.IsVectorDistance(call) && len(call.Args) >= 2 {
			s.Vectors[call], err = s.ResolveVector(call, params)
		}
		return err == nil
	})
	return s, err
}

// walkQuery calls f on every expression of q and of its subqueries.
func walkQuery(q *ast.Query, f func(ast.Expr) bool) {
	if q == nil {
		return
	}
	var exprs []ast.Expr
	switch q.Select.Kind {
	case ast.SelectList:
		for _, it := range q.Select.Items {
			exprs = append(exprs, it.X)
		}
	case ast.SelectValue:
		exprs = append(exprs, q.Select.Value)
	}
	if q.From != nil {
		for _, src := range append([]*ast.Source{q.From.Source}, q.From.Joins...) {
			walkQuery(src.Coll.Query, f)
		}
	}
	exprs = append(exprs, q.Where)
	exprs = append(exprs, q.GroupBy...)
	if q.OrderBy != nil {
		for _, it := range q.OrderBy.Items {
			exprs = append(exprs, it.X)
		}
	}
	for _, e := range exprs {
		walk(e, func(x ast.Expr) bool {
			if sub, ok := x.(*ast.Subquery); ok {
				walkQuery(sub.Query, f)
				return false
			}
			return f(x)
		})
	}
}

// descending is the direction of an ORDER BY item: as written, else
// ascending, except VectorDistance, which sorts the closest first as the
// service does: descending for cosine and dot product (higher is
// closer), ascending for the Euclidean distance (vectordistance.md; the
// JavaScript SDK's vectorEmbeddingPolicy.spec.ts checks both orders).
func (c *compiler) descending(it *ast.OrderItem) bool {
	switch it.Dir {
	case ast.Desc:
		return true
	case ast.Asc:
		return false
	}
	return c.vectorDescending(it.X)
}

func (c *compiler) vectorDescending(x ast.Expr) bool {
	call, ok := x.(*ast.Call)
	if !ok || !eval.IsVectorDistance(call) {
		return false
	}
	vc := c.search.Vectors[call]
	return vc != nil && !vc.Ascending()
}

// rankKeys compiles ORDER BY RANK (whose form eval.CheckParams checked):
// FullTextScore sorts by score, highest first; RRF(...) makes the query
// Ranked, with one sort key per component and the weights.
func (c *compiler) rankKeys(cq *query, q *ast.Query, container bool) error {
	if !container {
		return queryError(q.OrderBy.At, eval.ErrUnsupported, "ORDER BY RANK is not supported in a subquery")
	}
	call := q.OrderBy.Items[0].X.(*ast.Call)
	if eval.IsFullTextScore(call) {
		cq.orderBy = []orderKey{{x: call, desc: true}}
		return nil
	}
	if cq.distinct {
		return queryError(q.OrderBy.At, eval.ErrUnsupported, "DISTINCT is not supported with ORDER BY RANK RRF")
	}
	cq.rrf = true
	args := call.Args
	if w, ok := args[len(args)-1].(*ast.ArrayCreate); ok {
		args = args[:len(args)-1]
		v, err := eval.Eval(w, &eval.Env{Params: c.params})
		if err != nil {
			return err
		}
		if v.Len() != len(args) {
			return queryError(w.At, eval.ErrBadArgument, "RRF has %d components and %d weights", len(args), v.Len())
		}
		for i := range v.Len() {
			f := v.Elem(i)
			if f.Kind() != eval.Number || math.IsNaN(f.AsFloat()) || math.IsInf(f.AsFloat(), 0) {
				return queryError(w.At, eval.ErrBadArgument, "the weights of RRF must be numbers, not %s", f)
			}
			cq.weights = append(cq.weights, f.AsFloat())
		}
	}
	if len(args) == 0 {
		return queryError(call.At, eval.ErrBadArgument, "RRF needs at least one FullTextScore or VectorDistance component")
	}
	for _, a := range args {
		x := a.(*ast.Call)
		cq.orderBy = append(cq.orderBy, orderKey{x: x, desc: eval.IsFullTextScore(x) || c.vectorDescending(x)})
	}
	if cq.weights == nil {
		for range args {
			cq.weights = append(cq.weights, 1)
		}
	}
	return nil
}

// rankInfo collects the FullTextScore calls of ORDER BY RANK, whose path
// must start from the container's alias (statistics are per document).
func (c *compiler) rankInfo(top *query) (*rankInfo, error) {
	if top.ast.OrderBy == nil || !top.ast.OrderBy.Rank {
		return nil, nil
	}
	ri := &rankInfo{}
	for _, k := range top.orderBy {
		call := k.x.(*ast.Call)
		if !eval.IsFullTextScore(call) {
			continue
		}
		root, ok := eval.ArgRoot(call.Args[0])
		if _, isPath := eval.ArgPath(call.Args[0]); !ok || !isPath || len(top.sources) == 0 || root != top.sources[0].alias || !top.sources[0].container || len(top.sources[0].path) > 0 || top.sources[0].iter || top.sources[0].sub != nil {
			return nil, queryError(call.At, eval.ErrBadArgument, "the first argument of FullTextScore must be a property path of the container's documents")
		}
		qs, err := c.search.ScoreQueries(call, c.params)
		if err != nil {
			return nil, err
		}
		ri.scores = append(ri.scores, call)
		ri.queries = append(ri.queries, qs)
	}
	return ri, nil
}

// NeedsStats reports whether the plan scores text with FullTextScore: its
// caller must then gather the BM25 statistics over every partition of the
// container (PartitionStats on each, summed) and run the plan WithStats.
func (p *Plan) NeedsStats() bool { return p.rank != nil && len(p.rank.scores) > 0 }

// PartitionStats reads the documents of one partition and returns their
// contribution to the statistics of each FullTextScore call of the plan:
// every document counts, and those with a string at the call's path add
// their length and, per search term, whether they contain it.
func (p *Plan) PartitionStats(src Source) ([]fulltext.Stats, error) {
	out := make([]fulltext.Stats, len(p.rank.scores))
	for i := range out {
		out[i].DF = make([]uint64, len(p.rank.queries[i]))
	}
	alias := p.top.sources[0].alias
	env := p.base.Child(map[string]eval.Value{})
	err := docs(src, func(_ []byte, doc eval.Value) error {
		env.Vars[alias] = doc
		for i, call := range p.rank.scores {
			v, err := eval.Eval(call.Args[0], env)
			if err != nil {
				return err
			}
			if err := out[i].Add(p.search.TextStats(call, p.rank.queries[i], v)); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// WithStats returns the plan with the container-wide statistics of its
// FullTextScore calls (the sums of PartitionStats over all partitions),
// ready to run. The plan keeps its fingerprint: continuations stay valid.
func (p *Plan) WithStats(stats []fulltext.Stats) (*Plan, error) {
	if !p.NeedsStats() || len(stats) != len(p.rank.scores) {
		return nil, fmt.Errorf("exec: %d statistics for %d FullTextScore calls", len(stats), len(p.rank.scores))
	}
	s := &eval.Search{Embeddings: p.search.Embeddings, Text: p.search.Text, Vectors: p.search.Vectors, Work: p.search.Work}
	s.Scores = make(map[*ast.Call]*fulltext.Scorer, len(stats))
	for i, call := range p.rank.scores {
		if len(stats[i].DF) != len(p.rank.queries[i]) {
			return nil, fmt.Errorf("exec: statistics of %d terms for %d", len(stats[i].DF), len(p.rank.queries[i]))
		}
		s.Scores[call] = fulltext.NewScorer(stats[i])
	}
	q := *p
	base := *p.base
	base.Search = s
	q.base, q.search = &base, s
	return &q, nil
}

// SearchWork returns the counters of the plan's vector and full-text
// work: a plan is compiled per page, so they count the page's.
func (p *Plan) SearchWork() *eval.SearchWork { return p.search.Work }

// UsesVectors reports whether the query calls VectorDistance.
func (p *Plan) UsesVectors() bool { return len(p.search.Vectors) > 0 }

// VectorPaths returns the embedding paths of the query's VectorDistance
// calls that match the container's policy.
func (p *Plan) VectorPaths() []string {
	var out []string
	for _, vc := range p.search.Vectors {
		if vc.Path != "" && !slices.Contains(out, vc.Path) {
			out = append(out, vc.Path)
		}
	}
	slices.Sort(out)
	return out
}

// rankWindow is how many candidates per component a Ranked query keeps.
func (p *Plan) rankWindow() int {
	offset, limit := p.top.limits()
	if limit < 0 {
		return DefaultRankWindow
	}
	return int(min(offset+limit, maxInt))
}

// keepBest keeps the rows that are among the w best of some component
// (ties by position), in position order.
func (p *Plan) keepBest(rows []*row, w int) []*row {
	if len(rows) <= w {
		return rows
	}
	keep := make(map[*row]bool)
	idx := slices.Clone(rows)
	for c, k := range p.top.orderBy {
		slices.SortFunc(idx, func(a, b *row) int {
			x := eval.Compare(a.ord[c], b.ord[c])
			if k.desc {
				x = -x
			}
			if x != 0 {
				return x
			}
			return cmpPos(a.pos, b.pos)
		})
		for _, r := range idx[:w] {
			keep[r] = true
		}
	}
	out := rows[:0]
	for _, r := range rows {
		if keep[r] {
			out = append(out, r)
		}
	}
	clear(rows[len(out):])
	return out
}

// runRanked evaluates every row of the partition: its component scores
// (the sort keys) and its projection, keeping the best rankWindow rows of
// each component.
func (p *Plan) runRanked(src Source, lim *Limits, env *eval.Env) (*Partial, error) {
	q := p.top
	w := p.rankWindow()
	var buf []*row
	held := 0
	err := docs(src, func(key []byte, doc eval.Value) error {
		if env.Budget != nil {
			env.Budget.ResetBytes()
		}
		fan := int64(-1)
		return p.expand(q, env, doc, func(b vars) error {
			fan++
			e := tupleEnv(env, b)
			if ok, err := q.filter(e); err != nil || !ok {
				return err
			}
			ord, err := q.orderValues(e)
			if err != nil {
				return err
			}
			val, err := q.project(e)
			if err != nil || !val.IsDefined() {
				return err
			}
			r := &row{ord: ord, pos: pos{key: key, fan: fan}, val: val, size: eval.JSONSize(val)}
			if err := lim.hold(q.ast.Pos(), "rows", int64(r.size)); err != nil {
				return err
			}
			held += r.size
			buf = append(buf, r)
			if len(buf) >= 4*w+64 {
				buf = p.keepBest(buf, w)
				was := held
				held = 0
				for _, r := range buf {
					held += r.size
				}
				lim.hold(q.ast.Pos(), "rows", int64(held-was))
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return &Partial{rows: p.keepBest(buf, w), done: true}, nil
}

// mergeRanked fuses the partitions' candidates: the best rankWindow of
// each component over all partitions, ranked per component (equal scores
// share a rank), fused by RRF with the query's weights, highest first
// (ties by position), then paged from the number of rows the state has
// consumed.
func (p *Plan) mergeRanked(pg *pager, partials []*Partial) error {
	var rows []*row
	for _, pt := range partials {
		rows = append(rows, pt.rows...)
	}
	slices.SortFunc(rows, func(a, b *row) int { return cmpPos(a.pos, b.pos) })
	rows = p.keepBest(rows, p.rankWindow())
	comps := make([]fulltext.Component, len(p.top.orderBy))
	for i, k := range p.top.orderBy {
		comps[i] = fulltext.Component{Weight: p.top.weights[i], Ascending: !k.desc}
	}
	scores := make([][]float64, len(rows))
	for i, r := range rows {
		scores[i] = make([]float64, len(comps))
		for c, v := range r.ord {
			scores[i][c] = math.NaN()
			if v.Kind() == eval.Number {
				scores[i][c] = v.AsFloat()
			}
		}
	}
	fused, err := fulltext.RRF(scores, comps)
	if err != nil {
		return queryError(p.top.ast.OrderBy.At, eval.ErrBadArgument, "%v", err)
	}
	st := pg.st
	consumed := int64(0)
	if st.started {
		consumed, _ = st.vals[0].AsInt()
	}
	order := fulltext.RankOrder(fused)
	i := int(min(consumed, int64(len(order))))
	for ; i < len(order); i++ {
		r := rows[order[i]]
		if pg.full() || !pg.fits(r.size) {
			break
		}
		pg.take(r.val, r.size)
	}
	st.started = true
	st.vals = []eval.Value{eval.IntValue(int64(i))}
	if i == len(order) {
		st.done = true
	}
	return nil
}

// GatherStats returns p ready to run over sources, which must be every
// partition of the container (read once): when the plan scores text, its
// BM25 statistics are summed over them (see NeedsStats); otherwise p
// itself. Statistics are gathered by reading every document; an index
// that keeps them per partition will replace this pass.
func GatherStats(p *Plan, sources []Source) (*Plan, error) {
	if !p.NeedsStats() {
		return p, nil
	}
	var total []fulltext.Stats
	for _, src := range sources {
		st, err := p.PartitionStats(src)
		if err != nil {
			return nil, err
		}
		if total == nil {
			total = st
			continue
		}
		for i := range total {
			if err := total[i].Add(st[i]); err != nil {
				return nil, err
			}
		}
	}
	if total == nil {
		total = make([]fulltext.Stats, len(p.rank.scores))
		for i := range total {
			total[i].DF = make([]uint64, len(p.rank.queries[i]))
		}
	}
	return p.WithStats(total)
}
