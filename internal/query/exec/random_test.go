package exec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/parsecdb/parsec/internal/query/eval"
)

// synthetic returns n random documents sorted by key: small integer and
// string domains so that ORDER BY ties, duplicates and groups abound, some
// missing and mixed-type values, and arrays for JOINs.
func synthetic(seed uint64, n int) []doc {
	r := rand.New(rand.NewPCG(seed, 1))
	docs := make([]doc, 0, n)
	for i := range n {
		id := fmt.Sprintf("s%05d", i)
		members := []eval.Member{{Key: "id", Value: eval.StringValue(id)}}
		switch r.IntN(10) {
		case 0: // no n
		case 1:
			members = append(members, eval.Member{Key: "n", Value: eval.StringValue(fmt.Sprint(r.IntN(5)))})
		case 2:
			members = append(members, eval.Member{Key: "n", Value: eval.NullValue()})
		default:
			members = append(members, eval.Member{Key: "n", Value: eval.IntValue(int64(r.IntN(40)))})
		}
		if r.IntN(8) != 0 {
			members = append(members, eval.Member{Key: "g", Value: eval.StringValue(fmt.Sprintf("g%02d", r.IntN(60)))})
		}
		tags := make([]eval.Value, r.IntN(4))
		for j := range tags {
			tags[j] = eval.IntValue(int64(r.IntN(6)))
		}
		members = append(members, eval.Member{Key: "t", Value: eval.ArrayValue(tags)})
		members = append(members, eval.Member{Key: "b", Value: eval.BoolValue(r.IntN(2) == 0)})
		docs = append(docs, doc{key: docKey(id), val: eval.ObjectValue(members)})
	}
	slices.SortFunc(docs, func(a, b doc) int { return bytes.Compare(a.key, b.key) })
	return docs
}

// randomSplit cuts docs into k contiguous key ranges of random sizes,
// some possibly empty.
func randomSplit(r *rand.Rand, docs []doc, k int) [][]doc {
	cuts := make([]int, k-1)
	for i := range cuts {
		cuts[i] = r.IntN(len(docs) + 1)
	}
	slices.Sort(cuts)
	parts := make([][]doc, 0, k)
	prev := 0
	for _, c := range append(cuts, len(docs)) {
		parts = append(parts, docs[prev:c])
		prev = c
	}
	return parts
}

var syntheticQueries = []string{
	`SELECT VALUE c.id FROM c WHERE c.n > 20`,
	`SELECT c.id, t FROM c JOIN t IN c.t WHERE t > 2`,
	`SELECT c.id, c.n FROM c ORDER BY c.n`,
	`SELECT VALUE [c.id, t] FROM c JOIN t IN c.t ORDER BY t DESC, c.n`,
	`SELECT VALUE c.id FROM c ORDER BY c.g DESC, c.n`,
	`SELECT TOP 77 VALUE c.id FROM c ORDER BY c.n DESC`,
	`SELECT VALUE c.id FROM c ORDER BY c.n OFFSET 90 LIMIT 45`,
	`SELECT DISTINCT VALUE c.n FROM c`,
	`SELECT DISTINCT VALUE [c.g, t] FROM c JOIN t IN c.t`,
	`SELECT DISTINCT VALUE c.g FROM c ORDER BY c.g DESC`,
	`SELECT DISTINCT VALUE c.b FROM c ORDER BY c.n`,
	`SELECT DISTINCT VALUE t FROM c JOIN t IN c.t ORDER BY c.n, t`,
	`SELECT c.g, COUNT(1) AS n, SUM(c.n) AS s, MIN(c.n) AS lo, MAX(c.id) AS hi FROM c GROUP BY c.g`,
	`SELECT VALUE COUNT(1) FROM c JOIN t IN c.t GROUP BY c.g, t`,
	`SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g OFFSET 7 LIMIT 20`,
	`SELECT DISTINCT VALUE COUNT(1) FROM c GROUP BY c.g`,
	`SELECT VALUE {"n": COUNT(1), "avg": AVG(c.n), "t": COUNTIF(c.b)} FROM c WHERE IS_NUMBER(c.n)`,
	`SELECT TOP 30 VALUE c.id FROM c JOIN t IN c.t WHERE t = 1`,
	`SELECT VALUE c.id FROM c JOIN t IN c.t OFFSET 100 LIMIT 50`,
}

