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
	return ExecLimits(p, sources, s, pageSize, nil)
}

// ExecLimits is Exec within the limits lim (nil: none). A streaming page
// that reaches MaxPageBytes, or whose Check reports ErrPageTime, ends early
// with a continuation; it fails with ErrPageTime only if it evaluated no
// row in full.
func ExecLimits(p *Plan, sources []Source, s *State, pageSize int, lim *Limits) ([]eval.Value, *State, error) {
	if lim != nil && lim.raw {
		l := *lim
		l.raw = false
		lim = &l
	}
	pg, next, err := execPage(p, sources, s, pageSize, lim)
	if pg == nil {
		return nil, next, err
	}
	return pg.rows, next, err
}

// ExecJSON is ExecLimits with the page's rows as JSON text (AppendJSON).
// A streaming SELECT * or SELECT VALUE of its one FROM alias, without
// WHERE, copies the text of the documents a RawSource gives without
// decoding them; the rows are the same bytes either way.
func ExecJSON(p *Plan, sources []Source, s *State, pageSize int, lim *Limits) ([][]byte, *State, error) {
	l := Limits{}
	if lim != nil {
		l = *lim
	}
	l.raw = true
	pg, next, err := execPage(p, sources, s, pageSize, &l)
	if pg == nil {
		return nil, next, err
	}
	return pg.json(), next, err
}

func execPage(p *Plan, sources []Source, s *State, pageSize int, lim *Limits) (*pager, *State, error) {
	if p.NeedsStats() && p.search.Scores == nil {
		return nil, nil, fmt.Errorf("exec: the query scores text with FullTextScore: run it WithStats (see GatherStats)")
	}
	if s == nil {
		s = p.Start()
	}
	if s.done {
		return nil, s, nil
	}
	if lim == nil {
		lim = &Limits{}
	}
	want := p.Want(s, pageSize)
	partials := make([]*Partial, len(sources))
	have, size := 0, 0
	progress, timedOut := false, false
	for i, src := range sources {
		w, l := want, lim
		if p.shape == Streaming {
			if want > 0 {
				w = want - have
			}
			if lim.MaxPageBytes > 0 {
				rest := *lim
				rest.MaxPageBytes = max(lim.MaxPageBytes-size, 1)
				l = &rest
			}
		}
		pt, err := p.RunPartitionLimits(src, s, w, l)
		if err != nil {
			return nil, nil, err
		}
		partials[i] = pt
		if p.shape == Streaming {
			progress = progress || pt.hasEnd
			timedOut = pt.timedOut
			have += len(pt.rows)
			size += pt.bytes
			if !pt.done || want > 0 && have >= want || lim.MaxPageBytes > 0 && size >= lim.MaxPageBytes {
				break
			}
		}
	}
	if timedOut && !progress {
		return nil, nil, fmt.Errorf("%w before one row was evaluated in full", ErrPageTime)
	}
	return p.merge(s, partials, pageSize, lim)
}

// Merge combines the partitions' Partials for one page, run from state s
// with Want(s, pageSize), in the order of the sources (key order). It
// merges rows by their sort keys, combines groups, removes duplicates,
// applies OFFSET, LIMIT and TOP globally, and returns the page and the
// next state. For a Streaming plan a nil Partial means "not run": the page
// ends before that partition. Every other shape needs every partition's
// Partial.
func (p *Plan) Merge(s *State, partials []*Partial, pageSize int) ([]eval.Value, *State, error) {
	return p.MergeLimits(s, partials, pageSize, nil)
}

// MergeLimits is Merge within the limits lim (nil: none): a page ends
// before the row that would pass MaxPageBytes, with at least one row.
func (p *Plan) MergeLimits(s *State, partials []*Partial, pageSize int, lim *Limits) ([]eval.Value, *State, error) {
	pg, next, err := p.merge(s, partials, pageSize, lim)
	if pg == nil {
		return nil, next, err
	}
	return pg.rows, next, err
}

