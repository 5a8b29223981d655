package vector

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"
)

func sampleNode() Node {
	return Node{
		Vector:    []float32{0.5, -1.25, 3e-8, 1000},
		Code:      []byte{7, 0, 255},
		Neighbors: []uint64{900, 3, 1 << 63, 42},
	}
}

func sameNode(a, b Node) bool {
	x, y := slices.Clone(a.Neighbors), slices.Clone(b.Neighbors)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(a.Vector, b.Vector) && slices.Equal(a.Code, b.Code) && slices.Equal(x, y)
}

func TestNodeRoundTrip(t *testing.T) {
	for _, n := range []Node{sampleNode(), {Vector: []float32{1}}, {Vector: make([]float32, MaxDimensions), Neighbors: []uint64{0}}} {
		b, err := EncodeNode(n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeNode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !sameNode(n, got) {
			t.Fatalf("round trip: %+v, want %+v", got, n)
		}
	}
	// Encoding refuses what it could not decode.
	for _, n := range []Node{
		{},
		{Vector: []float32{float32(math.NaN())}},
		{Vector: []float32{1}, Neighbors: []uint64{4, 4}},
		{Vector: []float32{1}, Code: make([]byte, MaxQuantizationByteSize+1)},
		{Vector: []float32{1}, Neighbors: make([]uint64, MaxDegree+1)},
	} {
		if _, err := EncodeNode(n); !errors.Is(err, ErrInvalidVector) {
			t.Errorf("EncodeNode(%v...) = %v, want ErrInvalidVector", n.Vector, err)
		}
	}
}

// withCRC appends a valid checksum, to build bodies that pass the CRC and
// must be rejected by the structural checks.
func withCRC(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(slices.Clone(body), crc32Castagnoli(body))
}

func TestNodeDecodeRejectsCorruption(t *testing.T) {
	good, _ := EncodeNode(sampleNode())
	bad := func(what string, b []byte) {
		t.Helper()
		if _, err := DecodeNode(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", what, err)
		}
	}
	// Any flipped bit, any truncation, any extension.
	for i := range good {
		for bit := range 8 {
			b := slices.Clone(good)
			b[i] ^= 1 << bit
			bad("flipped bit", b)
		}
	}
	for n := range len(good) {
		bad("truncated", good[:n])
	}
	bad("extended", append(slices.Clone(good), 0))
	// Valid checksums over invalid bodies.
	body := good[:len(good)-4]
	f := func(what string, edit func([]byte) []byte) {
		t.Helper()
		bad(what, withCRC(edit(slices.Clone(body))))
	}
	f("version", func(b []byte) []byte { b[0] = 2; return b })
	f("flags", func(b []byte) []byte { b[1] = 3; return b })
	f("zero dims", func(b []byte) []byte { b[2] = 0; return b })
	f("huge dims", func(b []byte) []byte {
		return append([]byte{1, 1}, binary.AppendUvarint(nil, MaxDimensions+1)...)
	})
	f("NaN element", func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[3:], math.Float32bits(float32(math.NaN())))
		return b
	})
	f("trailing byte", func(b []byte) []byte { return append(b, 0) })
	f("neighbours out of order", func(b []byte) []byte {
		n := []byte{1, 0, 1}
		n = binary.LittleEndian.AppendUint32(n, math.Float32bits(1))
		return append(n, 2, 5, 0) // two neighbours: 5 then 5+0
	})
	f("neighbour count beyond the limit", func(b []byte) []byte {
		n := []byte{1, 0, 1}
		n = binary.LittleEndian.AppendUint32(n, math.Float32bits(1))
		return binary.AppendUvarint(n, MaxDegree+1)
	})
	f("neighbour overflow", func(b []byte) []byte {
		n := []byte{1, 0, 1}
		n = binary.LittleEndian.AppendUint32(n, math.Float32bits(1))
		n = append(n, 2)
		n = binary.AppendUvarint(n, math.MaxUint64)
		return binary.AppendUvarint(n, 1)
	})
	f("code too long", func(b []byte) []byte {
		n := []byte{1, 1, 1}
		n = binary.LittleEndian.AppendUint32(n, math.Float32bits(1))
		return binary.AppendUvarint(n, MaxQuantizationByteSize+1)
	})
}

func FuzzDecodeNode(f *testing.F) {
	good, _ := EncodeNode(sampleNode())
	f.Add(good)
	f.Add([]byte{})
	f.Add(withCRC([]byte{1, 0, 1, 0, 0, 128, 63, 0}))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := DecodeNode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := EncodeNode(n)
		if err != nil {
			t.Fatalf("a decoded node does not encode: %v", err)
		}
		m, err := DecodeNode(again)
		if err != nil || !sameNode(n, m) {
			t.Fatalf("re-encoded node decodes to %+v, %v; want %+v", m, err, n)
		}
	})
}

func TestPQRoundTripAndCorruption(t *testing.T) {
	mx := newMixture(3, 16, 4, 0.5)
	vs := mx.vectors(600)
	p, err := TrainPQ(Euclidean, vs, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := TrainPQ(Euclidean, vs, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.MarshalBinary()
	b2, _ := p2.MarshalBinary()
	if !slices.Equal(b, b2) {
		t.Error("training with the same seed must give the same quantizer")
	}
	d, err := DecodePQ(b)
	if err != nil {
		t.Fatal(err)
	}
	q := mx.next()
	t1, _ := p.Table(q)
	t2, _ := d.Table(q)
	for _, v := range vs[:50] {
		c1, _ := p.Encode(v)
		c2, _ := d.Encode(v)
		if !slices.Equal(c1, c2) || t1.Distance(c1) != t2.Distance(c2) {
			t.Fatal("the decoded quantizer codes or scores differently")
		}
	}
	// The table's distance approximates the squared distance.
	c, _ := p.Encode(vs[0])
	if exact := l2sq(q, vs[0]); math.Abs(float64(t1.Distance(c)-exact)) > 0.5*float64(exact)+1 {
		t.Errorf("PQ distance %v far from exact %v", t1.Distance(c), exact)
	}
	if !math.IsInf(float64(t1.Distance([]byte{1, 2})), 1) {
		t.Error("a code of the wrong size must score +Inf")
	}
	for i := range b {
		x := slices.Clone(b)
		x[i] ^= 0x10
		if _, err := DecodePQ(x); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte %d: %v", i, err)
		}
	}
	if _, err := DecodePQ(withCRC([]byte{1, 0, 16, 4, 1})); !errors.Is(err, ErrCorrupt) {
		t.Errorf("missing centroids: %v", err)
	}
}
