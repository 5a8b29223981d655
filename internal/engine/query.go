package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/query/parser"
	"github.com/parsecdb/parsec/internal/throughput"
)

// QueryPage is one page of a query's results.
type QueryPage struct {
	Rows [][]byte // JSON
	// Next is the query's state after this page, to be passed to the next
	// page's QueryContext with the same plan and scope; nil on the last
	// page.
	Next      *exec.State
	Charge    float64
	DocsRead  int
	BytesRead int
	// IndexEntries is how many index entries the page read.
	IndexEntries int
	Index        IndexUtilization
	// Search says how the query's vector and full-text functions ran.
	Search   SearchUtilization
	Sessions []Session
}

// QueryLimits bound every query page, as Cosmos DB bounds its pages. A
// page that reaches its time or size ends early with a continuation; a
// query that needs more memory than its budgets for one document or one
// page is refused (400) with a message naming the budget. A zero field
// takes its default, a negative one bounds nothing.
type QueryLimits struct {
	// PageTime is the evaluation time of one streaming page, which then
	// ends with a continuation (it fails only if it finished no row).
	// Measured with Options.Now, checked every eval.CheckEvery steps.
	// Default 5 s, as Cosmos DB.
	PageTime time.Duration
	// FullReadTime is the evaluation time of one page of a query with
	// ORDER BY, DISTINCT, GROUP BY or aggregates, which must read its
	// partitions in full and cannot end early: past it the query fails
	// (400). Default 60 s.
	FullReadTime time.Duration
	// PageBytes caps the JSON size of a page's results: the page ends
	// before the result that would pass it, but holds at least one.
	// Default 4 MiB, as Cosmos DB's response size.
	PageBytes int
	// ValueBytes bounds the bytes of values (strings, arrays, objects) a
	// query builds while evaluating one document, its subqueries' rows
	// included. Default 8 MiB: four times the largest document, and small
	// enough that a query building strings to the bound costs the other
	// clients little (see test/resource).
	ValueBytes int64
	// HeldBytes bounds what one page of a query holds, estimated, over all
	// the partitions it reads: the groups of GROUP BY and aggregates, the
	// rows ORDER BY and DISTINCT keep. Past it the query is refused (400).
	// Default 128 MiB, and at most ServerBytes.
	HeldBytes int64
	// ServerBytes bounds what the query pages running at once on the
	// server hold together, counted as HeldBytes. A page that would pass
	// it is refused with 429 and a retry-after, as the service answers a
	// request it lacks the resources for at the moment ("retry the
	// request after the server specified retry after duration",
	// https://learn.microsoft.com/rest/api/cosmos-db/http-status-codes-for-cosmosdb);
	// the SDKs retry it. Default 512 MiB.
	ServerBytes int64
}

// Defaults of QueryLimits.
const (
	DefaultQueryPageTime   = 5 * time.Second
	DefaultQueryFullRead   = 60 * time.Second
	DefaultQueryPageBytes  = 4 << 20
	DefaultQueryValueBytes = 8 << 20
	DefaultQueryHeldBytes  = 128 << 20
	DefaultQueryServerHeld = 512 << 20
)

func (l QueryLimits) withDefaults() QueryLimits {
	if l.PageTime == 0 {
		l.PageTime = DefaultQueryPageTime
	}
	if l.FullReadTime == 0 {
		l.FullReadTime = DefaultQueryFullRead
	}
	if l.PageBytes == 0 {
		l.PageBytes = DefaultQueryPageBytes
	}
	if l.ValueBytes == 0 {
		l.ValueBytes = DefaultQueryValueBytes
	}
	if l.HeldBytes == 0 {
		l.HeldBytes = DefaultQueryHeldBytes
	}
	if l.ServerBytes == 0 {
		l.ServerBytes = DefaultQueryServerHeld
	}
	if l.ServerBytes > 0 && (l.HeldBytes < 0 || l.HeldBytes > l.ServerBytes) {
		// A page alone over the server's bound could never run: it is
		// refused as too big (400), not told to retry (429).
		l.HeldBytes = l.ServerBytes
	}
	return l
}

// queryHeld is the server's account of what its running query pages hold
// (QueryLimits.ServerBytes); each page's exec.Held tells it every change.
type queryHeld struct {
	max int64 // <= 0: no bound
	n   atomic.Int64
}

