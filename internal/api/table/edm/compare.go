package edm

import (
	"bytes"
	"math"
	"unicode/utf8"
)

// Compare orders two values the way the Table service's $filter compares a
// property with a literal. It returns c < 0, 0 or > 0 as a is less than,
// equal to or greater than b.
//
// ok is false when the service does not compare the two types: values of
// different types never compare, not even Int32 with Int64 or either with
// Double. The Table service requires "the constant value [to] be of the
// same data type as the property in order for the filter to return valid
// results" (learn.microsoft.com/rest/api/storageservices/querying-tables-and-entities),
// which is why the legacy .NET SDK writes an Int64 literal with an L suffix
// and a whole Double as "2.0". A filter comparison whose ok is false
// matches nothing.
//
// Within a type:
//   - String compares ordinally by UTF-16 code units (as .NET's
//     string.CompareOrdinal and JavaScript's < do), which differs from byte
//     order only between supplementary characters and U+E000..U+FFFF;
//   - Int32 and Int64 compare numerically;
//   - Double compares numerically with -0 equal to +0; for a total order NaN
//     is equal to NaN and less than every other number (.NET's
//     Double.CompareTo). The filter evaluator does not use this order for
//     NaN: there every comparison with NaN is false except ne (IEEE);
//   - Boolean orders false before true;
//   - DateTime compares instants;
//   - Guid compares the canonical lower-case text, which is the same as
//     comparing the 16 bytes in text order;
//   - Binary compares bytewise, a prefix before the longer value.
func Compare(a, b Value) (c int, ok bool) {
	if a.Type != b.Type {
		return 0, false
	}
	switch a.Type {
	case String, Guid:
		return CompareStrings(a.S, b.S), true
	case Int32, Int64:
		return cmpInt(a.I, b.I), true
	case Double:
		return compareDouble(a.F, b.F), true
	case Boolean:
		switch {
		case a.B == b.B:
			return 0, true
		case b.B:
			return -1, true
		default:
			return 1, true
		}
	case DateTime:
		return a.T.Compare(b.T), true
	case Binary:
		return bytes.Compare(a.Bin, b.Bin), true
	}
	return 0, false
}

// Equal reports whether a and b have the same type and compare equal.
func Equal(a, b Value) bool {
	c, ok := Compare(a, b)
	return ok && c == 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareDouble(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// CompareStrings compares a and b by their UTF-16 code units, the ordinal
// string order of the Table service. Invalid UTF-8 bytes sort as U+FFFD,
// and two strings that are equal under that rule are then ordered by their
// bytes, so the order stays total.
func CompareStrings(a, b string) int {
	// Skip the common prefix; it cannot decide the order.
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	// Back up to the start of the rune the prefix may have cut.
	for i > 0 && (!utf8.RuneStart(at(a, i)) || !utf8.RuneStart(at(b, i))) {
		i--
	}
	x, y := a[i:], b[i:]
	for len(x) > 0 && len(y) > 0 {
		rx, nx := utf8.DecodeRuneInString(x)
		ry, ny := utf8.DecodeRuneInString(y)
		if rx != ry {
			ux, uy := firstUnit(rx), firstUnit(ry)
			if ux != uy {
				return cmpInt(int64(ux), int64(uy))
			}
			// Both are supplementary with the same high surrogate.
			return cmpInt(int64(rx), int64(ry))
		}
		x, y = x[nx:], y[ny:]
	}
	switch {
	case len(x) == 0 && len(y) == 0:
		return bytesOrder(a, b)
	case len(x) == 0:
		return -1
	}
	return 1
}

func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	// Past the end of s: treat as a rune start so the back-up stops.
	return 0
}

func bytesOrder(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// firstUnit is the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + ((r - 0x10000) >> 10)
	}
	return r
}
