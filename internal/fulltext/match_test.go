package fulltext

import (
	"errors"
	"math/rand"
	"sort"
	"testing"
)

func TestContains(t *testing.T) {
	en := AnalyzerFor(English)
	text := "The quick brown fox jumps over the lazy dog near a red bicycle. Mountain bicycles are red too."
	fuzzy := func(s string, d float64) Query {
		q, err := en.FuzzyTerm(s, d)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	cases := []struct {
		name string
		q    Query
		want bool
		n    int // occurrences
	}{
		{"word", en.Term("fox"), true, 1},
		{"stemmed forms match", en.Term("jumping"), true, 1},
		{"plural and singular", en.Term("bicycle"), true, 2},
		{"case", en.Term("MOUNTAIN"), true, 1},
		{"absent", en.Term("cat"), false, 0},
		{"phrase", en.Term("red bicycle"), true, 1},
		{"phrase in another order", en.Term("bicycle red"), false, 0},
		{"phrase across a sentence end", en.Term("bicycle mountain"), true, 1}, // punctuation only separates words
		{"phrase with the same stop word gap", en.Term("over a lazy dog"), true, 1},
		{"phrase with a missing gap", en.Term("quick fox"), false, 0},
		{"only stop words", en.Term("the"), false, 0},
		{"empty", en.Term(""), false, 0},
		{"fuzzy 1", fuzzy("bycycle", 1), true, 2},
		{"fuzzy 2", fuzzy("mountian", 2), true, 1}, // transposition = 2 edits
		{"fuzzy too far", fuzzy("mountian", 1), false, 0},
		{"fuzzy 0 is exact", fuzzy("fox", 0), true, 1},
	}
	tx := en.Prepare(text)
	for _, c := range cases {
		if got := en.Contains(text, c.q); got != c.want {
			t.Errorf("%s: Contains = %v, want %v", c.name, got, c.want)
		}
		if got := tx.Count(c.q); got != c.n {
			t.Errorf("%s: Count = %d, want %d", c.name, got, c.n)
		}
	}
	// FullTextContainsAll and Any, as in the service's examples
	// (articles/cosmos-db/gen-ai/full-text-search.md).
	if !en.ContainsAll(text, en.Term("red"), en.Term("bicycle")) || en.ContainsAll(text, en.Term("red"), en.Term("skateboard")) {
		t.Error("ContainsAll")
	}
	if !en.ContainsAny(text, en.Term("skateboard"), en.Term("bicycle")) || en.ContainsAny(text, en.Term("skateboard"), en.Term("car")) {
		t.Error("ContainsAny")
	}
	if en.ContainsAll(text) || en.ContainsAny(text) {
		t.Error("no arguments match nothing")
	}
}

func TestFuzzyDistanceLimits(t *testing.T) {
	en := AnalyzerFor(English)
	for _, d := range []float64{-1, 3, 1.5} {
		if _, err := en.FuzzyTerm("x", d); !errors.Is(err, ErrBadArgument) {
			t.Errorf("distance %v: %v", d, err)
		}
	}
}

// levenshtein is the textbook full-matrix edit distance.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
		}
	}
	return d[len(ra)][len(rb)]
}

func TestWithinDistanceAgainstLevenshtein(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []rune("abcé")
	word := func() string {
		r := make([]rune, rng.Intn(7))
		for i := range r {
			r[i] = alphabet[rng.Intn(len(alphabet))]
		}
		return string(r)
	}
	for i := 0; i < 20000; i++ {
		a, b := word(), word()
		d := levenshtein(a, b)
		for max := 0; max <= 3; max++ {
			if got := WithinDistance(a, b, max); got != (d <= max) {
				t.Fatalf("WithinDistance(%q, %q, %d) = %v, distance %d", a, b, max, got, d)
			}
		}
	}
}

func TestExpander(t *testing.T) {
	e := NewExpander("bicycl", 2)
	dict := []string{"bicycl", "bicycles", "icycl", "tricycl", "bycycl", "bicyc", "motorcycl", "zzz", "bicyclist", "bcycl",
		"aicycl", "cicycl", "dicycl", "eicycl", "ficycl", "gicycl", "hicycl"}
	sort.Strings(dict)
	for _, w := range dict {
		e.Offer(w)
	}
	got := e.Terms()
	// Distance 0 first, then the distance-1 terms in term order, capped at 10.
	want := []string{"bicycl", "aicycl", "bcycl", "bicyc", "bycycl", "cicycl", "dicycl", "eicycl", "ficycl", "gicycl"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// TestPlanMatchesDirectEvaluation builds postings for a random corpus,
// runs predicates through a Plan over decoded postings, and compares with
// direct evaluation on the texts.
func TestPlanMatchesDirectEvaluation(t *testing.T) {
	en := AnalyzerFor(English)
	rng := rand.New(rand.NewSource(7))
	words := []string{"red", "bicycle", "bicycles", "mountain", "road", "the", "of", "fast", "racing", "bike", "wheel", "wheels"}
	var docs []string
	for i := 0; i < 60; i++ {
		n := 1 + rng.Intn(12)
		s := ""
		for j := 0; j < n; j++ {
			s += words[rng.Intn(len(words))] + " "
		}
		docs = append(docs, s)
	}
	// The index: posting values keyed by term then document.
	postings := map[string]map[int][]byte{}
	dict := map[string]bool{}
	path := []string{"text"}
	for d, s := range docs {
		dt := en.Index(s)
		c := Update(path, []byte{byte(d)}, nil, &dt)
		for _, kv := range c.Puts {
			if kv.Key[0] != KindPosting {
				continue
			}
			_, term, dk, err := DecodePostingKey(kv.Key)
			if err != nil {
				t.Fatal(err)
			}
			if postings[term] == nil {
				postings[term] = map[int][]byte{}
			}
			postings[term][int(dk[0])] = kv.Value
			dict[term] = true
		}
	}
	var dictSorted []string
	for w := range dict {
		dictSorted = append(dictSorted, w)
	}
	sort.Strings(dictSorted)

	mk := func() Query {
		if rng.Intn(3) == 0 {
			q, _ := en.FuzzyTerm(words[rng.Intn(len(words))][1:], 1)
			return q
		}
		if rng.Intn(3) == 0 {
			return en.Term(words[rng.Intn(len(words))] + " " + words[rng.Intn(len(words))])
		}
		return en.Term(words[rng.Intn(len(words))])
	}
	for trial := 0; trial < 300; trial++ {
		p := Plan{Path: path, All: rng.Intn(2) == 0}
		for n := 1 + rng.Intn(3); n > 0; n-- {
			p.Queries = append(p.Queries, mk())
		}
		var expanded [][]string
		for _, r := range p.Reads() {
			if r.Distance == 0 {
				expanded = append(expanded, []string{r.Term})
				continue
			}
			e := NewExpander(r.Term, r.Distance)
			for _, w := range dictSorted {
				e.Offer(w)
			}
			expanded = append(expanded, e.Terms())
		}
		terms := p.Terms(expanded)
		for d, s := range docs {
			positions := func(term string) []uint32 {
				v, ok := postings[term][d]
				if !ok {
					return nil
				}
				pos, err := DecodePosting(v)
				if err != nil {
					t.Fatal(err)
				}
				return pos
			}
			got := p.Match(terms, positions)
			var want bool
			if p.All {
				want = en.ContainsAll(s, p.Queries...)
			} else {
				want = en.ContainsAny(s, p.Queries...)
			}
			if got != want {
				t.Fatalf("doc %q, plan %+v: index says %v, text says %v", s, p, got, want)
			}
		}
	}
}
