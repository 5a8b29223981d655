package vector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
)

// ErrCorrupt is wrapped by every error that rejects stored bytes (a node,
// a quantizer) that do not decode: the engine reports it as corruption,
// never as a panic.
var ErrCorrupt = errors.New("corrupt vector index entry")

// Training limits: k-means runs at most MaxTrainIterations rounds over at
// most MaxTrainSample vectors, so training time is bounded whatever the
// partition holds.
const (
	MaxTrainSample     = 10000
	MaxTrainIterations = 10
	pqCentroids        = 256 // one byte per subspace
)

// PQ is a product quantizer: the dimensions are cut into M contiguous
// subspaces, each with up to 256 centroids learned by k-means, and a
// vector is coded as the index of its nearest centroid in each subspace:
// M bytes (quantizationByteSize). The distance from a query to a code is a
// sum of M table lookups (see Table). A PQ is immutable and safe for
// concurrent use once trained or decoded.
type PQ struct {
	m     metric
	dims  int
	ksub  int       // centroids per subspace, 1..256
	bound []int     // M+1 subspace boundaries: subspace s is [bound[s], bound[s+1])
	cents []float32 // for each subspace s: ksub × width(s) values, subspaces one after another
	off   []int     // M offsets of each subspace's centroids in cents
}

// M returns the code size in bytes (the number of subspaces).
func (p *PQ) M() int { return len(p.bound) - 1 }

// Dimensions returns the vector dimensions the quantizer was trained for.
func (p *PQ) Dimensions() int { return p.dims }

