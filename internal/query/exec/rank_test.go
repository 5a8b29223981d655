package exec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/fulltext"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/parser"
)

// The vocabulary of the generated texts: English words that are not stop
// words and that the analyser leaves as they are (checked below), so that
// the reference can split on spaces.
var vocab = []string{"alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "zeta"}

// searchDocs generates n documents with a text of 1 to 12 words (every
// seventh has none), a vector of dims numbers and a group, sorted by key.
func searchDocs(t *testing.T, seed uint64, n, dims int) []doc {
	t.Helper()
	an := fulltext.AnalyzerFor(fulltext.English)
	for _, w := range vocab {
		if toks := an.Analyze(w); len(toks) != 1 || toks[0].Term != w {
			t.Fatalf("the analyser changes %q: %v", w, toks)
		}
	}
	r := rand.New(rand.NewPCG(seed, 1))
	var docs []doc
	for i := range n {
		m := map[string]any{"id": fmt.Sprint(i), "_rid": fmt.Sprint("r", i), "n": i, "grp": i % 3}
		if i%7 != 6 {
			words := make([]string, 1+r.IntN(12))
			for j := range words {
				// Skewed, so that document frequencies differ.
				words[j] = vocab[min(r.IntN(len(vocab)), r.IntN(len(vocab)))]
			}
			m["text"] = strings.Join(words, " ")
		}
		v := make([]float64, dims)
		for j := range v {
			v[j] = math.Round(r.NormFloat64()*1000) / 1000
		}
		m["v"] = v
		b, _ := json.Marshal(m)
		val, err := eval.FromJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc{key: docKey(fmt.Sprint(i)), val: val})
	}
	slices.SortFunc(docs, func(a, b doc) int { return bytes.Compare(a.key, b.key) })
	return docs
}

func textOf(d doc) []string {
	s, ok := d.val.Get("text")
	if !ok {
		return nil
	}
	return strings.Fields(s.AsString())
}

// refBM25 is BM25 written out (k1 = 1.2, b = 0.75), with the statistics of
// all docs: N every document, avgdl the total words / N, n(q) the
// documents containing q.
func refBM25(docs []doc, terms []string) map[string]float64 {
	N := float64(len(docs))
	total := 0.0
	df := map[string]float64{}
	for _, d := range docs {
		words := textOf(d)
		total += float64(len(words))
		for _, q := range terms {
			if slices.Contains(words, q) {
				df[q]++
			}
		}
	}
	avgdl := total / N
	out := map[string]float64{}
	for _, d := range docs {
		words := textOf(d)
		s := 0.0
		for _, q := range terms {
			tf := 0.0
			for _, w := range words {
				if w == q {
					tf++
				}
			}
			idf := math.Log(1 + (N-df[q]+0.5)/(df[q]+0.5))
			s += idf * tf * 2.2 / (tf + 1.2*(1-0.75+0.75*float64(len(words))/avgdl))
		}
		out[d.val.Property("id").AsString()] = s
	}
	return out
}

func ids(t *testing.T, rows []eval.Value) []string {
	t.Helper()
	var out []string
	for _, r := range rows {
		if r.Kind() != eval.String {
			t.Fatalf("row %s is not an id", r)
		}
		out = append(out, r.AsString())
	}
	return out
}

