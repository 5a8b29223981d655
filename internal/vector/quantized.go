package vector

import "fmt"

// CodeScan yields the stored (id, code) pairs of a quantizedFlat index;
// it stops when yield returns false and returns any read error.
type CodeScan func(yield func(id uint64, code []byte) bool) error

// Fetch returns an id's full-precision vector (as stored in the item), or
// ok false when the id no longer has one.
type Fetch func(id uint64) (v []float32, ok bool, err error)

// QuantizedSearch is the quantizedFlat search: it scores every code that
// passes filter with q's lookup table, keeps the best
// k × quantizedVectorListMultiplier, reads those candidates' full vectors
// and returns the best k of them by exact score. The engine supplies the
// stored codes (scan) and full vectors (fetch); Quantized is the in-memory
// form.
func QuantizedSearch(p *PQ, q []float32, k int, opts QueryOptions, filter Filter, scan CodeScan, fetch Fetch) ([]Result, Stats, error) {
	var st Stats
	if err := opts.Validate(); err != nil {
		return nil, st, err
	}
	if err := checkDims(q, p.dims); err != nil {
		return nil, st, err
	}
	if k < 1 {
		return nil, st, nil
	}
	pq := p.m.prepare(q)
	tab := p.table(pq)
	short := newTopK(k * opts.quantizedMultiplier())
	err := scan(func(id uint64, code []byte) bool {
		if filter != nil && !filter(id) {
			return true
		}
		st.CodesScanned++
		short.push(cand{id, tab.Distance(code)})
		return true
	})
	if err != nil {
		return nil, st, fmt.Errorf("cannot scan quantized codes: %w", err)
	}
	best := newTopK(k)
	for _, c := range short.h {
		v, ok, err := fetch(c.id)
		if err != nil {
			return nil, st, fmt.Errorf("cannot read vector %d: %w", c.id, err)
		}
		if !ok || len(v) != p.dims {
			continue
		}
		st.Compared++
		best.push(cand{c.id, p.m.dist(pq, p.m.prepare(v))})
	}
	return results(p.m, best.sorted()), st, nil
}

// Quantized is an in-memory quantizedFlat index: a trained PQ, each
// vector's code, and the full vectors for re-ranking. It is not safe for
// concurrent use.
type Quantized struct {
	pq    *PQ
	full  *Flat
	ids   []uint64
	codes []byte // len(ids) × M
	pos   map[uint64]int
}

// NewQuantized returns an empty quantizedFlat index over the quantizer p.
func NewQuantized(p *PQ) *Quantized {
	full, _ := NewFlat(p.m.f, p.dims) // p.dims is valid: p was trained or decoded
	return &Quantized{pq: p, full: full, pos: make(map[uint64]int)}
}

// Len returns the number of vectors held.
func (x *Quantized) Len() int { return len(x.ids) }

// Add stores v under id, replacing any vector id had.
func (x *Quantized) Add(id uint64, v []float32) error {
	code, err := x.pq.Encode(v)
	if err != nil {
		return err
	}
	if err := x.full.Add(id, v); err != nil {
		return err
	}
	m := x.pq.M()
	if i, ok := x.pos[id]; ok {
		copy(x.codes[i*m:], code)
		return nil
	}
	x.pos[id] = len(x.ids)
	x.ids = append(x.ids, id)
	x.codes = append(x.codes, code...)
	return nil
}

// Remove deletes id's vector and reports whether it had one.
func (x *Quantized) Remove(id uint64) bool {
	i, ok := x.pos[id]
	if !ok {
		return false
	}
	m := x.pq.M()
	last := len(x.ids) - 1
	if i != last {
		x.ids[i] = x.ids[last]
		copy(x.codes[i*m:(i+1)*m], x.codes[last*m:])
		x.pos[x.ids[i]] = i
	}
	x.ids = x.ids[:last]
	x.codes = x.codes[:last*m]
	delete(x.pos, id)
	x.full.Remove(id)
	return true
}

// Search returns the best k vectors for q that pass filter.
func (x *Quantized) Search(q []float32, k int, opts QueryOptions, filter Filter) ([]Result, Stats, error) {
	m := x.pq.M()
	scan := func(yield func(uint64, []byte) bool) error {
		for i, id := range x.ids {
			if !yield(id, x.codes[i*m:(i+1)*m]) {
				return nil
			}
		}
		return nil
	}
	fetch := func(id uint64) ([]float32, bool, error) {
		v, ok := x.full.vector(id)
		return v, ok, nil
	}
	return QuantizedSearch(x.pq, q, k, opts, filter, scan, fetch)
}