// TrainPQ learns a product quantizer of m bytes per vector for vectors of
// the distance function f from a sample of vectors (all of the same
// dimensions): at most MaxTrainSample of them, drawn with the seed, and at
// most MaxTrainIterations rounds of k-means (Lloyd) per subspace, started
// from distinct sample points drawn with the seed. The same inputs always
// give the same quantizer.
func TrainPQ(f DistanceFunction, sample [][]float32, m int, seed uint64) (*PQ, error) {
	if len(sample) == 0 {
		return nil, fmt.Errorf("%w: cannot train a quantizer on no vectors", ErrInvalidVector)
	}
	dims := len(sample[0])
	if dims < 1 || dims > MaxDimensions {
		return nil, fmt.Errorf("%w: dimensions %d must be between 1 and %d", ErrInvalidVector, dims, MaxDimensions)
	}
	if m < 1 || m > min(dims, MaxQuantizationByteSize) {
		return nil, fmt.Errorf("%w: quantizationByteSize %d must be between 1 and %d", ErrInvalidPolicy, m, min(dims, MaxQuantizationByteSize))
	}
	for _, v := range sample {
		if err := checkDims(v, dims); err != nil {
			return nil, err
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	mt := metric{f}
	// Draw the training sample (a partial Fisher-Yates over indexes).
	idx := make([]int, len(sample))
	for i := range idx {
		idx[i] = i
	}
	n := min(len(sample), MaxTrainSample)
	for i := 0; i < n; i++ {
		j := i + rng.IntN(len(idx)-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	train := make([][]float32, n)
	for i := range train {
		train[i] = mt.prepare(sample[idx[i]])
	}
	p := &PQ{m: mt, dims: dims, ksub: min(pqCentroids, n)}
	p.setBounds(m)
	assign := make([]int, n)
	for s := 0; s < m; s++ {
		lo, hi := p.bound[s], p.bound[s+1]
		w := hi - lo
		c := p.cents[p.off[s] : p.off[s]+p.ksub*w]
		// Start from ksub distinct sample points.
		perm := rng.Perm(n)
		for j := 0; j < p.ksub; j++ {
			copy(c[j*w:(j+1)*w], train[perm[j]][lo:hi])
		}
		sums := make([]float64, p.ksub*w)
		counts := make([]int, p.ksub)
		for it := 0; it < MaxTrainIterations; it++ {
			changed := 0
			for i, v := range train {
				b := nearest(c, w, v[lo:hi])
				if it == 0 || assign[i] != b {
					changed++
				}
				assign[i] = b
			}
			if it > 0 && changed == 0 {
				break
			}
			clear(sums)
			clear(counts)
			for i, v := range train {
				a := assign[i]
				counts[a]++
				for d := 0; d < w; d++ {
					sums[a*w+d] += float64(v[lo+d])
				}
			}
			for j := 0; j < p.ksub; j++ {
				if counts[j] == 0 {
					// An empty cluster restarts at a random sample point.
					copy(c[j*w:(j+1)*w], train[rng.IntN(n)][lo:hi])
					continue
				}
				inv := 1 / float64(counts[j])
				for d := 0; d < w; d++ {
					c[j*w+d] = float32(sums[j*w+d] * inv)
				}
			}
		}
	}
	return p, nil
}

// setBounds cuts dims into m subspaces as evenly as possible and sizes
// the centroid array.
func (p *PQ) setBounds(m int) {
	p.bound = make([]int, m+1)
	p.off = make([]int, m)
	base, extra := p.dims/m, p.dims%m
	total := 0
	for s := 0; s < m; s++ {
		w := base
		if s < extra {
			w++
		}
		p.bound[s+1] = p.bound[s] + w
		p.off[s] = total
		total += p.ksub * w
	}
	p.cents = make([]float32, total)
}

// nearest returns the index of the centroid (rows of width w in c) nearest
// to v in squared Euclidean distance. Subspaces are narrow (a few
// dimensions), so the distance is computed inline rather than by l2sq.
func nearest(c []float32, w int, v []float32) int {
	best, bd := 0, float32(math.Inf(1))
	v = v[:w]
	for j, o := 0, 0; o+w <= len(c); j, o = j+1, o+w {
		row := c[o : o+w]
		var d float32
		for i, x := range v {
			e := x - row[i]
			d += e * e
		}
		if d < bd {
			best, bd = j, d
		}
	}
	return best
}

// Encode returns v's code: M bytes.
func (p *PQ) Encode(v []float32) ([]byte, error) {
	if err := checkDims(v, p.dims); err != nil {
		return nil, err
	}
	return p.encodePrepared(p.m.prepare(v)), nil
}

func (p *PQ) encodePrepared(v []float32) []byte {
	code := make([]byte, p.M())
	for s := range code {
		lo, hi := p.bound[s], p.bound[s+1]
		w := hi - lo
		code[s] = byte(nearest(p.cents[p.off[s]:p.off[s]+p.ksub*w], w, v[lo:hi]))
	}
	return code
}

// Table holds a query's distances to every centroid of every subspace, so
// that the distance to a code is M lookups. Its values are internal
// (lower is closer) and only comparable with each other.
type Table struct {
	ksub int
	t    []float32 // M × ksub
}

// Table prepares the lookup table of query q.
func (p *PQ) Table(q []float32) (*Table, error) {
	if err := checkDims(q, p.dims); err != nil {
		return nil, err
	}
	return p.table(p.m.prepare(q)), nil
}

func (p *PQ) table(q []float32) *Table {
	m := p.M()
	t := &Table{ksub: p.ksub, t: make([]float32, m*p.ksub)}
	for s := 0; s < m; s++ {
		lo, hi := p.bound[s], p.bound[s+1]
		w := hi - lo
		c := p.cents[p.off[s] : p.off[s]+p.ksub*w]
		row := t.t[s*p.ksub : (s+1)*p.ksub]
		for j := range row {
			row[j] = p.m.dist(q[lo:hi], c[j*w:(j+1)*w])
		}
	}
	return t
}

// Distance returns the approximate internal distance of a code, or +Inf
// for a code of the wrong size or with a byte beyond the centroids (a
// corrupt code never matches).
func (t *Table) Distance(code []byte) float32 {
	if len(code)*t.ksub != len(t.t) {
		return float32(math.Inf(1))
	}
	var s0, s1 float32
	k := t.ksub
	i := 0
	for ; i+2 <= len(code); i += 2 {
		c0, c1 := int(code[i]), int(code[i+1])
		if c0 >= k || c1 >= k {
			return float32(math.Inf(1))
		}
		s0 += t.t[i*k+c0]
		s1 += t.t[(i+1)*k+c1]
	}
	if i < len(code) {
		c := int(code[i])
		if c >= k {
			return float32(math.Inf(1))
		}
		s0 += t.t[i*k+c]
	}
	return s0 + s1
}

const pqVersion = 1

// MarshalBinary encodes the quantizer for storage:
//
//	version   1 byte (1)
//	function  1 byte (DistanceFunction)
//	dims      uvarint
//	m         uvarint (code bytes)
//	ksub      uvarint (centroids per subspace, 1..256)
//	centroids dims × ksub float32, little endian, subspace by subspace
//	crc       4 bytes, CRC-32C of everything above, little endian
func (p *PQ) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 16+4*len(p.cents))
	b = append(b, pqVersion, byte(p.m.f))
	b = binary.AppendUvarint(b, uint64(p.dims))
	b = binary.AppendUvarint(b, uint64(p.M()))
	b = binary.AppendUvarint(b, uint64(p.ksub))
	for _, x := range p.cents {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return binary.LittleEndian.AppendUint32(b, crc32Castagnoli(b)), nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DecodePQ decodes a quantizer written by MarshalBinary. Bytes that do not
// decode give an error wrapping ErrCorrupt.
func DecodePQ(b []byte) (*PQ, error) {
	body, err := checkCRC(b)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != pqVersion {
		return nil, fmt.Errorf("%w: quantizer: unknown version", ErrCorrupt)
	}
	if body[1] > byte(Euclidean) {
		return nil, fmt.Errorf("%w: quantizer: unknown distance function %d", ErrCorrupt, body[1])
	}
	r := reader{b: body[2:]}
	dims, m, ksub := r.uvarint(), r.uvarint(), r.uvarint()
	if r.err != nil {
		return nil, fmt.Errorf("%w: quantizer: %v", ErrCorrupt, r.err)
	}
	if dims < 1 || dims > MaxDimensions || m < 1 || m > min(dims, MaxQuantizationByteSize) || ksub < 1 || ksub > pqCentroids {
		return nil, fmt.Errorf("%w: quantizer: dims %d, m %d, ksub %d out of range", ErrCorrupt, dims, m, ksub)
	}
	p := &PQ{m: metric{DistanceFunction(body[1])}, dims: int(dims), ksub: int(ksub)}
	if uint64(len(r.b)) != 4*dims*ksub {
		return nil, fmt.Errorf("%w: quantizer: %d centroid bytes, want %d", ErrCorrupt, len(r.b), 4*dims*ksub)
	}
	p.setBounds(int(m))
	for i := range p.cents {
		x := math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*i:]))
		if x != x || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("%w: quantizer: centroid value is not finite", ErrCorrupt)
		}
		p.cents[i] = x
	}
	return p, nil
}

// checkCRC verifies and strips a trailing CRC-32C.
func checkCRC(b []byte) ([]byte, error) {
	if len(b) < 5 {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(b))
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return body, nil
}

// reader reads uvarints, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func crc32Castagnoli(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
