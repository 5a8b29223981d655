package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/fulltext"
	"github.com/parsecdb/parsec/internal/partition"
	"github.com/parsecdb/parsec/internal/storage"
)

// textWrite upserts (or, with text "-", deletes) item id in partition pk.
func textWrite(t *testing.T, c *Container, id, pk string, text *string) {
	t.Helper()
	kind := OpUpsert
	doc := map[string]any{"id": id, "pk": pk}
	if text != nil {
		if *text == "-" {
			kind = OpDelete
		} else {
			doc["text"] = *text
		}
	}
	body, _ := json.Marshal(doc)
	op, err := c.PrepareWrite(kind, body, key(pk), true)
	if kind == OpDelete {
		op, err = c.PrepareKeyed(OpDelete, id, key(pk), true)
	}
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
}

// checkTextRecords compares every partition's stored full-text records
// with what its items hold, counted here: words are split on spaces (the
// test's words are neither stop words nor changed by the stemmer), each
// partition's statistics are its items' documents, texts, total length and
// per word the documents having it, and the postings are one per item and
// distinct word, with no record left for a replaced or deleted text.
func checkTextRecords(t *testing.T, c *Container, prop, label string) {
	t.Helper()
	cfg := c.text.Load()
	if cfg == nil || len(cfg.paths) != 1 || !cfg.complete[cfg.paths[0].tag] {
		t.Fatalf("%s: text config %+v", label, cfg)
	}
	tag := cfg.paths[0].tag
	path := []string{prop}
	db := c.e.store
	postings := 0
	for _, p := range c.Partitions() {
		r := p.Range()
		want := map[string]uint64{}
		lo, hi := storage.ItemSpan(c.rid, r.Min, openMax(r.Max))
		err := db.Iterate(lo, hi, func(k, v []byte) (bool, error) {
			_, _, doc, err := decodeItem(k, v)
			if err != nil {
				return false, err
			}
			want["docs"]++
			var d map[string]any
			if err := json.Unmarshal(doc, &d); err != nil {
				return false, err
			}
			text, ok := d[prop].(string)
			if !ok {
				return true, nil
			}
			words := strings.Fields(text)
			want["texts"]++
			want["length"] += uint64(len(words))
			seen := map[string]bool{}
			for _, w := range words {
				if !seen[w] {
					seen[w] = true
					want["df:"+w]++
					postings++
				}
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]uint64{}
		slo, shi := storage.TextPartitionStatsSpan(c.rid, r.ID)
		err = db.Iterate(slo, shi, func(k, v []byte) (bool, error) {
			n, err := fulltext.DecodeCount(v)
			if err != nil {
				return false, err
			}
			sk := k[len(slo)+4:]
			switch {
			case bytes.Equal(sk, fulltext.DocStatsKey(nil)):
				got["docs"] = n
			case bytes.Equal(sk, fulltext.PathDocsKey(nil, path)):
				got["texts"] = n
			case bytes.Equal(sk, fulltext.PathLengthKey(nil, path)):
				got["length"] = n
			default:
				_, term, err := fulltext.DecodeTermStatsKey(sk)
				if err != nil {
					return false, err
				}
				got["df:"+term] = n
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: partition %s [%s, %s): stored statistics %v, want %v", label, r.ID, r.Min, r.Max, got, want)
		}
	}
	n := 0
	rp := storage.TextRecordPrefix(nil, c.rid, tag)
	pp := append(bytes.Clone(rp), fulltext.KindPosting)
	if err := db.Iterate(pp, storage.PrefixEnd(pp), func(_, _ []byte) (bool, error) { n++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	if n != postings {
		t.Fatalf("%s: %d postings stored, want %d", label, n, postings)
	}
}

// The full-text index is written with every create, replace and delete,
// per physical partition; a split gives each child the statistics of its
// own items; and FullTextScore reads the stored statistics, not the items.
func TestTextIndexRecords(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := searchContainer(t, e)
	words := []string{"alpha", "beta", "gamma", "delta", "kappa", "sigma"}
	r := rand.New(rand.NewSource(3))
	text := func() *string {
		var ws []string
		for range 1 + r.Intn(8) {
			ws = append(ws, words[r.Intn(len(words))])
		}
		s := strings.Join(ws, " ")
		return &s
	}
	del := "-"
	for i := range 300 {
		id, pk := fmt.Sprint(i%120), fmt.Sprint("p", i%120%30)
		switch {
		case i%17 == 5:
			textWrite(t, c, id, pk, nil) // no text
		case i >= 120 && i%7 == 0:
			textWrite(t, c, id, pk, &del)
			textWrite(t, c, id, pk, text()) // created again
		case i >= 200 && i%11 == 0:
			textWrite(t, c, id, pk, &del)
		default:
			textWrite(t, c, id, pk, text())
		}
	}
	checkTextRecords(t, c, "text", "4 partitions")

	rows, _, pages := containerQuery(t, c, `SELECT TOP 5 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, "gamma", "kappa sigma")`)
	if len(rows) != 5 {
		t.Fatalf("%d rows", len(rows))
	}
	if !strings.Contains(pages[0].Search.Text[0], "read from the index") {
		t.Fatalf("search utilization %+v: want the stored statistics named", pages[0].Search)
	}
	for _, p := range c.Partitions() {
		bounds, err := partition.EvenBounds(c.def, p.Range(), 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.splitPartition(p, bounds); err != nil {
			t.Fatal(err)
		}
	}
	checkTextRecords(t, c, "text", "8 partitions after splits")
	rows2, _, _ := containerQuery(t, c, `SELECT TOP 5 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, "gamma", "kappa sigma")`)
	if fmt.Sprint(rows) != fmt.Sprint(rows2) {
		t.Fatalf("after the splits %v, before %v", rows2, rows)
	}
	for i := range 40 {
		textWrite(t, c, fmt.Sprint(i), fmt.Sprint("p", i%30), text())
	}
	checkTextRecords(t, c, "text", "writes after the splits")

	// The filters read the postings: the rows are the scan's (CONTAINS on
	// the raw text, which these words allow), and only the candidates are
	// read.
	for _, tc := range []struct{ text, scan string }{
		{`FullTextContains(c.text, "gamma")`, `CONTAINS(c.text, "gamma")`},
		{`FullTextContainsAll(c.text, "gamma", "sigma")`, `CONTAINS(c.text, "gamma") AND CONTAINS(c.text, "sigma")`},
		{`FullTextContainsAny(c.text, "gamma", "sigma")`, `(CONTAINS(c.text, "gamma") OR CONTAINS(c.text, "sigma"))`},
		{`c.pk != "p3" AND FullTextContains(c.text, "kappa")`, `c.pk != "p3" AND CONTAINS(c.text, "kappa")`},
	} {
		got, _, pages := containerQuery(t, c, `SELECT VALUE c.id FROM c WHERE `+tc.text)
		want, _, _ := containerQuery(t, c, `SELECT VALUE c.id FROM c WHERE `+tc.scan)
		slices.Sort(got)
		slices.Sort(want)
		if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: %v, want %v", tc.text, got, want)
		}
		read := 0
		for _, p := range pages {
			read += p.DocsRead
		}
		if strings.Contains(tc.text, "p3") {
			continue // the candidates include p3's
		}
		// A page may read one item past its last row.
		if read > len(want)+len(pages) {
			t.Fatalf("%s: %d items read for %d rows in %d pages: want only the postings' documents", tc.text, read, len(want), len(pages))
		}
	}
}

// A full-text index that a replace adds is not built (it would be
// incomplete), so writes leave it alone and its queries scan; the index the
// container was created with stays complete and is still read. Replacing
// and deleting items written before the change works.
func TestTextIndexAddedByReplace(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := searchContainer(t, e)
	for i := range 40 {
		body := fmt.Appendf(nil, `{"id":"%d","pk":"p%d","text":"alpha beta%d","other":"gamma delta%d"}`, i, i%5, i%3, i%4)
		op, err := c.PrepareWrite(OpUpsert, body, key(fmt.Sprint("p", i%5)), true)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	info := c.Info()
	spec := ContainerSpec{ID: "s", PartitionKey: hashDef("/pk"),
		IndexingPolicy: json.RawMessage(`{"vectorIndexes":[{"path":"/v","type":"flat"}],"fullTextIndexes":[{"path":"/text"},{"path":"/other"}],"excludedPaths":[{"path":"/v/*"}]}`),
		Extra: map[string]json.RawMessage{
			"vectorEmbeddingPolicy": info.Extra["vectorEmbeddingPolicy"],
			"fullTextPolicy":        json.RawMessage(`{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text","language":"en-US"},{"path":"/other","language":"en-US"}]}`),
		}}
	if _, err := e.ReplaceContainer("db", spec, ""); err != nil {
		t.Fatal(err)
	}
	e.builders.Wait()
	if got := c.Info().TextIndexed; len(got) != 1 || got[0] != textTag([]string{"text"}, fulltext.English) {
		t.Fatalf("complete tags after the replace: %v, want /text's only", got)
	}
	for i := range 40 {
		pk := fmt.Sprint("p", i%5)
		var op Op
		var err error
		if i%4 == 0 {
			op, err = c.PrepareKeyed(OpDelete, fmt.Sprint(i), key(pk), true)
		} else {
			op, err = c.PrepareWrite(OpUpsert, fmt.Appendf(nil, `{"id":"%d","pk":"%s","text":"alpha kappa","other":"sigma"}`, i, pk), key(pk), true)
		}
		if err != nil {
			t.Fatal(err)
		}
		res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil {
			t.Fatalf("write %d after the policy change: %v", i, res[0].Err)
		}
	}
	checkTextRecords(t, c, "text", "after the policy change")
	rows, _, pages := containerQuery(t, c, `SELECT VALUE c.id FROM c WHERE FullTextContains(c.other, "sigma")`)
	if len(rows) != 30 {
		t.Fatalf("%d rows for /other, want 30", len(rows))
	}
	if strings.Contains(pages[0].Search.Text[0], "read from the index") {
		t.Fatalf("/other has no complete index, yet %q", pages[0].Search.Text[0])
	}
	rows, _, pages = containerQuery(t, c, `SELECT VALUE c.id FROM c WHERE FullTextContains(c.text, "kappa")`)
	if len(rows) != 30 || !strings.Contains(pages[0].Search.Text[0], "read from the index") {
		t.Fatalf("%d rows for /text (want 30), utilization %+v", len(rows), pages[0].Search)
	}
}

// BM25 from the stored statistics (phrases counted from postings) ranks
// exactly as the pass over the items does: two containers that differ
// only in their full-text index answer the same, scores included.
func TestTextIndexStatsMatchScan(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	ftp := json.RawMessage(`{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text","language":"en-US"}]}`)
	for _, s := range []ContainerSpec{
		{ID: "indexed", PartitionKey: hashDef("/pk"), IndexingPolicy: json.RawMessage(`{"fullTextIndexes":[{"path":"/text"}]}`), Extra: map[string]json.RawMessage{"fullTextPolicy": ftp}},
		{ID: "scanned", PartitionKey: hashDef("/pk"), Extra: map[string]json.RawMessage{"fullTextPolicy": ftp}},
	} {
		if _, err := e.CreateContainer("db", s, Throughput{RUs: 3000}); err != nil {
			t.Fatal(err)
		}
	}
	words := []string{"red", "bicycle", "the", "running", "runs", "fast", "blue"}
	r := rand.New(rand.NewSource(5))
	ci, _ := e.Container("db", "indexed")
	cs, _ := e.Container("db", "scanned")
	var charges [2]float64
	for i := range 150 {
		var ws []string
		for range 2 + r.Intn(12) {
			ws = append(ws, words[r.Intn(len(words))])
		}
		doc := map[string]any{"id": fmt.Sprint(i), "pk": fmt.Sprint("p", i%20)}
		if i%10 != 0 {
			doc["text"] = strings.Join(ws, " ")
		}
		body, _ := json.Marshal(doc)
		for j, c := range []*Container{ci, cs} {
			op, err := c.PrepareWrite(OpUpsert, body, key(fmt.Sprint("p", i%20)), true)
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
			if err != nil {
				t.Fatal(err)
			}
			charges[j] += res[0].Charge
		}
	}
	// The index's postings are priced as index terms.
	if charges[0] <= charges[1] {
		t.Fatalf("writes charged %.2f RU with the full-text index, %.2f without: want more with it", charges[0], charges[1])
	}
	for _, q := range []string{
		`SELECT c.id, c.text FROM c ORDER BY RANK FullTextScore(c.text, "red bicycle", "run")`,
		`SELECT c.id FROM c WHERE FullTextContains(c.text, "fast") ORDER BY RANK FullTextScore(c.text, "blue", "the red")`,
		`SELECT TOP 7 c.id FROM c ORDER BY RANK FullTextScore(c.text, "running fast", "bicycle")`,
	} {
		got, _, pages := containerQuery(t, ci, q)
		want, _, _ := containerQuery(t, cs, q)
		if strings.Contains(q, "WHERE") {
			// The filter reads the postings' candidates in key order, the
			// scan in creation order: documents of equal score may come in
			// either order.
			slices.Sort(got)
			slices.Sort(want)
		}
		if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s:\nindexed %v\nscanned %v", q, got, want)
		}
		if !strings.Contains(pages[0].Search.Text[0], "read from the index") {
			t.Fatalf("%s: utilization %+v: want the stored statistics", q, pages[0].Search)
		}
	}
}
