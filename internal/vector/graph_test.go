package vector

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// encodedStore keeps nodes as their encoded bytes, as the engine does, so
// that graphs in these tests go through EncodeNode and DecodeNode.
type encodedStore struct {
	m        map[uint64][]byte
	entry    uint64
	hasEntry bool
	failGet  bool
}

func newEncodedStore() *encodedStore { return &encodedStore{m: map[uint64][]byte{}} }

func (s *encodedStore) Get(id uint64) (Node, bool, error) {
	if s.failGet {
		return Node{}, false, errors.New("disk on fire")
	}
	b, ok := s.m[id]
	if !ok {
		return Node{}, false, nil
	}
	n, err := DecodeNode(b)
	return n, err == nil, err
}

func (s *encodedStore) Put(id uint64, n Node) error {
	b, err := EncodeNode(n)
	if err != nil {
		return err
	}
	s.m[id] = b
	return nil
}

func (s *encodedStore) Delete(id uint64) error       { delete(s.m, id); return nil }
func (s *encodedStore) Entry() (uint64, bool, error) { return s.entry, s.hasEntry, nil }
func (s *encodedStore) SetEntry(id uint64) error     { s.entry, s.hasEntry = id, true; return nil }
func (s *encodedStore) ClearEntry() error            { s.hasEntry = false; return nil }

