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