// TestBM25MatchesReference ranks by FullTextScore over several
// partitionings (one partition; 3 and 7 partitions; a re-split in the
// middle of the pages, as after a partition split) and page sizes, and
// requires the reference's ranking: statistics over the whole container,
// a WHERE filter narrowing the rows but not the statistics.
func TestBM25MatchesReference(t *testing.T) {
	docs := searchDocs(t, 7, 120, 4)
	for _, c := range []struct {
		query string
		terms []string
		keep  func(doc) bool
		k     int
	}{
		{`SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, "delta")`, []string{"delta"}, nil, 120},
		{`SELECT TOP 15 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, "kappa", "omega")`, []string{"kappa", "omega"}, nil, 15},
		{`SELECT VALUE c.id FROM c WHERE c.grp = 1 ORDER BY RANK FullTextScore(c.text, ["zeta", "sigma"]) OFFSET 3 LIMIT 10`, []string{"zeta", "sigma"},
			func(d doc) bool { n, _ := d.val.Property("grp").AsInt(); return n == 1 }, 13},
	} {
		ref := refBM25(docs, c.terms)
		var want []float64
		for _, d := range docs {
			if c.keep == nil || c.keep(d) {
				want = append(want, ref[d.val.Property("id").AsString()])
			}
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(want)))
		want = want[:min(c.k, len(want))]
		if strings.Contains(c.query, "OFFSET 3") {
			want = want[3:]
		}
		p, err := compile(c.query, "")
		if err != nil {
			t.Fatal(err)
		}
		check := func(label string, rows []eval.Value) {
			t.Helper()
			got := ids(t, rows)
			if len(got) != len(want) {
				t.Fatalf("%s: %s: %d rows, want %d", c.query, label, len(got), len(want))
			}
			for i, id := range got {
				if math.Abs(ref[id]-want[i]) > 1e-9 {
					t.Fatalf("%s: %s: row %d is %s with score %v, want score %v", c.query, label, i, id, ref[id], want[i])
				}
			}
		}
		for _, n := range []int{1, 3, 7} {
			for _, page := range []int{0, 4} {
				rows, err := runPages(p, split(docs, n), page, true, true)
				if err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("%d partitions, pages of %d", n, page), rows)
			}
		}
		// A split between pages: the first page over 3 partitions, the
		// rest over 6 (each of the 3 cut in two), resumed from the state.
		ready, err := GatherStats(p, sources(split(docs, 3), true))
		if err != nil {
			t.Fatal(err)
		}
		first, st, err := Exec(ready, sources(split(docs, 3), true), nil, 2)
		if err != nil {
			t.Fatal(err)
		}
		rest, err := runPagesFromState(p, func() []Source { return sources(split(docs, 6), true) }, st)
		if err != nil {
			t.Fatal(err)
		}
		check("after a split", append(first, rest...))
	}
}

