package exec

import (
	"fmt"
	"slices"

	"github.com/parsecdb/parsec/internal/query/eval"
)

// Exec runs one page of the plan over the partitions' sources, one after
// another in this goroutine, and returns the page and the state to resume
// from (Done when the query is finished). sources must be in key order
// (see Source) and built for this page: each is read once. A nil s starts
// the query. pageSize <= 0 asks for every remaining row. A page may hold
// fewer than pageSize rows while the query is not done (DISTINCT with
// ORDER BY drops duplicates after the partitions were cut); callers page
// until Done, as the SDKs do.
//
// Exec is RunPartition for each source followed by Merge. A caller that
// runs partitions in parallel does the same with Want, RunPartition in its
// goroutines, and Merge. For a Streaming plan Exec runs a partition only if
// the ones before it are exhausted and have not yet filled the page;
// running them all is also correct.
func Exec(p *Plan, sources []Source, s *State, pageSize int) ([]eval.Value, *State, error) {
	if s == nil {
		s = p.Start()
	}
	if s.done {
		return nil, s, nil
	}
	want := p.Want(s, pageSize)
	partials := make([]*Partial, len(sources))
	have := 0
	for i, src := range sources {
		w := want
		if p.shape == Streaming && want > 0 {
			w = want - have
		}
		pt, err := p.RunPartition(src, s, w)
		if err != nil {
			return nil, nil, err
		}
		partials[i] = pt
		if p.shape == Streaming {
			if have += len(pt.rows); !pt.done || want > 0 && have >= want {
				break
			}
		}
	}
	return p.Merge(s, partials, pageSize)
}

// Merge combines the partitions' Partials for one page, run from state s
// with Want(s, pageSize), in the order of the sources (key order). It
// merges rows by their sort keys, combines groups, removes duplicates,
// applies OFFSET, LIMIT and TOP globally, and returns the page and the
// next state. For a Streaming plan a nil Partial means "not run": the page
// ends before that partition. Every other shape needs every partition's
// Partial.
func (p *Plan) Merge(s *State, partials []*Partial, pageSize int) ([]eval.Value, *State, error) {
	if s == nil {
		s = p.Start()
	}
	next := *s
	pg := &pager{st: &next, size: pageSize}
	if s.done {
		return nil, &next, nil
	}
	if p.top.noFrom {
		pt, err := p.run(&oneDoc{}, s, p.Want(s, pageSize))
		if err != nil {
			return nil, nil, err
		}
		partials = append([]*Partial{pt}, partials...)
	}
	if p.shape != Streaming {
		for i, pt := range partials {
			if pt == nil {
				return nil, nil, fmt.Errorf("exec: partition %d was not run for a %s query", i, p.shape)
			}
		}
	}
	var err error
	switch p.shape {
	case Streaming:
		p.mergeStream(pg, partials)
	case Grouped, Aggregate:
		err = p.mergeGroups(pg, partials)
	default:
		p.mergeSorted(pg, partials)
	}
	if err != nil {
		return nil, nil, err
	}
	return pg.rows, &next, nil
}

// pager collects a page: it applies the remaining OFFSET and LIMIT of its
// state and knows when the page is full.
type pager struct {
	st   *State
	size int
	rows []eval.Value
}

func (pg *pager) full() bool {
	return pg.st.done || pg.size > 0 && len(pg.rows) >= pg.size
}

// take consumes one row: OFFSET skips it, or the page gets it.
func (pg *pager) take(v eval.Value) {
	if pg.st.offset > 0 {
		pg.st.offset--
		return
	}
	pg.rows = append(pg.rows, v)
	if pg.st.limit > 0 {
		if pg.st.limit--; pg.st.limit == 0 {
			pg.st.done = true
		}
	}
}

