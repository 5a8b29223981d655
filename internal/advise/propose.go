package advise

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"unicode"
)

// Proposal heuristics (see the package documentation).
const (
	minCoverage    = 0.9 // a property must be in 90% of the documents
	maxSingles     = 4   // single-property candidates
	maxPairs       = 2   // property pairs (each as concat and hierarchical)
	suffixBuckets  = 400 // hash and random suffixes: 1..400, as in Microsoft's example
	minPerBucket   = 10  // a time bucket holds at least 10 documents on average
	distinctFactor = 10  // enough distinct values: 10 per partition ...
	distinctMin    = 20  // ... and at least 20
)

// systemProperties are never candidates.
var systemProperties = map[string]bool{"_rid": true, "_self": true, "_etag": true, "_attachments": true, "_ts": true, "_lsn": true}

var dateLike = regexp.MustCompile(`^\d{4}-\d{2}(-\d{2})?([T ]\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?)?(Z|[+-]\d{2}:?\d{2})?$`)

// property is what the proposal heuristics know about one top-level property.
type property struct {
	name       string
	present    int
	scalar     bool // every value is a string or an integral number
	distinct   int
	groups     map[string]int32 // value identity → group
	values     []any            // per group, its value
	counts     []int            // per group, its documents
	docGroup   []int32          // per document, its group or -1
	dateLike   bool
	monotonic  bool
	rho        float64
	firstIndex int
}

// Propose suggests candidates from the documents' top-level properties; n
// is the number of physical partitions.
func Propose(docs []Document, n int) []Candidate {
	props := scanProperties(docs)
	total := float64(len(docs))
	enough := max(distinctMin, distinctFactor*n)
	var pool []*property // identifier-like, non-monotonic
	var buckets []*property
	for _, p := range props {
		if float64(p.present) < minCoverage*total || !p.scalar || p.distinct < 2 {
			continue
		}
		if p.monotonic || p.dateLike {
			if p.dateLike && p.monotonic && p.distinct <= len(docs)/minPerBucket {
				buckets = append(buckets, p)
			}
			continue
		}
		pool = append(pool, p)
	}
	var out []Candidate
	seen := map[string]bool{}
	add := func(expr, why string) {
		if !seen[expr] {
			seen[expr] = true
			out = append(out, Candidate{Expr: expr, Proposed: why})
		}
	}
	// Single properties with enough distinct values, most distinct first.
	singles := slices.Clone(pool)
	slices.SortStableFunc(singles, func(a, b *property) int { return cmp.Compare(b.distinct, a.distinct) })
	count := 0
	for _, p := range singles {
		if p.distinct >= enough && count < maxSingles {
			add(pathFor(p.name), fmt.Sprintf("%s distinct values in %.0f%% of the documents", thousands(p.distinct), 100*float64(p.present)/total))
			count++
		}
	}
	if count == 0 {
		// Nothing has enough values: still show the best there are.
		for _, p := range singles {
			if count < maxSingles {
				add(pathFor(p.name), fmt.Sprintf("%s distinct values, fewer than the %s wanted for %d partitions, but the most there are",
					thousands(p.distinct), thousands(enough), n))
				count++
			}
		}
	}
	// Pairs, low cardinality first: kept when together they say more than the
	// second alone and have enough distinct values.
	pairs := 0
	low := slices.Clone(pool)
	slices.SortStableFunc(low, func(a, b *property) int { return cmp.Compare(a.distinct, b.distinct) })
	for i := 0; i < len(low) && pairs < maxPairs; i++ {
		for j := i + 1; j < len(low) && pairs < maxPairs; j++ {
			a, b := low[i], low[j]
			if a.distinct == a.present || b.distinct == b.present {
				continue // a unique property needs no partner
			}
			d := distinctPairs(a, b)
			if d <= b.distinct || d < enough {
				continue
			}
			why := fmt.Sprintf("%s and %s together take %s distinct values (%s and %s alone)",
				pathFor(a.name), pathFor(b.name), thousands(d), thousands(a.distinct), thousands(b.distinct))
			add(fmt.Sprintf(`concat(%s, "-", %s)`, pathFor(a.name), pathFor(b.name)), why)
			add(fmt.Sprintf(`[%s, %s]`, pathFor(a.name), pathFor(b.name)), why+"; as a hierarchical key")
			pairs++
		}
	}
	// A time bucket alone, and spread by a hash of a high-cardinality
	// property and by a random suffix.
	if len(buckets) > 0 {
		slices.SortStableFunc(buckets, func(a, b *property) int { return cmp.Compare(a.distinct, b.distinct) })
		d := buckets[0]
		add(pathFor(d.name), fmt.Sprintf("date-like and monotonic (%s distinct values): the natural time bucket", thousands(d.distinct)))
		var h *property
		for _, p := range singles { // most distinct first; prefer an entity over a unique id
			if p.distinct != p.present {
				h = p
				break
			}
		}
		if h == nil && len(singles) > 0 {
			h = singles[0]
		}
		if h != nil {
			add(fmt.Sprintf(`concat(%s, ".", hash(%s, %d))`, pathFor(d.name), pathFor(h.name), suffixBuckets),
				fmt.Sprintf("time bucket %s spread over %d suffixes by a hash of %s (%s values), which readers who know it can compute",
					pathFor(d.name), suffixBuckets, pathFor(h.name), thousands(h.distinct)))
		}
		add(fmt.Sprintf(`concat(%s, ".", random(1, %d))`, pathFor(d.name), suffixBuckets),
			fmt.Sprintf("time bucket %s spread over %d random suffixes", pathFor(d.name), suffixBuckets))
	}
	return out
}

