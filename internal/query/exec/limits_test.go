package exec

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/query/eval"
)

// runPagesLimits is runPages within limits, passing the state through its
// binary form; lim is made afresh for every page.
func runPagesLimits(p *Plan, parts [][]doc, pageSize int, lim func() *Limits) ([]eval.Value, int, error) {
	return runPagesWithin(p, func() []Source { return sources(parts, true) }, pageSize, true, lim)
}

// TestSyntheticPagingPageBytes runs the synthetic queries with pages cut by
// their size (ORDER BY and DISTINCT partitions then keep only what a page
// can take) and requires exactly the rows of an unlimited run.
func TestSyntheticPagingPageBytes(t *testing.T) {
	docs := synthetic(7, 300)
	r := rand.New(rand.NewPCG(5, 8))
	for _, text := range syntheticQueries {
		p, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := runPages(p, [][]doc{docs}, 0, false, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range [][3]int{{1, 0, 10}, {3, 25, 200}, {5, 0, 1000}, {2, 9, 1}} {
			k, page, bytes := run[0], run[1], run[2]
			got, pages, err := runPagesLimits(p, randomSplit(r, docs, k), page, func() *Limits { return &Limits{MaxPageBytes: bytes} })
			if err != nil {
				t.Fatalf("%s (%d partitions, page %d, %d bytes): %v", text, k, page, bytes, err)
			}
			if !equalRows(got, want) {
				t.Fatalf("%s (%d partitions, page %d, %d bytes): %d rows differ from %d", text, k, page, bytes, len(got), len(want))
			}
			if p.Shape() != Aggregate && len(want) > 0 && pages < 2 && bytes < 20 {
				t.Fatalf("%s: %d rows in one page of at most %d bytes", text, len(want), bytes)
			}
		}
	}
}

// TestPageTime: a check that reports ErrPageTime every 3rd call ends
// streaming pages early, and paging on gives every row exactly once; other
// shapes fail with ErrPageTime.
func TestPageTime(t *testing.T) {
	docs := synthetic(7, 1000)
	for _, text := range syntheticQueries {
		p, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := runPages(p, [][]doc{docs}, 0, false, true)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		lim := func() *Limits {
			return &Limits{Check: func() error {
				if calls++; calls%3 == 0 {
					return ErrPageTime
				}
				return nil
			}}
		}
		got, pages, err := runPagesLimits(p, split(docs, 3), 0, lim)
		if p.Shape() != Streaming {
			if !errors.Is(err, ErrPageTime) {
				t.Fatalf("%s: %v, want ErrPageTime", text, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if !equalRows(got, want) || len(want) > 100 && pages < 3 {
			t.Fatalf("%s: %d rows in %d pages, want %d rows in several pages", text, len(got), pages, len(want))
		}
	}
}

// TestBudgets: steps and bytes built are counted, deterministically, and
// refused with ErrBudget past their bounds.
func TestBudgets(t *testing.T) {
	docs := synthetic(7, 50)
	f := func(text string, lim Limits, wantErr string) {
		t.Helper()
		p, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = ExecLimits(p, sources([][]doc{docs}, true), nil, 0, &lim)
		switch {
		case wantErr == "" && err != nil:
			t.Fatalf("%s: %v", text, err)
		case wantErr != "" && (!errors.Is(err, eval.ErrBudget) || !strings.Contains(err.Error(), wantErr)):
			t.Fatalf("%s: %v, want a budget error with %q", text, err, wantErr)
		}
	}
	f(`SELECT VALUE c.id FROM c`, Limits{MaxSteps: 1000}, "")
	f(`SELECT VALUE c.id FROM c JOIN a IN c.t JOIN b IN c.t JOIN d IN c.t`, Limits{MaxSteps: 300, What: "the test"}, "the test exceeded its evaluation budget of 300 steps")
	f(`SELECT VALUE CONCAT(c.id, c.id) FROM c`, Limits{MaxBytes: 100}, "")
	f(`SELECT VALUE REPLICATE(c.id, 100) FROM c`, Limits{MaxBytes: 100}, "a single value of 600 bytes; its memory budget is 100 bytes")
	f(`SELECT VALUE ARRAY(SELECT VALUE CONCAT(c.id, 'x') FROM x IN c.t) FROM c`, Limits{MaxBytes: 300}, "memory budget of 300 bytes")
	f(`SELECT c.id, COUNT(1) FROM c GROUP BY c.id`, Limits{Held: NewHeld(1000, nil)}, "1000 bytes of groups")
	// The values MAKELIST holds count, in one group as in many.
	f(`SELECT VALUE MAKELIST(REPLICATE(c.id, 50)) FROM c`, Limits{Held: NewHeld(1000, nil)}, "1000 bytes of groups")
	f(`SELECT VALUE MAKESET(c.id) FROM c`, Limits{Held: NewHeld(1000, nil)}, "")
}

// TestHeldAcrossPartitions: the partition runs of a page count what they
// hold in one account, so that a page over many partitions is bounded as
// one over a single partition, and a wider account (the server's) sees
// every change and may refuse more.
func TestHeldAcrossPartitions(t *testing.T) {
	docs := synthetic(7, 200)
	for _, text := range []string{
		`SELECT c.id, COUNT(1) FROM c GROUP BY c.id`,
		`SELECT DISTINCT VALUE c.id FROM c`,
		`SELECT VALUE c.id FROM c ORDER BY c.id`,
	} {
		p, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		parts := split(docs, 4)
		run := func(parts [][]doc, h *Held) error {
			_, _, err := ExecLimits(p, sources(parts, true), nil, 0, &Limits{MaxPageBytes: 1 << 20, Held: h})
			return err
		}
		// What the page and each partition alone hold at their peak.
		var peak, most int64
		page := NewHeld(0, nil)
		page.grow = func(n int64) error {
			peak = max(peak, page.Bytes()+n)
			return nil
		}
		if err := run(parts, page); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		for _, part := range parts {
			h := NewHeld(0, nil)
			var alone int64
			h.grow = func(n int64) error {
				alone = max(alone, h.Bytes()+n)
				return nil
			}
			if err := run([][]doc{part}, h); err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			most = max(most, alone)
		}
		if most == 0 || peak < 2*most {
			t.Fatalf("%s: the page held %d bytes at its peak, its partitions at most %d each", text, peak, most)
		}
		// A bound every partition fits alone refuses the page.
		err = run(parts, NewHeld(most+most/2, nil))
		if !errors.Is(err, eval.ErrBudget) || !strings.Contains(err.Error(), fmt.Sprintf("memory budget of %d bytes", most+most/2)) {
			t.Fatalf("%s: %v, want the page's memory budget named", text, err)
		}
		// A wider account's refusal ends the run as is, and what it was
		// told adds up to what the page holds.
		errFull := errors.New("full")
		var wide int64
		h := NewHeld(0, func(n int64) error {
			if n > 0 && wide+n > most {
				return errFull
			}
			wide += n
			return nil
		})
		if err := run(parts, h); !errors.Is(err, errFull) {
			t.Fatalf("%s: %v, want the wider account's error", text, err)
		}
		if wide != h.Bytes() || wide > most {
			t.Fatalf("%s: the wider account holds %d bytes, the page %d (bound %d)", text, wide, h.Bytes(), most)
		}
	}
}
