package eval

import (
	"errors"
	"fmt"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"
)

// ErrBadJSON is the sentinel every FromJSON error wraps.
var ErrBadJSON = errors.New("invalid JSON")

// MaxJSONDepth bounds the nesting of arrays and objects FromJSON accepts,
// so that hostile input cannot exhaust the stack (encoding/json uses the
// same limit).
const MaxJSONDepth = 10000

// FromJSON parses one JSON value (RFC 8259) from raw, with optional
// surrounding whitespace, in a single pass. Integers without fraction or
// exponent that fit an int64 are kept exactly; other numbers become
// float64, and a number outside float64 range is an error. Strings are
// decoded as encoding/json decodes them: invalid UTF-8 and lone
// surrogates become U+FFFD. A repeated object key keeps its first position
// and its last value, which gives the same values encoding/json gives.
// Errors wrap ErrBadJSON and name the byte offset.
func FromJSON(raw []byte) (Value, error) {
	p := parserPool.Get().(*jsonParser)
	defer func() {
		clear(p.stack) // what a failed parse left; take cleared the rest
		p.src, p.i, p.stack = nil, 0, p.stack[:0]
		if cap(p.stack) > 1<<16 || cap(p.buf) > 1<<20 {
			return // do not keep the scratch of a giant document
		}
		parserPool.Put(p)
	}()
	p.src = raw
	p.space()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.space()
	if p.i != len(p.src) {
		return Value{}, p.errorf("unexpected %q after the value", p.src[p.i])
	}
	return v, nil
}

type jsonParser struct {
	src   []byte
	i     int
	buf   []byte  // scratch for strings with escapes
	stack []Value // elements of the open arrays and objects, innermost last
}

// parserPool recycles the scratch space of FromJSON (the stack and the
// string buffer) between calls.
var parserPool = sync.Pool{New: func() any { return new(jsonParser) }}

// take moves the values pushed on the stack since mark into a slice of
// exactly their size (one allocation per array or object, no growth).
func (p *jsonParser) take(mark int) []Value {
	a := make([]Value, len(p.stack)-mark)
	copy(a, p.stack[mark:])
	clear(p.stack[mark:])
	p.stack = p.stack[:mark]
	return a
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrBadJSON, p.i, fmt.Sprintf(format, args...))
}

func (p *jsonParser) space() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (Value, error) {
	if p.i >= len(p.src) {
		return Value{}, p.errorf("unexpected end of input")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, err := p.string()
		if err != nil {
			return Value{}, err
		}
		return StringValue(s), nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true", BoolValue(true))
	case c == 'f':
		return p.literal("false", BoolValue(false))
	case c == 'n':
		return p.literal("null", NullValue())
	default:
		return Value{}, p.errorf("unexpected %q", c)
	}
}

func (p *jsonParser) literal(word string, v Value) (Value, error) {
	if len(p.src)-p.i < len(word) || string(p.src[p.i:p.i+len(word)]) != word {
		return Value{}, p.errorf("invalid literal")
	}
	p.i += len(word)
	return v, nil
}

func (p *jsonParser) object(depth int) (Value, error) {
	if depth > MaxJSONDepth {
		return Value{}, p.errorf("nesting deeper than %d", MaxJSONDepth)
	}
	p.i++ // {
	p.space()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return Value{kind: Object, a: []Value{}}, nil
	}
	mark := len(p.stack)
	var index map[string]int // key -> position on the stack, for large objects
	for {
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return Value{}, p.errorf("expected a string key")
		}
		key, err := p.string()
		if err != nil {
			return Value{}, err
		}
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return Value{}, p.errorf("expected ':'")
		}
		p.i++
		p.space()
		val, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		// Keep the first position and the last value of a repeated key.
		// Small objects scan; large ones keep a map.
		dup := -1
		if index != nil {
			if j, ok := index[key]; ok {
				dup = j
			}
		} else {
			for j := mark; j < len(p.stack); j += 2 {
				if p.stack[j].s == key {
					dup = j
					break
				}
			}
			if len(p.stack)-mark >= 32 {
				index = make(map[string]int, len(p.stack)-mark)
				for j := mark; j < len(p.stack); j += 2 {
					index[p.stack[j].s] = j
				}
			}
		}
		if dup >= 0 {
			p.stack[dup+1] = val
		} else {
			if index != nil {
				index[key] = len(p.stack)
			}
			p.stack = append(p.stack, StringValue(key), val)
		}
		p.space()
		if p.i >= len(p.src) {
			return Value{}, p.errorf("unexpected end of input in object")
		}
		switch p.src[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			return Value{kind: Object, a: p.take(mark)}, nil
		default:
			return Value{}, p.errorf("expected ',' or '}'")
		}
	}
}

