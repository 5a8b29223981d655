package fulltext

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"unicode/utf8"
)

// MaxDistance is the largest edit distance of a fuzzy term, and
// MaxFuzzyExpansions the most index terms one fuzzy term expands to (the
// service: "limited to a maximum edit distance of 2 and 10 suggestions",
// articles/cosmos-db/gen-ai/full-text-search-faq.md).
const (
	MaxDistance        = 2
	MaxFuzzyExpansions = 10
)

// ErrBadArgument is the cause of errors in full-text function arguments: a
// bad request.
var ErrBadArgument = errors.New("invalid full-text search argument")

// QueryToken is one term of a query argument and its offset from the
// argument's first term (stop words between them count, as in the text).
type QueryToken struct {
	Term   string
	Offset uint32
}

// Query is one analysed argument of FullTextContains, FullTextContainsAll,
// FullTextContainsAny or FullTextScore: a word, or a phrase whose words must
// appear in the text in the same order and with the same gaps. Distance is
// the edit distance a fuzzy argument allows each word (0 for an exact one).
// A Query with no tokens (an argument made only of stop words or
// punctuation) matches nothing.
type Query struct {
	Raw      string
	Distance int
	Tokens   []QueryToken
}

// Term analyses a string argument the way texts are analysed.
func (a *Analyzer) Term(s string) Query {
	toks := a.Analyze(s)
	q := Query{Raw: s, Tokens: make([]QueryToken, len(toks))}
	for i, t := range toks {
		q.Tokens[i] = QueryToken{Term: t.Term, Offset: t.Pos - toks[0].Pos}
	}
	return q
}

// FuzzyTerm analyses a fuzzy argument {"term": s, "distance": d}. The
// distance must be a whole number from 0 to MaxDistance.
func (a *Analyzer) FuzzyTerm(s string, distance float64) (Query, error) {
	if math.IsNaN(distance) || distance != math.Trunc(distance) || distance < 0 || distance > MaxDistance {
		return Query{}, fmt.Errorf("%w: the fuzzy search distance must be an integer from 0 to %d, not %v", ErrBadArgument, MaxDistance, distance)
	}
	q := a.Term(s)
	q.Distance = int(distance)
	return q, nil
}

// Text is an analysed text, ready to be matched against many queries.
type Text struct {
	length int
	by     map[string][]uint32
}

// Prepare analyses a document's text once.
func (a *Analyzer) Prepare(text string) *Text {
	toks := a.Analyze(text)
	t := &Text{length: len(toks), by: make(map[string][]uint32, len(toks))}
	for _, tok := range toks {
		t.by[tok.Term] = append(t.by[tok.Term], tok.Pos)
	}
	return t
}

// Length is the text's length in terms, the BM25 document length.
func (t *Text) Length() int { return t.length }

// candidates are the text's terms that match each token of q: the token
// itself, or for a fuzzy query every term within the distance.
func (t *Text) candidates(q Query) [][]string {
	out := make([][]string, len(q.Tokens))
	for i, tok := range q.Tokens {
		if q.Distance == 0 {
			if _, ok := t.by[tok.Term]; ok {
				out[i] = []string{tok.Term}
			}
			continue
		}
		for term := range t.by {
			if WithinDistance(tok.Term, term, q.Distance) {
				out[i] = append(out[i], term)
			}
		}
	}
	return out
}

// Count is the number of places where q occurs in the text: its term
// frequency for scoring.
func (t *Text) Count(q Query) int {
	return q.Count(t.candidates(q), func(term string) []uint32 { return t.by[term] })
}

// Contains reports whether q occurs in the text.
func (t *Text) Contains(q Query) bool { return t.Count(q) > 0 }

// Contains is FullTextContains on a text value: whether q occurs in text.
func (a *Analyzer) Contains(text string, q Query) bool { return a.Prepare(text).Contains(q) }

// ContainsAll is FullTextContainsAll: whether every query occurs in text.
func (a *Analyzer) ContainsAll(text string, qs ...Query) bool {
	t := a.Prepare(text)
	for _, q := range qs {
		if !t.Contains(q) {
			return false
		}
	}
	return len(qs) > 0
}

// ContainsAny is FullTextContainsAny: whether some query occurs in text.
func (a *Analyzer) ContainsAny(text string, qs ...Query) bool {
	t := a.Prepare(text)
	for _, q := range qs {
		if t.Contains(q) {
			return true
		}
	}
	return false
}

