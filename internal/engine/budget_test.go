package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/exec"
)

// arrayDoc is a document whose "a" is the array 0, 1, ..., n-1.
func arrayDoc(id string, n int) string {
	a := make([]string, n)
	for i := range a {
		a[i] = fmt.Sprint(i)
	}
	return fmt.Sprintf(`{"id":%q,"pk":"a","a":[%s]}`, id, strings.Join(a, ","))
}

// TestPatchConditionBudget: a patch condition whose work is cubic in an
// array (a triple JOIN) is refused as a bad request naming its budget
// instead of holding the partition's write loop for seconds; the unrelated
// write in its group commits; the same condition over a small array is
// evaluated.
func TestPatchConditionBudget(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400)
	put(t, c, "a", arrayDoc("big", 200))
	put(t, c, "a", arrayDoc("small", 10))

	cond := "FROM c WHERE EXISTS(SELECT VALUE 1 FROM x IN c.a JOIN y IN c.a JOIN z IN c.a WHERE x+y+z=-1)"
	if _, err := CompilePatchCondition(cond); err != nil {
		t.Fatal(err)
	}
	patch := func(id string) *request {
		op, err := c.PrepareKeyed(OpPatch, id, key("a"), true)
		if err != nil {
			t.Fatal(err)
		}
		op.Patch = []jsondoc.PatchOp{{Op: "set", Path: "/p", Value: json.RawMessage(`1`)}}
		op.Condition = cond
		return &request{cmd: &Command{Ops: []Op{op}, Ts: 1}, done: make(chan struct{})}
	}
	other, err := c.PrepareWrite(OpCreate, []byte(`{"id":"other","pk":"a"}`), key("a"), true)
	if err != nil {
		t.Fatal(err)
	}
	unrelated := &request{cmd: &Command{Ops: []Op{other}, Ts: 1}, done: make(chan struct{})}
	big, small := patch("big"), patch("small")
	c.PartitionFor(other.EPK).commitGroup([]*request{big, unrelated, small})

	if big.err != nil || !errors.Is(big.res[0].Err, ErrBadRequest) ||
		!strings.Contains(big.res[0].Err.Error(), fmt.Sprintf("evaluation budget of %d steps", DefaultConditionSteps)) {
		t.Fatalf("cubic condition over 200 elements: err %v, result %+v; want a bad request naming the budget", big.err, big.res)
	}
	if unrelated.err != nil || !unrelated.res[0].Created {
		t.Fatalf("unrelated write: err %v, result %+v", unrelated.err, unrelated.res)
	}
	// 10³ tuples fit: the condition is false, so the patch fails its precondition.
	if small.err != nil || !errors.Is(small.res[0].Err, ErrPreconditionFailed) {
		t.Fatalf("condition over 10 elements: err %v, result %+v; want a failed precondition", small.err, small.res)
	}
}

// bomb is a query that doubles a string through n nested subqueries:
// SELECT VALUE CONCAT(v1, v1) FROM (SELECT VALUE CONCAT(v0, v0) FROM
// (SELECT VALUE c.s) v0) v1 ...
func bomb(n int) string {
	x := "SELECT VALUE c.s"
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("v%d", i)
		x = fmt.Sprintf("SELECT VALUE CONCAT(%s, %s) FROM (%s) %s", v, v, x, v)
	}
	return "SELECT VALUE LENGTH((" + x + ")) FROM c"
}

// TestQueryMemoryBudget: a query doubling a string through nested
// subqueries is refused with a 400 naming the memory budget, after
// allocating a few times the budget at most.
func TestQueryMemoryBudget(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400)
	put(t, c, "a", `{"id":"1","pk":"a","s":"xy"}`)

	// A few doublings are fine.
	if p := queryPage(t, c, bomb(4), 10); len(p.Rows) != 1 || string(p.Rows[0]) != "32" {
		t.Fatalf("4 doublings: %s", p.Rows)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Query(compileQuery(t, bomb(28)), QueryScope{}, nil, 10)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), fmt.Sprintf("memory budget of %d bytes", DefaultQueryValueBytes)) {
		t.Fatalf("28 doublings (512 MiB): %v; want a 400 naming the memory budget", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*DefaultQueryValueBytes {
		t.Fatalf("the refused query allocated %d bytes; its budget is %d", alloc, DefaultQueryValueBytes)
	}
}

// TestQueryCancel: a cartesian JOIN stops within one check interval of
// its context ending. The clock counts the checks; the context is
// cancelled at the 5th, and no check runs after it.
func TestQueryCancel(t *testing.T) {
	var checks atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var armed atomic.Bool
	now := time.Unix(1_800_000_000, 0)
	e, st := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, Now: func() time.Time {
		if armed.Load() && checks.Add(1) == 5 {
			cancel()
		}
		return now
	}})
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400)
	put(t, c, "a", arrayDoc("1", 300))
	plan := compileQuery(t, "SELECT VALUE COUNT(1) FROM c JOIN x IN c.a JOIN y IN c.a JOIN z IN c.a")
	armed.Store(true)
	_, err := c.QueryContext(ctx, plan, QueryScope{}, nil, 10)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("cancelled cartesian JOIN: %v", err)
	}
	// The engine reads the clock once for the page, then every
	// eval.CheckEvery steps; once cancelled, the first check stops it
	// before reading the clock again: 27 million tuples were not bound.
	if n := checks.Load(); n != 5 {
		t.Fatalf("the clock was read %d times; want 5 (the page stops at the first check after the cancel)", n)
	}
}

