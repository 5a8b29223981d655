package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/storage"
)

// testEngine opens an engine on a store in dir ("" = in memory), with a
// frozen clock and throttling off (see meter_test.go for budgets).
func testEngine(t testing.TB, dir string) (*Engine, *storage.DB) {
	return testEngineOpts(t, dir, Options{PartitionMaxRUs: 1000, NoThrottle: true, Now: func() time.Time { return time.Unix(1_800_000_000, 0) }})
}

func testEngineOpts(t testing.TB, dir string, o Options) (*Engine, *storage.DB) {
	t.Helper()
	st, err := storage.Open(storage.Options{Dir: dir, InMemory: dir == ""})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(st, o)
	if err != nil {
		t.Fatal(err)
	}
	return e, st
}

func hashDef(paths ...string) epk.Definition {
	if len(paths) > 1 {
		return epk.Definition{Kind: "MultiHash", Version: 2, Paths: paths}
	}
	return epk.Definition{Kind: "Hash", Version: 2, Paths: paths}
}

// outcome names what one operation did, for tests to compare: "created",
// "deleted" or "ok" (it read, replaced or patched an existing item) when it
// succeeded, else the sentinel its error wraps ("not found", "conflict",
// "precondition failed", "failed dependency", ...).
func outcome(kind OpKind, r OpResult) string {
	switch {
	case r.Err != nil:
		for _, s := range []error{ErrFailedDependency, ErrNotFound, ErrConflict, ErrPreconditionFailed,
			ErrPartitionKeyMismatch, ErrBadRequest, ErrTooLarge, ErrLogicalPartitionFull} {
			if errors.Is(r.Err, s) {
				return s.Error()
			}
		}
		return "unexpected error: " + r.Err.Error()
	case r.Created:
		return "created"
	case kind == OpDelete:
		return "deleted"
	}
	return "ok"
}