// Churn: deletes, re-inserts and replacements keep recall, never return a
// deleted id, and leave no node for it; the store holds encoded nodes.
func TestGraphChurn(t *testing.T) {
	rs := newRecallSet(t, Euclidean, 41, 1200, 16, 150)
	st := newEncodedStore()
	g := buildGraph(t, rs, st, smallGraph)
	mx := newMixture(41, 16, 40, 1.0) // same centres as the set
	rng := rand.New(rand.NewPCG(9, 9))
	deleted := map[uint64]bool{}
	for range 2 {
		// Delete 200 random live ids, insert 200 new vectors, replace 100.
		for range 200 {
			id := uint64(rng.IntN(len(rs.vecs)))
			if deleted[id] {
				continue
			}
			if err := g.Delete(id); err != nil {
				t.Fatal(err)
			}
			rs.flat.Remove(id)
			deleted[id] = true
		}
		for range 200 {
			id := uint64(len(rs.vecs))
			v := mx.next()
			rs.vecs = append(rs.vecs, v)
			if err := g.Insert(id, v); err != nil {
				t.Fatal(err)
			}
			if err := rs.flat.Add(id, v); err != nil {
				t.Fatal(err)
			}
		}
		for range 100 {
			id := uint64(rng.IntN(len(rs.vecs)))
			if deleted[id] {
				continue
			}
			v := mx.next()
			rs.vecs[id] = v
			if err := g.Insert(id, v); err != nil {
				t.Fatal(err)
			}
			if err := rs.flat.Add(id, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(st.m) != rs.flat.Len() {
		t.Fatalf("store holds %d nodes, want %d", len(st.m), rs.flat.Len())
	}
	for id := range deleted {
		if _, ok := st.m[id]; ok {
			t.Fatalf("deleted id %d still has a node", id)
		}
	}
	r := rs.measure(t, 10, nil, func(q []float32) ([]Result, error) {
		res, _, err := g.Search(q, 10, QueryOptions{}, nil)
		for _, x := range res {
			if deleted[x.ID] {
				t.Fatalf("deleted id %d returned", x.ID)
			}
		}
		return res, err
	})
	t.Logf("recall@10 after churn = %.4f", r)
	if r < 0.95 {
		t.Errorf("recall@10 after churn = %.4f, want ≥ 0.95", r)
	}
}

func TestGraphDeleteEverything(t *testing.T) {
	st := NewMemStore()
	g, _ := NewGraph(st, GraphConfig{Distance: Cosine, Dimensions: 8, MaxDegree: 4})
	mx := newMixture(5, 8, 3, 0.5)
	for i := range 60 {
		if err := g.Insert(uint64(i), mx.next()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 60 {
		if err := g.Delete(uint64(i)); err != nil {
			t.Fatal(err)
		}
		// Every remaining node stays reachable through repaired edges or
		// is at least returned by a wide search.
		if i < 59 {
			res, _, err := g.Search(mx.next(), 60, QueryOptions{SearchListSizeMultiplier: 10}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 59-i {
				t.Fatalf("after %d deletes: %d results, want %d", i+1, len(res), 59-i)
			}
		}
	}
	if _, ok, _ := st.Entry(); ok || st.Len() != 0 {
		t.Fatalf("empty graph: entry %v, %d nodes", ok, st.Len())
	}
	if res, _, err := g.Search(mx.next(), 5, QueryOptions{}, nil); err != nil || len(res) != 0 {
		t.Fatalf("search of an empty graph: %v, %v", res, err)
	}
	if err := g.Insert(99, mx.next()); err != nil {
		t.Fatal(err)
	}
	if res, _, _ := g.Search(mx.next(), 5, QueryOptions{}, nil); len(res) != 1 || res[0].ID != 99 {
		t.Fatalf("after re-insert: %v", res)
	}
}

func TestGraphStoreErrors(t *testing.T) {
	st := newEncodedStore()
	g, _ := NewGraph(st, GraphConfig{Distance: Euclidean, Dimensions: 4})
	for i := range 20 {
		if err := g.Insert(uint64(i), []float32{float32(i), 1, 2, 3}); err != nil {
			t.Fatal(err)
		}
	}
	st.failGet = true
	if _, _, err := g.Search([]float32{1, 1, 1, 1}, 3, QueryOptions{}, nil); err == nil {
		t.Error("a store error must fail the search")
	}
	if err := g.Insert(100, []float32{1, 1, 1, 1}); err == nil {
		t.Error("a store error must fail the insert")
	}
	st.failGet = false
	// A corrupt node is an error wrapping ErrCorrupt, never a panic.
	for id := range st.m {
		st.m[id][3] ^= 0xff
	}
	if _, _, err := g.Search([]float32{1, 1, 1, 1}, 3, QueryOptions{}, nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("search over corrupt nodes: %v, want ErrCorrupt", err)
	}
}

func TestRebuild(t *testing.T) {
	rs := newRecallSet(t, Cosine, 51, 1200, 32, 100)
	st := NewMemStore()
	g, err := Rebuild(st, GraphConfig{Distance: Cosine, Dimensions: 32, MaxDegree: smallGraph.MaxDegree, SearchListSize: smallGraph.SearchListSize}, func(yield func(uint64, []float32) bool) error {
		for i, v := range rs.vecs {
			if !yield(uint64(i), v) {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Len() != len(rs.vecs) {
		t.Fatalf("%d nodes, want %d", st.Len(), len(rs.vecs))
	}
	r := rs.measure(t, 10, nil, graphSearch(g, QueryOptions{}, nil))
	if r < 0.95 {
		t.Errorf("recall@10 after Rebuild = %.4f, want ≥ 0.95", r)
	}
	_, err = Rebuild(NewMemStore(), GraphConfig{Distance: Cosine, Dimensions: 32}, func(func(uint64, []float32) bool) error {
		return errors.New("read failed")
	})
	if err == nil {
		t.Error("a failing source must fail Rebuild")
	}
}

// After a split each child's graph holds exactly its items, has no edge
// to the other child, and answers for its items as well as flat does over
// them (and as the parent did with a filter on them).
func TestSplit(t *testing.T) {
	rs := newRecallSet(t, Euclidean, 61, 2000, 32, 150)
	parent := buildGraph(t, rs, NewMemStore(), smallGraph)
	child := func(id uint64) int { return int((id * 0x9e3779b97f4a7c15) >> 63) } // a hash split
	stores := []*MemStore{NewMemStore(), NewMemStore()}
	var kids []*Graph
	for _, s := range stores {
		g, _ := NewGraph(s, parent.Config())
		kids = append(kids, g)
	}
	ids := func(yield func(uint64) bool) error {
		for i := range rs.vecs {
			if !yield(uint64(i)) {
				return nil
			}
		}
		return nil
	}
	if err := Split(parent, ids, child, kids); err != nil {
		t.Fatal(err)
	}
	for c, g := range kids {
		mine := func(id uint64) bool { return child(id) == c }
		n := 0
		for _, id := range stores[c].IDs() {
			if !mine(id) {
				t.Fatalf("child %d holds id %d of the other child", c, id)
			}
			nd, _, _ := stores[c].Get(id)
			for _, nb := range nd.Neighbors {
				if !mine(nb) {
					t.Fatalf("child %d: edge %d→%d crosses the split", c, id, nb)
				}
			}
			n++
		}
		want := 0
		for i := range rs.vecs {
			if mine(uint64(i)) {
				want++
			}
		}
		if n != want {
			t.Fatalf("child %d holds %d nodes, want %d", c, n, want)
		}
		reached := map[uint64]bool{}
		e, _, _ := stores[c].Entry()
		if err := g.reach(e, reached); err != nil {
			t.Fatal(err)
		}
		if len(reached) != n {
			t.Errorf("child %d: %d of %d nodes reachable from the entry", c, len(reached), n)
		}
		rc := rs.measure(t, 10, mine, graphSearch(g, QueryOptions{}, nil))
		rp := rs.measure(t, 10, mine, graphSearch(parent, QueryOptions{}, mine))
		t.Logf("child %d: recall@10 %.4f over its %d items (parent filtered to them: %.4f)", c, rc, n, rp)
		if rc < 0.95 {
			t.Errorf("child %d: recall@10 = %.4f, want ≥ 0.95", c, rc)
		}
	}
	bad := func(id uint64) int { return 2 }
	if err := Split(parent, ids, bad, kids); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("a child index out of range: %v", err)
	}
}
