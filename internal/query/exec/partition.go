package exec

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// Source yields the documents of one partition in ascending key order.
// Next returns ok == false at the end. The key slice may be reused by the
// next call (RunPartition copies what it keeps); doc must not change. The
// keys of the sources of one query must be disjoint and the sources
// ordered: every key of sources[i] below every key of sources[i+1], as the
// storage key "container | EPK | id" and EPK-range partitions give.
type Source interface {
	Next() (key []byte, doc eval.Value, ok bool, err error)
}

// Seeker is implemented by a Source that can skip ahead: after Seek(key),
// Next returns the first document whose key is ≥ key. RunPartition uses
// it to resume a streaming query without reading the documents before the
// resume point; a Source without it is read from its start and the
// documents before the resume point are skipped.
type Seeker interface {
	Seek(key []byte) error
}

// SortedSource yields the documents of one partition in the order of the
// plan's first ORDER BY key (Plan.SortPath) instead of key order, so that
// an ORDER BY query reads only as far as its page needs. Each document
// comes with its bucket, bytes that the source derives from the document's
// value v at the sort path: buckets compare bytewise, and x ≤ y in the
// ORDER BY order (eval.Compare) implies bucket(x) ≤ bucket(y). The source
// yields every document of the partition exactly once, buckets ascending,
// or descending when the key sorts DESC; within a bucket in any order.
// RunPartition uses a SortedSource only for a plan with a SortPath, and
// otherwise reads it as a plain Source (in key order).
type SortedSource interface {
	Source
	// NextSorted returns the next document in sort order, with its bucket
	// (valid until the next call).
	NextSorted() (key []byte, doc eval.Value, bucket []byte, ok bool, err error)
	// SeekSorted skips the documents whose bucket comes before v's in the
	// sort order (ascending or descending); it is called at most once,
	// before the first NextSorted, to resume after a page.
	SeekSorted(v eval.Value) error
}

// Partial is what one partition contributes to a page: candidate rows in
// the shape's order with their sort keys (Streaming, Ordered, Distinct,
// OrderedDistinct), or groups with mergeable accumulator states (Grouped,
// Aggregate). A Partial is only for Merge, for the page it was run for.
type Partial struct {
	rows   []*row
	end    pos // Streaming: the last position read, when hasEnd
	hasEnd bool
	done   bool // nothing after rows (Grouped: no cutoff)

	groups    []*group     // sorted by key
	cutoff    []eval.Value // Grouped: groups are complete only below cutoff
	hasCutoff bool

	bytes    int  // Streaming: the estimated JSON size of rows
	timedOut bool // Streaming: the run ended early on ErrPageTime
}

// Len returns the number of candidate rows or groups in pt.
func (pt *Partial) Len() int { return len(pt.rows) + len(pt.groups) }

// Exhausted reports whether the partition has nothing beyond pt for this
// query: a streaming caller that runs partitions one after another in key
// order (as Exec does) moves to the next partition only when the previous
// one is exhausted.
func (pt *Partial) Exhausted() bool { return pt.done }

// Want returns how many rows (or groups) each partition must produce for a
// page of pageSize rows in state s: OFFSET still to skip plus the page,
// within LIMIT and TOP. 0 means no bound: aggregates, and DISTINCT over
// GROUP BY, read every partition in full; so does pageSize <= 0 (a page of
// every remaining row) without LIMIT or TOP.
func (p *Plan) Want(s *State, pageSize int) int {
	if s == nil {
		s = p.Start()
	}
	if p.shape == Aggregate || p.shape == Grouped && p.top.distinct {
		return 0
	}
	n := int64(pageSize)
	if n <= 0 {
		n = -1
	}
	if s.limit >= 0 && (n < 0 || s.limit < n) {
		n = s.limit
	}
	if n < 0 {
		return 0
	}
	return int(min(s.offset+n, maxInt))
}

// RunPartition runs the plan over one partition's documents from state s
// (nil for the first page) and returns the partition's contribution to the
// page: at most want rows (0 for no bound; see Want) strictly after the
// state's sort key, in the shape's order, or the partition's groups. It
// reads src to its end except for a streaming query, which stops after
// want rows. It is pure apart from reading src, and safe to call
// concurrently for different partitions of one plan.
func (p *Plan) RunPartition(src Source, s *State, want int) (*Partial, error) {
	return p.RunPartitionLimits(src, s, want, nil)
}