// TestSyntheticPaging runs queries over 1,000 random documents, enough for
// the partitions' bounded buffers to be cut and groups to be evicted, in
// random splits and several page sizes, and requires exactly the rows of
// one unpaged partition (which never cuts or evicts).
func TestSyntheticPaging(t *testing.T) {
	docs := synthetic(7, 1000)
	r := rand.New(rand.NewPCG(11, 13))
	for _, text := range syntheticQueries {
		p, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := runPages(p, [][]doc{docs}, 0, false, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range [][2]int{{1, 16}, {3, 25}, {5, 60}, {2, 9}} {
			k, page := run[0], run[1]
			got, err := runPages(p, randomSplit(r, docs, k), page, r.IntN(2) == 0, r.IntN(2) == 0)
			if err != nil {
				t.Fatalf("%s (%d partitions, page %d): %v", text, k, page, err)
			}
			if !equalRows(got, want) {
				t.Fatalf("%s (%d partitions, page %d): %d rows differ from %d", text, k, page, len(got), len(want))
			}
		}
	}
}

// TestSortedSourcesStopEarly runs ORDER BY queries over sorted sources
// (see SortedSource) and requires the rows of a full read while reading
// only the documents the page needs: for TOP 5 about the first buckets of
// each partition, not the 1,000 documents.
func TestSortedSourcesStopEarly(t *testing.T) {
	docs := synthetic(7, 1000)
	r := rand.New(rand.NewPCG(17, 19))
	cases := []struct {
		text    string
		page    int
		maxRead int
	}{
		{`SELECT TOP 5 VALUE c.id FROM c ORDER BY c.n DESC`, 10, 150},
		{`SELECT TOP 5 VALUE c.id FROM c ORDER BY c.n`, 10, 250},
		{`SELECT VALUE c.id FROM c WHERE c.b ORDER BY c.n DESC OFFSET 20 LIMIT 5`, 25, 400},
		{`SELECT TOP 8 c.id, c.g FROM c ORDER BY c.g DESC, c.n`, 3, 150},
		{`SELECT DISTINCT TOP 4 VALUE c.g FROM c ORDER BY c.g`, 4, 250},
	}
	for _, c := range cases {
		p, err := compile(c.text, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := p.SortPath(); !ok {
			t.Fatalf("%s: no sort path", c.text)
		}
		want, err := runPages(p, [][]doc{docs}, 0, false, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, coarse := range []bool{false, true} {
			parts := randomSplit(r, docs, 4)
			read := 0
			got, err := runPagesFrom(p, func() []Source { return sortedSources(p, parts, coarse, &read) }, c.page, true)
			if err != nil || !equalRows(got, want) {
				t.Fatalf("%s (coarse %v):\n got %s %v\nwant %s", c.text, coarse, rowsString(got), err, rowsString(want))
			}
			if !coarse && read > c.maxRead {
				t.Errorf("%s read %d documents, want at most %d", c.text, read, c.maxRead)
			}
			t.Logf("%s (coarse %v): %d documents read", c.text, coarse, read)
		}
	}
}

// TestGoldenRandomSplits runs every golden query over random contiguous
// splits (empty partitions included) with random page sizes.
func TestGoldenRandomSplits(t *testing.T) {
	docs := loadDataset(t)
	r := rand.New(rand.NewPCG(3, 5))
	for _, c := range parseGolden(t, "testdata/queries.txt") {
		if c.err != "" {
			continue
		}
		p, err := compile(c.query, c.params)
		if err != nil {
			t.Fatal(err)
		}
		want, err := runPages(p, [][]doc{docs}, 0, false, true)
		if err != nil {
			t.Fatal(err)
		}
		k, page := 1+r.IntN(9), 1+r.IntN(5)
		got, err := runPages(p, randomSplit(r, docs, k), page, true, r.IntN(2) == 0)
		if err != nil || !equalRows(got, want) {
			t.Errorf("line %d (%d partitions, page %d): %s\n got %s %v\nwant %s", c.line, k, page, c.query, rowsString(got), err, rowsString(want))
		}
	}
}

// TestResumeAfterSplit pages a query over 3 partitions, then continues
// from the same state over the partitions split again (into 7, then 2):
// the state names no partition, so the rows are the same.
func TestResumeAfterSplit(t *testing.T) {
	docs := synthetic(5, 600)
	for _, text := range syntheticQueries {
		p, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := runPages(p, [][]doc{docs}, 0, false, true)
		if err != nil {
			t.Fatal(err)
		}
		var got []eval.Value
		var st *State
		for page := 0; !st.Done(); page++ {
			parts := split(docs, []int{3, 7, 2}[min(page, 2)])
			rows, next, err := Exec(p, sources(parts, true), st, 9)
			if err != nil {
				t.Fatal(err)
			}
			got, st = append(got, rows...), next
		}
		if !equalRows(got, want) {
			t.Errorf("%s: %d rows, want %d", text, len(got), len(want))
		}
	}
}

// countingSource counts the documents a source yields.
type countingSource struct {
	sliceSource
	reads *int
}

func (s *countingSource) Next() ([]byte, eval.Value, bool, error) {
	k, v, ok, err := s.sliceSource.Next()
	if ok {
		*s.reads++
	}
	return k, v, ok, err
}

// TestStreamingReadsOnce: a streaming query resumes each partition at the
// state's key (Seek), so paging through it reads each document about once
// (a page may re-read the document it stopped in, for the rest of its
// fan-out), never the documents of earlier pages again.
func TestStreamingReadsOnce(t *testing.T) {
	docs := synthetic(9, 800)
	parts := split(docs, 4)
	for _, text := range []string{`SELECT VALUE c.id FROM c`, `SELECT c.id, t FROM c JOIN t IN c.t WHERE t < 4`} {
		p, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		reads, pages := 0, 0
		var st *State
		for !st.Done() {
			srcs := make([]Source, len(parts))
			for i, d := range parts {
				srcs[i] = &countingSource{sliceSource: sliceSource{docs: d}, reads: &reads}
			}
			_, next, err := Exec(p, srcs, st, 10)
			if err != nil {
				t.Fatal(err)
			}
			st = next
			pages++
		}
		if reads > len(docs)+pages+len(parts) {
			t.Errorf("%s: %d documents read in %d pages for %d documents", text, reads, pages, len(docs))
		}
	}
}

// TestOrderedStateIsSortKey: an ORDER BY page's state holds the sort key of
// its last row (the ORDER BY values and the document key), which is how
// every partition resumes.
func TestOrderedStateIsSortKey(t *testing.T) {
	docs := loadDataset(t)
	p, err := compile(`SELECT VALUE c.id FROM c WHERE c.kind = "fruit" ORDER BY c.n DESC`, "")
	if err != nil {
		t.Fatal(err)
	}
	rows, st, err := Exec(p, sources(split(docs, 4), true), nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsString(rows); got != `["d06","d03","d10","d01"]` {
		t.Fatalf("first page %s", got)
	}
	if !st.started || len(st.vals) != 1 || !eval.Equal(st.vals[0], eval.IntValue(5)) || !bytes.Equal(st.pos.key, docKey("d01")) {
		t.Fatalf("state %s, want the sort key (5, key of d01)", st)
	}
}

// TestParallelPartitions runs pages the way a server does: Want, then
// RunPartition for every partition in its own goroutine, then Merge.
func TestParallelPartitions(t *testing.T) {
	docs := synthetic(21, 700)
	parts := split(docs, 5)
	for _, text := range syntheticQueries {
		p, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := runPages(p, [][]doc{docs}, 0, false, true)
		if err != nil {
			t.Fatal(err)
		}
		var got []eval.Value
		var st *State
		for !st.Done() {
			w := p.Want(st, 11)
			partials := make([]*Partial, len(parts))
			errs := make([]error, len(parts))
			var wg sync.WaitGroup
			for i, d := range parts {
				wg.Go(func() {
					partials[i], errs[i] = p.RunPartition(&sliceSource{docs: d}, st, w)
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			rows, next, err := p.Merge(st, partials, 11)
			if err != nil {
				t.Fatal(err)
			}
			got, st = append(got, rows...), next
		}
		if !equalRows(got, want) {
			t.Errorf("%s: %d rows, want %d", text, len(got), len(want))
		}
	}
}

// failingSource fails after some documents.
type failingSource struct {
	sliceSource
	after int
}

var errDisk = fmt.Errorf("disk on fire")

func (s *failingSource) Next() ([]byte, eval.Value, bool, error) {
	if s.i >= s.after {
		return nil, eval.Value{}, false, errDisk
	}
	return s.sliceSource.Next()
}

func TestSourceErrors(t *testing.T) {
	docs := loadDataset(t)
	for _, text := range []string{`SELECT * FROM c`, `SELECT * FROM c ORDER BY c.n`, `SELECT VALUE COUNT(1) FROM c`, `SELECT DISTINCT VALUE c.n FROM c`} {
		p, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = Exec(p, []Source{&failingSource{sliceSource{docs: docs}, 3}}, nil, 100)
		if err != errDisk {
			t.Errorf("%s: got %v, want the source's error", text, err)
		}
	}
	// Keys out of order are refused.
	p, _ := compile(`SELECT * FROM c`, "")
	rev := slices.Clone(docs)
	slices.Reverse(rev)
	if _, _, err := Exec(p, []Source{&sliceSource{docs: rev}}, nil, 100); err == nil {
		t.Error("keys out of order were accepted")
	}
}

// TestBoundedPartials: a partition asked for want rows or groups keeps
// only about 2·want in memory, cutting as it reads, and still returns
// exactly the want first ones.
func TestBoundedPartials(t *testing.T) {
	docs := synthetic(17, 1200)
	for _, text := range []string{
		`SELECT VALUE c.id FROM c ORDER BY c.n, c.g DESC`,
		`SELECT DISTINCT VALUE [c.g, t] FROM c JOIN t IN c.t`,
		`SELECT DISTINCT VALUE c.n FROM c ORDER BY c.g`,
		`SELECT c.g, MAX(c.n) AS m FROM c JOIN t IN c.t GROUP BY c.g, t`,
	} {
		p, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		all, err := p.RunPartition(&sliceSource{docs: docs}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		const want = 5
		cut, err := p.RunPartition(&sliceSource{docs: docs}, nil, want)
		if err != nil {
			t.Fatal(err)
		}
		if !all.Exhausted() || cut.Exhausted() || cut.Len() != want || all.Len() < 10*want {
			t.Fatalf("%s: unbounded %d rows (exhausted %v), bounded %d (exhausted %v)", text, all.Len(), all.Exhausted(), cut.Len(), cut.Exhausted())
		}
		for i := range want {
			if len(all.rows) > 0 && !eval.Equal(cut.rows[i].val, all.rows[i].val) ||
				len(all.groups) > 0 && !equalTuple(cut.groups[i].key, all.groups[i].key) {
				t.Fatalf("%s: row %d differs", text, i)
			}
		}
		for i, g := range cut.groups {
			for j, a := range g.accs {
				if !eval.Equal(a.Result(), all.groups[i].accs[j].Result()) {
					t.Fatalf("%s: group %d is incomplete after eviction", text, i)
				}
			}
		}
	}
}
