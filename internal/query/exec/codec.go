package exec

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/parsecdb/parsec/internal/query/eval"
)

// The binary form of a value in a State (stable: states outlive processes).
// A tag byte, then the payload:
//
//	0 undefined   1 null   2 false   3 true
//	4 int64 exact: zig-zag uvarint
//	5 float64: 8 bytes, IEEE 754 bits, little-endian (NaN, ±Inf and -0 survive)
//	6 string: uvarint length, UTF-8 bytes
//	7 array: uvarint count, then the elements (never undefined)
//	8 object: uvarint count, then per member: uvarint length, key bytes, value
//
// Exact integers and floats stay distinct, so a decoded value is the
// value that was encoded, not merely an equal one.
const (
	tagUndefined byte = iota
	tagNull
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagArray
	tagObject
)

// maxDecodeDepth bounds the nesting of decoded arrays and objects.
const maxDecodeDepth = 256

func appendValue(b []byte, v eval.Value) []byte {
	switch v.Kind() {
	case eval.Undefined:
		return append(b, tagUndefined)
	case eval.Null:
		return append(b, tagNull)
	case eval.Bool:
		if v.AsBool() {
			return append(b, tagTrue)
		}
		return append(b, tagFalse)
	case eval.Number:
		if v.IsExactInt() {
			i, _ := v.AsInt()
			return binary.AppendVarint(append(b, tagInt), i)
		}
		return binary.LittleEndian.AppendUint64(append(b, tagFloat), math.Float64bits(v.AsFloat()))
	case eval.String:
		s := v.AsString()
		b = binary.AppendUvarint(append(b, tagString), uint64(len(s)))
		return append(b, s...)
	case eval.Array:
		b = binary.AppendUvarint(append(b, tagArray), uint64(v.Len()))
		for _, e := range v.Elems() {
			b = appendValue(b, e)
		}
		return b
	case eval.Object:
		b = binary.AppendUvarint(append(b, tagObject), uint64(v.Len()))
		for i := range v.Len() {
			k, m := v.Member(i)
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = appendValue(b, m)
		}
		return b
	}
	panic("BUG: exec: bad value kind")
}

var errCorrupt = errors.New("corrupt value")

// decoder reads the binary forms of a State.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	u, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return u
}

func (d *decoder) varint() int64 {
	i, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return i
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	u := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return u
}

// bytes reads a length-prefixed byte string.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

// count reads an element count, which cannot exceed the bytes left (each
// element takes at least one).
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) value(depth int) eval.Value {
	if depth > maxDecodeDepth {
		d.fail()
		return eval.Value{}
	}
	switch d.byte() {
	case tagUndefined:
		return eval.Value{}
	case tagNull:
		return eval.NullValue()
	case tagFalse:
		return eval.BoolValue(false)
	case tagTrue:
		return eval.BoolValue(true)
	case tagInt:
		return eval.IntValue(d.varint())
	case tagFloat:
		return eval.NumberValue(math.Float64frombits(d.uint64()))
	case tagString:
		return eval.StringValue(string(d.bytes()))
	case tagArray:
		n := d.count()
		elems := make([]eval.Value, 0, n)
		for range n {
			e := d.value(depth + 1)
			if !e.IsDefined() {
				d.fail()
			}
			if d.err != nil {
				return eval.Value{}
			}
			elems = append(elems, e)
		}
		return eval.ArrayValue(elems)
	case tagObject:
		n := d.count()
		members := make([]eval.Member, 0, n)
		for range n {
			k := string(d.bytes())
			m := d.value(depth + 1)
			if !m.IsDefined() {
				d.fail()
			}
			if d.err != nil {
				return eval.Value{}
			}
			members = append(members, eval.Member{Key: k, Value: m})
		}
		v := eval.ObjectValue(members)
		if v.Len() != n { // a repeated key: not something appendValue writes
			d.fail()
		}
		return v
	}
	d.fail()
	return eval.Value{}
}