func mustContainer(t testing.TB, e *Engine, rus int) *Container {
	t.Helper()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil && !errors.Is(err, ErrConflict) {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{RUs: rus}); err != nil {
		t.Fatal(err)
	}
	c, err := e.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func key(s string) epk.Key { return epk.Key{epk.String(s)} }

// TestModel runs random operations against the engine and against a plain
// map, comparing every outcome, and restarts the engine from disk between
// rounds: the store must agree with the model at every step.
func TestModel(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	c := mustContainer(t, e, 4000) // 4 partitions
	type item struct {
		V    int
		Etag string
	}
	model := map[[2]string]item{} // (pk, id) -> value
	rng := rand.New(rand.NewSource(1))
	pks := []string{"a", "b", "c", "d", "e", "f", "g"}
	ids := []string{"1", "2", "3", "4", "5"}
	for round := 0; round < 4; round++ {
		for step := 0; step < 600; step++ {
			pk, id := pks[rng.Intn(len(pks))], ids[rng.Intn(len(ids))]
			k := [2]string{pk, id}
			cur, exists := model[k]
			v := rng.Intn(1000)
			body := []byte(fmt.Sprintf(`{"id":%q,"pk":%q,"v":%d}`, id, pk, v))
			var op Op
			var err error
			want := ""
			switch kind := rng.Intn(7); kind {
			case 0, 1:
				op, err = c.PrepareWrite(OpCreate, body, key(pk), true)
				want = map[bool]string{true: "conflict", false: "created"}[exists]
			case 2:
				op, err = c.PrepareWrite(OpUpsert, body, key(pk), true)
				want = map[bool]string{true: "ok", false: "created"}[exists]
			case 3:
				op, err = c.PrepareWrite(OpReplace, body, key(pk), true)
				want = map[bool]string{true: "ok", false: "not found"}[exists]
				if exists && rng.Intn(3) == 0 {
					op.IfMatch = `"stale"`
					want = "precondition failed"
				} else if exists {
					op.IfMatch = cur.Etag
				}
			case 4:
				op, err = c.PrepareKeyed(OpDelete, id, key(pk), true)
				want = map[bool]string{true: "deleted", false: "not found"}[exists]
			case 5:
				op, err = c.PrepareKeyed(OpPatch, id, key(pk), true)
				op.Patch = []jsondoc.PatchOp{{Op: "incr", Path: "/v", Value: json.RawMessage(`1`)}}
				want = map[bool]string{true: "ok", false: "not found"}[exists]
				v = cur.V + 1
			case 6:
				// An atomic batch: create a fresh item, then touch this one; it
				// must apply entirely or not at all.
				fresh := fmt.Sprintf("f%d-%d", round, step)
				o1, err1 := c.PrepareWrite(OpCreate, []byte(fmt.Sprintf(`{"id":%q,"pk":%q,"v":0}`, fresh, pk)), key(pk), true)
				o2, err2 := c.PrepareKeyed(OpDelete, id, key(pk), true)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				res, _, err := c.Execute(&Command{Atomic: true, Ops: []Op{o1, o2}}, "")
				if err != nil {
					t.Fatal(err)
				}
				got := [2]string{outcome(OpCreate, res[0]), outcome(OpDelete, res[1])}
				if exists {
					if got != [2]string{"created", "deleted"} {
						t.Fatalf("batch on existing item: %q", got)
					}
					delete(model, k)
					model[[2]string{pk, fresh}] = item{V: 0, Etag: res[0].Etag}
				} else if got != [2]string{"failed dependency", "not found"} {
					t.Fatalf("batch on missing item: %q, want failed dependency, not found", got)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			if got := outcome(op.Kind, r); got != want {
				t.Fatalf("round %d step %d: %v %s/%s: %s (%v), model says %s", round, step, op.Kind, pk, id, got, r.Err, want)
			}
			if r.Err == nil {
				if op.Kind == OpDelete {
					delete(model, k)
				} else {
					model[k] = item{V: v, Etag: r.Etag}
				}
			}
		}
		// Every model item reads back with its value and etag; nothing else exists.
		check := func() {
			for k, it := range model {
				op, _ := c.PrepareKeyed(OpRead, k[1], key(k[0]), true)
				r, _, err := c.ReadItem(op)
				if err != nil {
					t.Fatalf("round %d: %s/%s: %v", round, k[0], k[1], err)
				}
				doc, etag := r.Doc, r.Etag
				var d struct{ V int }
				json.Unmarshal(doc, &d)
				if d.V != it.V || etag != it.Etag {
					t.Fatalf("round %d: %s/%s = v %d etag %s; model v %d etag %s", round, k[0], k[1], d.V, etag, it.V, it.Etag)
				}
			}
			f, err := c.ReadFeed("", nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Docs) != len(model) {
				t.Fatalf("round %d: feed has %d items, model %d", round, len(f.Docs), len(model))
			}
			var items int64
			for _, p := range c.Partitions() {
				items += p.state.Items
			}
			if items != int64(len(model)) {
				t.Fatalf("round %d: partition stats count %d items, model %d", round, items, len(model))
			}
		}
		check()
		// Restart from disk.
		e.Close()
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		e, st = testEngine(t, dir)
		var err error
		if c, err = e.Container("db", "c"); err != nil {
			t.Fatal(err)
		}
		check()
	}
	e.Close()
	st.Close()
}

// TestGroupCommit checks that concurrent writers to one partition share
// commits: with 64 writers, the apply loop commits fewer batches than it
// applies commands.
func TestGroupCommit(t *testing.T) {
	e, st := testEngine(t, t.TempDir())
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400) // one partition
	p := c.Partitions()[0]
	before := p.LSN()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []error
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				op, err := c.PrepareWrite(OpCreate, []byte(fmt.Sprintf(`{"id":"%d-%d","pk":"k%d"}`, w, i, w)), key(fmt.Sprint("k", w)), true)
				if err == nil {
					var res []OpResult
					res, _, err = c.Execute(&Command{Ops: []Op{op}}, "")
					if err == nil && !res[0].Created {
						err = res[0].Err
					}
				}
				if err != nil {
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d writes failed, first: %v", len(failures), failures[0])
	}
	commands := p.LSN() - before
	commits := p.commits.Load()
	if commands != 64*20 {
		t.Fatalf("LSN advanced by %d, want %d", commands, 64*20)
	}
	if commits >= commands {
		t.Fatalf("%d commands took %d commits: writers did not share syncs", commands, commits)
	}
	t.Logf("%d commands in %d commits (%.1f per sync)", commands, commits, float64(commands)/float64(commits))
}

func TestEvenPartitionsFromThroughput(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ rus, want int }{{0, 1}, {400, 1}, {1000, 1}, {1001, 2}, {4000, 4}, {16000, 16}} {
		info, err := e.CreateContainer("db", ContainerSpec{ID: fmt.Sprint("c", tc.rus), PartitionKey: hashDef("/pk")}, Throughput{RUs: tc.rus})
		if tc.rus > 0 && tc.rus < 400 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Ranges) != tc.want {
			t.Errorf("%d RU/s at 1000 per partition: %d ranges, want %d", tc.rus, len(info.Ranges), tc.want)
		}
		if info.Ranges[0].Min != "" || info.Ranges[len(info.Ranges)-1].Max != "FF" {
			t.Errorf("%d RU/s: ranges do not cover the space: %+v", tc.rus, info.Ranges)
		}
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "low", PartitionKey: hashDef("/pk")}, Throughput{RUs: 300}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("300 RU/s: %v, want a bad request", err)
	}
}

