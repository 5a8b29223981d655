package jsondoc

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
)

// MaxDepth is the deepest nesting of objects and arrays the scanner accepts.
// It equals encoding/json's limit, so Scan and json.Valid agree on depth.
const MaxDepth = 10000

// ErrNotObject is returned by Scan (and ApplyPatch) when the input is valid
// JSON whose top-level value is not an object. Documents must be objects.
var ErrNotObject = errors.New("jsondoc: document is not a JSON object")

// ErrSyntax is the sentinel every *SyntaxError matches with errors.Is.
var ErrSyntax = errors.New("jsondoc: invalid JSON")

// SyntaxError describes malformed JSON: what was wrong and the byte offset
// (0-based, into the scanned input) where it was detected. For truncated input
// the offset is len(input).
type SyntaxError struct {
	Offset int    // byte offset of the offending byte, or len(input) at end of input
	Msg    string // e.g. "invalid character 'x' looking for beginning of value"
}

func (e *SyntaxError) Error() string { return e.Msg + " at offset " + strconv.Itoa(e.Offset) }

// Is makes errors.Is(err, ErrSyntax) true for every *SyntaxError.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

func errEOF(off int) error {
	return &SyntaxError{Offset: off, Msg: "unexpected end of JSON input"}
}

func errChar(off int, c byte, context string) error {
	return &SyntaxError{Offset: off, Msg: "invalid character " + quoteChar(c) + " " + context}
}

func quoteChar(c byte) string {
	switch {
	case c == '\'':
		return `'\''`
	case c == '"':
		return `'"'`
	case c >= 0x80:
		return "byte 0x" + strconv.FormatUint(uint64(c), 16)
	}
	s := strconv.QuoteRune(rune(c))
	return s
}

// Scanned is the result of Scan. Its byte slices alias the scanned input: they
// are valid only as long as the caller keeps that buffer unchanged.
type Scanned struct {
	// ID is the raw JSON text of the top-level "id" member's value (any JSON
	// type, e.g. `"abc"` with its quotes), or nil if there is none.
	ID []byte
	// Values holds, for each requested path, the raw JSON text of the value
	// found there, or nil if the path is absent or crosses a non-object.
	Values [][]byte
}

// Scan checks that raw is exactly one valid JSON value (surrounding whitespace
// allowed) and that this value is an object. It returns the raw text of the
// top-level "id" member and of the values at paths, each path being a list of
// member names navigated through nested objects (["a","b"] is /a/b; an empty
// path selects the whole object).
//
// Errors: a *SyntaxError (errors.Is(err, ErrSyntax)) saying what is wrong and
// at which byte offset, or ErrNotObject for valid JSON that is not an object.
//
// Semantics follow encoding/json.Valid exactly (nesting up to MaxDepth,
// invalid UTF-8 inside strings tolerated), with one addition: when an object
// repeats a member name, the FIRST occurrence wins for "id" and for path
// navigation (encoding/json's Unmarshal keeps the last; real Cosmos DB
// documents never carry duplicates). Member names are compared after
// unescaping, so "\u0069d" is "id".
//
// Scan allocates only the Values slice; use ScanInto to reuse it.
func Scan(raw []byte, paths [][]string) (Scanned, error) {
	var s Scanned
	if len(paths) > 0 {
		s.Values = make([][]byte, len(paths))
	}
	if err := ScanInto(&s, raw, paths); err != nil {
		return Scanned{}, err
	}
	return s, nil
}

// ScanInto is Scan writing into dst, reusing dst.Values' storage when it is
// large enough (no allocation in the steady state). On error dst is reset.
func ScanInto(dst *Scanned, raw []byte, paths [][]string) error {
	dst.ID = nil
	if cap(dst.Values) >= len(paths) {
		dst.Values = dst.Values[:len(paths)]
		clear(dst.Values)
	} else {
		dst.Values = make([][]byte, len(paths))
	}
	if err := scanInto(dst, raw, paths); err != nil {
		dst.ID = nil
		clear(dst.Values)
		return err
	}
	return nil
}

