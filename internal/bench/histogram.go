package bench

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Histogram records latencies in log-linear buckets, HdrHistogram style:
// values below 2^subBits nanoseconds get one bucket each; above that, every
// power of two is split into 2^(subBits-1) equal buckets, so a bucket is at
// most 1/128 (0.8%) of the values it holds wide. Values are nanoseconds; those
// of maxValue or more land in the last bucket (about 275 s), and the exact
// maximum is kept apart.
//
// Bucket layout, for S = 2^subBits and shift = bits.Len64(v) - subBits:
//
//	v < S:       index v                                  (exact)
//	v >= S:      index S + (shift-1)*S/2 + (v>>shift - S/2)
//
// Record is safe to call from one goroutine while others call Snapshot
// (counters are atomic, so a live progress line can read a worker's
// histogram without stopping it); two goroutines must not Record into the
// same Histogram. The zero value is not usable: call NewHistogram.
type Histogram struct {
	counts []atomic.Uint64
	total  atomic.Uint64
	sum    atomic.Uint64 // nanoseconds
	min    atomic.Uint64 // math.MaxUint64 when empty
	max    atomic.Uint64
}

const (
	subBits     = 8
	subCount    = 1 << subBits // S
	halfCount   = subCount / 2
	maxShift    = 30                            // buckets up to 2^(subBits+maxShift) ns ≈ 275 s
	bucketCount = subCount + maxShift*halfCount // 4096
	maxValue    = uint64(1)<<(subBits+maxShift) - 1
)

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	h := &Histogram{counts: make([]atomic.Uint64, bucketCount)}
	h.min.Store(math.MaxUint64)
	return h
}

// bucketOf returns the bucket index of v (nanoseconds).
func bucketOf(v uint64) int {
	if v > maxValue {
		v = maxValue
	}
	if v < subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits
	return subCount + (shift-1)*halfCount + int(v>>shift) - halfCount
}

// bucketRange returns the smallest and largest value of bucket i.
func bucketRange(i int) (lo, hi uint64) {
	if i < subCount {
		return uint64(i), uint64(i)
	}
	j := i - subCount
	shift := j/halfCount + 1
	m := uint64(j%halfCount + halfCount)
	lo = m << shift
	return lo, lo + (uint64(1) << shift) - 1
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	v := uint64(0)
	if d > 0 {
		v = uint64(d)
	}
	h.counts[bucketOf(v)].Add(1)
	h.total.Add(1)
	h.sum.Add(v)
	// Only the recording goroutine writes min and max, so load-then-store is
	// enough; readers may see a value one record old.
	if v < h.min.Load() {
		h.min.Store(v)
	}
	if v > h.max.Load() {
		h.max.Store(v)
	}
}

// Count is the number of recorded values.
func (h *Histogram) Count() uint64 { return h.total.Load() }

// Max is the largest recorded value (0 when empty).
func (h *Histogram) Max() time.Duration { return time.Duration(h.max.Load()) }

// Min is the smallest recorded value (0 when empty).
func (h *Histogram) Min() time.Duration {
	m := h.min.Load()
	if m == math.MaxUint64 {
		return 0
	}
	return time.Duration(m)
}

// Mean is the average of the recorded values (0 when empty).
func (h *Histogram) Mean() time.Duration {
	n := h.total.Load()
	if n == 0 {
		return 0
	}
	return time.Duration(h.sum.Load() / n)
}

// Merge adds the counts of o into h. o may be recorded into meanwhile (the
// merge then holds some of the concurrent records and is still consistent:
// its total is the sum of the counts it took); h must not be.
func (h *Histogram) Merge(o *Histogram) {
	var n uint64
	for i := range o.counts {
		if c := o.counts[i].Load(); c != 0 {
			h.counts[i].Add(c)
			n += c
		}
	}
	h.total.Add(n)
	h.sum.Add(o.sum.Load())
	if m := o.min.Load(); m < h.min.Load() {
		h.min.Store(m)
	}
	if m := o.max.Load(); m > h.max.Load() {
		h.max.Store(m)
	}
}

// Snapshot copies h into dst (which must come from NewHistogram), while h may
// still be recorded into: each counter is read atomically, so the copy is at
// most a few records behind and never torn.
func (h *Histogram) Snapshot(dst *Histogram) {
	for i := range h.counts {
		dst.counts[i].Store(h.counts[i].Load())
	}
	dst.total.Store(h.total.Load())
	dst.sum.Store(h.sum.Load())
	dst.min.Store(h.min.Load())
	dst.max.Store(h.max.Load())
}

// Sub subtracts the counts of an earlier snapshot prev of the same
// histogram, leaving in h what was recorded in between. Min and max are kept
// from h (they cannot be subtracted); Quantile stays within the surviving
// buckets.
func (h *Histogram) Sub(prev *Histogram) {
	var n uint64
	for i := range h.counts {
		c := h.counts[i].Load() - prev.counts[i].Load()
		h.counts[i].Store(c)
		n += c
	}
	h.total.Store(n)
	h.sum.Store(h.sum.Load() - prev.sum.Load())
}

// Reset empties h.
func (h *Histogram) Reset() {
	for i := range h.counts {
		h.counts[i].Store(0)
	}
	h.total.Store(0)
	h.sum.Store(0)
	h.min.Store(math.MaxUint64)
	h.max.Store(0)
}

// Quantile returns the value at quantile q (0 < q <= 1) by the nearest-rank
// rule: the smallest recorded value v such that at least q of all values are
// <= v. The answer is the midpoint of the bucket that holds that value,
// clamped to [Min, Max], so it is within half a bucket (0.4%) of the exact
// answer. It returns 0 when h is empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	n := h.total.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		if cum >= rank {
			lo, hi := bucketRange(i)
			v := lo + (hi-lo)/2
			if mn := h.min.Load(); v < mn {
				v = mn
			}
			if mx := h.max.Load(); v > mx && mx >= lo {
				v = mx
			}
			return time.Duration(v)
		}
	}
	return h.Max()
}