// queryHeldRetry is the retry-after of a page refused for the server's
// query memory: other pages end within their time budgets.
const queryHeldRetry = time.Second

// grow counts n more bytes held (n < 0: released), refusing more than max.
func (q *queryHeld) grow(n int64) error {
	if u := q.n.Add(n); n > 0 && q.max > 0 && u > q.max {
		q.n.Add(-n)
		return &ThrottledError{RetryAfter: queryHeldRetry,
			Reason: fmt.Sprintf("the queries running on this server hold the memory they may hold together (%d bytes); this query needs more", q.max)}
	}
	return nil
}

// HoldQueryMemory counts n more bytes (n < 0: fewer) that a query run
// outside the engine holds, such as a sort or an aggregation of the
// MongoDB API, in the account of the query pages running on the server
// (QueryLimits.ServerBytes). Past the bound it counts nothing and returns
// a *ThrottledError: the memory is taken for now, and the query may be
// retried. The caller releases all it counted once the query is over.
// It is safe for concurrent use.
func (e *Engine) HoldQueryMemory(n int64) error { return e.queryHeld.grow(n) }

// QueryMemory is QueryLimits.ServerBytes (<= 0: no bound): a query that
// alone would hold more can never run.
func (e *Engine) QueryMemory() int64 { return e.queryHeld.max }

// pageTime is the time budget of a page of plan.
func (l QueryLimits) pageTime(plan *exec.Plan) time.Duration {
	if plan.Shape() == exec.Streaming {
		return l.PageTime
	}
	return l.FullReadTime
}

// limits returns the exec limits of one page of plan that starts at start
// and ends early when ctx ends.
func (c *Container) limits(ctx context.Context, plan *exec.Plan, start time.Time) *exec.Limits {
	ql := c.e.opts.Query
	now := c.e.opts.Now
	budget := ql.pageTime(plan)
	deadline := start.Add(budget)
	return &exec.Limits{
		MaxBytes:     ql.ValueBytes,
		MaxPageBytes: ql.PageBytes,
		Held:         exec.NewHeld(max(ql.HeldBytes, 0), c.e.queryHeld.grow),
		What:         "the query",
		Check: func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if budget > 0 && !now().Before(deadline) {
				return exec.ErrPageTime
			}
			return nil
		},
	}
}

// Query is QueryContext for a request that cannot be cancelled.
func (c *Container) Query(plan *exec.Plan, scope QueryScope, state *exec.State, pageSize int) (QueryPage, error) {
	return c.QueryContext(context.Background(), plan, scope, state, pageSize)
}

