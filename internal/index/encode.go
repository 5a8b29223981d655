package index

import (
	"math"

	"github.com/parsecdb/parsec/internal/query/eval"
)

// Format is the version of the terms and their encoding. It changes
// whenever a document's terms or their bytes do, so that an index built by
// an older version is rebuilt rather than read wrongly. Format 3 leaves out
// the paths that do not Fit.
const Format = 3

// MaxStringBytes is how much of a string value a term keeps.
const MaxStringBytes = 256

// Type bytes of encoded values, in the query language's order.
const (
	tagUndefined = 0x00 // buckets only: no term has it
	tagNull      = 0x01
	tagBool      = 0x02
	tagNumber    = 0x03
	tagString    = 0x04
	tagArray     = 0x05
	tagObject    = 0x06
)

// AppendPath appends the encoding of a property path.
func AppendPath(dst []byte, path []string) []byte {
	for _, seg := range path {
		dst = append(dst, 0x01)
		dst = appendEscaped(dst, seg)
	}
	return append(dst, 0x00)
}

// appendEscaped appends s with each 0x00 escaped as 0x00 0xFF, then the
// terminator 0x00 0x01.
func appendEscaped[T ~string | ~[]byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0x00, 0xFF)
			continue
		}
		dst = append(dst, s[i])
	}
	return append(dst, 0x00, 0x01)
}

// AppendValue appends the encoding of a defined value. Arrays and objects
// encode as their type byte alone: the index records that the path holds
// one, not which.
func AppendValue(dst []byte, v eval.Value) []byte {
	switch v.Kind() {
	case eval.Null:
		return append(dst, tagNull)
	case eval.Bool:
		if v.AsBool() {
			return append(dst, tagBool, 1)
		}
		return append(dst, tagBool, 0)
	case eval.Number:
		return appendNumber(dst, v.AsFloat())
	case eval.String:
		return appendString(dst, v.AsString())
	case eval.Array:
		return append(dst, tagArray)
	case eval.Object:
		return append(dst, tagObject)
	}
	panic("BUG: index: AppendValue of undefined")
}

// appendNumber appends the encoding of the number f.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		f = 0 // -0 → 0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return append(dst, tagNumber, byte(b>>56), byte(b>>48), byte(b>>40), byte(b>>32), byte(b>>24), byte(b>>16), byte(b>>8), byte(b))
}

// appendString appends the encoding of the string s (its first
// MaxStringBytes bytes).
func appendString[T ~string | ~[]byte](dst []byte, s T) []byte {
	if len(s) > MaxStringBytes {
		s = s[:MaxStringBytes]
	}
	return appendEscaped(append(dst, tagString), s)
}

// AppendBucket appends the sort bucket of any value, undefined included:
// its encoding (AppendValue), or for undefined a byte below every
// encoding. Buckets keep the query language's order across all values,
// x ≤ y implies bucket(x) ≤ bucket(y), so reading a path's entries in
// byte order (with the undefined documents first) reads its documents in
// ORDER BY order up to ties within a bucket.
func AppendBucket(dst []byte, v eval.Value) []byte {
	if !v.IsDefined() {
		return append(dst, tagUndefined)
	}
	return AppendValue(dst, v)
}

// AppendTypeStart appends the smallest encoding of kind k's values: every
// value of the type encodes at or after it.
func AppendTypeStart(dst []byte, k eval.Kind) []byte { return append(dst, tag(k)) }

// AppendTypeEnd appends the encoding just past kind k's values.
func AppendTypeEnd(dst []byte, k eval.Kind) []byte { return append(dst, tag(k)+1) }

func tag(k eval.Kind) byte {
	switch k {
	case eval.Null:
		return tagNull
	case eval.Bool:
		return tagBool
	case eval.Number:
		return tagNumber
	case eval.String:
		return tagString
	case eval.Array:
		return tagArray
	case eval.Object:
		return tagObject
	}
	panic("BUG: index: no terms of kind " + k.String())
}

// ValueLen returns the length of the encoded value at the start of b, or
// -1 if b does not start with one.
func ValueLen(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	switch b[0] {
	case tagNull, tagArray, tagObject:
		return 1
	case tagBool:
		if len(b) < 2 {
			return -1
		}
		return 2
	case tagNumber:
		if len(b) < 9 {
			return -1
		}
		return 9
	case tagString:
		for i := 1; i+1 < len(b); i++ {
			if b[i] == 0 {
				if b[i+1] == 0x01 {
					return i + 2
				}
				i++ // 0x00 0xFF: an escaped zero byte
			}
		}
	}
	return -1
}

// TermLen returns the length of the encoded term (a path, then a value) at
// the start of b, or -1 if b does not start with one: what an index entry
// holds between its generation and its item key suffix.
func TermLen(b []byte) int {
	i := 0
	for i < len(b) && b[i] == 0x01 {
		i++
		for {
			if i+1 >= len(b) {
				return -1
			}
			if b[i] != 0 {
				i++
				continue
			}
			switch b[i+1] {
			case 0x01: // the segment's terminator
				i += 2
			case 0xFF: // an escaped zero byte
				i += 2
				continue
			default:
				return -1
			}
			break
		}
	}
	if i >= len(b) || b[i] != 0x00 {
		return -1
	}
	n := ValueLen(b[i+1:])
	if n < 0 {
		return -1
	}
	return i + 1 + n
}
