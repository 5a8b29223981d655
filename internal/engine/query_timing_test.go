package engine

// Query benchmarks: the same queries against the same 100,000 items (about
// 1 KB each, 4 physical partitions, in-memory store), once in a container
// with the default indexing policy and once in one with
// {"indexingMode":"none"}, where every query scans.
//
// Intended command (loading takes 10-30 s once per process on 2 cores; a
// scan reads all 100,000 items per operation, about 0.4 s, so use a fixed,
// small count; the whole run takes about a minute):
//
//	go test -run '^$' -bench BenchmarkQuery -benchtime 20x ./internal/engine/
//
// Besides ns/op, each benchmark reports docs/op (documents read, the sum of
// the pages' DocsRead) and RU/op (the sum of the pages' charges).

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/query/parser"
	"github.com/parsecdb/parsec/internal/storage"
)

const (
	queryBenchItems    = 100_000
	queryBenchKeys     = 1000  // distinct partition keys
	queryBenchCats     = 10000 // distinct cat values: 10 items each
	queryBenchPad      = 900   // characters of random padding per item
	queryBenchPageSize = 100
	queryBenchChunk    = 500 // operations per Execute while loading
)

// queryFixture is the loaded engine, shared by every run of BenchmarkQuery
// in the process.
type queryFixture struct {
	e       *Engine
	st      *storage.DB
	indexed *Container
	scan    *Container
	// load is the time loading took in all; loadIndexed and loadScan are
	// the containers' shares (the indexed one also writes index entries).
	load, loadIndexed, loadScan time.Duration
}

var loadQueryFixture = sync.OnceValues(func() (*queryFixture, error) {
	st, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		return nil, err
	}
	// 40,000 RU/s at 10,000 per partition: 4 partitions.
	e, err := Open(st, Options{PartitionMaxRUs: 10000, NoThrottle: true, Now: time.Now})
	if err != nil {
		return nil, err
	}
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		return nil, err
	}
	f := &queryFixture{e: e, st: st}
	for _, spec := range []struct {
		id     string
		policy json.RawMessage
		c      **Container
	}{
		{"indexed", nil, &f.indexed},
		{"scan", json.RawMessage(`{"indexingMode":"none"}`), &f.scan},
	} {
		cs := ContainerSpec{ID: spec.id, PartitionKey: hashDef("/pk"), IndexingPolicy: spec.policy}
		if _, err := e.CreateContainer("db", cs, Throughput{RUs: 40000}); err != nil {
			return nil, err
		}
		if *spec.c, err = e.Container("db", spec.id); err != nil {
			return nil, err
		}
		if n := len((*spec.c).Partitions()); n != 4 {
			return nil, fmt.Errorf("container %s has %d partitions, want 4", spec.id, n)
		}
	}
	start := time.Now()
	bodies := queryBenchBodies()
	for _, l := range []struct {
		c *Container
		d *time.Duration
	}{{f.indexed, &f.loadIndexed}, {f.scan, &f.loadScan}} {
		t := time.Now()
		if err := loadQueryItems(l.c, bodies); err != nil {
			return nil, err
		}
		*l.d = time.Since(t)
	}
	e.builders.Wait()
	f.load = time.Since(start)
	if ix := f.indexed.index.Load(); !ix.ready {
		return nil, fmt.Errorf("the indexed container's index is not ready after loading")
	}
	return f, nil
})

// queryBenchBodies generates the items: id n, pk p<n mod 1000>, cat
// c<n mod 10000>, n and ts n, and random padding.
func queryBenchBodies() [][]byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
	rng := rand.New(rand.NewSource(1))
	pad := make([]byte, queryBenchPad)
	bodies := make([][]byte, queryBenchItems)
	for n := range bodies {
		for i := 0; i < len(pad); i += 8 {
			r := rng.Uint64()
			for j := i; j < i+8 && j < len(pad); j++ {
				pad[j] = alphabet[r&63]
				r >>= 6
			}
		}
		bodies[n] = fmt.Appendf(nil, `{"id":"%d","pk":"p%d","cat":"c%d","n":%d,"ts":%d,"pad":"%s"}`,
			n, n%queryBenchKeys, n%queryBenchCats, n, n, pad)
	}
	return bodies
}

