package vector

import "sort"

// Result is one search answer: an id and its VectorDistance score under
// the index's distance function.
type Result struct {
	ID    uint64
	Score float32
}

// cand is an id with its internal lower-is-closer distance.
type cand struct {
	id uint64
	d  float32
}

// less orders candidates by distance, then by id, so that every search is
// deterministic when distances tie.
func (a cand) less(b cand) bool {
	if a.d != b.d {
		return a.d < b.d
	}
	return a.id < b.id
}

// topK keeps the k closest candidates seen: a bounded max-heap on
// distance whose root is the worst kept candidate.
type topK struct {
	k int
	h []cand
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]cand, 0, min(k, 1<<16))} }

// full reports whether k candidates are kept.
func (t *topK) full() bool { return len(t.h) >= t.k }

// push offers a candidate.
func (t *topK) push(c cand) {
	if t.k <= 0 {
		return
	}
	if len(t.h) < t.k {
		t.h = append(t.h, c)
		i := len(t.h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !t.h[p].less(t.h[i]) {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if !c.less(t.h[0]) {
		return
	}
	t.h[0] = c
	i, n := 0, len(t.h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && t.h[l].less(t.h[r]) {
			m = r
		}
		if !t.h[i].less(t.h[m]) {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// sorted returns the kept candidates, closest first.
func (t *topK) sorted() []cand {
	out := append([]cand(nil), t.h...)
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out
}

// Collector keeps the best k of a stream of scored ids: a bounded heap,
// for callers that compute scores themselves (an engine scanning items for
// a flat index or below ScanThreshold). The zero value is not usable; use
// NewCollector.
type Collector struct {
	m metric
	t *topK
}

// NewCollector returns a Collector of the best k scores under f.
func NewCollector(f DistanceFunction, k int) *Collector {
	return &Collector{m: metric{f}, t: newTopK(k)}
}

// Add offers an id with its VectorDistance score.
func (c *Collector) Add(id uint64, score float32) {
	d := score
	if c.m.f != Euclidean {
		d = -score
	}
	c.t.push(cand{id, d})
}

// Results returns the kept ids, best first (ties by id).
func (c *Collector) Results() []Result {
	cs := c.t.sorted()
	out := make([]Result, len(cs))
	for i, x := range cs {
		s := x.d
		if c.m.f != Euclidean {
			s = -x.d
		}
		out[i] = Result{x.id, s}
	}
	return out
}

func results(m metric, cs []cand) []Result {
	out := make([]Result, len(cs))
	for i, x := range cs {
		out[i] = Result{x.id, m.score(x.d)}
	}
	return out
}
