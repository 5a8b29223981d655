package throughput

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkTopKAdd is a Zipf(1.1) stream over 100,000 keys: most events
// are for keys the sketch does not track, which evict a counter.
func BenchmarkTopKAdd(b *testing.B) {
	keys, weights, _ := stream(1, 1<<16, 100000, 1.1)
	tk := NewTopK(10)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tk.Add(keys[i&(1<<16-1)], weights[i&(1<<16-1)])
		i++
	}
}

// BenchmarkTopKAddTracked is the hot path: a key already tracked.
func BenchmarkTopKAddTracked(b *testing.B) {
	tk := NewTopK(10)
	keys := make([]string, 160)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
		tk.Add(keys[i], 1)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tk.Add(keys[i%len(keys)], 1.5)
		i++
	}
}

// BenchmarkBucketAdmitCharge is one request: admit, then charge.
func BenchmarkBucketAdmitCharge(b *testing.B) {
	bk := NewBucket(1e6, t0)
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(10 * time.Microsecond)
		if ok, _ := bk.Admit(now); ok {
			bk.Charge(now, 6.95)
		}
	}
}

func BenchmarkWriteCharge(b *testing.B) {
	s := 0.0
	for i := 0; b.Loop(); i++ {
		s += WriteCharge(i&(1<<20-1), 20)
	}
	_ = s
}
