package vector

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v >= 0 {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestRecallFull is the specification's recall check, run only with
// PARSEC_VECTOR_RECALL=1 (it takes minutes to hours): N vectors of DIMS
// dimensions from a seeded low-rank Gaussian mixture (cosine), QUERIES
// queries from the same mixture, recall@10 of diskANN and quantizedFlat
// against exact flat search, and latency for several multipliers. Sizes:
// PARSEC_VECTOR_N (100000), PARSEC_VECTOR_DIMS (768),
// PARSEC_VECTOR_QUERIES (1000). It prints a Markdown table for
// BENCHMARKS.md.
func TestRecallFull(t *testing.T) {
	if os.Getenv("PARSEC_VECTOR_RECALL") != "1" {
		t.Skip("set PARSEC_VECTOR_RECALL=1 to run the full recall check")
	}
	n := envInt("PARSEC_VECTOR_N", 100000)
	dims := envInt("PARSEC_VECTOR_DIMS", 768)
	nq := envInt("PARSEC_VECTOR_QUERIES", 1000)
	const k = 10
	f := Cosine
	mx := newLowRankMixture(2026, dims, envInt("PARSEC_VECTOR_CLUSTERS", 100), envInt("PARSEC_VECTOR_RANK", 32), 1.0, envFloat("PARSEC_VECTOR_NOISE", 0.2))
	vecs := mx.vectors(n)
	queries := mx.vectors(nq)
	logf := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		t.Log(line)
		fmt.Fprintln(os.Stderr, line)
	}
	logf("data: %d vectors × %d dims (cosine), %d clusters of rank %d, noise %.2f, %d queries, GOMAXPROCS %d",
		n, dims, len(mx.centres), len(mx.bases[0]), mx.noise, nq, runtime.GOMAXPROCS(0))

	flat, _ := NewFlat(f, dims)
	for i, v := range vecs {
		if err := flat.Add(uint64(i), v); err != nil {
			t.Fatal(err)
		}
	}
	var rows []string
	row := func(index, param string, recall float64, lat []time.Duration, extra string) {
		slices.Sort(lat)
		p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		r := fmt.Sprintf("| %s | %s | %.4f | %.2f | %.2f | %.2f | %.0f | %s |", index, param, recall,
			float64(sum.Microseconds())/float64(len(lat))/1000, float64(p(0.5).Microseconds())/1000,
			float64(p(0.99).Microseconds())/1000, float64(len(lat))/sum.Seconds(), extra)
		rows = append(rows, r)
		logf("%s", r)
	}
	exact := make([][]Result, nq)
	var lat []time.Duration
	for i, q := range queries {
		t0 := time.Now()
		res, _, err := flat.Search(q, k, nil)
		lat = append(lat, time.Since(t0))
		if err != nil {
			t.Fatal(err)
		}
		exact[i] = res
	}
	row("flat (exact scan)", "-", 1, lat, fmt.Sprintf("%d compared/query", n))

	if os.Getenv("PARSEC_VECTOR_ONLY") != "diskann" {
		quantizedRows(t, logf, row, f, vecs, queries, exact, flat)
	}
	graphRows(t, logf, row, f, vecs, queries, exact)
	fmt.Fprintln(os.Stderr, "| index | parameter | recall@10 | mean ms | p50 ms | p99 ms | queries/s | notes |")
	fmt.Fprintln(os.Stderr, "|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintln(os.Stderr, r)
	}
}

type rowFunc func(index, param string, recall float64, lat []time.Duration, extra string)

func quantizedRows(t *testing.T, logf func(string, ...any), row rowFunc, f DistanceFunction, vecs, queries [][]float32, exact [][]Result, flat *Flat) {
	const k = 10
	n, dims, nq := len(vecs), len(vecs[0]), len(queries)
	var lat []time.Duration
	t0 := time.Now()
	m := DefaultQuantizationByteSize(dims)
	pq, err := TrainPQ(f, vecs, m, 1)
	if err != nil {
		t.Fatal(err)
	}
	train := time.Since(t0)
	t0 = time.Now()
	codes := make([]byte, n*m)
	for i, v := range vecs {
		c, _ := pq.Encode(v)
		copy(codes[i*m:], c)
	}
	enc := time.Since(t0)
	logf("quantizedFlat: %d bytes/vector, trained in %v, encoded in %v", m, train.Round(time.Millisecond), enc.Round(time.Millisecond))
	scan := func(yield func(uint64, []byte) bool) error {
		for i := 0; i < n; i++ {
			if !yield(uint64(i), codes[i*m:(i+1)*m]) {
				return nil
			}
		}
		return nil
	}
	fetch := func(id uint64) ([]float32, bool, error) { v, ok := flat.vector(id); return v, ok, nil }
	for _, mult := range []int{1, 5, 10} {
		lat = lat[:0]
		total := 0.0
		for i, q := range queries {
			t0 := time.Now()
			res, _, err := QuantizedSearch(pq, q, k, QueryOptions{QuantizedVectorListMultiplier: mult}, nil, scan, fetch)
			lat = append(lat, time.Since(t0))
			if err != nil {
				t.Fatal(err)
			}
			total += recall(res, exact[i])
		}
		r := total / float64(nq)
		row("quantizedFlat", fmt.Sprintf("quantizedVectorListMultiplier %d", mult), r, lat, fmt.Sprintf("%d B codes", m))
		if mult == DefaultListMultiplier && r < 0.95 {
			t.Errorf("quantizedFlat recall@10 = %.4f, want ≥ 0.95", r)
		}
	}
}

func graphRows(t *testing.T, logf func(string, ...any), row rowFunc, f DistanceFunction, vecs, queries [][]float32, exact [][]Result) {
	const k = 10
	dims, nq := len(vecs[0]), len(queries)
	var lat []time.Duration
	t0 := time.Now()
	st := NewMemStore()
	g, err := Rebuild(st, GraphConfig{Distance: f, Dimensions: dims, MaxDegree: envInt("PARSEC_VECTOR_R", 0)}, func(yield func(uint64, []float32) bool) error {
		for i, v := range vecs {
			if i > 0 && i%10000 == 0 {
				logf("diskANN: %d inserted in %v", i, time.Since(t0).Round(time.Second))
			}
			if !yield(uint64(i), v) {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	build := time.Since(t0)
	logf("diskANN: built in %v (R %d, L %d, α %.1f)", build.Round(time.Second), g.cfg.MaxDegree, g.cfg.SearchListSize, g.cfg.Alpha)
	for _, mult := range []int{1, 2, 5, 10, 20} {
		lat = lat[:0]
		total := 0.0
		visited := 0
		for i, q := range queries {
			t0 := time.Now()
			res, s, err := g.Search(q, k, QueryOptions{SearchListSizeMultiplier: mult}, nil)
			lat = append(lat, time.Since(t0))
			if err != nil {
				t.Fatal(err)
			}
			visited += s.Compared
			total += recall(res, exact[i])
		}
		r := total / float64(nq)
		row("diskANN", fmt.Sprintf("searchListSizeMultiplier %d", mult), r, lat, fmt.Sprintf("%d compared/query", visited/nq))
		if mult == DefaultListMultiplier && r < 0.95 {
			t.Errorf("diskANN recall@10 = %.4f, want ≥ 0.95", r)
		}
	}
}
