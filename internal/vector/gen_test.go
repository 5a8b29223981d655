package vector

import (
	"math"
	"math/rand/v2"
)

// mixture is a seeded Gaussian mixture: clusters centres drawn from
// N(0, 1) per dimension, points drawn around a random centre with standard
// deviation spread. Nothing is downloaded; the same seed gives the same
// vectors.
type mixture struct {
	rng     *rand.Rand
	dims    int
	spread  float64
	centres [][]float64
}

func newMixture(seed uint64, dims, clusters int, spread float64) *mixture {
	m := &mixture{rng: rand.New(rand.NewPCG(seed, 42)), dims: dims, spread: spread}
	for range clusters {
		c := make([]float64, dims)
		for i := range c {
			c[i] = m.rng.NormFloat64()
		}
		m.centres = append(m.centres, c)
	}
	return m
}

func (m *mixture) next() []float32 {
	c := m.centres[m.rng.IntN(len(m.centres))]
	v := make([]float32, m.dims)
	for i := range v {
		v[i] = float32(c[i] + m.spread*m.rng.NormFloat64())
	}
	return v
}

func (m *mixture) vectors(n int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = m.next()
	}
	return out
}

// bruteForce is the model: Score on every vector, sorted by the service's
// order, ties by id.
func bruteForce(f DistanceFunction, vs map[uint64][]float32, q []float32, k int, filter Filter) []Result {
	var all []Result
	for id, v := range vs {
		if filter != nil && !filter(id) {
			continue
		}
		all = append(all, Result{id, Score(f, q, v)})
	}
	sortResults(f, all)
	if len(all) > k {
		all = all[:k]
	}
	return all
}

func sortResults(f DistanceFunction, rs []Result) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0; j-- {
			a, b := rs[j-1], rs[j]
			if Better(f, b.Score, a.Score) || (b.Score == a.Score && b.ID < a.ID) {
				rs[j-1], rs[j] = b, a
			} else {
				break
			}
		}
	}
}

// recall is |got ∩ want| / |want|.
func recall(got, want []Result) float64 {
	if len(want) == 0 {
		return 1
	}
	in := make(map[uint64]bool, len(want))
	for _, r := range want {
		in[r.ID] = true
	}
	hit := 0
	for _, r := range got {
		if in[r.ID] {
			hit++
		}
	}
	return float64(hit) / float64(len(want))
}

func approxEqual(a, b float32) bool {
	d := math.Abs(float64(a - b))
	return d <= 1e-4*math.Max(1, math.Abs(float64(a)))
}
