package exec

import (
	"fmt"
	"strings"
	"testing"
)

// TestFiltersAreSound runs every golden query twice, over all documents and
// over only the documents its filters match, and requires the same rows:
// storage may then read only what the filters select.
func TestFiltersAreSound(t *testing.T) {
	docs := loadDataset(t)
	withFilters := 0
	for _, c := range parseGolden(t, "testdata/queries.txt") {
		if c.err != "" {
			continue
		}
		p, err := compile(c.query, c.params)
		if err != nil {
			t.Fatalf("line %d: %v", c.line, err)
		}
		fs := p.Filters()
		if len(fs) == 0 {
			continue
		}
		withFilters++
		var kept []doc
		for _, d := range docs {
			ok := true
			for i := range fs {
				ok = ok && fs[i].Matches(d.val)
			}
			if ok {
				kept = append(kept, d)
			}
		}
		all, err := runPages(p, split(docs, 4), 3, true, true)
		if err != nil {
			t.Fatalf("line %d: %v", c.line, err)
		}
		some, err := runPages(p, split(kept, 4), 3, true, true)
		if err != nil {
			t.Fatalf("line %d: %v", c.line, err)
		}
		if !equalRows(all, some) {
			t.Errorf("line %d: %s\nfilters %s\nall docs: %s\nfiltered: %s", c.line, c.query, filtersString(fs), rowsString(all), rowsString(some))
		}
	}
	if withFilters < 40 {
		t.Errorf("only %d golden queries have filters; the check is too weak", withFilters)
	}
	t.Logf("%d golden queries with filters", withFilters)
}

func filtersString(fs []Filter) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s in %s / [%v %v]", strings.Join(f.Path, "."), rowsString(f.Values), f.Lo, f.Hi))
	}
	return strings.Join(parts, "; ")
}

func TestFiltersRecognized(t *testing.T) {
	cases := map[string]string{
		`SELECT * FROM c WHERE c.a = 1`:                                       "a in [1] / [undefined undefined]",
		`SELECT * FROM c WHERE 1 < c.a.b AND c["x y"] <= "z"`:                 `a.b in [] / [1 undefined]; x y in [] / [undefined "z"]`,
		`SELECT * FROM root r WHERE r.k IN ("a", @p) AND r.n BETWEEN 1 AND 5`: `k in ["a","b"] / [undefined undefined]; n in [] / [1 5]`,
		`SELECT * FROM c WHERE c.a = 1 OR c.b = 2`:                            "",
		`SELECT * FROM c WHERE NOT (c.a = 1)`:                                 "",
		`SELECT * FROM c WHERE c.a[0] = 1 AND c.b = [1]`:                      "",
		`SELECT * FROM x IN c.arr WHERE x.a = 1`:                              "",
		`SELECT c.id FROM c JOIN t IN c.tags WHERE t = "x" AND c.a >= -2`:     "a in [] / [-2 undefined]",
	}
	for q, want := range cases {
		p, err := compile(q, `{"@p":"b"}`)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := filtersString(p.Filters()); got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}
}