// TestQueryTimeBudget: with a clock that advances a second at every
// check, a streaming page ends after 5 s with a continuation, and paging
// on delivers every row exactly once; with 10 s a check, an ORDER BY page,
// which must read everything, fails after 60 s with a 400 naming its time
// budget.
func TestQueryTimeBudget(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	tick := time.Second
	e, st := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(tick)
		return now
	}})
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400)
	for i := 0; i < 40; i++ {
		put(t, c, "a", arrayDoc(fmt.Sprintf("%02d", i), 200))
	}
	plan := compileQuery(t, "SELECT c.id, x FROM c JOIN x IN c.a")
	seen := map[string]int{}
	var cont *exec.State
	pages := 0
	for {
		page, err := c.Query(plan, QueryScope{}, cont, 100000)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range page.Rows {
			seen[string(r)]++
		}
		if cont = page.Next; cont == nil {
			break
		}
	}
	if pages < 2 {
		t.Fatalf("%d page(s): the time budget never ended a page", pages)
	}
	for i := 0; i < 40; i++ {
		for x := 0; x < 200; x++ {
			if r := fmt.Sprintf(`{"id":"%02d","x":%d}`, i, x); seen[r] != 1 {
				t.Fatalf("row %s came %d times", r, seen[r])
			}
		}
	}
	if len(seen) != 40*200 {
		t.Fatalf("%d distinct rows, want %d", len(seen), 40*200)
	}
	mu.Lock()
	tick = 10 * time.Second
	mu.Unlock()
	_, err := c.Query(compileQuery(t, "SELECT c.id FROM c JOIN x IN c.a ORDER BY x"), QueryScope{}, nil, 10)
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "time budget of 1m0s") {
		t.Fatalf("ORDER BY past the time budget: %v", err)
	}
}

// TestQueryHeldPerPage: what the partitions of a page hold counts in one
// budget, the page's: a GROUP BY whose groups fit the budget in each of
// 16 partitions but not together is refused with a 400 naming it, and
// the server's account is back to zero after the page.
func TestQueryHeldPerPage(t *testing.T) {
	const budget = 1 << 20
	e, st := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, Query: QueryLimits{HeldBytes: budget}})
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 16000)
	if n := len(c.Partitions()); n != 16 {
		t.Fatalf("%d partitions, want 16", n)
	}
	// 400 groups of about 5 KB: 2 MB in all, about 125 KB a partition.
	for i := range 400 {
		put(t, c, fmt.Sprint("k", i), fmt.Sprintf(`{"id":"%d","pk":"k%d","s":"%04d"}`, i, i, i))
	}
	_, err := c.Query(compileQuery(t, `SELECT CONCAT(c.s, REPLICATE("x", 5000)) AS k, COUNT(1) AS n FROM c GROUP BY CONCAT(c.s, REPLICATE("x", 5000))`), QueryScope{}, nil, 10)
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), fmt.Sprintf("memory budget of %d bytes of groups across the partitions of a page", budget)) {
		t.Fatalf("GROUP BY of 2 MB of groups over 16 partitions: %v; want a 400 naming the page's memory budget", err)
	}
	if n := e.queryHeld.n.Load(); n != 0 {
		t.Fatalf("the server's account holds %d bytes after the page", n)
	}
	// Half the groups fit.
	p := queryPage(t, c, `SELECT CONCAT(c.s, REPLICATE("x", 2000)) AS k FROM c GROUP BY CONCAT(c.s, REPLICATE("x", 2000))`, 1000)
	if len(p.Rows) != 400 {
		t.Fatalf("GROUP BY of 800 KB of groups: %d rows, want 400", len(p.Rows))
	}
}