func scanInto(dst *Scanned, raw []byte, paths [][]string) error {
	i := skipWS(raw, 0)
	if i >= len(raw) {
		return errEOF(i)
	}
	p := parser{data: raw}
	if raw[i] != '{' {
		end, err := p.value(i, 0, 0)
		if err != nil {
			return err
		}
		if err := checkTrailing(raw, end); err != nil {
			return err
		}
		return ErrNotObject
	}
	// Paths are tracked with a 64-bit mask; more than 64 paths are served by
	// extra (already validated, so error-free) passes over the object.
	for base := 0; ; base += 64 {
		chunk := paths[base:min(base+64, len(paths))]
		p.paths = chunk
		p.vals = dst.Values[base : base+len(chunk)]
		var alive uint64
		for k, path := range chunk {
			if len(path) > 0 { // an empty path is the whole object, set below
				alive |= 1 << k
			}
		}
		end, err := p.object(i, 1, alive)
		if err != nil {
			return err
		}
		if base == 0 {
			if err := checkTrailing(raw, end); err != nil {
				return err
			}
		}
		for k, path := range chunk {
			if len(path) == 0 {
				p.vals[k] = raw[i:end]
			}
		}
		if base+64 >= len(paths) {
			break
		}
	}
	dst.ID = p.id
	return nil
}

func checkTrailing(raw []byte, end int) error {
	if j := skipWS(raw, end); j < len(raw) {
		return errChar(j, raw[j], "after top-level value")
	}
	return nil
}

// Validate reports whether raw is exactly one valid JSON value of any type
// (surrounding whitespace allowed), with the same rules as Scan. It returns
// nil or a *SyntaxError.
func Validate(raw []byte) error {
	i := skipWS(raw, 0)
	p := parser{data: raw}
	end, err := p.value(i, 0, 0)
	if err != nil {
		return err
	}
	return checkTrailing(raw, end)
}

// parser is the single-pass validating scanner. It is recursive descent over
// the byte slice: every function takes the offset of the first byte of a token
// and returns the offset just past it. Along the way object() matches member
// names against the requested paths (a bit mask of the paths still "alive" at
// this nesting level) and records the raw value spans they select.
type parser struct {
	data  []byte
	paths [][]string
	vals  [][]byte
	id    []byte
	hasID bool
}

// value scans the value starting at data[i]; depth is the nesting depth of
// the enclosing container (0 at top level); alive selects the paths that
// continue into this value if it is an object.
func (p *parser) value(i, depth int, alive uint64) (int, error) {
	data := p.data
	if i >= len(data) {
		return i, errEOF(i)
	}
	switch c := data[i]; c {
	case '{':
		return p.object(i, depth+1, alive)
	case '[':
		return p.array(i, depth+1)
	case '"':
		end, _, err := scanString(data, i)
		return end, err
	case 't':
		return scanLiteral(data, i, "true")
	case 'f':
		return scanLiteral(data, i, "false")
	case 'n':
		return scanLiteral(data, i, "null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return scanNumber(data, i)
		}
		return i, errChar(i, c, "looking for beginning of value")
	}
}

func errDepth(i int) error {
	return &SyntaxError{Offset: i, Msg: "exceeded max nesting depth " + strconv.Itoa(MaxDepth)}
}

// object scans the object whose '{' is at data[i]; depth is its own depth
// (1 for the top-level object).
func (p *parser) object(i, depth int, alive uint64) (int, error) {
	if depth > MaxDepth {
		return i, errDepth(i)
	}
	data := p.data
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	level := depth - 1 // index of the path component matched at this object
	var consumed uint64
	for {
		if i >= len(data) {
			return i, errEOF(i)
		}
		if data[i] != '"' {
			return i, errChar(i, data[i], "looking for beginning of object key string")
		}
		ks := i
		ke, esc, err := scanString(data, i)
		if err != nil {
			return ke, err
		}
		i = skipWS(data, ke)
		if i >= len(data) {
			return i, errEOF(i)
		}
		if data[i] != ':' {
			return i, errChar(i, data[i], "after object key")
		}
		i = skipWS(data, i+1)
		key := data[ks+1 : ke-1]

		var child, capture uint64
		if m := alive &^ consumed; m != 0 {
			for ; m != 0; m &= m - 1 {
				b := bits.TrailingZeros64(m)
				path := p.paths[b]
				if keyEqual(key, esc, path[level]) {
					consumed |= 1 << b
					if len(path) == level+1 {
						capture |= 1 << b
					} else {
						child |= 1 << b
					}
				}
			}
		}
		isID := depth == 1 && !p.hasID && keyEqual(key, esc, "id")

		vs := i
		i, err = p.value(i, depth, child)
		if err != nil {
			return i, err
		}
		for ; capture != 0; capture &= capture - 1 {
			p.vals[bits.TrailingZeros64(capture)] = data[vs:i]
		}
		if isID {
			p.id, p.hasID = data[vs:i], true
		}

		i = skipWS(data, i)
		if i >= len(data) {
			return i, errEOF(i)
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, errChar(i, data[i], "after object key:value pair")
		}
	}
}

