package partition

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/epk"
)

// model is the dumb partition map the real one is checked against: a list
// of ranges, split by list surgery and searched linearly.
type model struct {
	ranges []Range
	next   int
}

// route returns the position of the range that holds e by a linear scan:
// Min <= e < Max, where the last range holds everything above its Min.
func (md *model) route(e string) int {
	for i, r := range md.ranges {
		if r.Min <= e && (e < r.Max || i == len(md.ranges)-1) {
			return i
		}
	}
	return -1
}

// valid says whether bounds may split the range: increasing, strictly
// inside it, and never MaxEPK itself.
func (md *model) valid(r Range, bounds []string) bool {
	prev := r.Min
	for _, b := range bounds {
		if b <= prev || b == epk.MaxEPK || (r.Max != epk.MaxEPK && b >= r.Max) {
			return false
		}
		prev = b
	}
	return true
}

func (md *model) split(i int, bounds []string) {
	r := md.ranges[i]
	edges := append(append([]string{r.Min}, bounds...), r.Max)
	parents := append(slices.Clone(r.Parents), r.ID)
	var children []Range
	for j := 0; j+1 < len(edges); j++ {
		children = append(children, Range{ID: strconv.Itoa(md.next), Min: edges[j], Max: edges[j+1], Parents: parents})
		md.next++
	}
	md.ranges = slices.Concat(md.ranges[:i], children, md.ranges[i+1:])
}

// covers checks the model's own invariant without package code: "" … "FF"
// with no gap or overlap.
func (md *model) covers(t *testing.T) {
	t.Helper()
	rs := md.ranges
	if rs[0].Min != "" || rs[len(rs)-1].Max != "FF" {
		t.Fatalf("the model does not span \"\" … \"FF\": %v", rs)
	}
	for i := 0; i+1 < len(rs); i++ {
		if rs[i].Max != rs[i+1].Min || rs[i].Min >= rs[i].Max {
			t.Fatalf("the model has a gap or overlap at %d: %v", i, rs)
		}
	}
}

// randEPK draws from a small alphabet so that draws often equal, extend or
// neighbour each other and the map's bounds.
func randEPK(rng *rand.Rand, bounds []string) string {
	if len(bounds) > 0 && rng.IntN(3) == 0 {
		b := bounds[rng.IntN(len(bounds))]
		switch rng.IntN(3) {
		case 0:
			return b
		case 1:
			return b + "0"
		default:
			if b != "" {
				return b[:len(b)-1]
			}
		}
	}
	const digits = "0137ACF"
	var sb strings.Builder
	for range rng.IntN(5) {
		sb.WriteByte(digits[rng.IntN(len(digits))])
	}
	return sb.String()
}

// TestMapAgainstModel applies random splits to a Map and to the model, and
// checks after each that the map is still a partition map equal to the
// model, that Route agrees with the linear scan, and that the spans of a
// random EPK range hold exactly the EPKs inside it, each in the range that
// routes it.
func TestMapAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		n := 1 + rng.IntN(4)
		m := Initial(hashV2, n)
		md := &model{ranges: m.Ranges(), next: n}
		for step := 0; step < 150; step++ {
			var edges []string
			for _, r := range md.ranges {
				edges = append(edges, r.Min)
			}
			i := rng.IntN(len(md.ranges))
			r := md.ranges[i]
			var bounds []string
			for range rng.IntN(4) {
				bounds = append(bounds, randEPK(rng, append(edges, r.Max)))
			}
			if rng.IntN(4) != 0 { // mostly valid splits, sometimes whatever was drawn
				slices.Sort(bounds)
				bounds = slices.Compact(bounds)
			}
			m2, children, err := m.Split(r.ID, bounds, md.next)
			if md.valid(r, bounds) {
				if err != nil {
					t.Fatalf("seed %d step %d: split of %s at %q: %v", seed, step, r.ID, bounds, err)
				}
				md.split(i, bounds)
				if len(children) != len(bounds)+1 {
					t.Fatalf("seed %d step %d: %d children for %d bounds", seed, step, len(children), len(bounds))
				}
				m = m2
			} else if err == nil {
				t.Fatalf("seed %d step %d: split of %s [%q, %q) at %q accepted", seed, step, r.ID, r.Min, r.Max, bounds)
			}
			md.covers(t)
			if err := m.Check(); err != nil {
				t.Fatalf("seed %d step %d: %v\n%s", seed, step, err, m)
			}
			if got, want := m.String(), (Map{ranges: md.ranges}).String(); got != want {
				t.Fatalf("seed %d step %d: map\n%s\nmodel\n%s", seed, step, got, want)
			}
			if _, err := New(m.Ranges()); err != nil {
				t.Fatalf("seed %d step %d: New refuses the map's own ranges: %v", seed, step, err)
			}
			for range 20 {
				e := randEPK(rng, edges)
				if got, want := m.Locate(e), md.route(e); got != want {
					t.Fatalf("seed %d step %d: Locate(%q) = %d, linear scan %d\n%s", seed, step, e, got, want, m)
				}
			}
			checkSpans(t, rng, m, md, edges)
		}
	}
}