// mergeStream takes rows partition after partition: a partition's rows are
// all before the next partition's.
func (p *Plan) mergeStream(pg *pager, partials []*Partial) {
	st := pg.st
	for _, pt := range partials {
		if pt == nil {
			return
		}
		i := 0
		for ; i < len(pt.rows) && !pg.full(); i++ {
			pg.take(pt.rows[i].val)
			p.setSortKey(st, pt.rows[i])
		}
		if i < len(pt.rows) || st.done {
			return
		}
		if pt.hasEnd && (!st.started || cmpPos(pt.end, st.pos) > 0) {
			st.pos, st.started = pt.end, true
		}
		if !pt.done {
			return
		}
	}
	st.done = true
}

// cursor walks one partition's rows in a merge.
type cursor struct {
	rows []*row
	i    int
	done bool
}

// mergeSorted is a k-way merge by sort key. Rows with equal keys from
// several partitions (Distinct, OrderedDistinct) are one row. The merge
// stops when a partition that has more rows than it returned runs out,
// since its next row is unknown.
func (p *Plan) mergeSorted(pg *pager, partials []*Partial) {
	st := pg.st
	cs := make([]*cursor, len(partials))
	for i, pt := range partials {
		cs[i] = &cursor{rows: pt.rows, done: pt.done}
	}
	for {
		var best *cursor
		for _, c := range cs {
			if c.i == len(c.rows) {
				if !c.done {
					return
				}
				continue
			}
			if best == nil || p.cmpRows(c.rows[c.i], best.rows[best.i]) < 0 {
				best = c
			}
		}
		if best == nil {
			st.done = true
			return
		}
		if pg.full() {
			return
		}
		r := best.rows[best.i]
		for _, c := range cs {
			for c.i < len(c.rows) && p.cmpRows(c.rows[c.i], r) == 0 {
				c.i++
			}
		}
		p.setSortKey(st, r)
		if p.shape == OrderedDistinct {
			if st.hasLast && eval.Equal(st.last, r.val) {
				continue
			}
			st.last, st.hasLast = r.val, true
		}
		pg.take(r.val)
	}
}

// mergeGroups combines the partitions' groups. A Grouped query emits, in
// key order, only the groups below the smallest cutoff of the partitions
// (above it some partition's groups are incomplete). With DISTINCT the
// groups are complete (no cutoffs) and are projected, sorted by row value
// and deduplicated, and the page resumes after the state's last row.
func (p *Plan) mergeGroups(pg *pager, partials []*Partial) error {
	q, st := p.top, pg.st
	t := newGroupTable(q)
	var limit []eval.Value
	hasLimit := false
	for _, pt := range partials {
		for _, g := range pt.groups {
			t.merge(g)
		}
		if pt.hasCutoff && (!hasLimit || cmpTuple(pt.cutoff, limit) < 0) {
			limit, hasLimit = pt.cutoff, true
		}
	}
	if p.shape == Aggregate && len(t.list) == 0 {
		t.get(nil, nil)
	}
	groups := t.list
	slices.SortFunc(groups, func(a, b *group) int { return cmpTuple(a.key, b.key) })

	if q.distinct {
		var vals []eval.Value
		for _, g := range groups {
			v, err := g.project(q, p.base)
			if err != nil {
				return err
			}
			if v.IsDefined() && (!st.started || eval.Compare(v, st.vals[0]) > 0) {
				vals = append(vals, v)
			}
		}
		slices.SortFunc(vals, eval.Compare)
		vals = slices.CompactFunc(vals, eval.Equal)
		i := 0
		for ; i < len(vals) && !pg.full(); i++ {
			pg.take(vals[i])
			st.started, st.vals = true, []eval.Value{vals[i]}
		}
		if i == len(vals) {
			st.done = true
		}
		return nil
	}

	i := 0
	for ; i < len(groups) && !pg.full(); i++ {
		g := groups[i]
		if hasLimit && cmpTuple(g.key, limit) >= 0 {
			return nil
		}
		v, err := g.project(q, p.base)
		if err != nil {
			return err
		}
		if p.shape == Grouped {
			st.started, st.vals = true, g.key
		}
		if v.IsDefined() {
			pg.take(v)
		}
	}
	if i == len(groups) && !hasLimit || p.shape == Aggregate {
		st.done = true
	}
	return nil
}
