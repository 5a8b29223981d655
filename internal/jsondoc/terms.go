package jsondoc

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Terms returns the number of index terms Cosmos DB's automatic indexing would
// produce for the document raw under the default indexing policy (every path
// included): one term per scalar leaf (string, number, true, false, null) at
// any depth, array elements included. Object member names, and empty objects
// and arrays, produce no term. The top-level system properties _rid, _self,
// _etag, _ts and _attachments (member names compared after unescaping) and
// everything below them are not counted, so a document counts the same with or
// without the properties the server adds. Repeated member names are each
// counted.
//
// raw should be valid JSON, normally a document already accepted by Scan.
// Terms does not validate: on invalid input it returns some count and never
// panics.
//
// Terms makes a single pass over raw, without recursion and without
// allocating; a top-level value that is not an object is counted the same way
// (a lone scalar is one term).
func Terms(raw []byte) int {
	n := 0
	depth := 0    // open objects and arrays around raw[i]
	skip := false // inside the value of a top-level system member
	for i := 0; i < len(raw); {
		switch termClass[raw[i]] {
		case tcSpace:
			i++
		case tcOpen:
			depth++
			i++
		case tcClose:
			depth--
			i++
		case tcComma:
			if depth == 1 {
				skip = false // the previous top-level member has ended
			}
			i++
		case tcQuote:
			end := skipString(raw, i)
			j := end
			for j < len(raw) && isWS[raw[j]] {
				j++
			}
			if j < len(raw) && raw[j] == ':' { // a member name
				if depth == 1 && isSystemMember(raw[i+1:end-1]) {
					skip = true
				}
				i = j + 1
				continue
			}
			if !skip {
				n++
			}
			i = end
		default: // the first byte of a number, true, false or null
			if !skip {
				n++
			}
			for i++; i < len(raw) && termClass[raw[i]] == tcScalar; i++ {
			}
		}
	}
	return n
}

// Byte classes for Terms. Every byte that is not whitespace or structural
// belongs to a bare scalar token (number, true, false, null).
const (
	tcScalar = iota
	tcSpace  // whitespace and ':'
	tcOpen   // '{' '['
	tcClose  // '}' ']'
	tcComma
	tcQuote
)

var termClass = [256]uint8{
	' ': tcSpace, '\t': tcSpace, '\n': tcSpace, '\r': tcSpace, ':': tcSpace,
	'{': tcOpen, '[': tcOpen, '}': tcClose, ']': tcClose, ',': tcComma, '"': tcQuote,
}

// skipString returns the offset just past the string whose opening quote is at
// data[i], or len(data) if it is not terminated. It checks nothing but where
// the string ends, looking at eight bytes at a time for '"' or '\\' (SWAR, as
// in scanString).
func skipString(data []byte, i int) int {
	i++
	for {
		for i+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[i:])
			q := x ^ (lsb * '"')
			bs := x ^ (lsb * '\\')
			if m := ((q-lsb)&^q | (bs-lsb)&^bs) & msb; m != 0 {
				// The lowest flagged byte is exact (borrows only run upward).
				i += bits.TrailingZeros64(m) >> 3
				goto found
			}
			i += 8
		}
		for i < len(data) && data[i] != '"' && data[i] != '\\' {
			i++
		}
		if i >= len(data) {
			return len(data)
		}
	found:
		if data[i] == '"' {
			return i + 1
		}
		i += 2 // a backslash and the byte it escapes
	}
}

// isSystemMember reports whether the raw (possibly escaped) text of a member
// name, without its quotes, is one of the system properties.
func isSystemMember(key []byte) bool {
	if len(key) == 0 || key[0] != '_' && key[0] != '\\' {
		return false
	}
	esc := bytes.IndexByte(key, '\\') >= 0
	if esc && !validEscapes(key) {
		return false
	}
	return isSystemKey(key, esc)
}

// validEscapes reports whether every backslash in key starts a well-formed
// escape sequence, as appendUnescape requires.
func validEscapes(key []byte) bool {
	for i := 0; i < len(key); i++ {
		if key[i] != '\\' {
			continue
		}
		if i+1 >= len(key) {
			return false
		}
		i++
		switch key[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(key) {
				return false
			}
			for k := 1; k <= 4; k++ {
				if hexVal[key[i+k]] < 0 {
					return false
				}
			}
			i += 4
		default:
			return false
		}
	}
	return true
}