// loadQueryItems creates the items in c: one writer per partition, each
// sending commands of queryBenchChunk creates.
func loadQueryItems(c *Container, bodies [][]byte) error {
	byPartition := map[*Partition][]Op{}
	for n, body := range bodies {
		op, err := c.PrepareWrite(OpCreate, body, key(fmt.Sprint("p", n%queryBenchKeys)), true)
		if err != nil {
			return err
		}
		p := c.PartitionFor(op.EPK)
		byPartition[p] = append(byPartition[p], op)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(byPartition))
	for _, ops := range byPartition {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for chunk := range slices.Chunk(ops, queryBenchChunk) {
				res, _, err := c.Execute(&Command{Ops: chunk}, "")
				if err != nil {
					errs <- err
					return
				}
				for _, r := range res {
					if !r.Created {
						errs <- fmt.Errorf("create: not created: %v", r.Err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

// queryResult is a query run to its end.
type queryResult struct {
	rows    [][]byte
	docs    int
	charge  float64
	indexed bool // some page used the index
}

// runBenchQuery runs text over the whole container with pages of
// queryBenchPageSize.
func runBenchQuery(c *Container, text string) (queryResult, error) {
	var r queryResult
	q, err := parser.Parse(text)
	if err != nil {
		return r, err
	}
	plan, err := CompileQuery(q, map[string]eval.Value{})
	if err != nil {
		return r, err
	}
	var cont *exec.State
	for {
		page, err := c.Query(plan, QueryScope{}, cont, queryBenchPageSize)
		if err != nil {
			return r, fmt.Errorf("%s: %w", text, err)
		}
		r.rows = append(r.rows, page.Rows...)
		r.docs += page.DocsRead
		r.charge += page.Charge
		r.indexed = r.indexed || len(page.Index.Utilized) > 0
		if cont = page.Next; cont == nil {
			return r, nil
		}
	}
}

// queryBenchCase is one benchmarked query shape: the query of iteration i
// and how many rows it returns.
type queryBenchCase struct {
	name    string
	text    func(i int) string
	rows    int
	index   bool // the indexed container must answer it from the index
	ordered bool // rows in a defined order
	// cold: forget before each query which partitions have an entry on
	// every path for every item, as a write to each partition would, so
	// that an ascending ORDER BY counts the path's entries again.
	cold bool
}

var queryBenchCases = []queryBenchCase{
	{"equality", func(i int) string {
		return fmt.Sprintf(`SELECT * FROM c WHERE c.cat = "c%d"`, (1234+i*7919)%queryBenchCats)
	}, queryBenchItems / queryBenchCats, true, false, false},
	{"range", func(i int) string {
		x := (41000 + i*7919) % (queryBenchItems - 100)
		return fmt.Sprintf(`SELECT * FROM c WHERE c.n >= %d AND c.n < %d`, x, x+100)
	}, 100, true, false, false},
	{"orderby-top10", func(int) string {
		return `SELECT TOP 10 * FROM c ORDER BY c.ts DESC`
	}, 10, true, true, false},
	{"orderby-top10-asc", func(int) string {
		return `SELECT TOP 10 * FROM c ORDER BY c.ts`
	}, 10, true, true, false},
	{"orderby-top10-asc-cold", func(int) string {
		return `SELECT TOP 10 * FROM c ORDER BY c.ts`
	}, 10, true, true, true},
}

// userRows returns rows without their system properties (which differ
// between the two containers), as canonical JSON.
func userRows(rows [][]byte) ([]string, error) {
	out := make([]string, len(rows))
	for i, r := range rows {
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil {
			return nil, err
		}
		for k := range m {
			if strings.HasPrefix(k, "_") {
				delete(m, k)
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		out[i] = string(b)
	}
	return out, nil
}

// verifyQueryFixture checks that both containers return the same rows for
// the first query of every case, the expected number of them, and that
// the indexed container uses its index where it should and the other
// never does.
func verifyQueryFixture(f *queryFixture) error {
	for _, bc := range queryBenchCases {
		text := bc.text(0)
		ir, err := runBenchQuery(f.indexed, text)
		if err != nil {
			return err
		}
		sr, err := runBenchQuery(f.scan, text)
		if err != nil {
			return err
		}
		if bc.index && !ir.indexed || sr.indexed {
			return fmt.Errorf("%s: index used: indexed container %v, scan container %v", text, ir.indexed, sr.indexed)
		}
		if len(ir.rows) != bc.rows {
			return fmt.Errorf("%s: %d rows, want %d", text, len(ir.rows), bc.rows)
		}
		a, err := userRows(ir.rows)
		if err != nil {
			return err
		}
		b, err := userRows(sr.rows)
		if err != nil {
			return err
		}
		if !bc.ordered {
			slices.Sort(a)
			slices.Sort(b)
		}
		if !slices.Equal(a, b) {
			return fmt.Errorf("%s: the containers disagree\nindexed: %v\n   scan: %v", text, a, b)
		}
	}
	// The top 10 by ts are the last 10 items, newest first.
	r, err := runBenchQuery(f.indexed, queryBenchCases[2].text(0))
	if err != nil {
		return err
	}
	var first struct{ ID string }
	if err := json.Unmarshal(r.rows[0], &first); err != nil || first.ID != fmt.Sprint(queryBenchItems-1) {
		return fmt.Errorf("ORDER BY c.ts DESC starts with item %q (%v), want %d", first.ID, err, queryBenchItems-1)
	}
	return nil
}

var queryLoadLogged sync.Once

// BenchmarkQuery runs each query shape to completion (all pages) per
// operation, against the indexed container and against the scanning one.
func BenchmarkQuery(b *testing.B) {
	f, err := loadQueryFixture()
	if err != nil {
		b.Fatal(err)
	}
	if err := verifyQueryFixture(f); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		c    *Container
	}{{"indexed", f.indexed}, {"scan", f.scan}} {
		b.Run(mode.name, func(b *testing.B) {
			for _, bc := range queryBenchCases {
				b.Run(bc.name, func(b *testing.B) {
					var docs int
					var charge float64
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if bc.cold {
							mode.c.complete.reset()
						}
						r, err := runBenchQuery(mode.c, bc.text(i))
						if err != nil {
							b.Fatal(err)
						}
						if len(r.rows) != bc.rows {
							b.Fatalf("%s: %d rows, want %d", bc.text(i), len(r.rows), bc.rows)
						}
						docs += r.docs
						charge += r.charge
					}
					b.ReportMetric(float64(docs)/float64(b.N), "docs/op")
					queryLoadLogged.Do(func() {
						// Logged by a leaf benchmark, whose log is printed without -v.
						b.Logf("loaded %d items of ~1 KB into each of 2 containers (4 partitions each) in %v: indexed %v, scan %v",
							queryBenchItems, f.load.Round(time.Millisecond), f.loadIndexed.Round(time.Millisecond), f.loadScan.Round(time.Millisecond))
					})
					b.ReportMetric(charge/float64(b.N), "RU/op")
				})
			}
		})
	}
}