// array scans the array whose '[' is at data[i]; depth is its own depth.
// Paths never navigate into arrays.
func (p *parser) array(i, depth int) (int, error) {
	if depth > MaxDepth {
		return i, errDepth(i)
	}
	data := p.data
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		i, err = p.value(i, depth, 0)
		if err != nil {
			return i, err
		}
		i = skipWS(data, i)
		if i >= len(data) {
			return i, errEOF(i)
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, errChar(i, data[i], "after array element")
		}
	}
}

// isWS reports JSON insignificant whitespace (RFC 8259: space, tab, LF, CR).
var isWS = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

func skipWS(data []byte, i int) int {
	for i < len(data) && isWS[data[i]] {
		i++
	}
	return i
}

// strStop marks the bytes that end the fast path inside a string: the closing
// quote, a backslash, and the control characters JSON forbids unescaped.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

const (
	lsb = 0x0101010101010101 // the lowest bit of each byte
	msb = 0x8080808080808080 // the highest bit of each byte
)

var hexVal = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = int8(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = int8(c - 'a' + 10)
		t[c-'a'+'A'] = int8(c - 'a' + 10)
	}
	return t
}()

// scanString scans the string token whose opening quote is at data[i] and
// returns the offset past the closing quote and whether it contains escapes.
// Bytes >= 0x80 are not checked for UTF-8 validity (as in encoding/json).
func scanString(data []byte, i int) (end int, escaped bool, err error) {
	i++
	for {
		// Eight bytes at a time while none of them is '"', '\\' or a control
		// character (SWAR: a byte b is flagged when b-k borrows, i.e. b < k,
		// for b = x, x^'"' and x^'\\'), then byte by byte to the stopper.
		for i+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[i:])
			q := x ^ (lsb * '"')
			bs := x ^ (lsb * '\\')
			if ((x-lsb*0x20)&^x|(q-lsb)&^q|(bs-lsb)&^bs)&msb != 0 {
				break
			}
			i += 8
		}
		for i < len(data) && !strStop[data[i]] {
			i++
		}
		if i >= len(data) {
			return i, escaped, errEOF(i)
		}
		switch c := data[i]; c {
		case '"':
			return i + 1, escaped, nil
		case '\\':
			escaped = true
			i++
			if i >= len(data) {
				return i, escaped, errEOF(i)
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				i++
				for k := 0; k < 4; k++ {
					if i >= len(data) {
						return i, escaped, errEOF(i)
					}
					if hexVal[data[i]] < 0 {
						return i, escaped, errChar(i, data[i], "in \\u hexadecimal character escape")
					}
					i++
				}
			default:
				return i, escaped, errChar(i, data[i], "in string escape code")
			}
		default:
			return i, escaped, errChar(i, c, "in string literal")
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(data []byte, i int) (int, error) {
	n := len(data)
	if data[i] == '-' {
		i++
		if i >= n {
			return i, errEOF(i)
		}
	}
	switch c := data[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i++
		for i < n && isDigit(data[i]) {
			i++
		}
	default:
		return i, errChar(i, c, "in numeric literal")
	}
	if i < n && data[i] == '.' {
		i++
		if i >= n {
			return i, errEOF(i)
		}
		if !isDigit(data[i]) {
			return i, errChar(i, data[i], "after decimal point in numeric literal")
		}
		for i < n && isDigit(data[i]) {
			i++
		}
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n {
			return i, errEOF(i)
		}
		if !isDigit(data[i]) {
			return i, errChar(i, data[i], "in exponent of numeric literal")
		}
		for i < n && isDigit(data[i]) {
			i++
		}
	}
	return i, nil
}

func scanLiteral(data []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(data) {
			return i + k, errEOF(i + k)
		}
		if data[i+k] != lit[k] {
			return i + k, errChar(i+k, data[i+k], "in literal "+lit+" (expecting "+quoteChar(lit[k])+")")
		}
	}
	return i + len(lit), nil
}
