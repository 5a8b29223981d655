package vector

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// MaxDegree bounds the out-degree of a stored graph node (R, and what
// Decode accepts).
const MaxDegree = 256

// Node is one vertex of a diskANN graph as stored: the vector in the form
// the graph compares (unit length for cosine), an optional quantized code
// (for an engine that keeps codes in memory and full vectors on disk), and
// the ids of its out-neighbours.
type Node struct {
	Vector    []float32
	Code      []byte
	Neighbors []uint64
}

// NodeStore holds a graph's nodes and its entry point. The engine
// implements it over its storage batch (the encoded nodes are index
// entries written with the item); MemStore is the in-memory form.
//
// The Graph never modifies a Node it got from Get, and gives Put a Node it
// will not modify afterwards, so a store may keep and return the same
// slices. Get returns ok false for an id that has no node; Entry returns
// ok false for an empty graph.
type NodeStore interface {
	Get(id uint64) (n Node, ok bool, err error)
	Put(id uint64, n Node) error
	Delete(id uint64) error
	Entry() (id uint64, ok bool, err error)
	SetEntry(id uint64) error
	ClearEntry() error
}

// MemStore is an in-memory NodeStore. It is not safe for concurrent use.
type MemStore struct {
	nodes    map[uint64]Node
	entry    uint64
	hasEntry bool
}

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{nodes: make(map[uint64]Node)} }

// Get implements NodeStore.
func (s *MemStore) Get(id uint64) (Node, bool, error) {
	n, ok := s.nodes[id]
	return n, ok, nil
}

// Put implements NodeStore.
func (s *MemStore) Put(id uint64, n Node) error { s.nodes[id] = n; return nil }

// Delete implements NodeStore.
func (s *MemStore) Delete(id uint64) error { delete(s.nodes, id); return nil }

// Entry implements NodeStore.
func (s *MemStore) Entry() (uint64, bool, error) { return s.entry, s.hasEntry, nil }

// SetEntry implements NodeStore.
func (s *MemStore) SetEntry(id uint64) error { s.entry, s.hasEntry = id, true; return nil }

// ClearEntry implements NodeStore.
func (s *MemStore) ClearEntry() error { s.entry, s.hasEntry = 0, false; return nil }

// Len returns the number of nodes held.
func (s *MemStore) Len() int { return len(s.nodes) }

