package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketLayout(t *testing.T) {
	// Buckets tile [0, maxValue] without gaps or overlaps, and each is at
	// most 1/128 of its values wide.
	next := uint64(0)
	for i := range bucketCount {
		lo, hi := bucketRange(i)
		if lo != next {
			t.Fatalf("bucket %d starts at %d, want %d", i, lo, next)
		}
		if hi < lo {
			t.Fatalf("bucket %d: hi %d < lo %d", i, hi, lo)
		}
		if lo >= subCount && float64(hi-lo+1)/float64(lo) > 1.0/halfCount {
			t.Fatalf("bucket %d [%d, %d] is wider than 1/%d of its values", i, lo, hi, halfCount)
		}
		if bucketOf(lo) != i || bucketOf(hi) != i {
			t.Fatalf("bucket %d [%d, %d]: bucketOf gives %d and %d", i, lo, hi, bucketOf(lo), bucketOf(hi))
		}
		next = hi + 1
	}
	if next-1 != maxValue {
		t.Fatalf("the last bucket ends at %d, want maxValue %d", next-1, maxValue)
	}
	if bucketOf(math.MaxUint64) != bucketCount-1 {
		t.Fatal("values above maxValue must land in the last bucket")
	}
}

// exactQuantile is the nearest-rank quantile of sorted samples.
func exactQuantile(sorted []time.Duration, q float64) time.Duration {
	rank := int(math.Ceil(q * float64(len(sorted))))
	rank = max(rank, 1)
	return sorted[rank-1]
}

func TestQuantileAgainstSortedSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	f := func(name string, n int, gen func() time.Duration) {
		t.Helper()
		h := NewHistogram()
		samples := make([]time.Duration, n)
		var sum time.Duration
		for i := range samples {
			d := gen()
			samples[i] = d
			sum += d
			h.Record(d)
		}
		slices.Sort(samples)
		if h.Count() != uint64(n) || h.Min() != samples[0] || h.Max() != samples[n-1] {
			t.Fatalf("%s: count %d min %v max %v; want %d %v %v", name, h.Count(), h.Min(), h.Max(), n, samples[0], samples[n-1])
		}
		if want := sum / time.Duration(n); h.Mean() != want {
			t.Fatalf("%s: mean %v, want %v", name, h.Mean(), want)
		}
		for _, q := range []float64{0.0001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 1} {
			got, want := h.Quantile(q), exactQuantile(samples, q)
			// The answer lies in the exact value's bucket, so it is within a
			// bucket's width: at most 1/128 of the value, or exact below 256 ns.
			if bucketOf(uint64(got)) != bucketOf(uint64(want)) {
				t.Fatalf("%s: q%v = %v, exact %v: not in the same bucket", name, q, got, want)
			}
			if rel := math.Abs(float64(got-want)) / float64(want); want >= subCount && rel > 1.0/halfCount {
				t.Fatalf("%s: q%v = %v, exact %v: relative error %.4f", name, q, got, want, rel)
			}
		}
	}
	f("uniform 0-2ms", 100000, func() time.Duration { return time.Duration(rng.Int64N(int64(2 * time.Millisecond))) })
	f("small exact values", 10000, func() time.Duration { return time.Duration(rng.IntN(300)) })
	f("log-uniform 100ns-100s", 200000, func() time.Duration {
		return time.Duration(math.Exp(math.Log(100) + rng.Float64()*(math.Log(100e9)-math.Log(100))))
	})
	f("bimodal with outliers", 50001, func() time.Duration {
		switch x := rng.IntN(1000); {
		case x == 0:
			return time.Duration(rng.Int64N(int64(5 * time.Second)))
		case x < 300:
			return 5*time.Millisecond + time.Duration(rng.Int64N(int64(time.Millisecond)))
		}
		return 400*time.Microsecond + time.Duration(rng.Int64N(int64(100*time.Microsecond)))
	})
	f("one value", 1, func() time.Duration { return 1234567 * time.Nanosecond })
	f("constant", 1000, func() time.Duration { return 777 * time.Microsecond })

	if NewHistogram().Quantile(0.5) != 0 {
		t.Fatal("an empty histogram's quantile must be 0")
	}
	h := NewHistogram()
	h.Record(-time.Second) // clock went backwards: counted as 0
	h.Record(time.Hour)    // beyond maxValue: last bucket, exact max kept
	if h.Min() != 0 || h.Max() != time.Hour || h.Quantile(1) <= 270*time.Second {
		t.Fatalf("min %v max %v q1 %v", h.Min(), h.Max(), h.Quantile(1))
	}
}

func TestMergeSnapshotSub(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	all, a, b := NewHistogram(), NewHistogram(), NewHistogram()
	for i := range 20000 {
		d := time.Duration(rng.Int64N(int64(10 * time.Millisecond)))
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	m := NewHistogram()
	m.Merge(a)
	m.Merge(b)
	same := func(x, y *Histogram) bool {
		for i := range x.counts {
			if x.counts[i].Load() != y.counts[i].Load() {
				return false
			}
		}
		return x.Count() == y.Count() && x.Min() == y.Min() && x.Max() == y.Max() && x.Mean() == y.Mean()
	}
	if !same(m, all) {
		t.Fatal("merging two halves differs from recording everything into one")
	}

	// An interval: snapshot, record more, snapshot, subtract.
	h := NewHistogram()
	for range 1000 {
		h.Record(time.Millisecond)
	}
	prev := NewHistogram()
	h.Snapshot(prev)
	for range 10 {
		h.Record(9 * time.Millisecond)
	}
	iv := NewHistogram()
	h.Snapshot(iv)
	iv.Sub(prev)
	if iv.Count() != 10 || iv.Quantile(0.5) < 8900*time.Microsecond || iv.Mean() != 9*time.Millisecond {
		t.Fatalf("interval: count %d p50 %v mean %v", iv.Count(), iv.Quantile(0.5), iv.Mean())
	}
	h.Reset()
	if h.Count() != 0 || h.Max() != 0 || h.Min() != 0 || h.Quantile(0.99) != 0 {
		t.Fatal("Reset left values behind")
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	h := NewHistogram()
	b.ReportAllocs()
	d := time.Duration(0)
	for b.Loop() {
		d += 997
		h.Record(d % (50 * time.Millisecond))
	}
}
