package bench

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Key distributions: how a worker picks the item an operation addresses.
const (
	// DistUniform picks every loaded item with the same probability.
	DistUniform = "uniform"
	// DistZipfian picks loaded items by a scrambled Zipfian law: a few items
	// are hot, and the hot ones are scattered over the key space.
	DistZipfian = "zipfian"
	// DistLatest picks items by a Zipfian law over their age: the most
	// recently inserted item is the most popular (YCSB's "latest").
	DistLatest = "latest"
)

// Distributions are the key distributions, in the order the help lists them.
var Distributions = []string{DistUniform, DistZipfian, DistLatest}

// DefaultZipfTheta is YCSB's Zipfian constant.
const DefaultZipfTheta = 0.99

// zeta returns the generalized harmonic number sum_{i=1..n} 1/i^theta,
// continuing from zeta(from) = base (pass 0 and 0 to start afresh).
func zeta(from, n int64, theta, base float64) float64 {
	s := base
	for i := from + 1; i <= n; i++ {
		s += 1 / math.Pow(float64(i), theta)
	}
	return s
}

// zipfian draws ranks in [0, n) with P(rank r) proportional to 1/(r+1)^theta,
// by the method of Gray et al., "Quickly generating billion-record synthetic
// databases" (SIGMOD 1994), as YCSB's ZipfianGenerator implements it: ranks
// 0 and 1 are exact, larger ones come from a closed-form inverse of the
// continuous approximation of the cumulative distribution. One draw costs a
// uniform variate and a Pow; zeta(n) is computed once (O(n)) and extended
// incrementally when n grows. Valid for 0 < theta < 1. Not safe for
// concurrent use.
type zipfian struct {
	n     int64
	theta float64
	alpha float64 // 1/(1-theta)
	zetan float64 // zeta(n, theta)
	zeta2 float64 // zeta(2, theta)
	eta   float64
	half  float64 // 1 + 0.5^theta: the cumulative mass of ranks 0 and 1, times zetan
}

// newZipfian returns a generator over n >= 1 ranks; zetan must be
// zeta(0, n, theta, 0).
func newZipfian(n int64, theta, zetan float64) zipfian {
	z := zipfian{n: n, theta: theta, alpha: 1 / (1 - theta), zeta2: zeta(0, 2, theta, 0), half: 1 + math.Pow(0.5, theta)}
	z.setN(n, zetan)
	return z
}

func (z *zipfian) setN(n int64, zetan float64) {
	z.n, z.zetan = n, zetan
	z.eta = (1 - math.Pow(2/float64(n), 1-z.theta)) / (1 - z.zeta2/zetan)
}

// grow extends the generator to n ranks (n larger than before), adding the
// new terms to zeta.
func (z *zipfian) grow(n int64) {
	if n > z.n {
		z.setN(n, zeta(z.n, n, z.theta, z.zetan))
	}
}

