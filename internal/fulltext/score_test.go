package fulltext

import (
	"math"
	"testing"
)

// corpus for the BM25 tests: one item per document; "" marks a document
// without the text property (it still counts in the document count, as the
// service's COUNT(1) counts it).
var bm25Corpus = []string{
	"The quick brown fox jumps over the lazy dog",
	"A red bicycle leans on a red wall",
	"Mountain bicycles climb mountain roads; mountain air is thin",
	"",
	"Bicycle repair: wheels, chains and brakes",
	"Foxes and dogs rarely share a den",
	"Road racing bicycles are light and fast",
	"The mountain was red at dawn",
	"A long essay about the history of the bicycle, from the draisine of 1817 to the safety bicycle of the 1880s and beyond",
	"",
	"Red fox, red dog, red bicycle",
	"Nothing relevant here at all",
}

// refBM25 scores every document of the corpus for the query words, from
// first principles: term frequencies and lengths counted from the
// analysed tokens, IDF = ln(1 + (N − n + 0.5)/(n + 0.5)) with N every
// document and n the documents containing the word, avgdl = total length /
// N, k1 = 1.2, b = 0.75. Each query word here is a single term.
func refBM25(t *testing.T, words []string) []float64 {
	en := AnalyzerFor(English)
	var terms []string
	for _, w := range words {
		toks := en.Analyze(w)
		if len(toks) != 1 {
			t.Fatalf("query word %q is %d terms", w, len(toks))
		}
		terms = append(terms, toks[0].Term)
	}
	N := float64(len(bm25Corpus))
	tf := make([]map[string]float64, len(bm25Corpus))
	dl := make([]float64, len(bm25Corpus))
	df := map[string]float64{}
	total := 0.0
	for d, s := range bm25Corpus {
		tf[d] = map[string]float64{}
		for _, tok := range en.Analyze(s) {
			tf[d][tok.Term]++
			dl[d]++
		}
		total += dl[d]
		for term := range tf[d] {
			df[term]++
		}
	}
	avgdl := total / N
	scores := make([]float64, len(bm25Corpus))
	for d := range bm25Corpus {
		for _, term := range terms {
			f := tf[d][term]
			if f == 0 {
				continue
			}
			idf := math.Log((N-df[term]+0.5)/(df[term]+0.5) + 1)
			scores[d] += idf * f * 2.2 / (f + 1.2*(0.25+0.75*dl[d]/avgdl))
		}
	}
	return scores
}

// partition is one physical partition's slice of the index, built with
// Update as the engine would: records in a map, statistics by addition.
type partition struct {
	records map[string][]byte
	stats   map[string]uint64
	docs    uint64
}

func buildPartition(t *testing.T, docs []int) *partition {
	en := AnalyzerFor(English)
	p := &partition{records: map[string][]byte{}, stats: map[string]uint64{}}
	for _, d := range docs {
		p.docs++ // DocStatsKey: every document
		if bm25Corpus[d] == "" {
			continue
		}
		dt := en.Index(bm25Corpus[d])
		c := Update([]string{"text"}, []byte{byte(d)}, nil, &dt)
		for _, kv := range c.Puts {
			p.records[string(kv.Key)] = kv.Value
		}
		for _, s := range c.Stats {
			n, err := AddCount(p.stats[string(s.Key)], s.Delta)
			if err != nil {
				t.Fatal(err)
			}
			p.stats[string(s.Key)] = n
		}
	}
	return p
}

// statistics reads the partition's Stats for single-term queries from its
// statistics records.
func (p *partition) statistics(qs []Query) Stats {
	path := []string{"text"}
	s := Stats{Documents: p.docs, TotalLength: p.stats[string(PathLengthKey(nil, path))], DF: make([]uint64, len(qs))}
	for i, q := range qs {
		s.DF[i] = p.stats[string(TermStatsKey(nil, path, q.Tokens[0].Term))]
	}
	return s
}

// scores scores the partition's documents from its postings and lengths.
func (p *partition) scores(t *testing.T, sc *Scorer, qs []Query, docs []int, out []float64) {
	path := []string{"text"}
	for _, d := range docs {
		lv, ok := p.records[string(LengthKey(nil, path, []byte{byte(d)}))]
		if !ok {
			out[d] = 0
			continue
		}
		dl, err := DecodeCount(lv)
		if err != nil {
			t.Fatal(err)
		}
		tf := make([]int, len(qs))
		for i, q := range qs {
			v, ok := p.records[string(PostingKey(nil, path, q.Tokens[0].Term, []byte{byte(d)}))]
			if !ok {
				continue
			}
			pos, err := DecodePosting(v)
			if err != nil {
				t.Fatal(err)
			}
			tf[i] = len(pos)
		}
		out[d] = sc.Score(tf, int(dl))
	}
}

