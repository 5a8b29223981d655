package index

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// ErrMalformed is the error of RawTerms for bytes that are not a JSON
// document.
var ErrMalformed = errors.New("malformed JSON")

// RawTerms calls fn for every indexed term of doc, a whole document as
// JSON text, in document order. term is the encoded path and value
// (AppendPath, AppendValue), pathLen the length of its path part and path
// the property path; all three are valid only during the call. A non-nil
// error from fn stops the walk and is returned.
//
// The terms are those of Terms for the document eval.FromJSON(doc) gives,
// read from the bytes in one pass without building values: doc should be a
// document accepted by jsondoc.Scan (which refuses repeated member names;
// with them, RawTerms calls fn for every occurrence). Input that is not JSON
// makes it return an error wrapping ErrMalformed, though not every such
// input is noticed.
func (p *Policy) RawTerms(doc []byte, buf *[]byte, fn func(term []byte, pathLen int, path []string) error) error {
	if p == nil || p.None {
		return nil
	}
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		if i < len(doc) {
			return nil // not an object: no terms, as in Terms
		}
		return malformed(i)
	}
	w := rawWalker{p: p, src: doc, buf: *buf, fn: fn}
	_, err := w.object(i, 0)
	*buf = w.buf
	return err
}

func malformed(off int) error {
	return errors.Join(ErrMalformed, errors.New("at offset "+strconv.Itoa(off)))
}

type rawWalker struct {
	p    *Policy
	src  []byte
	path [MaxDepth + 1]string
	buf  []byte // the term being built
	fn   func(term []byte, pathLen int, path []string) error
}