// IDs returns the ids of the nodes held, in increasing order.
func (s *MemStore) IDs() []uint64 {
	ids := make([]uint64, 0, len(s.nodes))
	for id := range s.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

const nodeVersion = 1

// AppendNode appends the binary encoding of n to b. The format (version 1,
// stable) is:
//
//	version    1 byte (1)
//	flags      1 byte: bit 0 set when a code follows; other bits zero
//	dims       uvarint, 1..MaxDimensions
//	vector     dims × float32, little endian (finite values only)
//	code       if flags bit 0: uvarint length 1..MaxQuantizationByteSize, then the bytes
//	count      uvarint, 0..MaxDegree
//	neighbors  count uvarints: the ids in increasing order, the first as
//	           is, each next one as the (positive) difference from the one before
//	crc        4 bytes: CRC-32C of everything above, little endian
//
// Neighbour order is not kept (the graph does not depend on it). It
// returns an error, wrapping ErrInvalidVector, for a node it could not
// decode again: no or too many dimensions, a non-finite element, a code
// or neighbour list beyond the limits, a repeated neighbour.
func AppendNode(b []byte, n Node) ([]byte, error) {
	if len(n.Vector) < 1 || len(n.Vector) > MaxDimensions {
		return nil, fmt.Errorf("%w: node has %d dimensions", ErrInvalidVector, len(n.Vector))
	}
	if err := checkDims(n.Vector, len(n.Vector)); err != nil {
		return nil, err
	}
	if len(n.Code) > MaxQuantizationByteSize {
		return nil, fmt.Errorf("%w: node code of %d bytes", ErrInvalidVector, len(n.Code))
	}
	if len(n.Neighbors) > MaxDegree {
		return nil, fmt.Errorf("%w: node has %d neighbours (at most %d)", ErrInvalidVector, len(n.Neighbors), MaxDegree)
	}
	nb := slices.Clone(n.Neighbors)
	slices.Sort(nb)
	for i := 1; i < len(nb); i++ {
		if nb[i] == nb[i-1] {
			return nil, fmt.Errorf("%w: node lists neighbour %d twice", ErrInvalidVector, nb[i])
		}
	}
	start := len(b)
	flags := byte(0)
	if len(n.Code) > 0 {
		flags = 1
	}
	b = append(b, nodeVersion, flags)
	b = binary.AppendUvarint(b, uint64(len(n.Vector)))
	for _, x := range n.Vector {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	if flags&1 != 0 {
		b = binary.AppendUvarint(b, uint64(len(n.Code)))
		b = append(b, n.Code...)
	}
	b = binary.AppendUvarint(b, uint64(len(nb)))
	prev := uint64(0)
	for i, id := range nb {
		if i == 0 {
			b = binary.AppendUvarint(b, id)
		} else {
			b = binary.AppendUvarint(b, id-prev)
		}
		prev = id
	}
	return binary.LittleEndian.AppendUint32(b, crc32Castagnoli(b[start:])), nil
}

// EncodeNode returns the binary encoding of n (see AppendNode).
func EncodeNode(n Node) ([]byte, error) { return AppendNode(nil, n) }

// DecodeNode decodes a node written by AppendNode. Bytes that are not such
// a node (wrong checksum, unknown version or flags, lengths out of range,
// non-finite values, neighbours out of order, trailing bytes) give an error
// wrapping ErrCorrupt; it never panics. The result does not share memory
// with b.
func DecodeNode(b []byte) (Node, error) {
	var n Node
	body, err := checkCRC(b)
	if err != nil {
		return n, fmt.Errorf("node: %w", err)
	}
	if len(body) < 2 {
		return n, fmt.Errorf("%w: node too short", ErrCorrupt)
	}
	if body[0] != nodeVersion {
		return n, fmt.Errorf("%w: node version %d, want %d", ErrCorrupt, body[0], nodeVersion)
	}
	flags := body[1]
	if flags&^1 != 0 {
		return n, fmt.Errorf("%w: node flags %#x", ErrCorrupt, flags)
	}
	r := reader{b: body[2:]}
	dims := r.uvarint()
	if r.err != nil || dims < 1 || dims > MaxDimensions {
		return n, fmt.Errorf("%w: node dimensions", ErrCorrupt)
	}
	if uint64(len(r.b)) < 4*dims {
		return n, fmt.Errorf("%w: node vector truncated", ErrCorrupt)
	}
	n.Vector = make([]float32, dims)
	for i := range n.Vector {
		x := math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*i:]))
		if x != x || math.IsInf(float64(x), 0) {
			return Node{}, fmt.Errorf("%w: node vector element %d is not finite", ErrCorrupt, i)
		}
		n.Vector[i] = x
	}
	r.b = r.b[4*dims:]
	if flags&1 != 0 {
		cl := r.uvarint()
		if r.err != nil || cl < 1 || cl > MaxQuantizationByteSize || uint64(len(r.b)) < cl {
			return Node{}, fmt.Errorf("%w: node code length", ErrCorrupt)
		}
		n.Code = slices.Clone(r.b[:cl])
		r.b = r.b[cl:]
	}
	count := r.uvarint()
	if r.err != nil || count > MaxDegree {
		return Node{}, fmt.Errorf("%w: node neighbour count", ErrCorrupt)
	}
	n.Neighbors = make([]uint64, count)
	prev := uint64(0)
	for i := range n.Neighbors {
		d := r.uvarint()
		if r.err != nil {
			return Node{}, fmt.Errorf("%w: node neighbour %d: %v", ErrCorrupt, i, r.err)
		}
		if i == 0 {
			prev = d
		} else {
			if d == 0 || prev+d < prev {
				return Node{}, fmt.Errorf("%w: node neighbours out of order", ErrCorrupt)
			}
			prev += d
		}
		n.Neighbors[i] = prev
	}
	if len(r.b) != 0 {
		return Node{}, fmt.Errorf("%w: %d trailing bytes after node", ErrCorrupt, len(r.b))
	}
	return n, nil
}