func TestBM25AgainstReferenceAcrossPartitions(t *testing.T) {
	en := AnalyzerFor(English)
	words := []string{"red", "bicycle", "mountain", "fox"}
	var qs []Query
	for _, w := range words {
		qs = append(qs, en.Term(w))
	}
	want := refBM25(t, words)

	layouts := map[string][][]int{
		"one partition":    {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		"three partitions": {{0, 3, 6, 9}, {1, 4, 7, 10}, {2, 5, 8, 11}},
		// The middle partition split in two: statistics are per child now.
		"after a split": {{0, 3, 6, 9}, {1, 4}, {7, 10}, {2, 5, 8, 11}},
	}
	for name, layout := range layouts {
		var parts []*partition
		var total Stats
		for _, docs := range layout {
			p := buildPartition(t, docs)
			parts = append(parts, p)
			if err := total.Add(p.statistics(qs)); err != nil {
				t.Fatal(err)
			}
		}
		sc := NewScorer(total)
		got := make([]float64, len(bm25Corpus))
		for i, p := range parts {
			p.scores(t, sc, qs, layout[i], got)
		}
		for d := range want {
			if math.Abs(got[d]-want[d]) > 1e-12 {
				t.Errorf("%s: doc %d scores %.15f, reference %.15f", name, d, got[d], want[d])
			}
			// Direct scoring of the text agrees with the index.
			if bm25Corpus[d] != "" {
				if direct := sc.ScoreText(en.Prepare(bm25Corpus[d]), qs); math.Abs(direct-want[d]) > 1e-12 {
					t.Errorf("%s: doc %d direct score %.15f, reference %.15f", name, d, direct, want[d])
				}
			}
		}
		// Statistics gathered by scanning documents (no index) agree.
		var scanned Stats
		for _, s := range bm25Corpus {
			var tx *Text
			if s != "" {
				tx = en.Prepare(s)
			}
			if err := scanned.Add(DocStats(tx, qs)); err != nil {
				t.Fatal(err)
			}
		}
		if scanned.Documents != total.Documents || scanned.TotalLength != total.TotalLength {
			t.Errorf("%s: scanned statistics %+v, index statistics %+v", name, scanned, total)
		}
		for i := range qs {
			if scanned.DF[i] != total.DF[i] {
				t.Errorf("%s: df[%d] scanned %d, index %d", name, i, scanned.DF[i], total.DF[i])
			}
		}
	}
	// Sanity of the reference itself: the documents without any query word
	// score 0 and the red-heavy document ranks first.
	if want[11] != 0 || want[3] != 0 {
		t.Error("documents without the words must score 0")
	}
	best := 0
	for d := range want {
		if want[d] > want[best] {
			best = d
		}
	}
	if best != 10 {
		t.Errorf("best document %d, want 10", best)
	}
}

func TestBM25PhraseStatistics(t *testing.T) {
	// A phrase argument's tf is its occurrences and its df the documents
	// that contain it (the service counts hitCounts with FullTextContains).
	en := AnalyzerFor(English)
	q := en.Term("red bicycle")
	var s Stats
	for _, text := range bm25Corpus {
		var tx *Text
		if text != "" {
			tx = en.Prepare(text)
		}
		if err := s.Add(DocStats(tx, []Query{q})); err != nil {
			t.Fatal(err)
		}
	}
	if s.DF[0] != 2 { // docs 1 and 10
		t.Fatalf("df %d", s.DF[0])
	}
	if n := en.Prepare(bm25Corpus[1]).Count(q); n != 1 {
		t.Fatalf("tf %d", n)
	}
	if err := s.Add(Stats{Documents: 1, DF: []uint64{1, 2}}); err == nil {
		t.Fatal("adding statistics of other queries must fail")
	}
}

func TestIDFClamps(t *testing.T) {
	if IDF(3, 5) != IDF(3, 3) || IDF(10, 0) <= IDF(10, 1) || IDF(10, 10) <= 0 {
		t.Error("IDF")
	}
	// An empty container scores nothing and does not divide by zero.
	if got := NewScorer(Stats{DF: []uint64{0}}).Score([]int{1}, 3); math.IsNaN(got) || math.IsInf(got, 0) {
		t.Errorf("empty statistics: %v", got)
	}
}

func TestRRFHandComputed(t *testing.T) {
	// Three documents, a full-text score (higher is better, weight 1) and a
	// euclidean vector distance (lower is better, weight 2).
	//   FullTextScore:  d0 5.0 → rank 1; d1, d2 3.0 → rank 2 (equal scores share a rank)
	//   VectorDistance: d0 0.1 → rank 1; d2 0.2 → rank 2; d1 0.3 → rank 3
	scores := [][]float64{{5.0, 0.1}, {3.0, 0.3}, {3.0, 0.2}}
	comps := []Component{{Weight: 1}, {Weight: 2, Ascending: true}}
	fused, err := RRF(scores, comps)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1.0/61 + 2.0/61, 1.0/62 + 2.0/63, 1.0/62 + 2.0/62}
	for i := range want {
		if math.Abs(fused[i]-want[i]) > 1e-15 {
			t.Errorf("d%d: %v, want %v", i, fused[i], want[i])
		}
	}
	order := RankOrder(fused)
	if order[0] != 0 || order[1] != 2 || order[2] != 1 {
		t.Errorf("order %v, want [0 2 1]", order)
	}
	// A rank after a tie is the next rank, not a skipped one (the SDKs'
	// _compute_ranks): scores 9, 9, 8 rank 1, 1, 2.
	fused, _ = RRF([][]float64{{9}, {9}, {8}}, []Component{{Weight: 1}})
	if fused[2] != 1.0/62 {
		t.Errorf("rank after tie: %v", fused[2])
	}
	// An undefined (NaN) score ranks last.
	fused, _ = RRF([][]float64{{math.NaN()}, {1}}, []Component{{Weight: 1}})
	if fused[0] != 1.0/62 || fused[1] != 1.0/61 {
		t.Errorf("NaN: %v", fused)
	}
	if _, err := RRF([][]float64{{1, 2}}, []Component{{Weight: 1}}); err == nil {
		t.Error("mismatched components accepted")
	}
	if _, err := RRF(nil, nil); err == nil {
		t.Error("no components accepted")
	}
	if _, err := RRF([][]float64{{1}}, []Component{{Weight: math.Inf(1)}}); err == nil {
		t.Error("infinite weight accepted")
	}
}