// object walks the members of the object at src[i] ('{'), whose path has
// depth segments, and returns the offset after it.
func (w *rawWalker) object(i, depth int) (int, error) {
	src := w.src
	i = skipSpace(src, i+1)
	if i < len(src) && src[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(src) || src[i] != '"' {
			return 0, malformed(i)
		}
		end, flags := stringEnd(src, i)
		if end < 0 {
			return 0, malformed(i)
		}
		w.path[depth] = w.name(src[i+1:end-1], flags)
		i = skipSpace(src, end)
		if i >= len(src) || src[i] != ':' {
			return 0, malformed(i)
		}
		i = skipSpace(src, i+1)
		if i >= len(src) {
			return 0, malformed(i)
		}
		sub := w.path[:depth+1]
		next := 0 // the end of the value, if emit found it
		if w.p.Indexed(sub) {
			var err error
			if next, err = w.emit(sub, i); err != nil {
				return 0, err
			}
		}
		var err error
		switch {
		case next > 0:
			i = next
		case src[i] == '{' && len(sub) < MaxDepth && Fits(sub) && w.mayIndexBelow(depth+1):
			i, err = w.object(i, depth+1)
		default:
			i, err = skipValue(src, i)
		}
		if err != nil {
			return 0, err
		}
		i = skipSpace(src, i)
		if i >= len(src) {
			return 0, malformed(i)
		}
		switch src[i] {
		case ',':
			i = skipSpace(src, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, malformed(i)
		}
	}
}

// mayIndexBelow is Policy.mayIndexBelow for w.path[:n], without allocating.
func (w *rawWalker) mayIndexBelow(n int) bool {
	path := w.path[:n]
	w.path[n] = "\x00"
	if w.p.Indexed(w.path[:n+1]) {
		return true
	}
	for _, r := range w.p.rules {
		if r.include && !r.array && len(r.segs) > len(path) && r.matchesPrefix(path) {
			return true
		}
	}
	return false
}

// name returns the decoded member name whose raw text (without quotes) is
// b. A name without escapes or non-ASCII bytes shares b's memory, which
// stays unchanged during the walk.
func (w *rawWalker) name(b []byte, flags uint8) string {
	if flags == 0 || flags == strHigh && utf8.Valid(b) {
		if len(b) == 0 {
			return ""
		}
		return unsafe.String(&b[0], len(b))
	}
	return string(jsondoc.AppendUnescaped(nil, b))
}

// emit calls fn with the term of the value at src[i] under path. It
// returns the offset after the value when it is a scalar, else 0.
func (w *rawWalker) emit(path []string, i int) (int, error) {
	b := AppendPath(w.buf[:0], path)
	pathLen := len(b)
	src := w.src
	next := 0
	switch c := src[i]; c {
	case '{':
		b = append(b, tagObject)
	case '[':
		b = append(b, tagArray)
	case 'n':
		b = append(b, tagNull)
		next = literalEnd(src, i, "null")
	case 't':
		b = append(b, tagBool, 1)
		next = literalEnd(src, i, "true")
	case 'f':
		b = append(b, tagBool, 0)
		next = literalEnd(src, i, "false")
	case '"':
		end, flags := stringEnd(src, i)
		if end < 0 {
			return 0, malformed(i)
		}
		next = end
		body := src[i+1 : end-1]
		if flags != 0 && (flags != strHigh || !utf8.Valid(body)) {
			// Decode into the tail of the buffer, then encode from there.
			start := len(b)
			dec := jsondoc.AppendUnescaped(b, body)
			s := string(dec[start:]) // the encoding below may overwrite dec
			b = appendString(dec[:start], s)
		} else {
			b = appendString(b, body)
		}
	default:
		end := numberEnd(src, i)
		f, ok := parseNumber(src[i:end])
		if !ok {
			return 0, malformed(i)
		}
		b = appendNumber(b, f)
		next = end
	}
	if next < 0 {
		return 0, malformed(i)
	}
	w.buf = b
	return next, w.fn(b, pathLen, path)
}

// literalEnd returns the offset after the literal lit at src[i], or -1 if
// it is not there.
func literalEnd(src []byte, i int, lit string) int {
	if len(src)-i < len(lit) || string(src[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// parseNumber returns the value of a JSON number token as eval.FromJSON
// reads it: exact integers converted to float64, other numbers parsed.
func parseNumber(text []byte) (float64, bool) {
	if len(text) == 0 {
		return 0, false
	}
	isInt := len(text) <= 20
	for _, c := range text {
		if c == '.' || c == 'e' || c == 'E' {
			isInt = false
			break
		}
	}
	if isInt {
		if v, ok := eval.ParseInt64(text); ok {
			return float64(v), true
		}
	}
	f, err := strconv.ParseFloat(unsafe.String(&text[0], len(text)), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// Flags of stringEnd.
const (
	strEscaped = 1 << iota // the string has a backslash
	strHigh                // the string has a byte >= 0x80
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stringEnd returns the offset after the string whose opening quote is at
// src[i] and what its text holds, or -1 if it is not terminated.
func stringEnd(src []byte, i int) (int, uint8) {
	var flags uint8
	i++
	// Eight bytes at a time while none is '"', '\\' or >= 0x80 (SWAR, as
	// in jsondoc's scanner).
	for i+8 <= len(src) {
		x := binary.LittleEndian.Uint64(src[i:])
		q := x ^ (lsb * '"')
		bs := x ^ (lsb * '\\')
		if ((q-lsb)&^q|(bs-lsb)&^bs|x)&msb != 0 {
			break
		}
		i += 8
	}
	for ; i < len(src); i++ {
		switch c := src[i]; {
		case c == '"':
			return i + 1, flags
		case c == '\\':
			flags |= strEscaped
			i++
		case c >= utf8.RuneSelf:
			flags |= strHigh
		}
	}
	return -1, flags
}

// numberEnd returns the offset after the number token at src[i].
func numberEnd(src []byte, i int) int {
	for i < len(src) {
		switch c := src[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the offset after the value at src[i], nested arrays and
// objects included, without recursion.
func skipValue(src []byte, i int) (int, error) {
	depth := 0
	for i < len(src) {
		switch c := src[i]; c {
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
			if depth < 0 {
				return 0, malformed(i - 1)
			}
		case '"':
			end, _ := stringEnd(src, i)
			if end < 0 {
				return 0, malformed(i)
			}
			i = end
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, nil
			}
			i++
		default: // a number or literal
			start := i
			for i < len(src) && scalarByte(src[i]) {
				i++
			}
			if i == start {
				return 0, malformed(i)
			}
		}
		if depth == 0 {
			return i, nil
		}
	}
	return 0, malformed(i)
}

func scalarByte(c byte) bool {
	switch c {
	case '{', '[', '}', ']', '"', ',', ':', ' ', '\t', '\n', '\r':
		return false
	}
	return true
}

func skipSpace(src []byte, i int) int {
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
