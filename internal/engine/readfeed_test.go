package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/parsecdb/parsec/internal/query/exec"
)

// readAllFeed pages through a read feed (of one range, or of the whole
// container when rangeID is empty) with pages of n items, and returns the
// ids in the order read. between, when set, runs after each page.
func readAllFeed(t *testing.T, c *Container, rangeID string, n int, between func()) []string {
	t.Helper()
	var ids []string
	var after []byte
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("the read feed does not end")
		}
		f, err := c.ReadFeed(rangeID, after, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Docs {
			var x struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(d, &x); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, x.ID)
		}
		if f.Next == nil {
			return ids
		}
		after = f.Next
		if between != nil {
			between()
		}
	}
}

// TestReadFeedInsertionOrder checks read feeds against a model: a range's
// feed holds its live items in the order they were created (a replace
// keeps an item's place, a delete and a new create moves it to the end),
// whatever the page size, before and after splits; the container's feed
// holds the ranges in EPK order, each in creation order, and reads every
// item exactly once even when ranges split between its pages.
func TestReadFeedInsertionOrder(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			e, _ := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true})
			defer e.Close()
			c := mustContainer(t, e, 1000)
			type rec struct {
				epk     string
				pk      string
				created int
			}
			items := map[string]rec{}
			clock := 0
			step := func() {
				id := fmt.Sprint("i", rng.IntN(60))
				if r, ok := items[id]; ok && rng.IntN(4) == 0 {
					op, err := c.PrepareKeyed(OpDelete, id, key(r.pk), true)
					if err != nil {
						t.Fatal(err)
					}
					if res, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil || res[0].Err != nil {
						t.Fatalf("delete %s: %v %v", id, err, res)
					}
					delete(items, id)
					return
				}
				pk := fmt.Sprint("k", rng.IntN(9))
				if r, ok := items[id]; ok {
					pk = r.pk
				}
				op, err := c.PrepareWrite(OpUpsert, []byte(fmt.Sprintf(`{"id":%q,"pk":%q,"a":[1,2,3]}`, id, pk)), key(pk), true)
				if err != nil {
					t.Fatal(err)
				}
				if res, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil || res[0].Err != nil {
					t.Fatalf("upsert %s: %v %v", id, err, res)
				}
				if _, ok := items[id]; !ok {
					clock++
					items[id] = rec{epk: op.EPK, pk: pk, created: clock}
				}
			}
			want := func(lo, hi string) []string {
				var ids []string
				for id, r := range items {
					if r.epk >= lo && (hi == "" || r.epk < hi) {
						ids = append(ids, id)
					}
				}
				sort.Slice(ids, func(i, j int) bool { return items[ids[i]].created < items[ids[j]].created })
				return ids
			}
			check := func(when string) {
				var all []string
				for _, p := range c.Partitions() {
					lo, hi := p.info.Min, openMax(p.info.Max)
					w := want(lo, hi)
					all = append(all, w...)
					if got := readAllFeed(t, c, p.ID(), 1+rng.IntN(7), nil); !slices.Equal(got, w) {
						t.Fatalf("%s: range %s (parents %v):\n got %v\nwant %v", when, p.ID(), p.info.Parents, got, w)
					}
				}
				if got := readAllFeed(t, c, "", 1+rng.IntN(7), nil); !slices.Equal(got, all) {
					t.Fatalf("%s: the container's feed:\n got %v\nwant %v", when, got, all)
				}
				// A query without ORDER BY reads in the same order, over
				// one range or the container, whatever its page size; a
				// JOIN's pages may end inside a document.
				for _, p := range c.Partitions() {
					w := want(p.info.Min, openMax(p.info.Max))
					if got := queryAll(t, c, "SELECT * FROM c", QueryScope{RangeID: p.ID()}, 1+rng.IntN(7), nil); !slices.Equal(got, w) {
						t.Fatalf("%s: query of range %s:\n got %v\nwant %v", when, p.ID(), got, w)
					}
				}
				if got := queryAll(t, c, "SELECT * FROM c", QueryScope{}, 1+rng.IntN(7), nil); !slices.Equal(got, all) {
					t.Fatalf("%s: query of the container:\n got %v\nwant %v", when, got, all)
				}
				var fanned []string
				for _, id := range all {
					fanned = append(fanned, id+"/1", id+"/2", id+"/3")
				}
				if got := queryAll(t, c, "SELECT VALUE CONCAT(c.id, '/', ToString(x)) FROM c JOIN x IN c.a", QueryScope{}, 1+rng.IntN(7), nil); !slices.Equal(got, fanned) {
					t.Fatalf("%s: JOIN query of the container:\n got %v\nwant %v", when, got, fanned)
				}
			}
			split := func() {
				parts := c.Partitions()
				if _, err := c.splitForStorage(parts[rng.IntN(len(parts))]); err != nil {
					t.Fatal(err)
				}
			}
			for range 120 {
				step()
			}
			check("before splits")
			for round := range 3 {
				for range 40 {
					step()
				}
				split()
				check(fmt.Sprint("after split ", round))
			}
			// Splits between the pages of the container's feed: every item
			// still comes exactly once.
			live := want("", "")
			// splitting returns a function that splits a random range the
			// first three times it is called.
			splitting := func() func() {
				splits := 0
				return func() {
					if splits < 3 {
						split()
						splits++
					}
				}
			}
			got := readAllFeed(t, c, "", 3, splitting())
			slices.Sort(got)
			slices.Sort(live)
			if !slices.Equal(got, live) {
				t.Fatalf("the container's feed across splits:\n got %v\nwant %v", got, live)
			}
			// And so does a query's.
			got = queryAll(t, c, "SELECT * FROM c", QueryScope{}, 3, splitting())
			slices.Sort(got)
			if !slices.Equal(got, live) {
				t.Fatalf("a query across splits:\n got %v\nwant %v", got, live)
			}
			// A JOIN whose pages end inside documents, across splits: every
			// row exactly once.
			var fanned []string
			for _, id := range live {
				fanned = append(fanned, id+"/1", id+"/2", id+"/3")
			}
			got = queryAll(t, c, "SELECT VALUE CONCAT(c.id, '/', ToString(x)) FROM c JOIN x IN c.a", QueryScope{}, 2, splitting())
			slices.Sort(got)
			slices.Sort(fanned)
			if !slices.Equal(got, fanned) {
				t.Fatalf("a JOIN query across splits:\n got %v\nwant %v", got, fanned)
			}
		})
	}
}

// queryAll pages through a query with pages of n rows and returns the
// rows' ids (or the rows, for a query of strings) in the order read.
// between, when set, runs after each page.
func queryAll(t *testing.T, c *Container, text string, scope QueryScope, n int, between func()) []string {
	t.Helper()
	plan := compileQuery(t, text)
	var out []string
	var state *exec.State
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("the query does not end")
		}
		pg, err := c.Query(plan, scope, state, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range pg.Rows {
			var x struct {
				ID string `json:"id"`
			}
			var str string
			if json.Unmarshal(r, &str) == nil {
				out = append(out, str)
			} else if err := json.Unmarshal(r, &x); err != nil {
				t.Fatal(err)
			} else {
				out = append(out, x.ID)
			}
		}
		if state = pg.Next; state == nil {
			return out
		}
		if between != nil {
			between()
		}
	}
}
