package partition

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/epk"
)

func TestStorageSplitNeeded(t *testing.T) {
	f := func(bytes, limit int64, fixed, want bool) {
		t.Helper()
		if got := StorageSplitNeeded(bytes, limit, fixed); got != want {
			t.Errorf("StorageSplitNeeded(%d, %d, %v) = %v", bytes, limit, fixed, got)
		}
	}
	f(100, 50, false, true)
	f(51, 50, false, true)
	f(50, 50, false, false)
	f(0, 50, false, false)
	f(100, 50, true, false)
	f(100, 0, false, false)
	f(100, -1, false, false)
}

func TestMedianBound(t *testing.T) {
	f := func(sizes string, want string) {
		t.Helper()
		var in []Logical
		for _, s := range strings.Fields(sizes) {
			var l Logical
			e, b, _ := strings.Cut(s, "=")
			l.EPK = e
			fmt.Sscan(b, &l.Bytes)
			in = append(in, l)
		}
		bound, ok := MedianBound(in)
		got := bound
		if !ok {
			got = "-"
		}
		if got != want {
			t.Errorf("MedianBound(%s) = %s, want %s", sizes, got, want)
		}
	}
	f("", "-")
	f("10=5", "-")
	f("10=5 10=7", "-") // one EPK, two keys: one logical partition
	f("10=5 20=5", "20")
	f("10=1 20=1 30=1 40=1", "30") // 2 of 4 bytes below 30
	f("10=1 20=1 30=1", "30")      // the midpoint is crossed by 20
	f("10=10 20=1 30=1", "20")     // the first crosses it
	f("10=1 20=1 30=10", "30")     // the last crosses it: it goes alone
	f("10=3 10=3 20=1 30=5", "20") // 10's two keys merge: 6 of 12 bytes, the midpoint
	f("10=0 20=0", "20")
}

func TestThroughputSplit(t *testing.T) {
	f := func(rus, n, per, want int) {
		t.Helper()
		if got := ThroughputSplit(rus, n, per); got != want {
			t.Errorf("ThroughputSplit(%d, %d, %d) = %d, want %d", rus, n, per, got, want)
		}
	}
	f(400, 1, 10000, 1)
	f(10000, 1, 10000, 1)
	f(10001, 1, 10000, 2)
	f(20000, 1, 10000, 2)
	f(20001, 1, 10000, 4)
	f(30000, 1, 10000, 4) // never 3: every partition gets an equal share
	f(30000, 2, 10000, 2)
	f(40000, 4, 10000, 1)
	f(1_000_000_000, 1, 10000, 131072)
}

func TestThroughputSplitPanics(t *testing.T) {
	defer func() {
		if x := recover(); x == nil || !strings.Contains(fmt.Sprint(x), "BUG:") {
			t.Errorf("recovered %v, want a BUG panic", x)
		}
	}()
	ThroughputSplit(1000, 1, 0)
}

// TestEvenBounds checks that splitting each range of an even map into k
// gives the even map of k times as many ranges, for every hash domain.
func TestEvenBounds(t *testing.T) {
	for _, def := range []epk.Definition{
		hashV2,
		{Kind: epk.Hash, Paths: []string{"/pk"}},
		{Kind: epk.MultiHash, Version: 2, Paths: []string{"/a", "/b"}},
	} {
		for _, k := range []int{2, 4, 8} {
			m := Initial(def, 2)
			next := 2
			for i := range 2 {
				r := m.At(i * k) // the children of earlier ranges come first
				bounds, err := EvenBounds(def, r, k)
				if err != nil {
					t.Fatal(err)
				}
				if len(bounds) != k-1 {
					t.Fatalf("%d bounds for k = %d", len(bounds), k)
				}
				if m, _, err = m.Split(r.ID, bounds, next); err != nil {
					t.Fatal(err)
				}
				next += k
			}
			want := Initial(def, 2*k)
			for i := range want.Len() {
				if got := m.At(i); got.Min != want.At(i).Min || got.Max != want.At(i).Max {
					t.Errorf("%s v%d, k = %d: range %d is [%q, %q), want [%q, %q)", def.Kind, def.Version, k, i, got.Min, got.Max, want.At(i).Min, want.At(i).Max)
				}
			}
		}
	}
	if _, err := EvenBounds(hashV2, Range{Min: "ZZ", Max: "FF"}, 2); err == nil {
		t.Error("EvenBounds accepted a bound that is not hex")
	}
}