// RunPartitionLimits is RunPartition within the limits lim (nil: none),
// with a budget of its own for this partition's run.
func (p *Plan) RunPartitionLimits(src Source, s *State, want int, lim *Limits) (*Partial, error) {
	if s == nil {
		s = p.Start()
	}
	if s.done || p.top.noFrom {
		// A query without FROM reads no documents: Merge evaluates it once.
		return &Partial{done: true}, nil
	}
	return p.run(src, s, want, lim)
}

func (p *Plan) run(src Source, s *State, want int, lim *Limits) (*Partial, error) {
	if lim == nil {
		lim = &Limits{}
	}
	b := lim.budget()
	env := p.env(b)
	switch p.shape {
	case Streaming:
		return p.runStream(src, s, want, lim, env)
	case Grouped, Aggregate:
		return p.runGroups(src, s, want, lim, env)
	case Ranked:
		return p.runRanked(src, lim, env)
	}
	return p.runSorted(src, s, want, lim, env)
}

// docs calls f for each document of src, with a copy of its key. Keys
// out of ascending order are an error: positions and resumption rely on
// them.
func docs(src Source, f func(key []byte, doc eval.Value) error) error {
	var prev []byte
	for {
		key, doc, ok, err := src.Next()
		if err != nil || !ok {
			return err
		}
		if prev, err = following(prev, key); err != nil {
			return err
		}
		if err := f(prev, doc); err != nil {
			return err
		}
	}
}

// following returns a copy of key, or an error if key does not come after
// prev, the key before it (nil for the first).
func following(prev, key []byte) ([]byte, error) {
	if prev != nil && bytes.Compare(key, prev) <= 0 {
		return nil, fmt.Errorf("exec: source keys out of order: %q after %q", key, prev)
	}
	return bytes.Clone(key), nil
}

// ended completes a streaming run that stopped with err: errStop (the page
// is full) and ErrPageTime (its time is up) end the page early; nil means
// the source is exhausted.
func (pt *Partial) ended(err error) (*Partial, error) {
	switch {
	case err == errStop:
		return pt, nil
	case errors.Is(err, ErrPageTime):
		pt.timedOut = true
		return pt, nil
	case err != nil:
		return nil, err
	}
	pt.done = true
	return pt, nil
}

// runStream produces rows in position order after the state's position,
// stopping after want rows.
func (p *Plan) runStream(src Source, s *State, want int, lim *Limits, env *eval.Env) (*Partial, error) {
	if rs, ok := src.(RawSource); ok && lim.raw && p.identity() {
		return p.runRaw(rs, s, want, lim, env)
	}
	q, pt := p.top, &Partial{}
	if sk, ok := src.(Seeker); ok && s.started {
		if err := sk.Seek(s.pos.key); err != nil {
			return nil, err
		}
	}
	err := docs(src, func(key []byte, doc eval.Value) error {
		if s.started {
			if c := bytes.Compare(key, s.pos.key); c < 0 || c == 0 && s.pos.fan == wholeDoc {
				return nil
			}
		}
		if env.Budget != nil {
			env.Budget.ResetBytes()
		}
		fan := int64(-1)
		err := p.expand(q, env, doc, func(b vars) error {
			fan++
			at := pos{key: key, fan: fan}
			if s.started && cmpPos(at, s.pos) <= 0 {
				return nil
			}
			e := tupleEnv(env, b)
			ok, err := q.filter(e)
			if err != nil {
				return err
			}
			var v eval.Value
			if ok {
				if v, err = q.project(e); err != nil {
					return err
				}
			}
			if v.IsDefined() {
				size := 0
				if lim.MaxPageBytes > 0 {
					// The row that would pass the page's size is left for
					// the next page: the position stays before it.
					if size = eval.JSONSize(v); len(pt.rows) > 0 && pt.bytes+size > lim.MaxPageBytes {
						return errStop
					}
				}
				pt.rows = append(pt.rows, &row{pos: at, val: v, size: size})
				pt.bytes += size
			}
			// The tuple is done: a page that stops now resumes after it.
			pt.end, pt.hasEnd = at, true
			if want > 0 && len(pt.rows) >= want || lim.MaxPageBytes > 0 && pt.bytes >= lim.MaxPageBytes {
				return errStop
			}
			return nil
		})
		if err != nil {
			return err
		}
		pt.end, pt.hasEnd = pos{key: key, fan: wholeDoc}, true
		return nil
	})
	return pt.ended(err)
}

