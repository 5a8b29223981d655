package throughput

import (
	"math"
	"testing"
)

func TestChargesMatchPublishedFigures(t *testing.T) {
	f := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 0.005 {
			t.Errorf("%s = %.3f RU, want %.3f", name, got, want)
		}
	}
	f("read 1 KB", ReadCharge(1024), 1.00)
	f("read 100 B", ReadCharge(100), 1.00)
	f("read 4 KB", ReadCharge(4096), 1.14)
	f("read 64 KB", ReadCharge(64<<10), 4.76)
	f("read 1 MB", ReadCharge(1<<20), 145.9)
	f("write 1 KB", WriteCharge(1024), 4.95)
	f("write 16 KB", WriteCharge(16<<10), 9.52)
	f("write 1 MB", WriteCharge(1<<20), 625)
	f("read 3 KB (between 2 and 4)", ReadCharge(3<<10), 1.09)
}

func TestChargesGrowWithSize(t *testing.T) {
	prevR, prevW := 0.0, 0.0
	for size := 0; size <= 2<<20; size += 777 {
		r, w := ReadCharge(size), WriteCharge(size)
		if r < prevR || w < prevW {
			t.Fatalf("charge shrank at %d bytes: read %.3f (was %.3f), write %.3f (was %.3f)", size, r, prevR, w, prevW)
		}
		if r <= 0 || w <= r {
			t.Fatalf("at %d bytes: read %.3f, write %.3f; want 0 < read < write", size, r, w)
		}
		prevR, prevW = r, w
	}
}

func TestFeedCharge(t *testing.T) {
	if c := FeedCharge(0, 0); c != 1 {
		t.Errorf("empty page = %v, want 1", c)
	}
	if a, b := FeedCharge(10, 10<<10), FeedCharge(100, 100<<10); !(b > a && a >= 1) {
		t.Errorf("feed charge does not grow with items: 10 → %v, 100 → %v", a, b)
	}
}
