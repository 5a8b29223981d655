package vector

import (
	"math"
	"math/rand/v2"
	"slices"
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
	// bases, when set (newLowRankMixture), give each cluster a covariance
	// of rank len(bases[c]) plus isotropic noise of standard deviation
	// noise, as embeddings have a low intrinsic dimension.
	bases [][][]float64
	noise float64
}

// newLowRankMixture is a Gaussian mixture whose clusters spread along
// rank random directions each (standard deviation spread along each) plus
// isotropic noise: each component is N(centre, spread²·B Bᵀ + noise²·I).
func newLowRankMixture(seed uint64, dims, clusters, rank int, spread, noise float64) *mixture {
	m := newMixture(seed, dims, clusters, spread)
	m.noise = noise
	for range clusters {
		b := make([][]float64, rank)
		for r := range b {
			b[r] = make([]float64, dims)
			for i := range b[r] {
				b[r][i] = m.rng.NormFloat64()
			}
			n := 0.0
			for _, x := range b[r] {
				n += x * x
			}
			n = math.Sqrt(n)
			for i := range b[r] {
				b[r][i] /= n
			}
		}
		m.bases = append(m.bases, b)
	}
	return m
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
	ci := m.rng.IntN(len(m.centres))
	c := m.centres[ci]
	v := make([]float32, m.dims)
	if m.bases != nil {
		acc := slices.Clone(c)
		for _, dir := range m.bases[ci] {
			z := m.spread * m.rng.NormFloat64() * math.Sqrt(float64(m.dims)/float64(len(m.bases[ci])))
			for i, x := range dir {
				acc[i] += z * x
			}
		}
		for i := range v {
			v[i] = float32(acc[i] + m.noise*m.rng.NormFloat64())
		}
		return v
	}
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
		s, _ := Score(f, q, v)
		all = append(all, Result{id, s})
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