// TestQueryHeldServer: the pages running at once share the server's
// budget: while other pages hold most of it, a GROUP BY that needs more is
// refused with 429 and a retry-after, and runs once they let go of it.
func TestQueryHeldServer(t *testing.T) {
	const server = 4 << 20
	e, st := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, Query: QueryLimits{ServerBytes: server}})
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 4000)
	for i := range 400 {
		put(t, c, fmt.Sprint("k", i), fmt.Sprintf(`{"id":"%d","pk":"k%d","s":"%04d"}`, i, i, i))
	}
	plan := compileQuery(t, `SELECT CONCAT(c.s, REPLICATE("x", 2000)) AS k FROM c GROUP BY CONCAT(c.s, REPLICATE("x", 2000))`)
	// Another page holds 3.5 MiB of the 4.
	if err := e.queryHeld.grow(server - 512<<10); err != nil {
		t.Fatal(err)
	}
	_, err := c.Query(plan, QueryScope{}, nil, 1000)
	var te *ThrottledError
	if !errors.As(err, &te) || te.RetryAfter <= 0 || !strings.Contains(err.Error(), fmt.Sprintf("hold the memory they may hold together (%d bytes)", server)) {
		t.Fatalf("GROUP BY of 800 KB of groups with 512 KiB left to the server: %v; want a 429 naming the server's budget", err)
	}
	if n := e.queryHeld.n.Load(); n != server-512<<10 {
		t.Fatalf("the server's account holds %d bytes after the refused page, want %d", n, server-512<<10)
	}
	e.queryHeld.grow(-(server - 512<<10))
	page, err := c.Query(plan, QueryScope{}, nil, 1000)
	if err != nil || len(page.Rows) != 400 {
		t.Fatalf("GROUP BY of 800 KB of groups alone: %d rows, %v", len(page.Rows), err)
	}
	if n := e.queryHeld.n.Load(); n != 0 {
		t.Fatalf("the server's account holds %d bytes after the page", n)
	}
}

// TestQueryFunctionBudget: a function whose result would pass the memory
// budget for one document is refused (400) before it builds it: a query
// cannot make the server allocate more than the budget with REPLACE,
// CONCAT or ARRAY_CONCAT over a document's values, which the query's text
// multiplies.
func TestQueryFunctionBudget(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400)
	arr := strings.TrimSuffix(strings.Repeat("1,", 50_000), ",")
	put(t, c, "a", fmt.Sprintf(`{"id":"1","pk":"a","s":%q,"x":%q,"a":[%s]}`, strings.Repeat("x", 8000), strings.Repeat("y", 1<<20), arr))
	alloc := func(q string) (uint64, error) {
		plan := compileQuery(t, q)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := c.Query(plan, QueryScope{}, nil, 10)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, err
	}
	// What reading the document takes.
	base, err := alloc(`SELECT VALUE c.id FROM c`)
	if err != nil {
		t.Fatal(err)
	}
	args := func(v string, n int) string { return strings.TrimSuffix(strings.Repeat(v+", ", n), ", ") }
	for _, q := range []string{
		// 8,000 × 8,000 bytes: 64 MB.
		`SELECT VALUE LENGTH(REPLACE(c.s, "x", c.s)) FROM c`,
		// 60 × 1 MiB.
		`SELECT VALUE LENGTH(CONCAT(` + args("c.x", 60) + `)) FROM c`,
		// 40 × 50,000 elements.
		`SELECT VALUE ARRAY_LENGTH(ARRAY_CONCAT(` + args("c.a", 40) + `)) FROM c`,
	} {
		n, err := alloc(q)
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), fmt.Sprintf("its memory budget is %d bytes", DefaultQueryValueBytes)) {
			t.Fatalf("%.60s: %v; want a 400 naming the memory budget", q, err)
		}
		if n > base+DefaultQueryValueBytes {
			t.Fatalf("%.60s allocated %d bytes, %d more than reading the document; its budget is %d", q, n, n-base, DefaultQueryValueBytes)
		}
	}
	// Within the budget, they work.
	if p := queryPage(t, c, `SELECT VALUE LENGTH(REPLACE(LEFT(c.s, 100), "x", c.s)) FROM c`, 10); string(p.Rows[0]) != "800000" {
		t.Fatalf("REPLACE within the budget: %s", p.Rows)
	}
}