// RawSource is a Source that can also give a document's stored JSON text
// in place of its value.
type RawSource interface {
	Source
	// NextRaw is Next, but for a document whose text is what its value
	// encodes to (eval.CanonicalJSON) it returns the text raw and its
	// JSONSize, and no value. raw stays valid and unchanged.
	NextRaw() (key, raw []byte, size int, doc eval.Value, ok bool, err error)
}

// identity reports whether every row of the plan is a whole document:
// a streaming SELECT * or SELECT VALUE of the one FROM alias over the
// container, without WHERE.
func (p *Plan) identity() bool {
	q := p.top
	if p.shape != Streaming || q.noFrom || len(q.sources) != 1 || q.where != nil || q.distinct || len(q.orderBy) > 0 || q.grouped {
		return false
	}
	src := q.sources[0]
	if src.iter || src.sub != nil || !src.container || len(src.path) > 0 {
		return false
	}
	switch q.kind {
	case ast.SelectStar:
		return q.star == src.alias
	case ast.SelectValue:
		id, ok := q.value.(*ast.Ident)
		return ok && id.Name == src.alias
	}
	return false
}

// runRaw is runStream for an identity plan over a RawSource: the same rows,
// positions, steps and sizes, with the documents' text copied instead of
// decoded where it is canonical.
func (p *Plan) runRaw(src RawSource, s *State, want int, lim *Limits, env *eval.Env) (*Partial, error) {
	q, pt := p.top, &Partial{}
	if sk, ok := src.(Seeker); ok && s.started {
		if err := sk.Seek(s.pos.key); err != nil {
			return nil, err
		}
	}
	var prev []byte
	err := func() error {
		for {
			key, raw, size, doc, ok, err := src.NextRaw()
			if err != nil || !ok {
				return err
			}
			if prev, err = following(prev, key); err != nil {
				return err
			}
			key = prev
			if s.started {
				if c := bytes.Compare(key, s.pos.key); c < 0 || c == 0 && s.pos.fan == wholeDoc {
					continue
				}
			}
			if env.Budget != nil {
				env.Budget.ResetBytes()
			}
			if err := step(env, q.sources[0].at); err != nil {
				return err
			}
			at := pos{key: key, fan: 0}
			if !s.started || cmpPos(at, s.pos) > 0 {
				if q.kind == ast.SelectValue {
					if err := step(env, q.value.Pos()); err != nil {
						return err
					}
				}
				if lim.MaxPageBytes > 0 {
					if raw == nil {
						size = eval.JSONSize(doc)
					}
					if len(pt.rows) > 0 && pt.bytes+size > lim.MaxPageBytes {
						return errStop
					}
				} else {
					size = 0
				}
				r := &row{pos: at, size: size}
				if raw != nil {
					r.raw = raw
				} else {
					r.val = doc
				}
				pt.rows = append(pt.rows, r)
				pt.bytes += size
				pt.end, pt.hasEnd = at, true
				if want > 0 && len(pt.rows) >= want || lim.MaxPageBytes > 0 && pt.bytes >= lim.MaxPageBytes {
					return errStop
				}
			}
			pt.end, pt.hasEnd = pos{key: key, fan: wholeDoc}, true
		}
	}()
	return pt.ended(err)
}