// Count counts the occurrences of q given, for each of its tokens, the
// terms that match it (cands[i]: the token itself, or a fuzzy token's
// expansions) and the positions of a term in one document (sorted; nil
// when the document lacks the term). It is shared by direct evaluation and
// evaluation on postings read from the index. An occurrence is a position
// p where every token i has a matching term at p + Offset(i).
func (q Query) Count(cands [][]string, positions func(term string) []uint32) int {
	if len(q.Tokens) == 0 || len(cands) != len(q.Tokens) {
		return 0
	}
	lists := make([][]uint32, len(q.Tokens))
	for i := range q.Tokens {
		lists[i] = mergePositions(cands[i], positions)
		if len(lists[i]) == 0 {
			return 0
		}
	}
	n := 0
	for _, p := range lists[0] {
		ok := true
		for i := 1; i < len(lists) && ok; i++ {
			ok = hasPos(lists[i], p+q.Tokens[i].Offset)
		}
		if ok {
			n++
		}
	}
	return n
}

func mergePositions(terms []string, positions func(string) []uint32) []uint32 {
	if len(terms) == 1 {
		return positions(terms[0])
	}
	var all []uint32
	for _, t := range terms {
		all = append(all, positions(t)...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all
}

func hasPos(list []uint32, p uint32) bool {
	i := sort.Search(len(list), func(i int) bool { return list[i] >= p })
	return i < len(list) && list[i] == p
}

// WithinDistance reports whether the Levenshtein distance between a and b
// (in code points: insertions, deletions, substitutions) is at most max.
// It is bounded: O(len(a)·(2·max+1)) steps, and it returns false at once
// for terms longer than MaxTermBytes or lengths that differ by more than max.
func WithinDistance(a, b string, max int) bool {
	if a == b {
		return true
	}
	if max <= 0 || len(a) > MaxTermBytes || len(b) > MaxTermBytes {
		return false
	}
	ra, rb := []rune(a), []rune(b)
	if abs(len(ra)-len(rb)) > max {
		return false
	}
	// Banded dynamic programming: only cells with |i-j| <= max matter.
	inf := max + 1
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
		if j > max {
			prev[j] = inf
		}
	}
	for i := 1; i <= len(ra); i++ {
		lo, hi := i-max, i+max
		if lo < 1 {
			lo = 1
		}
		if hi > len(rb) {
			hi = len(rb)
		}
		for j := range cur {
			cur[j] = inf
		}
		if i <= max {
			cur[0] = i
		}
		best := cur[0]
		for j := lo; j <= hi; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := prev[j-1] + cost
			if prev[j]+1 < v {
				v = prev[j] + 1
			}
			if cur[j-1]+1 < v {
				v = cur[j-1] + 1
			}
			if v > inf {
				v = inf
			}
			cur[j] = v
			if v < best {
				best = v
			}
		}
		if best > max {
			return false
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)] <= max
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// distance is the exact Levenshtein distance when it is at most max, else
// max+1.
func distance(a, b string, max int) int {
	for d := 0; d <= max; d++ {
		if WithinDistance(a, b, d) {
			return d
		}
	}
	return max + 1
}

// Expander chooses the index terms a fuzzy token stands for, reading a
// path's dictionary (its term statistics keys, in order) one term at a
// time: the MaxFuzzyExpansions terms closest to the token, ties broken by
// term order. Its memory is bounded by MaxFuzzyExpansions.
type Expander struct {
	token string
	max   int
	best  []scored
}

type scored struct {
	term string
	d    int
}

// NewExpander starts the expansion of one fuzzy token.
func NewExpander(token string, distance int) *Expander {
	return &Expander{token: token, max: distance}
}

// Offer considers one dictionary term.
func (e *Expander) Offer(term string) {
	if !utf8.ValidString(term) {
		return
	}
	d := distance(e.token, term, e.max)
	if d > e.max {
		return
	}
	s := scored{term, d}
	i := sort.Search(len(e.best), func(i int) bool {
		b := e.best[i]
		return b.d > d || (b.d == d && b.term > term)
	})
	if i >= MaxFuzzyExpansions {
		return
	}
	e.best = append(e.best, scored{})
	copy(e.best[i+1:], e.best[i:])
	e.best[i] = s
	if len(e.best) > MaxFuzzyExpansions {
		e.best = e.best[:MaxFuzzyExpansions]
	}
}

// Terms returns the chosen terms, closest first.
func (e *Expander) Terms() []string {
	out := make([]string, len(e.best))
	for i, s := range e.best {
		out[i] = s.term
	}
	return out
}
