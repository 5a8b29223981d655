package vector

import "fmt"

// Stats counts the work of one search, for request-unit charges and the
// index metrics: Compared is the number of full-precision distances
// computed, CodesScanned the number of quantized codes scored, Visited the
// number of graph nodes read (diskANN only).
type Stats struct {
	Compared     int
	CodesScanned int
	Visited      int
}

// Filter says whether an id may be returned (a query's WHERE clause, or
// the items of one logical partition). A nil Filter accepts every id.
type Filter func(id uint64) bool

// Flat is an exact in-memory vector index: every search compares the query
// with every vector and keeps the best k in a bounded heap. It is the
// model the approximate indexes are measured against, and what an engine
// does when it scans (type flat, or fewer than ScanThreshold vectors).
// A Flat is not safe for concurrent use.
type Flat struct {
	m    metric
	dims int
	ids  []uint64
	vecs []float32 // len(ids) × dims, prepared
	pos  map[uint64]int
}

// NewFlat returns an empty exact index of vectors of dims dimensions under
// the distance function f.
func NewFlat(f DistanceFunction, dims int) (*Flat, error) {
	if dims < 1 || dims > MaxDimensions {
		return nil, fmt.Errorf("%w: dimensions %d must be between 1 and %d", ErrInvalidPolicy, dims, MaxDimensions)
	}
	return &Flat{m: metric{f}, dims: dims, pos: make(map[uint64]int)}, nil
}

// Len returns the number of vectors held.
func (x *Flat) Len() int { return len(x.ids) }

// Add stores v under id, replacing any vector id had.
func (x *Flat) Add(id uint64, v []float32) error {
	if err := checkDims(v, x.dims); err != nil {
		return err
	}
	p := x.m.prepare(v)
	if i, ok := x.pos[id]; ok {
		copy(x.vecs[i*x.dims:], p)
		return nil
	}
	x.pos[id] = len(x.ids)
	x.ids = append(x.ids, id)
	x.vecs = append(x.vecs, p...)
	return nil
}

// Remove deletes id's vector and reports whether it had one.
func (x *Flat) Remove(id uint64) bool {
	i, ok := x.pos[id]
	if !ok {
		return false
	}
	last := len(x.ids) - 1
	if i != last {
		x.ids[i] = x.ids[last]
		copy(x.vecs[i*x.dims:(i+1)*x.dims], x.vecs[last*x.dims:])
		x.pos[x.ids[i]] = i
	}
	x.ids = x.ids[:last]
	x.vecs = x.vecs[:last*x.dims]
	delete(x.pos, id)
	return true
}

// Search returns the k vectors closest to q that pass filter, best first.
func (x *Flat) Search(q []float32, k int, filter Filter) ([]Result, Stats, error) {
	var st Stats
	if err := checkDims(q, x.dims); err != nil {
		return nil, st, err
	}
	if k < 1 {
		return nil, st, nil
	}
	pq := x.m.prepare(q)
	t := newTopK(k)
	for i, id := range x.ids {
		if filter != nil && !filter(id) {
			continue
		}
		st.Compared++
		t.push(cand{id, x.m.dist(pq, x.vecs[i*x.dims:(i+1)*x.dims])})
	}
	return results(x.m, t.sorted()), st, nil
}

// vector returns id's prepared vector (shared; do not modify).
func (x *Flat) vector(id uint64) ([]float32, bool) {
	i, ok := x.pos[id]
	if !ok {
		return nil, false
	}
	return x.vecs[i*x.dims : (i+1)*x.dims], true
}

// checkDims rejects a vector whose length is not dims or whose elements
// are not finite.
func checkDims(v []float32, dims int) error {
	if len(v) != dims {
		return fmt.Errorf("%w: %d dimensions, the index has %d", ErrInvalidVector, len(v), dims)
	}
	for i, x := range v {
		if x != x || x > maxF32 || x < -maxF32 {
			return fmt.Errorf("%w: element %d is not a finite number", ErrInvalidVector, i)
		}
	}
	return nil
}

const maxF32 = 3.4028234663852886e38
