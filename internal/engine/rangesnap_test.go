package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/storage"
)

// containerState returns every key and value the container rid has in the
// range-owned families of a store (P, L, D, I, C, V, R).
func containerState(t *testing.T, db *storage.DB, rid [storage.RidLen]byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, span := range [][2][]byte{
		pair(storage.ContainerPartitionsSpan(rid)), pair(storage.LogicalSpan(rid, "", "")), pair(storage.ContainerItemsSpan(rid)),
		pair(storage.IndexGenerationsSpan(rid, 0, 0)), pair(storage.ContainerChangesSpan(rid)), pair(storage.ContainerVersionsSpan(rid)), pair(storage.ContainerRidsSpan(rid)),
	} {
		if err := db.Iterate(span[0], span[1], func(k, v []byte) (bool, error) {
			out[string(k)] = string(v)
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func pair(lo, hi []byte) [2][]byte { return [2][]byte{lo, hi} }

// TestRangeSnapshots checks range snapshots against the store they were
// taken from: after random writes (with the version log on), deletes and
// two splits, the snapshots of the container's ranges, read in chunks of
// random sizes and written into an empty store, hold exactly the
// container's state, each key in one snapshot only; an engine opened on
// that store (with the catalog copied) serves the same items, feeds and
// indexed queries. Clearing a range and installing its snapshot again
// gives the same state.
func TestRangeSnapshots(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	e, st := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true})
	defer e.Close()
	c := mustContainer(t, e, 1000)
	write := func(n int) {
		for range n {
			id, pk := fmt.Sprint("i", rng.IntN(80)), fmt.Sprint("k", rng.IntN(12))
			kind := OpUpsert
			if rng.IntN(5) == 0 {
				kind = OpDelete
			}
			var op Op
			var err error
			if kind == OpDelete {
				op, err = c.PrepareKeyed(OpDelete, id, key(pk), true)
			} else {
				op, err = c.PrepareWrite(OpUpsert, []byte(fmt.Sprintf(`{"id":%q,"pk":%q,"n":%d,"tags":["a","b"]}`, id, pk, rng.IntN(10))), key(pk), true)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Execute(&Command{Ops: []Op{op}, Versions: true}, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(300)
	for range 2 {
		parts := c.Partitions()
		if _, err := c.splitForStorage(parts[rng.IntN(len(parts))]); err != nil {
			t.Fatal(err)
		}
		write(150)
	}
	want := containerState(t, st, c.rid)

	dst, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	// Every snapshot is taken before the writes that follow, which none of
	// them may hold.
	var snaps []*RangeSnapshot
	for _, p := range c.Partitions() {
		s, err := c.SnapshotRange(p.ID())
		if err != nil {
			t.Fatal(err)
		}
		if s.LSN != p.LSN() {
			t.Fatalf("range %s: snapshot LSN %d, partition LSN %d", p.ID(), s.LSN, p.LSN())
		}
		snaps = append(snaps, s)
	}
	write(60)
	chunks := map[string][][]byte{} // by range id
	pairs := 0
	for _, s := range snaps {
		b := dst.NewBatch()
		for {
			chunk, err := s.Next(1 + rng.IntN(2000))
			if err != nil {
				t.Fatal(err)
			}
			if chunk == nil {
				break
			}
			chunks[s.Range.ID] = append(chunks[s.Range.ID], chunk)
			pairs += chunkPairs(t, chunk)
			if err := ApplyRangeChunk(b, chunk); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	got := containerState(t, dst, c.rid)
	// The applied indexes are each replica's own: an install writes its
	// own (InstallSnapshot), a snapshot carries none.
	for k := range want {
		if strings.HasPrefix(k, string(storage.PartitionKey(c.rid, ""))) && strings.HasSuffix(k, "\x00a") {
			delete(want, k)
		}
	}
	if len(got) != len(want) || pairs != len(want) {
		t.Fatalf("the snapshots hold %d keys (%d distinct), the container %d", pairs, len(got), len(want))
	}
	sameState := func(when string) {
		t.Helper()
		got := containerState(t, dst, c.rid)
		if len(got) != len(want) {
			t.Fatalf("%s: %d keys, want %d", when, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("%s: key %x holds %q, want %q", when, k, got[k], v)
			}
		}
	}
	sameState("the snapshots installed")

	// Clearing a range removes exactly its snapshot's keys; installing the
	// snapshot again restores the state.
	for _, r := range c.Partitions() {
		b := dst.NewBatch()
		if err := ClearRange(dst, b, c.rid, r.Range()); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		left := containerState(t, dst, c.rid)
		n := 0
		for _, chunk := range chunks[r.ID()] {
			if err := eachChunkKey(chunk, func(k, _ []byte) error {
				if _, ok := left[string(k)]; ok {
					t.Fatalf("range %s cleared: key %x is still there", r.ID(), k)
				}
				n++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if len(left)+n != len(want) {
			t.Fatalf("range %s cleared: %d keys left of %d, its snapshot has %d", r.ID(), len(left), len(want), n)
		}
		b = dst.NewBatch()
		for _, chunk := range chunks[r.ID()] {
			if err := ApplyRangeChunk(b, chunk); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		sameState("range " + r.ID() + " cleared and installed again")
	}

	// An engine on the installed store, with the catalog copied, serves
	// the items of the snapshots, in its feeds and in queries the index
	// answers.
	b := dst.NewBatch()
	if err := st.Iterate([]byte{'M'}, []byte{'N'}, func(k, v []byte) (bool, error) { return true, b.Set(k, v) }); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	e2, err := Open(dst, Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	c2, err := e2.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]float64{} // "id/pk" → n, of every item in the snapshots
	for _, p := range c2.Partitions() {
		for _, s := range snaps {
			if s.Range.ID == p.ID() && p.LSN() != s.LSN {
				t.Fatalf("range %s: LSN %d after install, %d in the snapshot", p.ID(), p.LSN(), s.LSN)
			}
		}
		var ids []string
		lo, hi := storage.ItemSpan(c.rid, p.Range().Min, openMax(p.Range().Max))
		if err := dst.Iterate(lo, hi, func(k, v []byte) (bool, error) {
			var d struct {
				ID, PK string
				N      float64
			}
			_, _, doc, err := decodeItem(k, v)
			if err == nil {
				err = json.Unmarshal(doc, &d)
			}
			ids = append(ids, d.ID)
			all[d.ID+"/"+d.PK] = d.N
			return err == nil, err
		}); err != nil {
			t.Fatal(err)
		}
		feed := readAllFeed(t, c2, p.ID(), 7, nil)
		slices.Sort(ids)
		slices.Sort(feed)
		if len(ids) == 0 || !slices.Equal(feed, ids) {
			t.Fatalf("range %s: the read feed has %v, the items are %v", p.ID(), feed, ids)
		}
	}
	for _, q := range []struct {
		text string
		keep func(n float64) bool
	}{
		{"SELECT VALUE CONCAT(c.id, '/', c.pk) FROM c WHERE c.n = 3", func(n float64) bool { return n == 3 }},
		{"SELECT VALUE CONCAT(c.id, '/', c.pk) FROM c WHERE c.n > 6", func(n float64) bool { return n > 6 }},
		{"SELECT VALUE CONCAT(c.id, '/', c.pk) FROM c", func(float64) bool { return true }},
	} {
		var want []string
		for id, n := range all {
			if q.keep(n) {
				want = append(want, id)
			}
		}
		got := queryAll(t, c2, q.text, QueryScope{}, 9, nil)
		slices.Sort(want)
		slices.Sort(got)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("%s: got %v, want %v", q.text, got, want)
		}
	}
}

// chunkPairs counts the keys of a chunk.
func chunkPairs(t *testing.T, chunk []byte) int {
	t.Helper()
	n := 0
	if err := eachChunkKey(chunk, func(_, _ []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