// QueryContext runs one page of a compiled query over the items in scope,
// within the engine's QueryLimits; it stops, with ctx's error, soon after
// ctx ends (a client that left). state, when not nil, is the Next of the
// previous page of the same plan and scope: it resumes every partition
// where that page stopped (see package exec).
func (c *Container) QueryContext(ctx context.Context, plan *exec.Plan, scope QueryScope, state *exec.State, pageSize int) (QueryPage, error) {
	var page QueryPage
	filters := plan.Filters()
	scope, err := c.scopeOf(filters, scope)
	if err != nil {
		return page, err
	}
	spans, err := c.spans(scope)
	if err != nil {
		return page, err
	}
	now := c.e.opts.Now()
	for _, s := range spans {
		if err := s.p.admit(now); err != nil {
			return page, err
		}
		page.Sessions = append(page.Sessions, s.p.Session())
	}
	plan, statDocs, statBytes, err := c.withStats(ctx, plan, now)
	if err != nil {
		return page, queryFailure(err)
	}
	page.DocsRead, page.BytesRead = statDocs, statBytes
	ix := c.index.Load()
	lk, cands, entries, err := c.chooseLookup(ix, filters, scope)
	if errors.Is(err, ErrCorrupt) {
		return page, err // no retry mends it: not a 503
	}
	if err != nil {
		return page, fmt.Errorf("%w: index lookup failed: %v", ErrUnavailable, err)
	}
	page.IndexEntries = entries
	x := c.expiry()
	// With a time to live, expired items are filtered out of every source
	// (unexpiredSource), which reads in key order: no reading in index order.
	sorted := x == nil && c.orderFromIndex(plan, ix, scope, lk, len(cands), plan.Want(state, pageSize), len(spans))
	// A full scan reads each partition in creation order, as the service
	// does. The order a query's first page read in is kept to its last,
	// whatever the index could offer in between (a build that completes),
	// since a position is a key of that order.
	created := false
	if k := state.Key(); isCreatedKey(k) {
		created, sorted, lk = true, false, nil
	} else if k == nil && !sorted && lk == nil {
		created = true
	}
	if sorted {
		lk = nil
	}
	sortPath, desc, _ := plan.SortPath()
	page.Index = indexUtilization(ix, filters, lk, sortPath, sorted)
	sources := make([]exec.Source, len(spans))
	var scans []*itemSource
	var lookups []*indexSource
	var ordered []*sortedSource
	switch {
	case sorted:
		snap := c.e.readView()
		defer snap.Close()
		ordered = c.sortedSources(snap, ix.gen, sortPath, desc, spans)
		for i, src := range ordered {
			sources[i] = src
		}
	case lk != nil:
		for i, s := range spans {
			src := &indexSource{db: c.e.store, keys: within(cands, s.lo, s.hi)}
			lookups = append(lookups, src)
			sources[i] = src
		}
	default:
		var db reader = c.e.store
		if created {
			// The index entries and the items they name are read from
			// one snapshot, so that they agree.
			snap := c.e.readView()
			defer snap.Close()
			db = snap
		}
		if created {
			if sources, scans, err = c.createdSources(db, spans, state); err != nil {
				return page, err
			}
			break
		}
		for i, s := range spans {
			src := &itemSource{db: db, lo: s.lo, hi: s.hi}
			scans = append(scans, src)
			sources[i] = src
		}
	}
	if x != nil {
		for i := range sources {
			sources[i] = &unexpiredSource{src: sources[i], x: x}
		}
	}
	lim := c.limits(ctx, plan, now)
	rows, next, err := execPage(plan, sources, state, pageSize, lim)
	c.e.queryHeld.grow(-lim.Held.Bytes())
	for _, s := range scans {
		if cerr := s.close(); err == nil {
			err = cerr
		}
		page.DocsRead += s.docs
		page.BytesRead += s.bytes
	}
	for _, s := range lookups {
		page.DocsRead += s.docs
		page.BytesRead += s.bytes
	}
	for _, s := range ordered {
		if cerr := s.close(); err == nil {
			err = cerr
		}
		page.DocsRead += s.docs
		page.BytesRead += s.bytes
		page.IndexEntries += s.entriesRead
	}
	if len(ordered) > 0 {
		page.IndexEntries += ordered[0].or.counted
	}
	if err != nil {
		// Every evaluation error is the query's (an invalid query, a UDF or
		// environment the server does not have); storage failures are not.
		var qe *eval.Error
		switch {
		case errors.Is(err, exec.ErrBadContinuation):
			return page, badContinuation("%v", err)
		case errors.As(err, &qe) || errors.Is(err, eval.ErrInvalidQuery):
			return page, badRequest("%v", err)
		case errors.Is(err, exec.ErrPageTime):
			return page, badRequest("the query did not finish a page within its time budget of %v (%v): a query with ORDER BY, DISTINCT, GROUP BY or aggregates reads every item in scope for each page, and a streaming query must finish at least one row; narrow the query with a filter or a partition key", c.e.opts.Query.pageTime(plan), err)
		case errors.Is(err, ErrCorrupt):
			return page, err // no retry mends it: not a 503
		case errors.Is(err, ErrThrottled):
			return page, err
		case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
			return page, fmt.Errorf("%w: the query was stopped: the request ended (%v)", ErrUnavailable, err)
		}
		return page, fmt.Errorf("%w: query failed: %v", ErrUnavailable, err)
	}
	page.Rows = rows
	if !next.Done() {
		page.Next = next
	}
	page.Search = c.searchUtilization(plan)
	page.Charge = throughput.QueryCharge(page.DocsRead, page.BytesRead, page.IndexEntries) + udfCharge(plan) + searchCharge(plan)
	if len(spans) > 0 {
		each := page.Charge / float64(len(spans))
		for _, s := range spans {
			s.p.charge(now, each)
		}
	}
	return page, nil
}

