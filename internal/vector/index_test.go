package vector

import (
	"errors"
	"math/rand/v2"
	"testing"
)

var allFunctions = []DistanceFunction{Cosine, DotProduct, Euclidean}

// Flat is exact: the same ids and scores as the brute-force model, with
// and without a filter, after replacements and removals.
func TestFlatMatchesBruteForce(t *testing.T) {
	for _, f := range allFunctions {
		mx := newMixture(11, 24, 5, 0.8)
		fl, err := NewFlat(f, 24)
		if err != nil {
			t.Fatal(err)
		}
		model := map[uint64][]float32{}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 1500 {
			id := uint64(rng.IntN(800))
			switch rng.IntN(4) {
			case 0:
				if got, want := fl.Remove(id), model[id] != nil; got != want {
					t.Fatalf("Remove(%d) = %v, want %v", id, got, want)
				}
				delete(model, id)
			default:
				v := mx.next()
				if err := fl.Add(id, v); err != nil {
					t.Fatal(err)
				}
				model[id] = v
			}
		}
		if fl.Len() != len(model) {
			t.Fatalf("Len = %d, want %d", fl.Len(), len(model))
		}
		odd := func(id uint64) bool { return id%2 == 1 }
		for range 30 {
			q := mx.next()
			for _, filter := range []Filter{nil, odd} {
				got, st, err := fl.Search(q, 10, filter)
				if err != nil {
					t.Fatal(err)
				}
				want := bruteForce(f, model, q, 10, filter)
				if len(got) != len(want) {
					t.Fatalf("%s: %d results, want %d", f, len(got), len(want))
				}
				for i := range got {
					if got[i].ID != want[i].ID || !approxEqual(got[i].Score, want[i].Score) {
						t.Fatalf("%s: result %d = %v, want %v", f, i, got[i], want[i])
					}
				}
				if filter == nil && st.Compared != len(model) {
					t.Errorf("%s: compared %d, want %d", f, st.Compared, len(model))
				}
			}
		}
	}
}

func TestBadVectorsAreErrors(t *testing.T) {
	fl, _ := NewFlat(Cosine, 3)
	if err := fl.Add(1, []float32{1, 2}); !errors.Is(err, ErrInvalidVector) {
		t.Errorf("Add with 2 dims: %v", err)
	}
	if _, _, err := fl.Search([]float32{1, 2, 3, 4}, 3, nil); !errors.Is(err, ErrInvalidVector) {
		t.Errorf("Search with 4 dims: %v", err)
	}
	g, _ := NewGraph(NewMemStore(), GraphConfig{Dimensions: 3})
	if err := g.Insert(1, []float32{1, 2}); !errors.Is(err, ErrInvalidVector) {
		t.Errorf("Insert with 2 dims: %v", err)
	}
	if _, _, err := g.Search([]float32{1, 2, 3}, 3, QueryOptions{SearchListSizeMultiplier: 500}, nil); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("Search with multiplier 500: %v", err)
	}
	for _, c := range []GraphConfig{{}, {Dimensions: 5000}, {Dimensions: 3, MaxDegree: 1000}, {Dimensions: 3, Alpha: 3}, {Dimensions: 3, SearchListSize: 501}} {
		if _, err := NewGraph(NewMemStore(), c); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("NewGraph(%+v) = %v, want ErrInvalidPolicy", c, err)
		}
	}
	if _, err := TrainPQ(Cosine, nil, 4, 1); !errors.Is(err, ErrInvalidVector) {
		t.Errorf("TrainPQ on nothing: %v", err)
	}
	if _, err := TrainPQ(Cosine, [][]float32{{1, 2}}, 3, 1); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("TrainPQ with 3 bytes for 2 dims: %v", err)
	}
}

// recallSet is a data set with its exact answers.
type recallSet struct {
	f       DistanceFunction
	dims    int
	vecs    [][]float32
	queries [][]float32
	flat    *Flat
}

func newRecallSet(t testing.TB, f DistanceFunction, seed uint64, n, dims, queries int) *recallSet {
	mx := newMixture(seed, dims, 40, 1.0)
	rs := &recallSet{f: f, dims: dims, vecs: mx.vectors(n), queries: mx.vectors(queries)}
	var err error
	if rs.flat, err = NewFlat(f, dims); err != nil {
		t.Fatal(err)
	}
	for i, v := range rs.vecs {
		if err := rs.flat.Add(uint64(i), v); err != nil {
			t.Fatal(err)
		}
	}
	return rs
}

