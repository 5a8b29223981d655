package fulltext

import (
	"fmt"
	"math"
	"sort"
)

// BM25 parameters. The service says FullTextScore is "standard BM25"
// (articles/cosmos-db/gen-ai/full-text-search-faq.md) without publishing
// k1 and b, so these are the customary values (Robertson and Zaragoza, "The
// Probabilistic Relevance Framework: BM25 and Beyond", 2009; also Lucene's
// defaults).
const (
	K1 = 1.2
	B  = 0.75
)

// RRFConstant is the k of Reciprocal Rank Fusion, 1/(k + rank): 60 in the
// SDKs that fuse hybrid results (azure-cosmos Python
// _execution_context/hybrid_search_aggregator.py RRF_CONSTANT, Java
// HybridSearchDocumentQueryExecutionContext), as in Cormack, Clarke and
// Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and individual
// Rank Learning Methods" (SIGIR 2009).
const RRFConstant = 60

// Stats are the statistics BM25 uses, over the whole container: the sums
// of every physical partition's (Add). They mirror what the service's
// query plan gathers per partition and the SDKs add up (its
// globalStatisticsQuery: "SELECT COUNT(1) AS documentCount, [{totalWordCount:
// SUM(_FullTextWordCount(c.text)), hitCounts: [COUNTIF(FullTextContains(c.text,
// t1)), ...]}] AS fullTextStatistics FROM c").
type Stats struct {
	// Documents counts every document (COUNT(1)), with the path or not.
	Documents uint64
	// TotalLength is the sum of the texts' lengths in terms.
	TotalLength uint64
	// DF[i] counts the documents whose text contains query i.
	DF []uint64
}

// Add adds another partition's statistics for the same queries.
func (s *Stats) Add(o Stats) error {
	if s.DF == nil && s.Documents == 0 && s.TotalLength == 0 {
		s.DF = make([]uint64, len(o.DF))
	}
	if len(o.DF) != len(s.DF) {
		return fmt.Errorf("cannot add statistics of %d queries to statistics of %d", len(o.DF), len(s.DF))
	}
	s.Documents += o.Documents
	s.TotalLength += o.TotalLength
	for i, n := range o.DF {
		s.DF[i] += n
	}
	return nil
}

// DocStats is one document's contribution to Stats, for partitions read
// without an index: t is its analysed text, or nil when it has no string
// at the path.
func DocStats(t *Text, qs []Query) Stats {
	s := Stats{Documents: 1, DF: make([]uint64, len(qs))}
	if t == nil {
		return s
	}
	s.TotalLength = uint64(t.Length())
	for i, q := range qs {
		if t.Contains(q) {
			s.DF[i] = 1
		}
	}
	return s
}

// IDF is BM25's inverse document frequency of a term found in n of N
// documents, in the form that stays positive:
//
//	ln(1 + (N - n + 0.5) / (n + 0.5))
//
// n is clamped to N, since statistics gathered from partitions at slightly
// different times can disagree.
func IDF(N, n uint64) float64 {
	if n > N {
		n = N
	}
	return math.Log(1 + (float64(N-n)+0.5)/(float64(n)+0.5))
}

// Scorer scores documents for one FullTextScore call.
type Scorer struct {
	idf   []float64
	avgdl float64
}

// NewScorer prepares BM25 for the queries whose statistics s holds. The
// average document length is TotalLength / Documents, as the service's
// inputs (document count, total word count) imply.
func NewScorer(s Stats) *Scorer {
	sc := &Scorer{idf: make([]float64, len(s.DF))}
	for i, n := range s.DF {
		sc.idf[i] = IDF(s.Documents, n)
	}
	if s.Documents > 0 {
		sc.avgdl = float64(s.TotalLength) / float64(s.Documents)
	}
	return sc
}

// Score is the BM25 score of a document of length dl (in terms) in which
// query i occurs tf[i] times:
//
//	Σ idf(i) · tf(i)·(k1+1) / (tf(i) + k1·(1 − b + b·dl/avgdl))
//
// A document without any of the queries scores 0.
func (sc *Scorer) Score(tf []int, dl int) float64 {
	norm := 1.0
	if sc.avgdl > 0 {
		norm = 1 - B + B*float64(dl)/sc.avgdl
	}
	var score float64
	for i, f := range tf {
		if f <= 0 || i >= len(sc.idf) {
			continue
		}
		x := float64(f)
		score += sc.idf[i] * x * (K1 + 1) / (x + K1*norm)
	}
	return score
}

// ScoreText scores an analysed text directly.
func (sc *Scorer) ScoreText(t *Text, qs []Query) float64 {
	tf := make([]int, len(qs))
	for i, q := range qs {
		tf[i] = t.Count(q)
	}
	return sc.Score(tf, t.Length())
}

// Component is one ranking fused by RRF: its weight (1 when the query gives
// none) and its direction. Ascending is true when lower scores rank first,
// as for ORDER BY VectorDistance with the euclidean distance; FullTextScore
// ranks higher scores first.
type Component struct {
	Weight    float64
	Ascending bool
}

// RRF fuses rankings by Reciprocal Rank Fusion, as the SDKs fuse hybrid
// search results: scores[d][c] is document d's score in component c. Each
// component ranks all documents by score (1 is best); equal scores share a
// rank and the next distinct score takes the next rank. A document's fused
// score is Σ_c weight(c) / (RRFConstant + rank_c(d)). A NaN score (an
// undefined component) ranks after every number. It returns one fused score
// per document, in the order of scores.
func RRF(scores [][]float64, comps []Component) ([]float64, error) {
	if len(comps) == 0 {
		return nil, fmt.Errorf("%w: RRF needs at least one component", ErrBadArgument)
	}
	for d, row := range scores {
		if len(row) != len(comps) {
			return nil, fmt.Errorf("%w: document %d has %d component scores, not %d", ErrBadArgument, d, len(row), len(comps))
		}
	}
	for _, c := range comps {
		if math.IsNaN(c.Weight) || math.IsInf(c.Weight, 0) {
			return nil, fmt.Errorf("%w: RRF weights must be finite numbers", ErrBadArgument)
		}
	}
	fused := make([]float64, len(scores))
	order := make([]int, len(scores))
	for c, comp := range comps {
		for i := range order {
			order[i] = i
		}
		better := func(x, y float64) bool {
			if math.IsNaN(y) {
				return !math.IsNaN(x)
			}
			if math.IsNaN(x) {
				return false
			}
			if comp.Ascending {
				return x < y
			}
			return x > y
		}
		sort.SliceStable(order, func(i, j int) bool { return better(scores[order[i]][c], scores[order[j]][c]) })
		rank := 0
		for i, d := range order {
			s := scores[d][c]
			if i == 0 || !sameScore(s, scores[order[i-1]][c]) {
				rank++
			}
			fused[d] += comp.Weight / float64(RRFConstant+rank)
		}
	}
	return fused, nil
}

func sameScore(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// RankOrder returns document indexes ordered by fused score, highest
// first, ties in document order.
func RankOrder(fused []float64) []int {
	order := make([]int, len(fused))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return fused[order[i]] > fused[order[j]] })
	return order
}