// rank maps a uniform u in [0, 1) to a rank in [0, n).
func (z *zipfian) rank(u float64) int64 {
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.half {
		return min(1, z.n-1)
	}
	r := int64(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(max(r, 0), z.n-1)
}

// permutation is a fixed pseudo-random bijection of [0, n): the scramble of
// the scrambled Zipfian distribution, which spreads the hot ranks over the
// key space. YCSB scrambles with an FNV hash modulo the item count, which
// sends some ranks to the same item and leaves other items unreachable; a
// bijection keeps the Zipfian law exact over the items. It is a cycle walk
// over an invertible mixer of the smallest power-of-two domain >= n (each
// step - a multiplication by an odd constant, an addition, an xor with a
// right shift, all modulo 2^k - is a bijection of [0, 2^k)), so a point takes
// fewer than two mixes on average.
type permutation struct {
	n     uint64
	k     uint // log2 of the domain
	mask  uint64
	seed  uint64
	shift uint
}

func newPermutation(n int64, seed uint64) permutation {
	p := permutation{n: uint64(max(n, 1)), seed: seed}
	p.k = uint(bits.Len64(p.n - 1))
	p.mask = 1<<p.k - 1
	p.shift = max(p.k/2, 1)
	return p
}

func (p *permutation) mix(x uint64) uint64 {
	x = (x*0x9e3779b97f4a7c15 + p.seed) & p.mask
	x ^= x >> p.shift
	x = (x * 0xbf58476d1ce4e5b9) & p.mask
	x ^= x >> p.shift
	x = (x * 0x94d049bb133111eb) & p.mask
	return x ^ x>>p.shift
}

// at returns the image of x in [0, n).
func (p *permutation) at(x int64) int64 {
	if p.n <= 1 {
		return 0
	}
	y := p.mix(uint64(x))
	for y >= p.n {
		y = p.mix(y)
	}
	return int64(y)
}

// inserts numbers the items a run inserts and tracks which of them exist.
// Item numbers continue after the loaded items (Items, Items+1, ...). With
// the latest distribution, reads address only acknowledged items: limit is
// the first item number not yet known to exist (every lower one is loaded
// or its insert has been answered), YCSB's AcknowledgedCounterGenerator.
// Like YCSB, a failed insert counts as answered, so a read may find the gap
// it left (a 404).
type inserts struct {
	next  atomic.Int64
	limit atomic.Int64
	track bool // maintain limit (only the latest distribution reads it)

	mu sync.Mutex
	// done is a ring: done[n % len] == n once insert n is answered and
	// limit has not yet passed it.
	done []int64
}

// insertWindow bounds how far answered inserts may run ahead of the oldest
// unanswered one; an insert still outstanding when the ring is full is
// treated as answered (a read may then find it missing).
const insertWindow = 1 << 16

func newInserts(first int64, track bool) *inserts {
	in := &inserts{track: track}
	in.next.Store(first)
	in.limit.Store(first)
	if track {
		in.done = make([]int64, insertWindow)
		for i := range in.done {
			in.done[i] = -1
		}
	}
	return in
}

// issue returns the number of a new item.
func (in *inserts) issue() int64 { return in.next.Add(1) - 1 }

// ack records that insert n was answered.
func (in *inserts) ack(n int64) {
	if !in.track {
		return
	}
	in.mu.Lock()
	limit := in.limit.Load()
	w := int64(len(in.done))
	if n < limit { // given up on already
		in.mu.Unlock()
		return
	}
	if n-limit >= w {
		limit = n - w + 1 // give up on the inserts that fell out of the window
	}
	in.done[n%w] = n
	for in.done[limit%w] == limit {
		limit++
	}
	in.limit.Store(limit)
	in.mu.Unlock()
}

// keyChooser is one worker's generator of item numbers.
type keyChooser struct {
	dist  string
	items int64 // the loaded items, which uniform and zipfian address
	zipf  zipfian
	perm  permutation
	ins   *inserts
}

// keyDist is the shared, precomputed part of a distribution.
type keyDist struct {
	dist  string
	theta float64
	items int64
	zetan float64 // zeta(items, theta) for zipfian and latest
	seed  uint64
	ins   *inserts
}

func newKeyDist(dist string, theta float64, items int, seed uint64, ins *inserts) *keyDist {
	d := &keyDist{dist: dist, theta: theta, items: int64(items), seed: seed, ins: ins}
	if (dist == DistZipfian || dist == DistLatest) && items > 0 {
		d.zetan = zeta(0, d.items, theta, 0)
	}
	return d
}

func (d *keyDist) chooser() keyChooser {
	c := keyChooser{dist: d.dist, items: d.items, ins: d.ins}
	if (d.dist == DistZipfian || d.dist == DistLatest) && d.items > 0 {
		c.zipf = newZipfian(d.items, d.theta, d.zetan)
		c.perm = newPermutation(d.items, d.seed)
	}
	return c
}

// next returns the number of the item to address.
func (c *keyChooser) next(rng *rand.Rand) int {
	switch c.dist {
	case DistZipfian:
		return int(c.perm.at(c.zipf.rank(rng.Float64())))
	case DistLatest:
		count := c.ins.limit.Load()
		c.zipf.grow(count)
		return int(count - 1 - c.zipf.rank(rng.Float64()))
	}
	return rng.IntN(int(c.items))
}
