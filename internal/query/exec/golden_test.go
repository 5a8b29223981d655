package exec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/golden"
)

// goldenCase is one case of testdata/queries.txt.
type goldenCase struct {
	line   int
	query  string
	params string
	anyOrd bool   // compare as a multiset even with ORDER BY
	expect string // JSON array of rows
	err    string // expected error substring
}

// parseGolden reads a corpus file (format: package golden).
func parseGolden(t *testing.T, path string) []goldenCase {
	t.Helper()
	cs, err := golden.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := make([]goldenCase, len(cs))
	for i, c := range cs {
		cases[i] = goldenCase{line: c.Line, query: c.Query, params: c.Params, anyOrd: c.AnyOrder, expect: c.Expect, err: c.Err}
	}
	return cases
}

// variant is one way to run a query: partition count, page size, whether
// the state goes through its binary form, whether sources can seek, and
// whether ORDER BY queries read sorted sources (1: with the index's
// buckets, 2: with one bucket per type).
type variant struct {
	parts, page     int
	roundTrip, seek bool
	sorted          int
}

var variants = []variant{
	{4, 0, false, true, 0},
	{4, 1, true, true, 0},
	{4, 2, true, false, 0},
	{4, 7, true, true, 0},
	{1, 2, true, true, 0},
	{1, 7, false, false, 0},
	{3, 1, true, false, 0},
	{7, 3, true, true, 0},
	{4, 1, true, true, 1},
	{4, 3, true, true, 2},
	{1, 2, true, true, 2},
	{7, 0, false, true, 1},
	{3, 1, true, true, 2},
}

// TestGolden runs every query of testdata/queries.txt over the dataset as
// one partition with one page, checks the rows against the hand-derived
// expectation (in order when the query has ORDER BY, as a multiset
// otherwise), and requires exactly the same rows in the same order from
// every variant: 4 partitions split by hash, pages of 1, 2 and 7 rows
// through encoded continuation states, and more.
func TestGolden(t *testing.T) {
	docs := loadDataset(t)
	cases := parseGolden(t, "testdata/queries.txt")
	if len(cases) < 300 {
		t.Errorf("only %d golden cases, want at least 300", len(cases))
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("line%d", c.line), func(t *testing.T) {
			p, err := compile(c.query, c.params)
			var rows []eval.Value
			if err == nil {
				rows, err = runPages(p, [][]doc{docs}, 0, false, true)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("%s\nwant error %q, got %v (rows %s)", c.query, c.err, err, rowsString(rows))
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", c.query, err)
			}
			want, err := eval.FromJSON([]byte(c.expect))
			if err != nil {
				t.Fatalf("line %d: bad expectation: %v", c.line, err)
			}
			ordered := c.query != "" && p.top.ast.OrderBy != nil && !c.anyOrd
			if ordered && !equalRows(rows, want.Elems()) || !ordered && !equalMultiset(rows, want.Elems()) {
				t.Errorf("%s\n got %s\nwant %s", c.query, rowsString(rows), rowsString(want.Elems()))
			}
			for _, v := range variants {
				parts := split(docs, v.parts)
				mk := func() []Source { return sources(parts, v.seek) }
				if v.sorted > 0 {
					mk = func() []Source { return sortedSources(p, parts, v.sorted == 2, nil) }
				}
				got, err := runPagesFrom(p, mk, v.page, v.roundTrip)
				if err != nil {
					t.Errorf("%s\n%+v: %v", c.query, v, err)
				} else if !equalRows(got, rows) {
					t.Errorf("%s\n%+v:\n got %s\nwant %s", c.query, v, rowsString(got), rowsString(rows))
				}
			}
		})
	}
}
