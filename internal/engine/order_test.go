package engine

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/storage"
)

// put upserts a JSON document with partition key pk.
func put(t testing.TB, c *Container, pk, body string) {
	t.Helper()
	op, err := c.PrepareWrite(OpUpsert, []byte(body), key(pk), true)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
}

// queryPage runs the first page of a query.
func queryPage(t testing.TB, c *Container, text string, pageSize int) QueryPage {
	t.Helper()
	plan := compileQuery(t, text)
	page, err := c.Query(plan, QueryScope{}, nil, pageSize)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return page
}

// TestOrderByReadsOnlyThePage: TOP 10 by an indexed path over 4 partitions
// reads about 10 documents per partition, in either direction, and gives
// the rows a scan gives. Documents without the path sort first ascending:
// finding them reads the partitions' items, and they come out right.
func TestOrderByReadsOnlyThePage(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 4000)
	if n := len(c.Partitions()); n != 4 {
		t.Fatalf("%d partitions, want 4", n)
	}
	const n = 2000
	for i := range n {
		put(t, c, fmt.Sprint("p", i%97), fmt.Sprintf(`{"id":"%d","pk":"p%d","ts":%d,"pad":"%0200d"}`, i, i%97, (i*7919)%n, i))
	}
	check := func(text string, maxDocs int) {
		t.Helper()
		want := scanQuery(t, c, text)
		page := queryPage(t, c, text, 10)
		got := make([]string, len(page.Rows))
		for i, r := range page.Rows {
			got[i] = string(r)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s\n got %v\nwant %v", text, got, want)
		}
		if !slices.Contains(page.Index.Utilized, "/ts/?") {
			t.Fatalf("%s: index utilization %+v does not name /ts/?", text, page.Index)
		}
		if page.DocsRead > maxDocs {
			t.Fatalf("%s read %d documents, want at most %d", text, page.DocsRead, maxDocs)
		}
		t.Logf("%s: %d documents and %d index entries read, %.2f RU", text, page.DocsRead, page.IndexEntries, page.Charge)
	}
	// Each partition reads its 10 rows and the first document of the next
	// bucket.
	check(`SELECT TOP 10 VALUE c.id FROM c ORDER BY c.ts DESC`, 4*11)
	check(`SELECT TOP 10 VALUE c.id FROM c ORDER BY c.ts`, 4*11)
	check(`SELECT VALUE [c.id, c.ts] FROM c ORDER BY c.ts DESC OFFSET 5 LIMIT 5`, 4*11)

	for i := range 3 { // no ts, a string ts, an object ts
		put(t, c, "q", fmt.Sprintf(`{"id":"u%d","pk":"q"}`, i))
	}
	put(t, c, "q", `{"id":"s","pk":"q","ts":"late"}`)
	put(t, c, "q", `{"id":"o","pk":"q","ts":{"at":1}}`)
	check(`SELECT TOP 10 VALUE c.id FROM c ORDER BY c.ts DESC`, 4*11)
	check(`SELECT TOP 10 VALUE c.id FROM c ORDER BY c.ts`, n+5+4*11)
}

// TestIndexFormatUpgrade: a container whose index was built in an older
// format gets it rebuilt when the engine opens, and queries use it after.
func TestIndexFormatUpgrade(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	c := mustContainer(t, e, 4000)
	for i := range 300 {
		put(t, c, fmt.Sprint("p", i%7), fmt.Sprintf(`{"id":"%d","pk":"p%d","o":{"x":%d}}`, i, i%7, i%5))
	}
	// Make it look like an index of format 1, which had no entries for
	// objects.
	info := c.Info()
	info.IndexFormat = 1
	if err := e.storeContainer(info); err != nil {
		t.Fatal(err)
	}
	lo, hi := storage.IndexGenerationsSpan(c.rid, 0, 0)
	b := e.store.NewBatch()
	var objects [][]byte
	if err := e.store.Iterate(lo, hi, func(k, _ []byte) (bool, error) {
		objects = append(objects, slices.Clone(k))
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	objectTerm := index.AppendValue(index.AppendPath(nil, []string{"o"}), mustJSON(t, `{}`))
	dropped := 0
	for _, k := range objects {
		if !bytes.Contains(k, objectTerm) {
			continue
		}
		dropped++
		if err := b.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil || dropped != 300 {
		t.Fatalf("dropped %d object entries (%v), want 300", dropped, err)
	}
	gen := c.index.Load().gen
	e.Close()
	st.Close()

	e, st = testEngine(t, dir)
	defer st.Close()
	defer e.Close()
	c, err := e.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	e.builders.Wait()
	if ix := c.index.Load(); !ix.ready || ix.gen != gen+1 || c.Info().IndexFormat != index.Format || c.Info().IndexBuilding {
		t.Fatalf("after reopening: generation %d (was %d), ready %v, record %+v", ix.gen, gen, ix.ready, c.Info())
	}
	checkIndex(t, c)
	page := queryPage(t, c, `SELECT TOP 3 VALUE c.id FROM c ORDER BY c.o DESC, c.id`, 3)
	if want := scanQuery(t, c, `SELECT TOP 3 VALUE c.id FROM c ORDER BY c.o DESC, c.id`); len(page.Rows) != 3 || string(page.Rows[0]) != want[0] {
		t.Fatalf("rows %s, want %v", page.Rows, want)
	}
}

func mustJSON(t testing.TB, s string) eval.Value {
	t.Helper()
	v, err := eval.FromJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