// measure returns the mean recall@k of search against flat over the
// queries, with filter.
func (rs *recallSet) measure(t testing.TB, k int, filter Filter, search func(q []float32) ([]Result, error)) float64 {
	t.Helper()
	total := 0.0
	for _, q := range rs.queries {
		want, _, err := rs.flat.Search(q, k, filter)
		if err != nil {
			t.Fatal(err)
		}
		got, err := search(q)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range got {
			if filter != nil && !filter(r.ID) {
				t.Fatalf("result %d (id %d) does not pass the filter", i, r.ID)
			}
			if i > 0 && Better(rs.f, r.Score, got[i-1].Score) {
				t.Fatalf("results out of order: %v", got)
			}
			if e, _ := Score(rs.f, q, rs.vecs[r.ID]); !approxEqual(r.Score, e) {
				t.Fatalf("id %d: score %v, exact %v", r.ID, r.Score, e)
			}
		}
		total += recall(got, want)
	}
	return total / float64(len(rs.queries))
}

// functionsToTest is every distance function, or only cosine (the
// service's default) with -short.
func functionsToTest() []DistanceFunction {
	if testing.Short() {
		return []DistanceFunction{Cosine}
	}
	return allFunctions
}

func TestQuantizedRecall(t *testing.T) {
	for _, f := range functionsToTest() {
		n, dims := 3000, 64
		if f != Cosine {
			n, dims = 1500, 32
		}
		rs := newRecallSet(t, f, 21, n, dims, 200)
		pq, err := TrainPQ(f, rs.vecs, DefaultQuantizationByteSize(dims), 7)
		if err != nil {
			t.Fatal(err)
		}
		qz := NewQuantized(pq)
		for i, v := range rs.vecs {
			if err := qz.Add(uint64(i), v); err != nil {
				t.Fatal(err)
			}
		}
		r := rs.measure(t, 10, nil, func(q []float32) ([]Result, error) {
			res, _, err := qz.Search(q, 10, QueryOptions{}, nil)
			return res, err
		})
		t.Logf("%s: quantizedFlat recall@10 = %.4f", f, r)
		if r < 0.95 {
			t.Errorf("%s: quantizedFlat recall@10 = %.4f, want ≥ 0.95", f, r)
		}
		// A filter is applied exactly to the scan.
		third := func(id uint64) bool { return id%3 == 0 }
		r = rs.measure(t, 10, third, func(q []float32) ([]Result, error) {
			res, _, err := qz.Search(q, 10, QueryOptions{}, third)
			return res, err
		})
		if r < 0.95 {
			t.Errorf("%s: filtered quantizedFlat recall@10 = %.4f, want ≥ 0.95", f, r)
		}
	}
}

// smallGraph is the configuration of tests that exercise the graph's
// mechanics (churn, split, rebuild) rather than its default parameters:
// a smaller R and L build faster.
var smallGraph = GraphConfig{MaxDegree: 32, SearchListSize: 64}

func buildGraph(t testing.TB, rs *recallSet, store NodeStore, cfg GraphConfig) *Graph {
	t.Helper()
	cfg.Distance, cfg.Dimensions = rs.f, rs.dims
	g, err := NewGraph(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range rs.vecs {
		if err := g.Insert(uint64(i), v); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func graphSearch(g *Graph, opts QueryOptions, filter Filter) func(q []float32) ([]Result, error) {
	return func(q []float32) ([]Result, error) {
		res, _, err := g.Search(q, 10, opts, filter)
		return res, err
	}
}

// The specification's small recall check: 3,000 vectors of 64 dimensions,
// the default parameters, cosine; the other distance functions on 1,500
// vectors of 32 dimensions (not with -short).
func TestGraphRecall(t *testing.T) {
	for _, f := range functionsToTest() {
		n, dims := 3000, 64
		if f != Cosine {
			n, dims = 1500, 32
		}
		rs := newRecallSet(t, f, 31, n, dims, 200)
		g := buildGraph(t, rs, NewMemStore(), GraphConfig{})
		r := rs.measure(t, 10, nil, graphSearch(g, QueryOptions{}, nil))
		t.Logf("%s: diskANN recall@10 = %.4f", f, r)
		if r < 0.95 {
			t.Errorf("%s: diskANN recall@10 = %.4f, want ≥ 0.95", f, r)
		}
		if f != Cosine {
			continue
		}
		// A selective filter (5% of the ids): the search widens its list
		// until it has k results.
		sel := func(id uint64) bool { return id%20 == 7 }
		r = rs.measure(t, 10, sel, graphSearch(g, QueryOptions{}, sel))
		t.Logf("%s: filtered (5%%) diskANN recall@10 = %.4f", f, r)
		if r < 0.95 {
			t.Errorf("%s: filtered diskANN recall@10 = %.4f, want ≥ 0.95", f, r)
		}
		// A larger search list never answers worse on average.
		r1 := rs.measure(t, 10, nil, graphSearch(g, QueryOptions{SearchListSizeMultiplier: 1}, nil))
		r20 := rs.measure(t, 10, nil, graphSearch(g, QueryOptions{SearchListSizeMultiplier: 20}, nil))
		t.Logf("multiplier 1: %.4f, 20: %.4f", r1, r20)
		if r20 < r1 {
			t.Errorf("recall with multiplier 20 (%.4f) below multiplier 1 (%.4f)", r20, r1)
		}
	}
}
