package vector

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// The score conventions are the service's: VectorDistance "returns the
// similarity score between two specified vectors"; cosine has values from
// -1 (least similar) to +1 (most similar), dotproduct from -inf (least
// similar) to +inf (most similar), euclidean from 0 (most similar) to +inf
// (least similar). Source:
// https://learn.microsoft.com/en-us/azure/cosmos-db/nosql/query/vectordistance
func TestScoreConventions(t *testing.T) {
	f := func(fn DistanceFunction, a, b []float32, want float32) {
		t.Helper()
		if got, err := Score(fn, a, b); err != nil || !approxEqual(got, want) {
			t.Errorf("Score(%s, %v, %v) = %v, %v, want %v", fn, a, b, got, err, want)
		}
	}
	f(Cosine, []float32{1, 0}, []float32{0, 1}, 0)
	f(Cosine, []float32{1, 2}, []float32{2, 4}, 1)
	f(Cosine, []float32{1, 2}, []float32{-1, -2}, -1)
	f(Cosine, []float32{0, 0}, []float32{1, 2}, 0)
	f(DotProduct, []float32{1, 2, 3}, []float32{4, -5, 6}, 4-10+18)
	f(Euclidean, []float32{0, 0}, []float32{3, 4}, 5)
	f(Euclidean, []float32{1, 1, 1}, []float32{1, 1, 1}, 0)

	for _, bad := range [][2][]float32{{{1, 2}, {1, 2, 3}}, {{}, {}}} {
		if _, err := Score(Cosine, bad[0], bad[1]); !errors.Is(err, ErrInvalidVector) {
			t.Errorf("Score(%v, %v): %v, want ErrInvalidVector", bad[0], bad[1], err)
		}
	}
	if !Better(Cosine, 0.9, 0.1) || Better(Cosine, 0.1, 0.9) {
		t.Error("cosine: a higher score must rank first")
	}
	if !Better(DotProduct, 5, -3) {
		t.Error("dotproduct: a higher score must rank first")
	}
	if !Better(Euclidean, 0.1, 0.9) || Better(Euclidean, 0.9, 0.1) {
		t.Error("euclidean: a lower score must rank first")
	}
}

// The unrolled loops agree with a plain float64 computation for every
// length around the unrolling width.
func TestKernelsMatchPlainLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 40; n++ {
		a, b := make([]float32, n), make([]float32, n)
		var d, l float64
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			d += float64(a[i]) * float64(b[i])
			l += (float64(a[i]) - float64(b[i])) * (float64(a[i]) - float64(b[i]))
		}
		if got := dot(a, b); math.Abs(float64(got)-d) > 1e-4*(1+math.Abs(d)) {
			t.Errorf("n=%d: dot = %v, want %v", n, got, d)
		}
		if got := l2sq(a, b); math.Abs(float64(got)-l) > 1e-4*(1+l) {
			t.Errorf("n=%d: l2sq = %v, want %v", n, got, l)
		}
	}
}

func TestFromFloat64(t *testing.T) {
	ok := func(vals []float64, dt DataType, want []float32) {
		t.Helper()
		got, err := FromFloat64(vals, len(vals), dt)
		if err != nil {
			t.Fatalf("FromFloat64(%v, %s): %v", vals, dt, err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("FromFloat64(%v, %s)[%d] = %v, want %v", vals, dt, i, got[i], want[i])
			}
		}
	}
	bad := func(vals []float64, dims int, dt DataType) {
		t.Helper()
		if _, err := FromFloat64(vals, dims, dt); !errors.Is(err, ErrInvalidVector) {
			t.Errorf("FromFloat64(%v, %d, %s) = %v, want ErrInvalidVector", vals, dims, dt, err)
		}
	}
	ok([]float64{0.5, -2, 1e30}, Float32, []float32{0.5, -2, 1e30})
	// Half precision: 1/3 rounds to 0x3555 = 0.333251953125; 65504 is the
	// largest half; 2049 rounds to even (2048); 2^-24 is the smallest
	// subnormal.
	ok([]float64{1.0 / 3, 65504, 2049, math.Ldexp(1, -24), -1.5}, Float16,
		[]float32{0.333251953125, 65504, 2048, float32(math.Ldexp(1, -24)), -1.5})
	ok([]float64{-128, 0, 127}, Int8, []float32{-128, 0, 127})
	ok([]float64{0, 255}, Uint8, []float32{0, 255})
	bad([]float64{1, 2}, 3, Float32)
	bad(nil, 0, Float32)
	bad([]float64{math.NaN()}, 1, Float32)
	bad([]float64{math.Inf(1)}, 1, Float32)
	bad([]float64{1e39}, 1, Float32)
	bad([]float64{65520}, 1, Float16)
	bad([]float64{128}, 1, Int8)
	bad([]float64{-129}, 1, Int8)
	bad([]float64{1.5}, 1, Int8)
	bad([]float64{-1}, 1, Uint8)
	bad([]float64{256}, 1, Uint8)
	bad(make([]float64, MaxDimensions+1), 0, Float32)
}

func TestParseNames(t *testing.T) {
	for i, n := range []string{"float32", "Float16", "INT8", "uint8"} {
		if dt, err := ParseDataType(n); err != nil || dt != DataType(i) {
			t.Errorf("ParseDataType(%q) = %v, %v", n, dt, err)
		}
	}
	for i, n := range []string{"cosine", "DotProduct", "euclidean"} {
		if f, err := ParseDistanceFunction(n); err != nil || f != DistanceFunction(i) {
			t.Errorf("ParseDistanceFunction(%q) = %v, %v", n, f, err)
		}
	}
	for i, n := range []string{"flat", "quantizedFlat", "diskann"} {
		if x, err := ParseIndexType(n); err != nil || x != IndexType(i) {
			t.Errorf("ParseIndexType(%q) = %v, %v", n, x, err)
		}
	}
	for _, n := range []string{"", "float64", "hamming", "hnsw"} {
		_, e1 := ParseDataType(n)
		_, e2 := ParseDistanceFunction(n)
		_, e3 := ParseIndexType(n)
		if !errors.Is(e1, ErrInvalidPolicy) || !errors.Is(e2, ErrInvalidPolicy) || !errors.Is(e3, ErrInvalidPolicy) {
			t.Errorf("%q: want ErrInvalidPolicy from every parser, got %v, %v, %v", n, e1, e2, e3)
		}
	}
}

func TestCollectorMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, f := range []DistanceFunction{Cosine, DotProduct, Euclidean} {
		c := NewCollector(f, 7)
		var all []Result
		for i := range 200 {
			s := float32(rng.IntN(50)) / 7 // ties on purpose
			c.Add(uint64(i), s)
			all = append(all, Result{uint64(i), s})
		}
		sortResults(f, all)
		got := c.Results()
		if len(got) != 7 {
			t.Fatalf("%s: %d results", f, len(got))
		}
		for i := range got {
			if got[i] != all[i] {
				t.Errorf("%s: result %d = %v, want %v", f, i, got[i], all[i])
			}
		}
	}
}