// FuzzPrepareWrite feeds arbitrary documents and partition-key headers to
// the extraction of id and partition key: it must never panic, and what it
// accepts must be consistent.
func FuzzPrepareWrite(f *testing.F) {
	e, st := testEngine(f, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(f, e, 400)
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "mh", PartitionKey: hashDef("/a/b", "/c")}, Throughput{}); err != nil {
		f.Fatal(err)
	}
	mh, _ := e.Container("db", "mh")
	f.Add([]byte(`{"id":"1","pk":"a"}`), `["a"]`)
	f.Add([]byte(`{"id":"1","pk":5}`), `[5]`)
	f.Add([]byte(`{"id":"1","pk":null}`), `[null]`)
	f.Add([]byte(`{"id":"1"}`), `[]`)
	f.Add([]byte(`{"id":"1","a":{"b":"x"},"c":true}`), `["x",true]`)
	f.Add([]byte(`{"id":"1","pk":{"x":1}}`), `[{}]`)
	f.Add([]byte(`[1,2]`), `["a"]`)
	f.Add([]byte(`{"id":"1","pk":"a","n":1e400}`), `["a"]`)
	f.Add([]byte(`{"id":"1","pk":"a","id":"2"}`), `["a"]`)
	f.Add([]byte(`{"id":"1","pk":"a","n":[[[[[[[[]]]]]]]]}`), `["a"]`)
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		hk, herr := epk.ParseHeader(header)
		for _, ct := range []*Container{c, mh} {
			op, err := ct.PrepareWrite(OpUpsert, body, hk, herr == nil)
			if err != nil {
				if !errors.Is(err, ErrBadRequest) && !errors.Is(err, ErrPartitionKeyMismatch) && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("unexpected error class: %v", err)
				}
				continue
			}
			if herr != nil {
				t.Fatalf("accepted a write with an invalid header %q", header)
			}
			if validateItemID(op.ID) != nil {
				t.Fatalf("accepted invalid id %q", op.ID)
			}
			want, err := ct.def.EPK(op.Key)
			if err != nil || want != op.EPK {
				t.Fatalf("EPK %q, recomputed %q (%v)", op.EPK, want, err)
			}
			if !json.Valid(op.Body) {
				t.Fatalf("accepted body is not valid JSON: %q", op.Body)
			}
			// What the apply loop and the index decode must decode.
			if _, err := eval.FromJSON(op.Body); err != nil {
				t.Fatalf("accepted body %q fails the evaluator's decoder: %v", op.Body, err)
			}
		}
	})
}
