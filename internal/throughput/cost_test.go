package throughput

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/charges.txt with the current charges")

// TestCharges checks testdata/charges.txt, one case a line:
//
//	op arg... -> charge   # comment
//
// with op one of read (size), write and delete (size terms), replace (oldSize
// newSize changedTerms), patch (oldSize newSize changedTerms ops), feed (items
// size) and query (docs bytes indexEntries). Sizes take a K or M suffix
// (×1024, ×1024²). A comment of the form "published V ..." additionally
// requires the charge to be within 2% of V. With -rewrite the charges are
// recomputed and the file rewritten (comments kept); review the diff.
func TestCharges(t *testing.T) {
	const path = "testdata/charges.txt"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		where := fmt.Sprintf("%s:%d", path, n+1)
		body, comment, _ := strings.Cut(line, "#")
		lhs, want, ok := strings.Cut(body, "->")
		if !ok {
			t.Fatalf("%s: no '->' in %q", where, line)
		}
		got, err := evalCharge(strings.Fields(lhs))
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		gotText := strconv.FormatFloat(got, 'f', 2, 64)
		if !*rewrite && strings.TrimSpace(want) != gotText {
			t.Errorf("%s: %s-> %s, want %s", where, lhs, gotText, strings.TrimSpace(want))
		}
		comment = strings.TrimSpace(comment)
		if f := strings.Fields(comment); len(f) >= 2 && f[0] == "published" {
			pub, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("%s: bad published value %q", where, f[1])
			}
			if math.Abs(got-pub) > 0.02*pub {
				t.Errorf("%s: %s-> %.3f, more than 2%% away from the published %v", where, lhs, got, pub)
			}
		}
		fmt.Fprintf(&out, "%-28s -> %7s", strings.Join(strings.Fields(lhs), " "), gotText)
		if comment != "" {
			out.WriteString("  # " + comment)
		}
		out.WriteString("\n")
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func evalCharge(f []string) (float64, error) {
	if len(f) == 0 {
		return 0, fmt.Errorf("empty case")
	}
	args := make([]int, len(f)-1)
	for i, s := range f[1:] {
		mult := 1
		switch {
		case strings.HasSuffix(s, "K"):
			mult, s = 1<<10, s[:len(s)-1]
		case strings.HasSuffix(s, "M"):
			mult, s = 1<<20, s[:len(s)-1]
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("bad argument %q", f[i+1])
		}
		args[i] = v * mult
	}
	want := map[string]int{"read": 1, "write": 2, "delete": 2, "replace": 3, "patch": 4, "feed": 2, "query": 3}
	if n, ok := want[f[0]]; !ok {
		return 0, fmt.Errorf("unknown op %q", f[0])
	} else if n != len(args) {
		return 0, fmt.Errorf("%s takes %d arguments, not %d", f[0], n, len(args))
	}
	a := args
	switch f[0] {
	case "read":
		return ReadCharge(a[0]), nil
	case "write":
		return WriteCharge(a[0], a[1]), nil
	case "delete":
		return DeleteCharge(a[0], a[1]), nil
	case "replace":
		return ReplaceCharge(a[0], a[1], a[2]), nil
	case "patch":
		return PatchCharge(a[0], a[1], a[2], a[3]), nil
	case "feed":
		return FeedCharge(a[0], a[1]), nil
	}
	return QueryCharge(a[0], a[1], a[2]), nil
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
