package exec

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/parsecdb/parsec/internal/binfmt"
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
type decoder struct{ binfmt.Reader }

func (d *decoder) fail() { d.Fail("corrupt value") }

// uint64 reads 8 bytes, little-endian.
func (d *decoder) uint64() uint64 {
	if b := d.Take(8); len(b) == 8 {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) value(depth int) eval.Value {
	if depth > maxDecodeDepth {
		d.fail()
		return eval.Value{}
	}
	switch d.Byte() {
	case tagUndefined:
		return eval.Value{}
	case tagNull:
		return eval.NullValue()
	case tagFalse:
		return eval.BoolValue(false)
	case tagTrue:
		return eval.BoolValue(true)
	case tagInt:
		return eval.IntValue(d.Varint())
	case tagFloat:
		return eval.NumberValue(math.Float64frombits(d.uint64()))
	case tagString:
		return eval.StringValue(string(d.Bytes()))
	case tagArray:
		n := d.Count(1)
		elems := make([]eval.Value, 0, n)
		for range n {
			e := d.value(depth + 1)
			if !e.IsDefined() {
				d.fail()
			}
			if d.Err() != nil {
				return eval.Value{}
			}
			elems = append(elems, e)
		}
		return eval.ArrayValue(elems)
	case tagObject:
		n := d.Count(1)
		members := make([]eval.Member, 0, n)
		for range n {
			k := string(d.Bytes())
			m := d.value(depth + 1)
			if !m.IsDefined() {
				d.fail()
			}
			if d.Err() != nil {
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