func (p *Plan) merge(s *State, partials []*Partial, pageSize int, lim *Limits) (*pager, *State, error) {
	if s == nil {
		s = p.Start()
	}
	if lim == nil {
		lim = &Limits{}
	}
	next := *s
	pg := &pager{st: &next, size: pageSize, maxBytes: lim.MaxPageBytes}
	if s.done {
		return pg, &next, nil
	}
	if p.top.noFrom {
		pt, err := p.run(&oneDoc{}, s, p.Want(s, pageSize), lim)
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
		err = p.mergeGroups(pg, partials, p.env(lim.budget()))
	case Ranked:
		err = p.mergeRanked(pg, partials)
	default:
		p.mergeSorted(pg, partials)
	}
	if err != nil {
		return nil, nil, err
	}
	return pg, &next, nil
}

// pager collects a page: it applies the remaining OFFSET and LIMIT of its
// state and knows when the page is full.
type pager struct {
	st       *State
	size     int
	rows     []eval.Value
	raws     [][]byte // beside rows: the text of a row copied from a RawSource, else nil
	maxBytes int      // 0: no bound
	bytes    int
}

func (pg *pager) full() bool {
	return pg.st.done || pg.size > 0 && len(pg.rows) >= pg.size
}

// fits reports whether a row of size bytes fits the page: the first row
// always does.
func (pg *pager) fits(size int) bool {
	return pg.maxBytes <= 0 || len(pg.rows) == 0 || pg.bytes+size <= pg.maxBytes
}

// sizeOf is the estimated JSON size of v, when the page's size is bounded.
func (pg *pager) sizeOf(v eval.Value) int {
	if pg.maxBytes <= 0 {
		return 0
	}
	return eval.JSONSize(v)
}

// json returns the page's rows as JSON text.
func (pg *pager) json() [][]byte {
	out := make([][]byte, len(pg.rows))
	for i, v := range pg.rows {
		if i < len(pg.raws) && pg.raws[i] != nil {
			out[i] = pg.raws[i]
		} else {
			out[i] = v.AppendJSON(nil)
		}
	}
	return out
}

// take consumes one row: OFFSET skips it, or the page gets it.
func (pg *pager) take(v eval.Value, size int) { pg.takeRaw(v, nil, size) }

// takeRaw is take for a row that may be JSON text (raw) instead of a value.
func (pg *pager) takeRaw(v eval.Value, raw []byte, size int) {
	if pg.st.offset > 0 {
		pg.st.offset--
		return
	}
	if raw != nil || pg.raws != nil {
		for len(pg.raws) < len(pg.rows) {
			pg.raws = append(pg.raws, nil)
		}
		pg.raws = append(pg.raws, raw)
	}
	pg.rows = append(pg.rows, v)
	pg.bytes += size
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
		for ; i < len(pt.rows) && !pg.full() && pg.fits(pt.rows[i].size); i++ {
			pg.takeRaw(pt.rows[i].val, pt.rows[i].raw, pt.rows[i].size)
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
		r := best.rows[best.i]
		if pg.full() || !pg.fits(r.size) {
			return
		}
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
		pg.take(r.val, r.size)
	}
}

// mergeGroups combines the partitions' groups. A Grouped query emits, in
// key order, only the groups below the smallest cutoff of the partitions
// (above it some partition's groups are incomplete). With DISTINCT the
// groups are complete (no cutoffs) and are projected, sorted by row value
// and deduplicated, and the page resumes after the state's last row.
func (p *Plan) mergeGroups(pg *pager, partials []*Partial, env *eval.Env) error {
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
			v, err := g.project(q, env)
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
			size := pg.sizeOf(vals[i])
			if !pg.fits(size) {
				break
			}
			pg.take(vals[i], size)
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
		v, err := g.project(q, env)
		if err != nil {
			return err
		}
		size := pg.sizeOf(v)
		if !pg.fits(size) {
			return nil
		}
		if p.shape == Grouped {
			st.started, st.vals = true, g.key
		}
		if v.IsDefined() {
			pg.take(v, size)
		}
	}
	if i == len(groups) && !hasLimit || p.shape == Aggregate {
		st.done = true
	}
	return nil
}
