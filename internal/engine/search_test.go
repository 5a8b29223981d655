package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/partition"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/query/parser"
)

// searchContainer creates a container with a full-text policy on /text
// and a 4-dimension Euclidean embedding on /v, over 4 partitions.
func searchContainer(t *testing.T, e *Engine) *Container {
	t.Helper()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil && !errors.Is(err, ErrConflict) {
		t.Fatal(err)
	}
	spec := ContainerSpec{ID: "s", PartitionKey: hashDef("/pk"),
		IndexingPolicy: json.RawMessage(`{"vectorIndexes":[{"path":"/v","type":"flat"}],"fullTextIndexes":[{"path":"/text"}],"excludedPaths":[{"path":"/v/*"}]}`),
		Extra: map[string]json.RawMessage{
			"vectorEmbeddingPolicy": json.RawMessage(`{"vectorEmbeddings":[{"path":"/v","dataType":"float32","dimensions":4,"distanceFunction":"euclidean"}]}`),
			"fullTextPolicy":        json.RawMessage(`{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text","language":"en-US"}]}`),
		}}
	if _, err := e.CreateContainer("db", spec, Throughput{RUs: 4000}); err != nil {
		t.Fatal(err)
	}
	c, err := e.Container("db", "s")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// containerQuery compiles text with the container's policies and runs it
// to the end in pages of 4, returning the rows and the total charge.
func containerQuery(t *testing.T, c *Container, text string) ([]string, float64, []QueryPage) {
	t.Helper()
	q, err := parser.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	var charge float64
	var pages []QueryPage
	var st *exec.State
	for {
		plan, err := c.CompileQuery(q, map[string]eval.Value{})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		page, err := c.Query(plan, QueryScope{}, st, 4)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		for _, r := range page.Rows {
			rows = append(rows, string(r))
		}
		charge += page.Charge
		pages = append(pages, page)
		if st = page.Next; st == nil {
			return rows, charge, pages
		}
	}
}

// TestSearchQueriesAcrossSplits ranks by BM25 and by VectorDistance over a
// container of 4 partitions, then splits every partition and ranks again
// (resuming a query started before the split): the results equal a
// reference computed here, with statistics over the whole container.
func TestSearchQueriesAcrossSplits(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := searchContainer(t, e)
	words := []string{"alpha", "beta", "gamma", "delta", "kappa"}
	r := rand.New(rand.NewSource(9))
	type item struct {
		text []string
		v    []float64
	}
	items := map[string]item{}
	for i := range 160 {
		id := fmt.Sprint(i)
		it := item{v: []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}}
		doc := map[string]any{"id": id, "pk": fmt.Sprint("p", i%40), "v": it.v}
		if i%9 != 0 {
			for range 1 + r.Intn(10) {
				it.text = append(it.text, words[min(r.Intn(len(words)), r.Intn(len(words)))])
			}
			doc["text"] = strings.Join(it.text, " ")
		}
		items[id] = it
		body, _ := json.Marshal(doc)
		op, err := c.PrepareWrite(OpUpsert, body, key(fmt.Sprint("p", i%40)), true)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	// The reference BM25 of "gamma" (k1 = 1.2, b = 0.75).
	N, total, df := float64(len(items)), 0.0, 0.0
	for _, it := range items {
		total += float64(len(it.text))
		if slices.Contains(it.text, "gamma") {
			df++
		}
	}
	idf := math.Log(1 + (N-df+0.5)/(df+0.5))
	score := map[string]float64{}
	for id, it := range items {
		tf := 0.0
		for _, w := range it.text {
			if w == "gamma" {
				tf++
			}
		}
		score[id] = idf * tf * 2.2 / (tf + 1.2*(1-0.75+0.75*float64(len(it.text))/(total/N)))
	}
	var wantText []float64
	for _, s := range score {
		if s > 0 {
			wantText = append(wantText, s)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(wantText)))
	q := []float64{0.3, -0.2, 1, 0.5}
	dist := map[string]float64{}
	var wantVec []float64
	for id, it := range items {
		var d float64
		for i := range q {
			d += (it.v[i] - q[i]) * (it.v[i] - q[i])
		}
		dist[id] = math.Sqrt(d)
		wantVec = append(wantVec, dist[id])
	}
	sort.Float64s(wantVec)
	wantVec = wantVec[:10]

	textQuery := `SELECT VALUE c.id FROM c WHERE FullTextContains(c.text, "gamma") ORDER BY RANK FullTextScore(c.text, "gamma")`
	vecQuery := `SELECT TOP 10 VALUE c.id FROM c ORDER BY VectorDistance(c.v, [0.3, -0.2, 1, 0.5])`
	check := func(label string) {
		t.Helper()
		rows, charge, pages := containerQuery(t, c, textQuery)
		if len(rows) != len(wantText) {
			t.Fatalf("%s: %d text rows, want %d", label, len(rows), len(wantText))
		}
		for i, row := range rows {
			var id string
			if err := json.Unmarshal([]byte(row), &id); err != nil {
				t.Fatal(err)
			}
			if math.Abs(score[id]-wantText[i]) > 1e-9 {
				t.Fatalf("%s: text row %d is %s scoring %v, want %v", label, i, id, score[id], wantText[i])
			}
		}
		if len(pages[0].Search.Text) != 1 || !strings.Contains(pages[0].Search.Text[0], "full-text index on /text") {
			t.Fatalf("%s: search utilization %+v", label, pages[0].Search)
		}
		rows, vcharge, pages := containerQuery(t, c, vecQuery)
		if len(rows) != 10 {
			t.Fatalf("%s: %d vector rows", label, len(rows))
		}
		for i, row := range rows {
			var id string
			if err := json.Unmarshal([]byte(row), &id); err != nil {
				t.Fatal(err)
			}
			if math.Abs(dist[id]-wantVec[i]) > 1e-5 {
				t.Fatalf("%s: vector row %d is %s at %v, want %v", label, i, id, dist[id], wantVec[i])
			}
		}
		if !strings.Contains(pages[0].Search.Vector[0], "/v (flat vector index; scan: 160 vectors compared)") {
			t.Fatalf("%s: search utilization %+v", label, pages[0].Search)
		}
		t.Logf("%s: text query %.2f RU, vector query %.2f RU", label, charge, vcharge)
	}
	check("4 partitions")

	// A query's first page before the split, the rest after.
	qq, err := parser.Parse(textQuery)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := c.CompileQuery(qq, map[string]eval.Value{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Query(plan, QueryScope{}, nil, 3)
	if err != nil {
		t.Fatal(err)
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
	if n := len(c.Partitions()); n != 8 {
		t.Fatalf("%d partitions after the splits, want 8", n)
	}
	check("8 partitions after splits")
	rows := slices.Clone(first.Rows)
	st2 := first.Next
	for st2 != nil {
		plan, err := c.CompileQuery(qq, map[string]eval.Value{})
		if err != nil {
			t.Fatal(err)
		}
		page, err := c.Query(plan, QueryScope{}, st2, 3)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, page.Rows...)
		st2 = page.Next
	}
	if len(rows) != len(wantText) {
		t.Fatalf("resumed across the split: %d rows, want %d", len(rows), len(wantText))
	}
	for i, row := range rows {
		var id string
		if err := json.Unmarshal(row, &id); err != nil {
			t.Fatal(err)
		}
		if math.Abs(score[id]-wantText[i]) > 1e-9 {
			t.Fatalf("resumed across the split: row %d is %s scoring %v, want %v", i, id, score[id], wantText[i])
		}
	}
}

// TestSearchPolicyValidation: create and replace refuse what the service
// refuses, with its messages.
func TestSearchPolicyValidation(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := searchContainer(t, e)
	info := c.Info()
	bad := func(spec ContainerSpec, replace bool, want string) {
		t.Helper()
		var err error
		if replace {
			_, err = e.ReplaceContainer("db", spec, "")
		} else {
			_, err = e.CreateContainer("db", spec, Throughput{RUs: 400})
		}
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want a bad request saying %q", err, want)
		}
	}
	vec := func(s string) map[string]json.RawMessage {
		return map[string]json.RawMessage{"vectorEmbeddingPolicy": json.RawMessage(s)}
	}
	bad(ContainerSpec{ID: "x", PartitionKey: hashDef("/pk"), IndexingPolicy: json.RawMessage(`{"vectorIndexes":[{"path":"/v","type":"flat"}]}`)},
		false, `Vector Indexing Policy's path::\/v not matching in Embedding's path`)
	bad(ContainerSpec{ID: "x", PartitionKey: hashDef("/pk"), Extra: vec(`{"vectorEmbeddings":[{"path":"/v","dataType":"float32","dimensions":506,"distanceFunction":"cosine"}]}`),
		IndexingPolicy: json.RawMessage(`{"vectorIndexes":[{"path":"/v","type":"flat"}]}`)}, false, "supports at most 505 dimensions")
	bad(ContainerSpec{ID: "x", PartitionKey: hashDef("/pk"), Extra: vec(`{"vectorEmbeddings":[{"path":"/v/*","dataType":"float32","dimensions":3,"distanceFunction":"cosine"}]}`)},
		false, "wildcards")
	bad(ContainerSpec{ID: "x", PartitionKey: hashDef("/pk"), Extra: vec(`{"vectorEmbeddings":[{"path":"/v","dataType":"float32","dimensions":0,"distanceFunction":"cosine"}]}`)},
		false, "Vector Embedding Policy has invalid Dimensions:0, it should be positive integer")
	bad(ContainerSpec{ID: "x", PartitionKey: hashDef("/pk"), Extra: map[string]json.RawMessage{"fullTextPolicy": json.RawMessage(`{"defaultLanguage":"xx-YY"}`)}},
		false, "xx-YY")
	// Replace: the embedding policy and the vector indexes stay.
	spec := ContainerSpec{ID: "s", PartitionKey: info.PartitionKey, IndexingPolicy: info.IndexingPolicy, Extra: info.Extra}
	changed := spec
	changed.Extra = vec(`{"vectorEmbeddings":[{"path":"/v","dataType":"float32","dimensions":4,"distanceFunction":"cosine"}]}`)
	bad(changed, true, "Vector Embedding Policy cannot be changed in Collection Replace")
	changed = spec
	changed.IndexingPolicy = json.RawMessage(`{"vectorIndexes":[{"path":"/v","type":"quantizedFlat"}],"fullTextIndexes":[{"path":"/text"}]}`)
	bad(changed, true, "Vector Indexing Policy cannot be changed in Collection Replace")
	// Leaving the embedding policy out keeps it; the full-text policy may change.
	ok := ContainerSpec{ID: "s", PartitionKey: info.PartitionKey, IndexingPolicy: info.IndexingPolicy,
		Extra: map[string]json.RawMessage{"fullTextPolicy": json.RawMessage(`{"defaultLanguage":"de-DE","fullTextPaths":[{"path":"/text","language":"en-US"}]}`)}}
	got, err := e.ReplaceContainer("db", ok, "")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Extra["vectorEmbeddingPolicy"]) != string(info.Extra["vectorEmbeddingPolicy"]) {
		t.Errorf("the embedding policy became %s", got.Extra["vectorEmbeddingPolicy"])
	}
}