// sortedDocs calls f for each document of src in sort order, from the
// state's first ORDER BY value on, telling f when a document starts a new
// bucket. Buckets out of order are an error.
func (p *Plan) sortedDocs(src SortedSource, s *State, f func(key []byte, doc eval.Value, newBucket bool) error) error {
	if s.started {
		if err := src.SeekSorted(s.vals[0]); err != nil {
			return err
		}
	}
	desc := p.top.orderBy[0].desc
	var prev []byte
	for n := 0; ; n++ {
		key, doc, bucket, ok, err := src.NextSorted()
		if err != nil || !ok {
			return err
		}
		c := bytes.Compare(bucket, prev)
		if n > 0 && (c < 0 && !desc || c > 0 && desc) {
			return fmt.Errorf("exec: sorted source out of order: bucket %x after %x", bucket, prev)
		}
		newBucket := n == 0 || c != 0
		if newBucket {
			prev = append(prev[:0], bucket...)
		}
		if err := f(bytes.Clone(key), doc, newBucket); err != nil {
			return err
		}
	}
}

// runSorted produces the want first rows after the state's sort key in the
// order of an Ordered, Distinct or OrderedDistinct query. It keeps at most
// about 2·want rows in memory: when the buffer fills it is sorted and cut
// to want rows, and rows sorting after the last kept one are dropped on
// arrival. From a SortedSource it stops at the first bucket that begins
// once want rows are kept: every later row sorts after them.
func (p *Plan) runSorted(src Source, s *State, want int, lim *Limits, env *eval.Env) (*Partial, error) {
	q := p.top
	dedup := p.shape != Ordered
	lateProject := p.shape == Ordered && q.kind != ast.SelectValue
	var buf []*row
	var bound *row // after a cut: the last row kept
	held := 0      // the estimated JSON size of buf, with MaxPageBytes
	// compact only drops rows: what it releases cannot fail.
	compact := func() {
		slices.SortFunc(buf, p.cmpRows)
		if dedup {
			buf = slices.CompactFunc(buf, func(a, b *row) bool { return p.cmpRows(a, b) == 0 })
		}
		keep := len(buf)
		if want > 0 {
			keep = min(keep, want)
		}
		if lim.MaxPageBytes > 0 {
			// No page takes more of this partition's rows than fit the
			// page's size (Merge stops where a cut partition runs out).
			n := 0
			for i, r := range buf[:keep] {
				if n += r.size; i > 0 && n > lim.MaxPageBytes {
					keep = i
					break
				}
			}
		}
		if keep < len(buf) {
			clear(buf[keep:])
			buf, bound = buf[:keep], buf[keep-1]
		}
		was := held
		held = 0
		for _, r := range buf {
			held += r.size
		}
		lim.hold(q.ast.Pos(), "rows", int64(held-was))
	}
	visit := func(key []byte, doc eval.Value) error {
		if env.Budget != nil {
			env.Budget.ResetBytes()
		}
		fan := int64(-1)
		docSize := -1
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
			r := &row{ord: ord, pos: pos{key: key, fan: fan}}
			if p.shape == Ordered && !p.after(s, r) {
				return nil
			}
			if lateProject {
				r.env = e
			} else {
				if r.val, err = q.project(e); err != nil || !r.val.IsDefined() {
					return err
				}
				if !p.after(s, r) {
					return nil
				}
			}
			if bound != nil && p.cmpRows(r, bound) >= 0 {
				return nil
			}
			if lim.MaxPageBytes > 0 {
				if !lateProject {
					r.size = eval.JSONSize(r.val)
				} else {
					// Not projected yet: the document's size stands for
					// the row's.
					if docSize < 0 {
						docSize = eval.JSONSize(doc)
					}
					r.size = docSize
				}
			}
			if err := lim.hold(q.ast.Pos(), "rows", int64(r.size)); err != nil {
				return err
			}
			buf = append(buf, r)
			held += r.size
			if want > 0 && len(buf) >= 2*want+64 || lim.MaxPageBytes > 0 && held >= 2*lim.MaxPageBytes {
				compact()
			}
			return nil
		})
	}
	var err error
	stopped := false
	if ss, ok := src.(SortedSource); ok && p.sortPath != nil {
		err = p.sortedDocs(ss, s, func(key []byte, doc eval.Value, newBucket bool) error {
			if newBucket && want > 0 && len(buf) >= want {
				if dedup {
					compact()
				}
				if stopped = len(buf) >= want; stopped {
					return errStop
				}
			}
			return visit(key, doc)
		})
		if err == errStop {
			err = nil
		}
	} else {
		err = docs(src, visit)
	}
	if err != nil {
		return nil, err
	}
	compact()
	if lateProject {
		for _, r := range buf {
			if r.val, err = q.project(r.env); err != nil {
				return nil, err
			}
			r.env = nil
			if lim.MaxPageBytes > 0 {
				was := r.size
				r.size = eval.JSONSize(r.val)
				if err := lim.hold(q.ast.Pos(), "rows", int64(r.size-was)); err != nil {
					return nil, err
				}
			}
		}
	}
	return &Partial{rows: buf, done: bound == nil && !stopped}, nil
}

