package throughput

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestCharges runs testdata/charges.txt, a datadriven file with one command
// per charge function:
//
//	read size=<n>                          ReadCharge
//	write size=<n> terms=<n>               WriteCharge
//	delete size=<n> terms=<n>              DeleteCharge
//	replace old=<n> new=<n> changed=<n>    ReplaceCharge
//	patch old=<n> new=<n> changed=<n> ops=<n>  PatchCharge
//	feed items=<n> size=<n>                FeedCharge
//	query docs=<n> bytes=<n> entries=<n>   QueryCharge
//
// whose output is the charge with two decimals. Sizes take a K or M suffix
// (×1024, ×1024²). An argument published=V additionally requires the charge
// to be within 2% of V, Cosmos DB's published figure. Regenerate with
// -rewrite and review the diff.
func TestCharges(t *testing.T) {
	datadriven.RunTest(t, "testdata/charges.txt", func(t *testing.T, d *datadriven.TestData) string {
		h, ok := chargeCommands[d.Cmd]
		if !ok {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		args := make([]int, len(h.args))
		for i, name := range h.args {
			args[i] = sizeArg(t, d, name)
		}
		for _, a := range d.CmdArgs {
			if a.Key != "published" && !slices.Contains(h.args, a.Key) {
				d.Fatalf(t, "%s takes %v (and published), not %s", d.Cmd, h.args, a.Key)
			}
		}
		got := h.charge(args)
		if d.HasArg("published") {
			var pub float64
			d.ScanArgs(t, "published", &pub)
			if math.Abs(got-pub) > 0.02*pub {
				t.Errorf("%s: %s: %.3f RU, more than 2%% away from the published %v", d.Pos, d.Cmd, got, pub)
			}
		}
		return strconv.FormatFloat(got, 'f', 2, 64)
	})
}

// chargeCommands are the commands of testdata/charges.txt: the arguments
// each takes, in order, and the charge function they are passed to.
var chargeCommands = map[string]struct {
	args   []string
	charge func(a []int) float64
}{
	"read":    {[]string{"size"}, func(a []int) float64 { return ReadCharge(a[0]) }},
	"write":   {[]string{"size", "terms"}, func(a []int) float64 { return WriteCharge(a[0], a[1]) }},
	"delete":  {[]string{"size", "terms"}, func(a []int) float64 { return DeleteCharge(a[0], a[1]) }},
	"replace": {[]string{"old", "new", "changed"}, func(a []int) float64 { return ReplaceCharge(a[0], a[1], a[2]) }},
	"patch":   {[]string{"old", "new", "changed", "ops"}, func(a []int) float64 { return PatchCharge(a[0], a[1], a[2], a[3]) }},
	"feed":    {[]string{"items", "size"}, func(a []int) float64 { return FeedCharge(a[0], a[1]) }},
	"query":   {[]string{"docs", "bytes", "entries"}, func(a []int) float64 { return QueryCharge(a[0], a[1], a[2]) }},
}

// sizeArg returns the required argument name as a number, with an optional
// K or M suffix (×1024, ×1024²).
func sizeArg(t *testing.T, d *datadriven.TestData, name string) int {
	t.Helper()
	var s string
	d.ScanArgs(t, name, &s)
	mult := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		d.Fatalf(t, "bad %s %q", name, s)
	}
	return v * mult
}

func TestChargesGrowWithSizeAndTerms(t *testing.T) {
	prevR, prevW := 0.0, 0.0
	for size := 0; size <= 3<<20; size += 777 {
		r, w := ReadCharge(size), WriteCharge(size, 0)
		if r < prevR || w < prevW {
			t.Fatalf("charge shrank at %d bytes: read %.3f (was %.3f), write %.3f (was %.3f)", size, r, prevR, w, prevW)
		}
		if r <= 0 || w <= r {
			t.Fatalf("at %d bytes: read %.3f, write %.3f; want 0 < read < write", size, r, w)
		}
		if w10 := WriteCharge(size, 10); math.Abs(w10-w-10*IndexTermCharge) > 1e-9 {
			t.Fatalf("at %d bytes: 10 terms add %.3f RU, want %.1f", size, w10-w, 10*IndexTermCharge)
		}
		if d := DeleteCharge(size, 7); d != WriteCharge(size, 7) {
			t.Fatalf("at %d bytes: delete %.3f != write %.3f", size, d, WriteCharge(size, 7))
		}
		prevR, prevW = r, w
	}
	if WriteCharge(1024, -5) != WriteCharge(1024, 0) {
		t.Error("negative terms are not treated as 0")
	}
}

func TestFeedAndQueryCharges(t *testing.T) {
	if c := FeedCharge(0, 0); c != 1 {
		t.Errorf("empty page = %v, want 1", c)
	}
	if a, b := FeedCharge(10, 10<<10), FeedCharge(100, 100<<10); !(b > a && a >= 1) {
		t.Errorf("feed charge does not grow with items: 10 → %v, 100 → %v", a, b)
	}
	if c := QueryCharge(0, 0, 0); c != QueryBaseCharge {
		t.Errorf("empty query = %v, want %v", c, QueryBaseCharge)
	}
	// A query pays for what it reads.
	base := QueryCharge(10, 10<<10, 10)
	for _, c := range []float64{QueryCharge(11, 10<<10, 10), QueryCharge(10, 11<<10, 10), QueryCharge(10, 10<<10, 11)} {
		if c <= base {
			t.Errorf("more work did not cost more: %v <= %v", c, base)
		}
	}
}