// checkSpans draws an EPK range and checks that every drawn EPK lies in
// exactly one of its spans, in the range that routes it, when it is inside
// the range, and in none otherwise.
func checkSpans(t *testing.T, rng *rand.Rand, m Map, md *model, edges []string) {
	t.Helper()
	a, b := randEPK(rng, edges), randEPK(rng, edges)
	if b < a {
		a, b = b, a
	}
	if rng.IntN(4) == 0 {
		b = epk.MaxEPK
	}
	ss, err := m.Spans(Scope{Range: epk.Range{Min: a, Max: b}})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range ss {
		if s.Point || (s.Min >= s.Max && s.Max != epk.MaxEPK) {
			t.Fatalf("spans of [%q, %q): span %d is a point or empty: %+v", a, b, i, ss)
		}
		if i > 0 && (s.Index <= ss[i-1].Index || s.Min != ss[i-1].Max) {
			t.Fatalf("spans of [%q, %q) are not contiguous and in order: %+v", a, b, ss)
		}
	}
	for range 20 {
		e := randEPK(rng, append(edges, a, b))
		inside := a <= e && (e < b || b == epk.MaxEPK)
		var holders []int
		for _, s := range ss {
			if s.Min <= e && (e < s.Max || s.Max == epk.MaxEPK) {
				holders = append(holders, s.Index)
			}
		}
		switch {
		case inside && (len(holders) != 1 || holders[0] != md.route(e)):
			t.Fatalf("EPK %q inside [%q, %q) is in the spans of ranges %v, want [%d]: %+v\n%s", e, a, b, holders, md.route(e), ss, m)
		case !inside && len(holders) != 0:
			t.Fatalf("EPK %q outside [%q, %q) is in the spans of ranges %v: %+v", e, a, b, holders, ss)
		}
	}
}

// TestMedianBoundAgainstModel checks MedianBound on random sizes against
// a brute force over every cut between distinct EPKs.
func TestMedianBoundAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for iter := 0; iter < 2000; iter++ {
		var sizes []Logical
		e := 0
		for range rng.IntN(8) {
			e += rng.IntN(2) // repeats: several keys of one EPK
			sizes = append(sizes, Logical{EPK: strconv.Itoa(10 + e), Bytes: rng.Int64N(100)})
		}
		// The model: distinct EPKs with their total bytes.
		var epks []string
		byEPK := map[string]int64{}
		var total int64
		for _, s := range sizes {
			if _, ok := byEPK[s.EPK]; !ok {
				epks = append(epks, s.EPK)
			}
			byEPK[s.EPK] += s.Bytes
			total += s.Bytes
		}
		bound, ok := MedianBound(sizes)
		if ok != (len(epks) >= 2) {
			t.Fatalf("%v: ok = %v with %d EPKs", sizes, ok, len(epks))
		}
		if !ok {
			continue
		}
		// The bound is one of the EPKs past the first, so the cut falls
		// between logical partitions and leaves both sides non-empty.
		j := slices.Index(epks, bound)
		if j < 1 {
			t.Fatalf("%v: bound %q is not an EPK past the first", sizes, bound)
		}
		// Brute force: the first cut whose left side holds at least half,
		// or the last cut if only the last EPK reaches it.
		var left int64
		want := len(epks) - 1
		for i, e := range epks[:len(epks)-1] {
			left += byEPK[e]
			if left*2 >= total {
				want = i + 1
				break
			}
		}
		if j != want {
			t.Fatalf("%v: bound %q (cut %d), brute force cut %d", sizes, bound, j, want)
		}
	}
}
