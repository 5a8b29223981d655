package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/storage"
)

// logicalDocs returns the documents of logical partition pk by id, each
// as its "n" property.
func logicalDocs(t testing.TB, c *Container, pk string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	var after []byte
	for {
		f, err := c.ReadFeed("", after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Docs {
			var v struct {
				ID string  `json:"id"`
				PK string  `json:"pk"`
				N  float64 `json:"n"`
			}
			if err := json.Unmarshal(d, &v); err != nil {
				t.Fatal(err)
			}
			if v.PK == pk {
				out[v.ID] = v.N
			}
		}
		if f.Next == nil {
			return out
		}
		after = f.Next
	}
}

const bulkProcedure = `function (pk, n, throwAt) {
	var coll = getContext().getCollection();
	for (var i = 0; i < n; i++) {
		if (i === throwAt) throw new Error("stop at " + i);
		if (!coll.createDocument(coll.getSelfLink(), {id: "d" + i, pk: pk, n: i})) {
			getContext().getResponse().setBody(i);
			return;
		}
	}
	getContext().getResponse().setBody(n);
}`

// TestProcedureAllOrNothing: a procedure's writes commit together, and a
// procedure that throws, runs out of time or writes outside its logical
// partition leaves no trace.
func TestProcedureAllOrNothing(t *testing.T) {
	e, _ := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, Scripts: ScriptLimits{Timeout: 200 * time.Millisecond, MaxWrites: 150}})
	defer e.Close()
	c := mustContainer(t, e, 4000)
	if _, err := c.CreateScript(StoredProcedure, ScriptSpec{ID: "bulk", Body: bulkProcedure}); err != nil {
		t.Fatal(err)
	}
	run := func(pk, args string) (ScriptResult, error) {
		return c.ExecuteProcedure("bulk", key(pk), true, []byte(args), ScriptEnv{})
	}
	res, err := run("a", `["a", 100, -1]`)
	if err != nil || string(res.Body) != "100" {
		t.Fatalf("bulk create: %s, %v", res.Body, err)
	}
	if n := len(logicalDocs(t, c, "a")); n != 100 {
		t.Fatalf("%d documents after a procedure created 100", n)
	}
	if res.Charge < 100*2 {
		t.Fatalf("100 writes were charged %.1f RU", res.Charge)
	}
	if _, err := run("b", `["b", 100, 50]`); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "stop at 50") {
		t.Fatalf("a throwing procedure: %v", err)
	}
	if n := len(logicalDocs(t, c, "b")); n != 0 {
		t.Fatalf("%d documents after a procedure threw", n)
	}
	// Past its write budget, writes are not accepted: the procedure ends
	// early with what it did.
	if res, err = run("c", `["c", 200, -1]`); err != nil || string(res.Body) != "150" {
		t.Fatalf("past the budget: %s, %v", res.Body, err)
	}
	if n := len(logicalDocs(t, c, "c")); n != 150 {
		t.Fatalf("%d documents after a procedure accepted 150", n)
	}
	// A runaway procedure is stopped at its time limit.
	if _, err := c.CreateScript(StoredProcedure, ScriptSpec{ID: "spin", Body: `function (pk) {
		getContext().getCollection().createDocument(getContext().getCollection().getSelfLink(), {id: "x", pk: pk});
		while (true) {}
	}`}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.ExecuteProcedure("spin", key("d"), true, []byte(`["d"]`), ScriptEnv{})
	if !errors.Is(err, ErrTimeout) || time.Since(start) > 2*time.Second {
		t.Fatalf("a runaway procedure: %v after %v", err, time.Since(start))
	}
	if n := len(logicalDocs(t, c, "d")); n != 0 {
		t.Fatalf("%d documents after a procedure was stopped", n)
	}
	// A write to another logical partition fails the procedure.
	if _, err := run("e", `["other", 3, -1]`); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("a write outside the partition: %v", err)
	}
	if n := len(logicalDocs(t, c, "other")) + len(logicalDocs(t, c, "e")); n != 0 {
		t.Fatalf("%d documents after a write outside the partition", n)
	}
}

