package engine

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/query/parser"
	"github.com/parsecdb/parsec/internal/storage"
)

// indexEntries returns the container's index entry keys, as strings.
func indexEntries(t testing.TB, c *Container) []string {
	t.Helper()
	var out []string
	lo, hi := storage.IndexGenerationsSpan(c.rid, 0, 0)
	if err := c.e.store.Iterate(lo, hi, func(k, _ []byte) (bool, error) {
		out = append(out, string(k))
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// expectedEntries computes the entries the container's items should have
// under its current index state, from the items themselves.
func expectedEntries(t testing.TB, c *Container) []string {
	t.Helper()
	ix := c.index.Load()
	var out []string
	lo, hi := storage.ContainerItemsSpan(c.rid)
	var buf []byte
	if err := c.e.store.Iterate(lo, hi, func(k, v []byte) (bool, error) {
		e, id, _ := storage.SplitItemKey(k)
		_, _, doc, err := decodeItem(k, v)
		if err != nil {
			return false, err
		}
		return true, eachTermModel(ix, doc, &buf, func(term []byte) error {
			out = append(out, string(storage.IndexEntry(nil, c.rid, ix.gen, term, string(e), string(id))))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// eachTermModel is the reference for the terms apply writes: the stored
// document decoded into values and walked by index.Policy.Terms (what
// eachTerm did before it read the bytes directly).
func eachTermModel(ix *indexState, doc []byte, buf *[]byte, fn func(term []byte) error) error {
	if ix == nil || ix.policy == nil || ix.policy.None || doc == nil {
		return nil
	}
	v, err := eval.FromJSON(doc)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotJSON, err)
	}
	var ferr error
	ix.policy.Terms(v, func(path []string, val eval.Value) {
		if ferr != nil {
			return
		}
		*buf = index.AppendValue(index.AppendPath((*buf)[:0], path), val)
		ferr = fn(*buf)
	})
	return ferr
}

// checkIndex requires the index to hold exactly the terms of the items.
func checkIndex(t testing.TB, c *Container) {
	t.Helper()
	got, want := indexEntries(t, c), expectedEntries(t, c)
	if !slices.Equal(got, want) {
		extra, missing := 0, 0
		for _, k := range got {
			if _, ok := slices.BinarySearch(want, k); !ok {
				extra++
			}
		}
		for _, k := range want {
			if _, ok := slices.BinarySearch(got, k); !ok {
				missing++
			}
		}
		t.Fatalf("index has %d entries, the items have %d terms: %d stale, %d missing", len(got), len(want), extra, missing)
	}
}

// compileQuery parses and compiles a query without parameters.
func compileQuery(t testing.TB, text string) *exec.Plan {
	t.Helper()
	q, err := parser.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := CompileQuery(q, map[string]eval.Value{})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// runQuery runs a query to the end with small pages and returns its rows
// as JSON, and whether the index served it.
func runQuery(t testing.TB, c *Container, text string, scope QueryScope) ([]string, bool, int) {
	t.Helper()
	plan := compileQuery(t, text)
	var rows []string
	used, docs := false, 0
	var cont *exec.State
	for {
		page, err := c.Query(plan, scope, cont, 5)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		for _, r := range page.Rows {
			rows = append(rows, string(r))
		}
		used = used || len(page.Index.Utilized) > 0
		docs += page.DocsRead
		if cont = page.Next; cont == nil {
			return rows, used, docs
		}
	}
}

// modelDoc is a test document; its fields exercise the index's types.
type modelDoc struct {
	ID   string         `json:"id"`
	PK   string         `json:"pk"`
	N    *float64       `json:"n,omitempty"`
	S    any            `json:"s,omitempty"`
	Flag *bool          `json:"flag,omitempty"`
	O    map[string]any `json:"o,omitempty"`
	Tags []int          `json:"tags,omitempty"`
}

func randomModelDoc(rng *rand.Rand, id, pk string) modelDoc {
	d := modelDoc{ID: id, PK: pk}
	if rng.Intn(8) > 0 {
		n := float64(rng.Intn(40) - 10)
		if rng.Intn(5) == 0 {
			n += 0.5
		}
		d.N = &n
	}
	switch rng.Intn(6) {
	case 0:
	case 1:
		d.S = rng.Intn(5) // a number where strings usually are
	case 2:
		d.S = strings.Repeat("long", 80) + fmt.Sprint(rng.Intn(3)) // past MaxStringBytes
	default:
		d.S = string(rune('a' + rng.Intn(8)))
	}
	if rng.Intn(2) == 0 {
		f := rng.Intn(2) == 0
		d.Flag = &f
	}
	if rng.Intn(2) == 0 {
		d.O = map[string]any{"x": rng.Intn(7), "y": nil}
	}
	if rng.Intn(3) == 0 {
		d.Tags = []int{rng.Intn(3), 7}
	}
	return d
}

func matchesQuery(d modelDoc, q int) bool {
	n := func() (float64, bool) {
		if d.N == nil {
			return 0, false
		}
		return *d.N, true
	}
	switch q {
	case 0: // c.n = 5
		v, ok := n()
		return ok && v == 5
	case 1: // c.n >= 3 AND c.n < 12
		v, ok := n()
		return ok && v >= 3 && v < 12
	case 2: // c.s IN ("a", "c", 2)
		return d.S == "a" || d.S == "c" || d.S == 2
	case 3: // c.o.x = 3
		return d.O != nil && d.O["x"] == 3
	case 4: // c.flag = true AND c.n > 20
		v, ok := n()
		return d.Flag != nil && *d.Flag && ok && v > 20
	case 5: // c.s > "long" (strings only)
		s, ok := d.S.(string)
		return ok && s > "long"
	case 6: // c.o.y = null
		return d.O != nil
	}
	panic("no such query")
}

var modelQueries = []string{
	`SELECT VALUE c.id FROM c WHERE c.n = 5`,
	`SELECT VALUE c.id FROM c WHERE c.n >= 3 AND c.n < 12`,
	`SELECT VALUE c.id FROM c WHERE c.s IN ("a", "c", 2)`,
	`SELECT VALUE c.id FROM c WHERE c.o.x = 3`,
	`SELECT VALUE c.id FROM c WHERE c.flag = true AND c.n > 20`,
	`SELECT VALUE c.id FROM c WHERE c.s > "long"`,
	`SELECT VALUE c.id FROM c WHERE c.o.y = null`,
}

// orderQueries sort by paths whose values are of every type, or missing:
// undefined first ascending and last descending, long strings that share
// one truncated bucket, arrays and objects that share one bucket each.
var orderQueries = []string{
	`SELECT TOP 7 VALUE c.id FROM c ORDER BY c.s`,
	`SELECT TOP 7 VALUE c.id FROM c ORDER BY c.s DESC`,
	`SELECT VALUE c.id FROM c ORDER BY c.s DESC OFFSET 40 LIMIT 30`,
	`SELECT TOP 9 VALUE c.id FROM c ORDER BY c.o DESC, c.id`,
	`SELECT TOP 12 VALUE [c.id, c.tags] FROM c ORDER BY c.tags`,
	`SELECT TOP 6 VALUE c.id FROM c ORDER BY c.o.x DESC, c.n`,
	`SELECT VALUE c.id FROM c WHERE c.n > 10 ORDER BY c.n DESC OFFSET 3 LIMIT 12`,
	`SELECT DISTINCT TOP 5 VALUE c.n FROM c ORDER BY c.n DESC`,
	`SELECT TOP 4 c.id, c.flag FROM c WHERE IS_BOOL(c.flag) ORDER BY c.flag, c.id DESC`,
}

// scanQuery runs a query over every item in key order, without the index,
// in one page.
func scanQuery(t testing.TB, c *Container, text string) []string {
	t.Helper()
	plan := compileQuery(t, text)
	spans, err := c.spans(QueryScope{})
	if err != nil {
		t.Fatal(err)
	}
	var sources []exec.Source
	for _, s := range spans {
		src := &itemSource{db: c.e.store, lo: s.lo, hi: s.hi}
		defer src.close()
		sources = append(sources, src)
	}
	rows, _, err := exec.Exec(plan, sources, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(r.AppendJSON(nil))
	}
	return out
}

// TestIndexModel writes random documents (creates, upserts, replaces,
// patches, deletes, atomic batches that fail) into a 4-partition
// container, splits a partition and restarts the engine on the way, and
// checks after every round that the index holds exactly the items' terms
// and that indexed queries return exactly what a model says.
func TestIndexModel(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	c := mustContainer(t, e, 4000)
	rng := rand.New(rand.NewSource(7))
	model := map[string]modelDoc{} // id -> doc; pk = "p" + id mod 13
	for round := 0; round < 5; round++ {
		for step := 0; step < 400; step++ {
			id := fmt.Sprint(rng.Intn(300))
			pk := "p" + fmt.Sprint(len(id)*7%13) + id[:1]
			d := randomModelDoc(rng, id, pk)
			body, _ := json.Marshal(d)
			_, exists := model[id]
			var op Op
			var err error
			switch rng.Intn(6) {
			case 0, 1:
				op, err = c.PrepareWrite(OpUpsert, body, key(pk), true)
			case 2:
				op, err = c.PrepareWrite(OpReplace, body, key(pk), true)
			case 3:
				op, err = c.PrepareKeyed(OpDelete, id, key(pk), true)
			case 4:
				op, err = c.PrepareKeyed(OpPatch, id, key(pk), true)
				op.Patch = []jsondoc.PatchOp{{Op: "set", Path: "/n", Value: json.RawMessage(`5`)}}
				if cur, ok := model[id]; ok {
					five := 5.0
					cur.N = &five
					d = cur
				}
			case 5: // an atomic batch whose second operation fails
				o1, err1 := c.PrepareWrite(OpUpsert, body, key(pk), true)
				o2, err2 := c.PrepareKeyed(OpReplace, "missing-"+id, key(pk), true)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				o2.Body = []byte(`{"id":"missing-` + id + `","pk":"` + pk + `","n":5}`)
				if _, _, err := c.Execute(&Command{Atomic: true, Ops: []Op{o1, o2}}, ""); err != nil {
					t.Fatal(err)
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
			switch {
			case op.Kind == OpDelete && exists:
				delete(model, id)
			case res[0].Err == nil && op.Kind != OpDelete:
				model[id] = d
			}
		}
		checkIndex(t, c)
		for qi, text := range modelQueries {
			var want []string
			for id, d := range model {
				if matchesQuery(d, qi) {
					want = append(want, `"`+id+`"`)
				}
			}
			got, used, docs := runQuery(t, c, text, QueryScope{})
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d: %s\n got %v\nwant %v", round, text, got, want)
			}
			if !used {
				t.Fatalf("round %d: %s did not use the index", round, text)
			}
			// The lookup reads the matches of the filter it chose (for
			// query 4 the flag, for 5 all long strings share a truncated
			// term), plus a read-ahead document per page.
			if qi != 4 && qi != 5 && docs > 2*len(want)+2 {
				t.Fatalf("round %d: %s read %d documents for %d results", round, text, docs, len(want))
			}
		}
		for _, text := range orderQueries {
			want := scanQuery(t, c, text)
			got, used, docs := runQuery(t, c, text, QueryScope{})
			if !slices.Equal(got, want) {
				t.Fatalf("round %d: %s\n got %v\nwant %v", round, text, got, want)
			}
			if !used {
				t.Fatalf("round %d: %s did not use the index", round, text)
			}
			t.Logf("round %d: %s: %d rows, %d documents read of %d", round, text, len(got), docs, len(model))
		}
		switch round {
		case 1:
			p := c.Partitions()[0]
			if _, err := c.splitPartition(p, nil); err != nil {
				t.Fatal(err)
			}
		case 2:
			e.Close()
			st.Close()
			e, st = testEngine(t, dir)
			var err error
			if c, err = e.Container("db", "c"); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.Close()
	st.Close()
}

// TestIndexPolicyChange replaces the indexing policy while writers change
// the items: the new generation is built online, ends with exactly the
// items' terms, the old generation is gone, and queries use only what the
// new policy indexes.
func TestIndexPolicyChange(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 4000)
	rng := rand.New(rand.NewSource(3))
	for i := range 3000 {
		id, pk := fmt.Sprint(i), fmt.Sprint("p", i%50)
		body, _ := json.Marshal(randomModelDoc(rng, id, pk))
		op, err := c.PrepareWrite(OpUpsert, body, key(pk), true)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	checkIndex(t, c)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // writers during the build
		defer wg.Done()
		r := rand.New(rand.NewSource(4))
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			i := r.Intn(3500)
			id, pk := fmt.Sprint(i), fmt.Sprint("p", i%50)
			body, _ := json.Marshal(randomModelDoc(r, id, pk))
			kind := OpUpsert
			var op Op
			var err error
			if n%5 == 0 {
				op, err = c.PrepareKeyed(OpDelete, id, key(pk), true)
				kind = OpDelete
			} else {
				op, err = c.PrepareWrite(kind, body, key(pk), true)
			}
			if err != nil {
				t.Error(err)
				return
			}
			if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	policy := json.RawMessage(`{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/n/?"},{"path":"/\"_etag\"/?"}]}`)
	if _, err := e.ReplaceContainer("db", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk"), IndexingPolicy: policy}, ""); err != nil {
		t.Fatal(err)
	}
	if ix := c.index.Load(); ix.ready || ix.gen != 2 {
		t.Fatalf("after the policy change: generation %d, ready %v; want 2, not ready", ix.gen, ix.ready)
	}
	// While the build runs, queries scan and stay complete.
	all, used, _ := runQuery(t, c, `SELECT VALUE COUNT(1) FROM c WHERE c.s = "a"`, QueryScope{})
	if used || len(all) != 1 {
		t.Fatalf("during the build: rows %v, index used %v", all, used)
	}
	e.builders.Wait()
	close(stop)
	wg.Wait()
	if ix := c.index.Load(); !ix.ready || ix.gen != 2 {
		t.Fatalf("after the build: generation %d, ready %v", ix.gen, ix.ready)
	}
	if c.Info().IndexBuilding {
		t.Fatal("the container record still says the index is building")
	}
	checkIndex(t, c) // also: no entry of generation 1 is left
	if _, used, _ := runQuery(t, c, `SELECT VALUE c.id FROM c WHERE c.n = 5`, QueryScope{}); used {
		t.Fatal("a query on an excluded path used the index")
	}
	if _, used, _ := runQuery(t, c, `SELECT VALUE c.id FROM c WHERE c.s = "a"`, QueryScope{}); !used {
		t.Fatal("a query on an included path did not use the index")
	}

	// indexingMode none: no entries at all, and queries scan.
	none := json.RawMessage(`{"indexingMode":"none"}`)
	if _, err := e.ReplaceContainer("db", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk"), IndexingPolicy: none}, ""); err != nil {
		t.Fatal(err)
	}
	e.builders.Wait()
	if n := len(indexEntries(t, c)); n != 0 {
		t.Fatalf("indexingMode none left %d entries", n)
	}
	rows, used, _ := runQuery(t, c, `SELECT VALUE c.id FROM c WHERE c.s = "a"`, QueryScope{})
	if used || len(rows) == 0 {
		t.Fatalf("with indexingMode none: %d rows, index used %v", len(rows), used)
	}
}

// TestWhereKeyTargetsOnePartition: an equality on the partition key in the
// WHERE clause reads only the partition that holds the key.
func TestWhereKeyTargetsOnePartition(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 4000)
	for i := range 400 {
		if _, err := write(t, c, fmt.Sprint("p", i%40), fmt.Sprint(i), 10); err != nil {
			t.Fatal(err)
		}
	}
	rows, _, docs := runQuery(t, c, `SELECT VALUE c.id FROM c WHERE c.pk = "p7"`, QueryScope{})
	// Pages of 5 read one document ahead: 6 + 5 + 1 at most.
	if len(rows) != 10 || docs > 12 {
		t.Fatalf("got %d rows reading %d documents, want 10 rows and at most 12 documents", len(rows), docs)
	}
	q, _ := parser.Parse(`SELECT * FROM c WHERE c.pk = "p7"`)
	plan, _ := CompileQuery(q, nil)
	ranges, err := c.QueryRanges(plan, QueryScope{})
	if err != nil || len(ranges) != 1 || ranges[0].Min != ranges[0].Max {
		t.Fatalf("query plan ranges %+v (%v), want one point range", ranges, err)
	}
}

// TestIndexOfLongNamesIsBounded: an item whose property names are 60 KB
// long, nested, costs a bounded index. Its terms used to repeat every
// name on the way down, megabytes of index for one item.
func TestIndexOfLongNamesIsBounded(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400)
	name := strings.Repeat("n", 60<<10)
	body := `{"id":"long","pk":"p","x":` + strings.Repeat(`{"`+name+`":`, 20) + `1` + strings.Repeat(`}`, 20) + `}`
	op, err := c.PrepareWrite(OpCreate, []byte(body), key("p"), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil {
		t.Fatal(err)
	}
	total := 0
	entries := indexEntries(t, c)
	for _, k := range entries {
		total += len(k)
	}
	if total > 4<<10 {
		t.Errorf("the index of one %d-byte item is %d bytes in %d entries, want at most 4 KB", len(body), total, len(entries))
	}
	if !slices.Equal(entries, expectedEntries(t, c)) {
		t.Errorf("index entries differ from the items' terms")
	}
}

// TestIndexBuildWaitsOutAFullDisk: a build whose chunks the store refuses
// for lack of space goes on once space returns, instead of stopping until
// the next restart.
func TestIndexBuildWaitsOutAFullDisk(t *testing.T) {
	var low atomic.Bool
	var refused atomic.Int64
	free := func() (uint64, error) {
		if low.Load() {
			refused.Add(1)
			return 1 << 20, nil
		}
		return 1 << 40, nil
	}
	st, err := storage.Open(storage.Options{Dir: "/d", FS: vfs.NewMem(), Reserve: 64 << 20, FreeSpace: free})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	opts := Options{PartitionMaxRUs: 1000, NoThrottle: true, Now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	e, err := Open(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := mustContainer(t, e, 400)
	for i := range 50 {
		pk := fmt.Sprint("k", i%7)
		put(t, c, pk, fmt.Sprintf(`{"id":"%d","pk":%q,"s":"x%d"}`, i, pk, i))
	}
	e.Close()

	// Reopened with the record saying a new generation is building, on a
	// disk that is full until the build has been refused a few times.
	markIndexBuilding(t, st, "c")
	low.Store(true)
	if e, err = Open(st, opts); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	built := make(chan struct{})
	go func() { e.builders.Wait(); close(built) }()
	for refused.Load() < 3 {
		select {
		case <-built:
			t.Fatalf("the build ended after %d refusals, while the disk was full", refused.Load())
		case <-time.After(time.Millisecond):
		}
	}
	low.Store(false)
	<-built
	if c, err = e.Container("db", "c"); err != nil {
		t.Fatal(err)
	}
	if c.Info().IndexBuilding || !c.index.Load().ready {
		t.Fatal("the build did not finish once space returned")
	}
	checkIndex(t, c)
}