// createdSources returns the sources of a full scan of spans in creation
// order (see createdOrder): one per span, except that the spans within the
// range of the state's position, which split from it, are read as that
// one range; spans of one EPK are read in key order.
func (c *Container) createdSources(db reader, spans []span, state *exec.State) ([]exec.Source, []*itemSource, error) {
	plo, phi, _, resumed := createdPosition(state.Key())
	var sources []exec.Source
	var scans []*itemSource
	for i := 0; i < len(spans); i++ {
		s := spans[i]
		src := &itemSource{db: db, lo: s.lo, hi: s.hi}
		parts, lo, hi := []*Partition{s.p}, s.min, s.max
		within := func(s span) bool { return !s.point && s.min >= plo && (phi == "" || s.max != "" && s.max <= phi) }
		if resumed && within(s) {
			for i+1 < len(spans) && within(spans[i+1]) {
				i++
				parts = append(parts, spans[i].p)
			}
			lo, hi = plo, phi
		}
		if !s.point {
			var err error
			if src.created, err = newCreatedOrder(c.rid, parts, lo, hi); err != nil {
				return nil, nil, err
			}
		}
		scans = append(scans, src)
		sources = append(sources, src)
	}
	return sources, scans, nil
}

// execPage runs one page of a query over its sources. Shapes that need
// every partition (ORDER BY, DISTINCT, GROUP BY, aggregates) run their
// partitions in parallel, at most maxParallel at a time, and merge; a
// streaming page reads its partitions lazily in key order, stopping when
// the page is full.
func execPage(plan *exec.Plan, sources []exec.Source, state *exec.State, pageSize int, lim *exec.Limits) ([][]byte, *exec.State, error) {
	if plan.Shape() == exec.Streaming || plan.Shape() == exec.Ranked || len(sources) < 2 {
		// Rows that are whole stored documents are copied, not re-encoded.
		return exec.ExecJSON(plan, sources, state, pageSize, lim)
	}
	if state == nil {
		state = plan.Start()
	}
	if state.Done() {
		return nil, state, nil
	}
	want := plan.Want(state, pageSize)
	partials := make([]*exec.Partial, len(sources))
	errs := make([]error, len(sources))
	// The first partition to fail stops the others.
	var failed atomic.Bool
	each := *lim
	each.Check = func() error {
		if failed.Load() {
			return errSiblingFailed
		}
		return lim.Check()
	}
	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	for i, src := range sources {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if partials[i], errs[i] = plan.RunPartitionLimits(src, state, want, &each); errs[i] != nil {
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	var err error
	for _, e := range errs {
		if e != nil && (err == nil || err == errSiblingFailed) {
			err = e
		}
	}
	if err != nil {
		return nil, nil, err
	}
	rows, next, err := plan.MergeLimits(state, partials, pageSize, lim)
	if err != nil {
		return nil, nil, err
	}
	out := make([][]byte, len(rows))
	for i, r := range rows {
		out[i] = r.AppendJSON(nil)
	}
	return out, next, nil
}

// errSiblingFailed stops the partitions of a page when one has failed.
var errSiblingFailed = errors.New("another partition of the page failed")

// maxParallel bounds the partitions one query page runs at once.
const maxParallel = 16

// CompileQuery checks a parsed query against its parameters and compiles it.
func CompileQuery(q *ast.Query, params map[string]eval.Value) (*exec.Plan, error) {
	if err := eval.CheckParams(q, params); err != nil {
		return nil, badRequest("%v", err)
	}
	p, err := exec.Compile(q, params)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return p, nil
}

// CompilePatchCondition compiles a patch's condition, "FROM c WHERE ...",
// as the query "SELECT * FROM c WHERE ...".
func CompilePatchCondition(cond string) (*exec.Plan, error) {
	text := "SELECT * " + cond
	q, err := parser.Parse(text)
	if err == nil {
		var p *exec.Plan
		if p, err = exec.Compile(q, nil); err == nil {
			return p, nil
		}
	}
	return nil, badRequest("the patch condition is invalid: %v (the condition is read as the query %q)", err, text)
}