// runPagesFromState gathers the statistics over the sources mk makes and
// runs p to the end from st.
func runPagesFromState(p *Plan, mk func() []Source, st *State) ([]eval.Value, error) {
	p, err := GatherStats(p, mk())
	if err != nil {
		return nil, err
	}
	var out []eval.Value
	for !st.Done() {
		var rows []eval.Value
		if rows, st, err = Exec(p, mk(), st, 3); err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// TestVectorOrderByMatchesBruteForce: ORDER BY VectorDistance with TOP,
// OFFSET LIMIT and a filter, over several partitionings and page sizes,
// equals sorting every document by the distance computed here (cosine
// and dot product highest first, Euclidean lowest first).
func TestVectorOrderByMatchesBruteForce(t *testing.T) {
	docs := searchDocs(t, 11, 150, 8)
	r := rand.New(rand.NewPCG(3, 4))
	q := make([]float64, 8)
	for i := range q {
		q[i] = math.Round(r.NormFloat64()*1000) / 1000
	}
	qj, _ := json.Marshal(q)
	vecOf := func(d doc) []float64 {
		var v []float64
		for _, x := range d.val.Property("v").Elems() {
			v = append(v, x.AsFloat())
		}
		return v
	}
	dist := map[string]func(a, b []float64) float64{
		"cosine": func(a, b []float64) float64 {
			var d, na, nb float64
			for i := range a {
				d += a[i] * b[i]
				na += a[i] * a[i]
				nb += b[i] * b[i]
			}
			return d / math.Sqrt(na*nb)
		},
		"dotproduct": func(a, b []float64) float64 {
			var d float64
			for i := range a {
				d += a[i] * b[i]
			}
			return d
		},
		"euclidean": func(a, b []float64) float64 {
			var d float64
			for i := range a {
				d += (a[i] - b[i]) * (a[i] - b[i])
			}
			return math.Sqrt(d)
		},
	}
	for _, c := range []struct {
		fn, opts, where string
		offset, k       int
	}{
		{"cosine", "", "", 0, 10},
		{"dotproduct", ", false, {distanceFunction: 'dotproduct'}", "", 0, 7},
		{"euclidean", ", true, {'distanceFunction': 'Euclidean'}", "", 0, 12},
		{"euclidean", ", false, {distanceFunction: 'euclidean'}", " WHERE c.grp != 2", 5, 9},
	} {
		type sc struct {
			id string
			s  float64
		}
		var all []sc
		for _, d := range docs {
			if c.where != "" {
				if g, _ := d.val.Property("grp").AsInt(); g == 2 {
					continue
				}
			}
			all = append(all, sc{d.val.Property("id").AsString(), dist[c.fn](vecOf(d), q)})
		}
		sort.SliceStable(all, func(i, j int) bool {
			if c.fn == "euclidean" {
				return all[i].s < all[j].s
			}
			return all[i].s > all[j].s
		})
		want := all[c.offset : c.offset+c.k]
		vd := fmt.Sprintf("VectorDistance(c.v, %s%s)", qj, c.opts)
		query := fmt.Sprintf("SELECT TOP %d VALUE [c.id, %s] FROM c%s ORDER BY %s", c.k, vd, c.where, vd)
		if c.offset > 0 {
			query = fmt.Sprintf("SELECT VALUE [c.id, %s] FROM c%s ORDER BY %s OFFSET %d LIMIT %d", vd, c.where, vd, c.offset, c.k)
		}
		p, err := compile(query, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 4} {
			for _, page := range []int{0, 3} {
				rows, err := runPages(p, split(docs, n), page, true, true)
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != len(want) {
					t.Fatalf("%s: %d rows, want %d", query, len(rows), len(want))
				}
				for i, row := range rows {
					id, s := row.Elem(0).AsString(), row.Elem(1).AsFloat()
					if id != want[i].id || math.Abs(s-want[i].s) > 1e-4*math.Max(1, math.Abs(s)) {
						t.Fatalf("%s (%d partitions, pages of %d): row %d is %s %v, want %s %v", query, n, page, i, id, s, want[i].id, want[i].s)
					}
				}
			}
		}
	}
}

// rrfRef fuses the components' scores of rows as the SDKs do: dense ranks
// per component (1 best, equal scores sharing), Σ w/(60 + rank).
func rrfRef(scores [][]float64, desc []bool, w []float64) []float64 {
	fused := make([]float64, len(scores))
	for c := range desc {
		vals := make([]float64, len(scores))
		for i := range scores {
			vals[i] = scores[i][c]
		}
		distinct := slices.Clone(vals)
		slices.Sort(distinct)
		distinct = slices.Compact(distinct)
		if desc[c] {
			slices.Reverse(distinct)
		}
		for i, v := range vals {
			fused[i] += w[c] / float64(60+slices.Index(distinct, v)+1)
		}
	}
	return fused
}

// TestRRFMatchesReference: ORDER BY RANK RRF of a text and a vector
// component, with weights, whose window (TOP) holds every matching row,
// equals the reference fusion; and the SDK-side execution of its hybrid
// query plan gives the same rows.
func TestRRFMatchesReference(t *testing.T) {
	docs := searchDocs(t, 5, 90, 4)
	ref := refBM25(docs, []string{"gamma"})
	q := []float64{0.5, -1, 0.25, 2}
	var rows []string
	var scores [][]float64
	for _, d := range docs {
		id := d.val.Property("id").AsString()
		if ref[id] == 0 {
			continue // the filter: FullTextContains(c.text, "gamma")
		}
		var v []float64
		for _, x := range d.val.Property("v").Elems() {
			v = append(v, x.AsFloat())
		}
		var e float64
		for i := range v {
			e += (v[i] - q[i]) * (v[i] - q[i])
		}
		rows = append(rows, id)
		scores = append(scores, []float64{ref[id], math.Sqrt(e)})
	}
	if len(rows) < 20 || len(rows) > 80 {
		t.Fatalf("%d matching rows: the corpus does not test much", len(rows))
	}
	fused := rrfRef(scores, []bool{true, false}, []float64{1, 3})
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return fused[order[i]] > fused[order[j]] })
	query := `SELECT TOP 80 VALUE c.id FROM c WHERE FullTextContains(c.text, "gamma") ORDER BY RANK RRF(FullTextScore(c.text, "gamma"), VectorDistance(c.v, [0.5, -1, 0.25, 2], false, {distanceFunction: "euclidean"}), [1, 3])`
	p, err := compile(query, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Shape() != Ranked {
		t.Fatalf("shape %s", p.Shape())
	}
	fusedOf := map[string]float64{}
	for i, id := range rows {
		fusedOf[id] = fused[i]
	}
	check := func(label string, got []string) {
		t.Helper()
		if len(got) != len(rows) {
			t.Fatalf("%s: %d rows, want %d", label, len(got), len(rows))
		}
		for i, id := range got {
			if math.Abs(fusedOf[id]-fused[order[i]]) > 1e-12 {
				t.Fatalf("%s: row %d is %s fused %v, want fused %v", label, i, id, fusedOf[id], fused[order[i]])
			}
		}
	}
	for _, n := range []int{1, 5} {
		for _, page := range []int{0, 7} {
			got, err := runPages(p, split(docs, n), page, true, true)
			if err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("%d partitions, pages of %d", n, page), ids(t, got))
		}
	}
	check("the SDK's execution of the hybrid plan", sdkHybrid(t, p, split(docs, 4)))
}