// runGroups aggregates the partition's tuples by group key. For a GROUP BY
// query without DISTINCT it keeps only groups after the state's key and,
// when want > 0, at most about 2·want groups: when there are more, the
// groups from the want-th on are dropped and their smallest key becomes a
// cutoff; tuples of groups at or after the cutoff are ignored from then
// on, so the groups kept are complete.
func (p *Plan) runGroups(src Source, s *State, want int, lim *Limits, env *eval.Env) (*Partial, error) {
	q := p.top
	t := newGroupTable(q)
	if p.shape == Aggregate {
		t.get(nil, nil)
	}
	filtered := p.shape == Grouped && !q.distinct
	bounded := filtered && want > 0
	pt := &Partial{}
	evict := func() {
		slices.SortFunc(t.list, func(a, b *group) int { return cmpTuple(a.key, b.key) })
		if bounded && len(t.list) > want {
			pt.cutoff, pt.hasCutoff = t.list[want].key, true
			t.reset(slices.Clone(t.list[:want]))
		}
	}
	var held int64 // the estimated size of the groups, with Held
	err := docs(src, func(key []byte, doc eval.Value) error {
		if env.Budget != nil {
			env.Budget.ResetBytes()
		}
		return p.expand(q, env, doc, func(b vars) error {
			e := tupleEnv(env, b)
			if ok, err := q.filter(e); err != nil || !ok {
				return err
			}
			gk, err := q.groupKey(e)
			if err != nil {
				return err
			}
			if filtered {
				if s.started && cmpTuple(gk, s.vals) <= 0 {
					return nil
				}
				if pt.hasCutoff && cmpTuple(gk, pt.cutoff) >= 0 {
					return nil
				}
			}
			n := len(t.list)
			grew, err := t.get(gk, b).accumulate(q, e)
			if err != nil {
				return err
			}
			if lim.Held != nil {
				if len(t.list) > n {
					grew += int(groupSize(gk, len(q.aggs)))
				}
				if err := lim.hold(q.ast.Pos(), "groups", int64(grew)); err != nil {
					return err
				}
				held += int64(grew)
			}
			if bounded && len(t.list) >= 2*want+64 {
				evict()
				if lim.Held != nil {
					was := held
					held = 0
					for _, g := range t.list {
						held += g.size(len(q.aggs))
					}
					if err := lim.hold(q.ast.Pos(), "groups", held-was); err != nil {
						return err
					}
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	evict()
	pt.groups, pt.done = t.list, !pt.hasCutoff
	return pt, nil
}

// size estimates the memory of g, which has n aggregates.
func (g *group) size(n int) int64 {
	s := groupSize(g.key, n)
	for _, a := range g.accs {
		s += int64(a.Size())
	}
	return s
}

// groupSize estimates the memory of a group with key and n aggregates.
func groupSize(key []eval.Value, n int) int64 {
	size := int64(64 + 64*n)
	for _, v := range key {
		size += int64(eval.JSONSize(v))
	}
	return size
}

// oneDoc is the input of a query without FROM: one empty document, so
// that the query's one row is produced once, by Merge.
type oneDoc struct{ read bool }

func (o *oneDoc) Next() ([]byte, eval.Value, bool, error) {
	if o.read {
		return nil, eval.Value{}, false, nil
	}
	o.read = true
	return []byte{}, eval.Value{}, true, nil
}