func (p *jsonParser) array(depth int) (Value, error) {
	if depth > MaxJSONDepth {
		return Value{}, p.errorf("nesting deeper than %d", MaxJSONDepth)
	}
	p.i++ // [
	p.space()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return Value{kind: Array, a: []Value{}}, nil
	}
	mark := len(p.stack)
	for {
		v, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		p.stack = append(p.stack, v)
		p.space()
		if p.i >= len(p.src) {
			return Value{}, p.errorf("unexpected end of input in array")
		}
		switch p.src[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			return Value{kind: Array, a: p.take(mark)}, nil
		default:
			return Value{}, p.errorf("expected ',' or ']'")
		}
	}
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonParser) number() (Value, error) {
	start := p.i
	isInt := true
	if p.src[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.src) && p.src[p.i] == '0':
		p.i++
	case p.i < len(p.src) && p.src[p.i] >= '1' && p.src[p.i] <= '9':
		for p.i < len(p.src) && isDigit(p.src[p.i]) {
			p.i++
		}
	default:
		return Value{}, p.errorf("invalid number")
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		isInt = false
		p.i++
		if p.i >= len(p.src) || !isDigit(p.src[p.i]) {
			return Value{}, p.errorf("invalid number")
		}
		for p.i < len(p.src) && isDigit(p.src[p.i]) {
			p.i++
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		isInt = false
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if p.i >= len(p.src) || !isDigit(p.src[p.i]) {
			return Value{}, p.errorf("invalid number")
		}
		for p.i < len(p.src) && isDigit(p.src[p.i]) {
			p.i++
		}
	}
	text := p.src[start:p.i]
	if isInt && len(text) <= 20 {
		if i, ok := ParseInt64(text); ok {
			if i == 0 && text[0] == '-' {
				return NumberValue(math.Copysign(0, -1)), nil
			}
			return IntValue(i), nil
		}
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		p.i = start
		return Value{}, p.errorf("number %s out of range", text)
	}
	return NumberValue(f), nil
}

// ParseInt64 parses an optionally negative decimal integer without
// allocating; ok is false on overflow or a byte that is not a digit.
func ParseInt64(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true // -(1<<63) wraps to MinInt64, as wanted
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// string scans a JSON string starting at the opening quote.
func (p *jsonParser) string() (string, error) {
	p.i++ // "
	start := p.i
	// Fast path: no escapes, ASCII or valid UTF-8.
	for p.i < len(p.src) {
		c := p.src[p.i]
		if c == '"' {
			s := string(p.src[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.i++
	}
	buf := append(p.buf[:0], p.src[start:p.i]...)
	for {
		if p.i >= len(p.src) {
			return "", p.errorf("unterminated string")
		}
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			p.buf = buf
			return string(buf), nil
		case c < 0x20:
			return "", p.errorf("control character %#x in string", c)
		case c == '\\':
			if p.i+1 >= len(p.src) {
				return "", p.errorf("unterminated string")
			}
			var n int
			if buf, n = jsondoc.AppendEscape(buf, p.src, p.i); n == 0 {
				if p.src[p.i+1] == 'u' {
					p.i += 2
					return "", p.errorf("invalid \\u escape")
				}
				p.i++
				return "", p.errorf("invalid escape \\%c", p.src[p.i])
			}
			p.i += n
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.src[p.i:])
			if r == utf8.RuneError && size == 1 {
				buf = utf8.AppendRune(buf, utf8.RuneError)
			} else {
				buf = append(buf, p.src[p.i:p.i+size]...)
			}
			p.i += size
		}
	}
}

// AppendJSON appends v as compact JSON to dst and returns the extended
// slice. Members keep their order. Numbers print as JavaScript prints them
// (and as encoding/json does): integers in full, other numbers in the
// shortest form that reads back exactly, with an exponent below 1e-6 and
// from 1e21 up. JSON has no NaN or Infinity; they are written as null, as
// JavaScript's JSON.stringify writes them (Cosmos DB itself fails such a
// query with an error; the executor may check v first). Undefined appends
// nothing: callers must leave undefined out, as Cosmos DB does.
func (v Value) AppendJSON(dst []byte) []byte { return v.appendJSON(dst, false) }

// appendJSON writes v; with debug, NaN and infinities print as NaN,
// Infinity and -Infinity.
func (v Value) appendJSON(dst []byte, debug bool) []byte {
	switch v.kind {
	case Undefined:
		if debug {
			return append(dst, "undefined"...)
		}
		return dst
	case Null:
		return append(dst, "null"...)
	case Bool:
		if v.n != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		if v.exact {
			return strconv.AppendInt(dst, int64(v.n), 10)
		}
		f := math.Float64frombits(v.n)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			if debug {
				return appendNumber(dst, f)
			}
			return append(dst, "null"...)
		}
		return appendNumber(dst, f)
	case String:
		return appendQuoted(dst, v.s)
	case Array:
		dst = append(dst, '[')
		for i, e := range v.a {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.appendJSON(dst, debug)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for i := 0; i < len(v.a); i += 2 {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendQuoted(dst, v.a[i].s)
			dst = append(dst, ':')
			dst = v.a[i+1].appendJSON(dst, debug)
		}
		return append(dst, '}')
	}
	panic("BUG: eval: bad kind")
}

// appendNumber formats f as JavaScript's Number.prototype.toString does
// (ECMA-262 Number::toString): NaN, Infinity, -Infinity; decimal notation
// for 1e-6 <= |f| < 1e21; otherwise d.ddde±x. -0 prints as 0.
func appendNumber(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		return append(dst, '0')
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// Go writes e-07 and e+21; JavaScript writes e-7 and e+21.
	for i := n; i < len(dst)-2; i++ {
		if dst[i] == 'e' && dst[i+2] == '0' {
			dst = append(dst[:i+2], dst[i+3:]...)
			break
		}
	}
	return dst
}

// appendQuoted appends s as a JSON string token (see jsondoc.AppendQuote).
func appendQuoted(dst []byte, s string) []byte { return jsondoc.AppendQuote(dst, s) }