// sdkHybrid runs a plan's hybridSearchQueryInfo as the JavaScript SDK's
// hybridQueryExecutionContext does: the global statistics query on every
// partition, summed; its placeholders replaced in the component queries;
// each component query run on every partition, merged by its ORDER BY and
// cut to its TOP; the rows united by _rid, ranked per component, fused,
// then skip and take. It returns the payloads (here ids).
func sdkHybrid(t *testing.T, p *Plan, parts [][]doc) []string {
	t.Helper()
	raw, err := p.QueryPlan(nil)
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Hybrid struct {
			GlobalStatisticsQuery string
			ComponentQueryInfos   []struct {
				RewrittenQuery string
				OrderBy        []string
				Top            int
			}
			ComponentWeights []float64
			Skip, Take       *int
		} `json:"hybridSearchQueryInfo"`
	}
	if err := json.Unmarshal(raw, &plan); err != nil {
		t.Fatal(err)
	}
	h := plan.Hybrid
	run := func(text string) []eval.Value {
		t.Helper()
		q, err := parser.Parse(strings.ReplaceAll(text, OrderByFilter, "true"))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		cp, err := Compile(q, nil)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		var out []eval.Value
		for _, part := range parts {
			rows, err := runPages(cp, [][]doc{part}, 5, true, true)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rows...)
		}
		return out
	}
	var docCount int64
	var words []int64
	var hits [][]int64
	for _, r := range run(h.GlobalStatisticsQuery) {
		n, _ := r.Property("documentCount").AsInt()
		docCount += n
		for i, st := range r.Property("fullTextStatistics").Elems() {
			if i == len(words) {
				words = append(words, 0)
				hits = append(hits, make([]int64, st.Property("hitCounts").Len()))
			}
			w, _ := st.Property("totalWordCount").AsInt()
			words[i] += w
			for j, hc := range st.Property("hitCounts").Elems() {
				x, _ := hc.AsInt()
				hits[i][j] += x
			}
		}
	}
	type item struct {
		payload string
		scores  []float64
	}
	items := map[string]*item{}
	var ridOrder []string
	for _, c := range h.ComponentQueryInfos {
		text := strings.ReplaceAll(c.RewrittenQuery, "{documentdb-formattablehybridsearchquery-totaldocumentcount}", fmt.Sprint(docCount))
		k := 0
		for i := range h.ComponentQueryInfos {
			wc := fmt.Sprintf("{documentdb-formattablehybridsearchquery-totalwordcount-%d}", i)
			if !strings.Contains(text, wc) {
				continue
			}
			hc, _ := json.Marshal(hits[k])
			text = strings.ReplaceAll(text, wc, fmt.Sprint(words[k]))
			text = strings.ReplaceAll(text, fmt.Sprintf("{documentdb-formattablehybridsearchquery-hitcountsarray-%d}", i), string(hc))
			k++
		}
		rows := run(text)
		desc := c.OrderBy[0] == "Descending"
		sort.SliceStable(rows, func(i, j int) bool {
			a := rows[i].Property("orderByItems").Elem(0).Property("item").AsFloat()
			b := rows[j].Property("orderByItems").Elem(0).Property("item").AsFloat()
			if desc {
				return a > b
			}
			return a < b
		})
		rows = rows[:min(c.Top, len(rows))]
		for _, r := range rows {
			rid := r.Property("_rid").AsString()
			if items[rid] != nil {
				continue
			}
			pl := r.Property("payload")
			it := &item{payload: pl.Property("payload").AsString()}
			for _, s := range pl.Property("componentScores").Elems() {
				it.scores = append(it.scores, s.AsFloat())
			}
			items[rid] = it
			ridOrder = append(ridOrder, rid)
		}
	}
	var scores [][]float64
	for _, rid := range ridOrder {
		scores = append(scores, items[rid].scores)
	}
	desc := make([]bool, len(h.ComponentQueryInfos))
	for i, c := range h.ComponentQueryInfos {
		desc[i] = c.OrderBy[0] == "Descending"
	}
	w := h.ComponentWeights
	fused := rrfRef(scores, desc, w)
	order := make([]int, len(ridOrder))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return fused[order[i]] > fused[order[j]] })
	var out []string
	for _, i := range order {
		out = append(out, items[ridOrder[i]].payload)
	}
	if h.Skip != nil {
		out = out[min(*h.Skip, len(out)):]
	}
	if h.Take != nil {
		out = out[:min(*h.Take, len(out))]
	}
	return out
}