// scanProperties collects the top-level properties in order of first
// appearance.
func scanProperties(docs []Document) []*property {
	byName := map[string]*property{}
	var list []*property
	for i, d := range docs {
		for name, v := range d.Value {
			if systemProperties[name] {
				continue
			}
			p := byName[name]
			if p == nil {
				p = &property{name: name, scalar: true, groups: map[string]int32{}, docGroup: make([]int32, len(docs)), firstIndex: i}
				for j := range p.docGroup {
					p.docGroup[j] = -1
				}
				byName[name] = p
				list = append(list, p)
			}
			p.present++
			if !p.scalar {
				continue
			}
			switch x := v.(type) {
			case string:
			case float64:
				if x != math.Trunc(x) {
					p.scalar = false
				}
			default:
				p.scalar = false
			}
			if !p.scalar {
				continue
			}
			id := keyID([]any{v})
			g, ok := p.groups[id]
			if !ok {
				g = int32(len(p.values))
				p.groups[id] = g
				p.values = append(p.values, v)
				p.counts = append(p.counts, 0)
			}
			p.counts[g]++
			p.docGroup[i] = g
		}
	}
	// Order of first appearance; properties first seen in the same document
	// by name (a decoded document does not keep its member order).
	slices.SortStableFunc(list, func(a, b *property) int {
		return cmp.Or(cmp.Compare(a.firstIndex, b.firstIndex), cmp.Compare(a.name, b.name))
	})
	for _, p := range list {
		p.groups = nil
		if !p.scalar {
			p.docGroup, p.values, p.counts = nil, nil, nil
			continue
		}
		p.distinct = len(p.values)
		p.rho = p.monotonicity()
		p.monotonic = p.rho >= MonotonicThreshold
		dates := 0
		for g, v := range p.values {
			switch x := v.(type) {
			case string:
				if dateLike.MatchString(x) {
					dates += p.counts[g]
				}
			case float64:
				if (x >= 1e9 && x < 1e10) || (x >= 1e12 && x < 1e13) { // epoch seconds or milliseconds
					dates += p.counts[g]
				}
			}
		}
		p.dateLike = float64(dates) >= minCoverage*float64(p.present)
	}
	return list
}

// monotonicity is the Spearman correlation between insertion order and the
// property's values, over the documents that have it.
func (p *property) monotonicity() float64 {
	if p.distinct < 2 {
		return 0
	}
	order := make([]int, p.distinct)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareKeys([]any{p.values[a]}, []any{p.values[b]}) })
	sizes := make([]int, len(order))
	for i, g := range order {
		sizes[i] = p.counts[g]
	}
	ranks := midranks(sizes)
	rankOf := make([]float64, p.distinct)
	for i, g := range order {
		rankOf[g] = ranks[i]
	}
	xs := make([]float64, 0, p.present)
	ys := make([]float64, 0, p.present)
	for _, g := range p.docGroup {
		if g >= 0 {
			xs = append(xs, float64(len(xs)+1))
			ys = append(ys, rankOf[g])
		}
	}
	return pearson(xs, ys)
}

// distinctPairs counts the distinct (a, b) value pairs.
func distinctPairs(a, b *property) int {
	seen := map[[2]int32]bool{}
	for i := range a.docGroup {
		if a.docGroup[i] >= 0 && b.docGroup[i] >= 0 {
			seen[[2]int32{a.docGroup[i], b.docGroup[i]}] = true
		}
	}
	return len(seen)
}

// pathFor writes a top-level property name as a key path, quoting names
// that are not plain.
func pathFor(name string) string {
	plain := name != "" && name != "*" && name != "?"
	for _, r := range name {
		switch r {
		case '/', '"', '\\', ',', '(', ')', '[', ']':
			plain = false
		}
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			plain = false
		}
	}
	if plain {
		return "/" + name
	}
	return "/" + strconv.Quote(name)
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
