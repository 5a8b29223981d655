package epk

import (
	"fmt"
	"math/big"
	"testing"
)

func TestSplitRangeAgreesWithEvenRanges(t *testing.T) {
	for _, d := range []Definition{
		{Kind: Hash, Version: 2, Paths: []string{"/a"}},
		{Kind: Hash, Version: 1, Paths: []string{"/a"}},
		{Kind: MultiHash, Version: 2, Paths: []string{"/a", "/b"}},
	} {
		for _, n := range []int{2, 3, 4, 8} {
			got, err := d.SplitRange(FullRange(), n)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(d.EvenRanges(n)) {
				t.Errorf("%s v%d: SplitRange(full, %d) = %v, EvenRanges = %v", d.Kind, d.Version, n, got, d.EvenRanges(n))
			}
		}
		// Power-of-two scale-ups keep equal shares: halves of halves are quarters.
		var quarters []Range
		for _, half := range d.EvenRanges(2) {
			q, err := d.SplitRange(half, 2)
			if err != nil {
				t.Fatal(err)
			}
			quarters = append(quarters, q...)
		}
		want := d.EvenRanges(4)
		for i := range want {
			// Bounds may differ by rounding of one unit; compare domain values.
			lo1, hi1, _ := d.domainBounds(quarters[i], d.Version != 2 && d.Kind != MultiHash)
			lo2, hi2, _ := d.domainBounds(want[i], d.Version != 2 && d.Kind != MultiHash)
			if diff(lo1, lo2) > 1 || diff(hi1, hi2) > 1 {
				t.Errorf("%s v%d: quarter %d is %v, want %v", d.Kind, d.Version, i, quarters[i], want[i])
			}
		}
	}
}

func TestSplitRangeAtStoredEPK(t *testing.T) {
	d := Definition{Kind: Hash, Version: 1, Paths: []string{"/a"}}
	e, err := d.EPK(Key{String("some key")})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := d.SplitRange(Range{Min: e, Max: MaxEPK}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if parts[0].Min != e || parts[1].Max != MaxEPK || parts[0].Max != parts[1].Min || !(parts[0].Max > e) {
		t.Fatalf("split of [%s, FF) = %v", e, parts)
	}
	if _, err := d.SplitRange(Range{Min: "ZZ", Max: "FF"}, 2); err == nil {
		t.Error("a non-hex bound was accepted")
	}
}

func diff(a, b *big.Int) int64 {
	d := new(big.Int).Sub(a, b)
	return d.Abs(d).Int64()
}