// TestHybridPlanText pins the hybrid plan's texts: the statistics query
// over the whole container (no WHERE), and a component query per RRF
// component ordered by its score, best first, with every component's
// score in the payload and the statistics placeholders the SDK fills in.
func TestHybridPlanText(t *testing.T) {
	p, err := compile(`SELECT TOP 5 c.id FROM c WHERE c.n > 1 ORDER BY RANK RRF(FullTextScore(c.text, "red", "car"), VectorDistance(c.v, [1, 2]), [2, 1])`, "")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.QueryPlan(nil)
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Hybrid hybridJSON `json:"hybridSearchQueryInfo"`
	}
	if err := json.Unmarshal(raw, &plan); err != nil {
		t.Fatal(err)
	}
	h := plan.Hybrid
	score := `_FullTextScore(c.text, ["red", "car"], {documentdb-formattablehybridsearchquery-totaldocumentcount}, {documentdb-formattablehybridsearchquery-totalwordcount-0}, {documentdb-formattablehybridsearchquery-hitcountsarray-0})`
	for _, c := range []struct{ got, want string }{
		{h.GlobalStatisticsQuery, `SELECT COUNT(1) AS documentCount, [{"totalWordCount": SUM(_FullTextWordCount(c.text)), "hitCounts": [COUNTIF(FullTextContains(c.text, "red")), COUNTIF(FullTextContains(c.text, "car"))]}] AS fullTextStatistics` + "\nFROM c"},
		{h.ComponentQueryInfos[0].RewrittenQuery, `SELECT TOP 5 c._rid, [{"item": ` + score + `}] AS orderByItems, {"payload": {"id": c.id}, "componentScores": [` + score + `, VectorDistance(c.v, [1, 2])]} AS payload` +
			"\nFROM c\nWHERE ((c.n > 1) AND ({documentdb-formattableorderbyquery-filter}))\nORDER BY " + score + " DESC"},
		{h.ComponentQueryInfos[1].OrderByExpressions[0], "VectorDistance(c.v, [1, 2])"},
		{fmt.Sprint(h.ComponentQueryInfos[1].OrderBy, *h.ComponentQueryInfos[1].Top, h.ComponentWeights, *h.Take, h.Skip == nil, h.RequiresGlobalStatistics), "[Descending] 5 [2 1] 5 true true"},
	} {
		if c.got != c.want {
			t.Errorf("got\n%s\nwant\n%s", c.got, c.want)
		}
	}
}
