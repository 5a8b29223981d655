package epk

import (
	"github.com/parsecdb/parsec/internal/jsondoc"
	"math"
	"strconv"
)

// Kind is the JSON type of one partition key component.
//
// The numeric values are the Cosmos type markers that prefix a component in
// the hashing input (see doc.go); they are part of the EPK format and stable.
type Kind uint8

const (
	KindUndefined Kind = 0x00 // no value at the path; written {} in a header
	KindNull      Kind = 0x01
	KindFalse     Kind = 0x02
	KindTrue      Kind = 0x03
	KindNumber    Kind = 0x05
	KindString    Kind = 0x08
)

// String returns the lower-case name of k ("undefined", "null", "false",
// "true", "number", "string").
func (k Kind) String() string {
	switch k {
	case KindUndefined:
		return "undefined"
	case KindNull:
		return "null"
	case KindFalse:
		return "false"
	case KindTrue:
		return "true"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Component is one partition key value: the value found at one partition key
// path of a document, or one element of the x-ms-documentdb-partitionkey
// header array. Str is meaningful only for KindString and Num only for
// KindNumber; the other fields are zero.
//
// Str is always valid UTF-8 when the component comes from ParseHeader or
// ComponentFromJSON. Num is never NaN or ±Inf from those parsers (JSON cannot
// express them), but the hashing functions accept any float64 bit pattern.
type Component struct {
	Kind Kind
	Str  string
	Num  float64
}

// Convenience constructors.

// Undefined returns the component for a missing value ({} in a header).
func Undefined() Component { return Component{Kind: KindUndefined} }

// Null returns the JSON null component.
func Null() Component { return Component{Kind: KindNull} }

// Bool returns the true or false component.
func Bool(b bool) Component {
	if b {
		return Component{Kind: KindTrue}
	}
	return Component{Kind: KindFalse}
}

// Number returns a number component.
func Number(f float64) Component { return Component{Kind: KindNumber, Num: f} }

// String returns a string component.
func String(s string) Component { return Component{Kind: KindString, Str: s} }

// Equal reports whether c and o are the same partition key value. Numbers
// compare by their IEEE-754 bits, so 0 and -0 differ (they hash differently
// too) and Equal agrees with EPK equality.
func (c Component) Equal(o Component) bool {
	if c.Kind != o.Kind {
		return false
	}
	switch c.Kind {
	case KindString:
		return c.Str == o.Str
	case KindNumber:
		return math.Float64bits(c.Num) == math.Float64bits(o.Num)
	}
	return true
}

// String returns the component as JSON text; undefined renders as {}.
func (c Component) String() string {
	return string(c.AppendJSON(nil))
}

// AppendJSON appends the component's canonical JSON text to dst: strings are
// quoted with the minimal JSON escapes (", \ and control characters; non-ASCII
// is kept as UTF-8), numbers use the shortest representation that round
// trips (ECMAScript style, like encoding/json), undefined is {}.
func (c Component) AppendJSON(dst []byte) []byte {
	switch c.Kind {
	case KindUndefined:
		return append(dst, "{}"...)
	case KindNull:
		return append(dst, "null"...)
	case KindFalse:
		return append(dst, "false"...)
	case KindTrue:
		return append(dst, "true"...)
	case KindNumber:
		return appendNumber(dst, c.Num)
	case KindString:
		return appendQuoted(dst, c.Str)
	}
	// Not valid JSON on purpose: only a bug creates such a component.
	dst = append(dst, "<invalid kind "...)
	dst = strconv.AppendUint(dst, uint64(c.Kind), 10)
	return append(dst, '>')
}

// Key is a full or partial partition key value: one component per partition
// key path, in path order. A nil or empty Key is the empty key "[]".
type Key []Component

// String returns the canonical JSON array text of k, e.g. ["a",5] or [{}].
// ParseHeader(k.String()) returns a key Equal to k.
func (k Key) String() string {
	return string(k.AppendJSON(nil))
}

// AppendJSON appends the canonical JSON array text of k to dst.
func (k Key) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for i, c := range k {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = c.AppendJSON(dst)
	}
	return append(dst, ']')
}

// Equal reports whether k and o have the same components (see
// Component.Equal). A nil key equals an empty key.
func (k Key) Equal(o Key) bool {
	if len(k) != len(o) {
		return false
	}
	for i := range k {
		if !k[i].Equal(o[i]) {
			return false
		}
	}
	return true
}

// appendNumber formats f like encoding/json (and ECMAScript
// Number.prototype.toString): plain decimal for 1e-6 <= |f| < 1e21, exponent
// form otherwise, shortest digits that round trip. -0 is kept as "-0" so the
// text round trips to the same bits. NaN and ±Inf, which JSON cannot express,
// render as NaN, Infinity and -Infinity.
func appendNumber(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

const hexUpper = "0123456789ABCDEF"

// appendQuoted appends s as a JSON string token (see jsondoc.AppendQuote).
func appendQuoted(dst []byte, s string) []byte { return jsondoc.AppendQuote(dst, s) }

// FromValue converts a JSON scalar as Go holds it (string, float64, bool,
// nil for null) to a component; any other value is undefined.
func FromValue(v any) Component {
	switch x := v.(type) {
	case string:
		return String(x)
	case float64:
		return Number(x)
	case bool:
		return Bool(x)
	case nil:
		return Null()
	}
	return Undefined()
}

// FromValues converts JSON scalars (see FromValue) to a key.
func FromValues(vals []any) Key {
	out := make(Key, len(vals))
	for i, v := range vals {
		out[i] = FromValue(v)
	}
	return out
}