// TestProcedureConcurrentIncrements: procedures that read a counter and
// write it back, run concurrently with plain writes to the same logical
// partition, lose no increment: a procedure whose partition changed while
// it ran is run again, never committed over a state it did not read.
func TestProcedureConcurrentIncrements(t *testing.T) {
	e, _ := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, Scripts: ScriptLimits{Retries: 1000}})
	defer e.Close()
	c := mustContainer(t, e, 1000)
	if _, err := c.CreateScript(StoredProcedure, ScriptSpec{ID: "incr", Body: `function (pk) {
		var coll = getContext().getCollection();
		coll.readDocument(coll.getSelfLink() + "docs/ctr", function (err, doc) {
			var n = err ? 0 : doc.n;
			for (var i = 0; i < 50; i++) Math.sqrt(i); // widen the race
			coll.upsertDocument(coll.getSelfLink(), {id: "ctr", pk: pk, n: n + 1});
		});
	}`}); err != nil {
		t.Fatal(err)
	}
	const workers, runs = 6, 25
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < runs; i++ {
				if _, err := c.ExecuteProcedure("incr", key("p"), true, []byte(`["p"]`), ScriptEnv{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < runs; i++ {
				op, err := c.PrepareWrite(OpUpsert, fmt.Appendf(nil, `{"id":"w%d","pk":"p","n":%d}`, w, i), key("p"), true)
				if err == nil {
					_, _, err = c.Execute(&Command{Ops: []Op{op}}, "")
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := logicalDocs(t, c, "p")["ctr"]; got != workers*runs {
		t.Fatalf("the counter is %v after %d increments", got, workers*runs)
	}
}

// scriptStep is one statement of a random script and what it does to the
// model when it runs.
type scriptStep struct {
	js string
	// kind: "create", "upsert", "delete", "throw", "spin".
	kind string
	id   string
	n    int
	// lenient steps pass their error to a callback that ignores it;
	// strict ones have no callback, so an error aborts the script.
	lenient bool
}

// randomScript draws a script from a small grammar of document writes,
// throws and endless loops.
func randomScript(rng *rand.Rand) []scriptStep {
	var steps []scriptStep
	for range 1 + rng.IntN(8) {
		s := scriptStep{id: fmt.Sprint("i", rng.IntN(6)), n: rng.IntN(1000), lenient: rng.IntN(2) == 0}
		cb := ""
		if s.lenient {
			cb = ", function (err) {}"
		}
		switch r := rng.IntN(20); {
		case r < 7:
			s.kind = "create"
			s.js = fmt.Sprintf(`c.createDocument(c.getSelfLink(), {id: %q, pk: pk, n: %d}%s);`, s.id, s.n, cb)
		case r < 12:
			s.kind = "upsert"
			s.js = fmt.Sprintf(`c.upsertDocument(c.getSelfLink(), {id: %q, pk: pk, n: %d}%s);`, s.id, s.n, cb)
		case r < 17:
			s.kind = "delete"
			s.js = fmt.Sprintf(`c.deleteDocument(c.getSelfLink() + "docs/" + %q%s);`, s.id, cb)
		case r < 19:
			s.kind = "throw"
			s.js = `throw new Error("random throw");`
		default:
			s.kind = "spin"
			s.js = `while (true) {}`
		}
		steps = append(steps, s)
	}
	return steps
}

// runModel applies steps to a copy of model, as the server-side API
// defines them; ok is false when the script aborts.
func runModel(model map[string]float64, steps []scriptStep) (map[string]float64, bool) {
	m := map[string]float64{}
	for k, v := range model {
		m[k] = v
	}
	for _, s := range steps {
		_, exists := m[s.id]
		switch s.kind {
		case "throw", "spin":
			return model, false
		case "create":
			if exists {
				if !s.lenient {
					return model, false
				}
				continue
			}
			m[s.id] = float64(s.n)
		case "upsert":
			m[s.id] = float64(s.n)
		case "delete":
			if !exists {
				if !s.lenient {
					return model, false
				}
				continue
			}
			delete(m, s.id)
		}
	}
	return m, true
}

// TestRandomScriptsAllOrNothing runs random scripts (writes, throws,
// endless loops) against the invariant that a script's writes are all
// there or none are, restarting the engine between batches of them.
func TestRandomScriptsAllOrNothing(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	checkRandomScripts(t, 1, n)
}

// FuzzScriptsAllOrNothing is TestRandomScriptsAllOrNothing from a fuzzed
// seed.
func FuzzScriptsAllOrNothing(f *testing.F) {
	f.Add(uint64(2))
	f.Add(uint64(3))
	f.Fuzz(func(t *testing.T, seed uint64) { checkRandomScripts(t, seed, 20) })
}

func checkRandomScripts(t *testing.T, seed uint64, n int) {
	rng := rand.New(rand.NewPCG(seed, 11))
	fs := vfs.NewMem()
	// The timeout ends the spinning scripts. It is long enough that no
	// other script comes near it on a loaded machine: past four fifths of
	// it, writes are no longer accepted (they return false instead of
	// failing), which the model does not describe.
	opts := Options{PartitionMaxRUs: 1000, NoThrottle: true, Scripts: ScriptLimits{Timeout: 150 * time.Millisecond}}
	open := func() (*Engine, *storage.DB) {
		st, err := storage.Open(storage.Options{Dir: "/d", FS: fs, Reserve: -1})
		if err != nil {
			t.Fatal(err)
		}
		e, err := Open(st, opts)
		if err != nil {
			t.Fatal(err)
		}
		return e, st
	}
	e, st := open()
	c := mustContainer(t, e, 1000)
	model := map[string]float64{}
	committed, aborted := 0, 0
	for i := 0; i < n; i++ {
		steps := randomScript(rng)
		var b strings.Builder
		b.WriteString("function (pk) {\n var c = getContext().getCollection();\n")
		for _, s := range steps {
			b.WriteString(" " + s.js + "\n")
		}
		b.WriteString("}")
		id := fmt.Sprint("s", i)
		if _, err := c.CreateScript(StoredProcedure, ScriptSpec{ID: id, Body: b.String()}); err != nil {
			t.Fatal(err)
		}
		_, err := c.ExecuteProcedure(id, key("p"), true, []byte(`["p"]`), ScriptEnv{})
		// Each script once: the container's quota of procedures stays free.
		if derr := c.DeleteScript(StoredProcedure, id); derr != nil {
			t.Fatal(derr)
		}
		want, ok := runModel(model, steps)
		if ok != (err == nil) {
			t.Fatalf("script %d:\n%s\nthe model says ok=%v, the run returned %v", i, b.String(), ok, err)
		}
		if err != nil && !errors.Is(err, ErrBadRequest) && !errors.Is(err, ErrTimeout) {
			t.Fatalf("script %d failed with %v", i, err)
		}
		if ok {
			committed++
		} else {
			aborted++
		}
		model = want
		if got := logicalDocs(t, c, "p"); !sameDocs(got, model) {
			t.Fatalf("script %d:\n%s\nstore %v, model %v", i, b.String(), got, model)
		}
		if i%25 == 24 {
			e.Close()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			e, st = open()
			if c, err = e.Container("db", "c"); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.Close()
	_ = st.Close()
	if committed == 0 || aborted == 0 {
		t.Fatalf("%d scripts committed and %d aborted: the grammar should give both", committed, aborted)
	}
}

func sameDocs(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	ka := make([]string, 0, len(a))
	for k := range a {
		ka = append(ka, k)
	}
	sort.Strings(ka)
	for _, k := range ka {
		if v, ok := b[k]; !ok || v != a[k] {
			return false
		}
	}
	return true
}

// TestProcedureRUBudget: past its request-unit budget a procedure's
// writes are not accepted, so it ends early with what it did.
func TestProcedureRUBudget(t *testing.T) {
	e, _ := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, Scripts: ScriptLimits{MaxCharge: 50}})
	defer e.Close()
	c := mustContainer(t, e, 1000)
	if _, err := c.CreateScript(StoredProcedure, ScriptSpec{ID: "bulk", Body: bulkProcedure}); err != nil {
		t.Fatal(err)
	}
	res, err := c.ExecuteProcedure("bulk", key("r"), true, []byte(`["r", 100, -1]`), ScriptEnv{})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := json.Unmarshal(res.Body, &n); err != nil || n == 0 || n >= 100 {
		t.Fatalf("a procedure with a 50 RU budget created %s documents (%v)", res.Body, err)
	}
	if got := len(logicalDocs(t, c, "r")); got != n {
		t.Fatalf("the procedure reported %d documents; %d are stored", n, got)
	}
	if res.Charge > 80 {
		t.Fatalf("a procedure with a 50 RU budget was charged %.1f RU", res.Charge)
	}
}

// TestTriggers: triggers run in the write's transaction on every kind of
// write they name, and their failures, or a pre-trigger that moves the
// document to another partition key, leave no trace.
func TestTriggers(t *testing.T) {
	e, _ := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true})
	defer e.Close()
	c := mustContainer(t, e, 1000)
	for _, s := range []ScriptSpec{
		{ID: "count", TriggerType: TriggerPost, TriggerOperation: "All", Body: `function () {
			var c = getContext().getCollection(), d = getContext().getResponse().getBody();
			c.upsertDocument(c.getSelfLink(), {id: "log-" + d.id, pk: d.pk, n: d.n});
		}`},
		{ID: "move", TriggerType: TriggerPre, TriggerOperation: "Replace", Body: `function () {
			var r = getContext().getRequest(), d = r.getBody(); d.pk = "elsewhere"; r.setBody(d);
		}`},
		{ID: "onlyDelete", TriggerType: TriggerPre, TriggerOperation: "Delete", Body: `function () {}`},
	} {
		if _, err := c.CreateScript(Trigger, s); err != nil {
			t.Fatal(err)
		}
	}
	write := func(kind OpKind, body string, pre, post []string) (ScriptResult, error) {
		t.Helper()
		op, err := c.PrepareWrite(kind, []byte(body), key("t"), true)
		if err != nil {
			t.Fatal(err)
		}
		return c.WriteWithTriggers(op, pre, post, ScriptEnv{})
	}
	if r, err := write(OpCreate, `{"id":"a","pk":"t","n":1}`, nil, []string{"count"}); err != nil || !r.Op.Created {
		t.Fatalf("create: %+v, %v", r.Op, err)
	}
	if _, err := write(OpReplace, `{"id":"a","pk":"t","n":2}`, nil, []string{"count"}); err != nil {
		t.Fatal(err)
	}
	if got := logicalDocs(t, c, "t"); got["a"] != 2 || got["log-a"] != 2 {
		t.Fatalf("after a replace with a post-trigger: %v", got)
	}
	if _, err := write(OpReplace, `{"id":"a","pk":"t","n":3}`, []string{"move"}, nil); !errors.Is(err, ErrPartitionKeyMismatch) {
		t.Fatalf("a pre-trigger that moves the document: %v", err)
	}
	if _, err := write(OpCreate, `{"id":"b","pk":"t","n":3}`, []string{"onlyDelete"}, nil); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("a delete trigger on a create: %v", err)
	}
	if _, err := write(OpCreate, `{"id":"a","pk":"t","n":3}`, nil, []string{"count"}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a create that conflicts: %v", err)
	}
	del, err := c.PrepareKeyed(OpDelete, "a", key("t"), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteWithTriggers(del, []string{"onlyDelete"}, []string{"count"}, ScriptEnv{}); err != nil {
		t.Fatal(err)
	}
	if got := logicalDocs(t, c, "t"); len(got) != 1 || got["log-a"] != 2 {
		t.Fatalf("after a delete with triggers: %v", got)
	}
}

// TestProcedureReturnsWhatWasStored: a procedure that returns a document
// it wrote returns the _rid and _etag that were stored, even while other
// logical partitions of its partition take writes (which take sequence
// numbers the procedure predicted): such a run is retried.
func TestProcedureReturnsWhatWasStored(t *testing.T) {
	e, _ := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, Scripts: ScriptLimits{Retries: 1000}})
	defer e.Close()
	c := mustContainer(t, e, 1000) // one partition
	if _, err := c.CreateScript(StoredProcedure, ScriptSpec{ID: "make", Body: `function (pk, id) {
		var c = getContext().getCollection();
		c.createDocument(c.getSelfLink(), {id: id, pk: pk}, function (err, doc) {
			if (err) throw err;
			for (var i = 0; i < 200; i++) Math.sqrt(i); // widen the race
			getContext().getResponse().setBody(doc);
		});
	}`}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			op, err := c.PrepareWrite(OpUpsert, fmt.Appendf(nil, `{"id":"x%d","pk":"other%d"}`, i%10, i%7), key(fmt.Sprint("other", i%7)), true)
			if err == nil {
				_, _, err = c.Execute(&Command{Ops: []Op{op}}, "")
			}
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < 60; i++ {
		id := fmt.Sprint("m", i)
		res, err := c.ExecuteProcedure("make", key("mine"), true, fmt.Appendf(nil, `["mine", %q]`, id), ScriptEnv{})
		if err != nil {
			t.Fatal(err)
		}
		op, _ := c.PrepareKeyed(OpRead, id, key("mine"), true)
		stored, _, err := c.ReadItem(op)
		if err != nil {
			t.Fatal(err)
		}
		var got, want struct{ Rid, Etag string }
		_ = json.Unmarshal(res.Body, &struct {
			Rid  *string `json:"_rid"`
			Etag *string `json:"_etag"`
		}{&got.Rid, &got.Etag})
		_ = json.Unmarshal(stored.Doc, &struct {
			Rid  *string `json:"_rid"`
			Etag *string `json:"_etag"`
		}{&want.Rid, &want.Etag})
		if got != want || got.Etag == "" {
			close(stop)
			wg.Wait()
			t.Fatalf("run %d returned %+v; stored %+v", i, got, want)
		}
	}
	close(stop)
	wg.Wait()
}

// TestProcedurePagedQueries: a procedure that pages through a query with
// pageSize and continuation, deleting each page's documents (the service's
// bulk-delete sample), deletes them all: continuations are positions, not
// offsets.
func TestProcedurePagedQueries(t *testing.T) {
	e, _ := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true})
	defer e.Close()
	c := mustContainer(t, e, 1000)
	for _, s := range []ScriptSpec{{ID: "bulk", Body: bulkProcedure}, {ID: "bulkDelete", Body: `function (q) {
		var coll = getContext().getCollection(), deleted = 0, pages = 0;
		function page(cont) {
			coll.queryDocuments(coll.getSelfLink(), q, {pageSize: 7, continuation: cont}, function (err, docs, opts) {
				if (err) throw err;
				pages++;
				docs.forEach(function (d) { coll.deleteDocument(d._self, function (e) { if (e) throw e; deleted++; }); });
				if (opts.continuation) page(opts.continuation);
				else coll.readDocuments(coll.getSelfLink(), function (e, left) {
					getContext().getResponse().setBody({deleted: deleted, pages: pages, left: left.length});
				});
			});
		}
		page();
	}`}} {
		if _, err := c.CreateScript(StoredProcedure, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ExecuteProcedure("bulk", key("p"), true, []byte(`["p", 50, -1]`), ScriptEnv{}); err != nil {
		t.Fatal(err)
	}
	res, err := c.ExecuteProcedure("bulkDelete", key("p"), true, []byte(`["SELECT * FROM c WHERE c.n >= 10"]`), ScriptEnv{})
	if err != nil || string(res.Body) != `{"deleted":40,"pages":6,"left":10}` {
		t.Fatalf("bulk delete: %s, %v", res.Body, err)
	}
	if n := len(logicalDocs(t, c, "p")); n != 10 {
		t.Fatalf("%d documents left", n)
	}
	_, err = c.ExecuteProcedure("bulkDelete", key("p"), true, []byte(`["SELECT * FROM c ORDER BY c.n DESC"]`), ScriptEnv{})
	if err != nil {
		t.Fatalf("an ordered paged query: %v", err)
	}
	if n := len(logicalDocs(t, c, "p")); n != 0 {
		t.Fatalf("%d documents left after an ordered bulk delete", n)
	}
}

// TestScriptSlots: past the node's limit of scripts running at once, a
// run waits for a slot, then is refused with 429; the slots come back.
func TestScriptSlots(t *testing.T) {
	e, _ := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true,
		Scripts: ScriptLimits{MaxConcurrent: 1, SlotWait: 50 * time.Millisecond, Timeout: 400 * time.Millisecond}})
	defer e.Close()
	c := mustContainer(t, e, 1000)
	for _, s := range []ScriptSpec{{ID: "spin", Body: `function () { for (;;) {} }`}, {ID: "noop", Body: `function () {}`}} {
		if _, err := c.CreateScript(StoredProcedure, s); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error)
	go func() {
		_, err := c.ExecuteProcedure("spin", key("a"), true, nil, ScriptEnv{})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	var te *ThrottledError
	if _, err := c.ExecuteProcedure("noop", key("b"), true, nil, ScriptEnv{}); !errors.As(err, &te) || !strings.Contains(err.Error(), "running") {
		t.Fatalf("a run past the limit: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrTimeout) {
		t.Fatalf("the spinning run: %v", err)
	}
	if _, err := c.ExecuteProcedure("noop", key("b"), true, nil, ScriptEnv{}); err != nil {
		t.Fatalf("after the slot came back: %v", err)
	}
}
