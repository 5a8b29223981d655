package jsondoc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays a document may have,
// Cosmos DB's limit. The top-level value is level 1: {"a":{"b":[1]}} is 3
// levels deep.
const MaxDepth = 128

// laxMaxDepth bounds the recursion of the lax re-walks of already stored
// text (see parser.lax); it is encoding/json's limit.
const laxMaxDepth = 10000

// envelopeDepth is how much deeper than MaxDepth a request body that wraps
// values may nest: a value sits 3 levels down in a patch body
// {"operations":[{"value":...}]} and in a query body
// {"parameters":[{"value":...}]}.
const envelopeDepth = 3

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
// The syntax is RFC 8259's, as encoding/json.Valid checks it, and Scan
// refuses, as Cosmos DB does, what that syntax allows but a document must
// not hold (each a *SyntaxError naming the place):
//
//   - nesting deeper than MaxDepth levels of objects and arrays;
//   - a number outside the range of an IEEE 754 double (1e400, or an integer
//     of 400 digits); numbers that round to zero or lose digits are fine;
//   - invalid UTF-8 in a string or a member name;
//   - a member name repeated in one object (at any depth), names compared
//     after unescaping, so "\u0069d" is "id".
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
func Validate(raw []byte) error { return validate(raw, 0) }

// ValidateEnvelope is Validate for a request body that wraps values (a
// query's parameters): it may nest envelopeDepth levels deeper, so that a
// value within MaxDepth fits. Check each wrapped value with Validate.
func ValidateEnvelope(raw []byte) error { return validate(raw, envelopeDepth) }

// validate is Validate allowing extraDepth more levels of nesting (for the
// envelope around patch values).
func validate(raw []byte, extraDepth int) error {
	i := skipWS(raw, 0)
	p := parser{data: raw, extraDepth: extraDepth}
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
//
// A lax parser (lax set) checks the syntax only: no depth beyond
// laxMaxDepth, no UTF-8 and no duplicate check. It re-walks text that a
// strict parser accepted before (a stored document, a patch tree), so that
// documents stored by older versions can still be copied and edited.
type parser struct {
	data       []byte
	paths      [][]string
	vals       [][]byte
	id         []byte
	hasID      bool
	lax        bool
	extraDepth int
}

func (p *parser) tooDeep(depth int) bool {
	if p.lax {
		return depth > laxMaxDepth
	}
	return depth > MaxDepth+p.extraDepth
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
		end, _, err := scanString(data, i, !p.lax)
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
	return &SyntaxError{Offset: i, Msg: "exceeded the maximum nesting depth: objects and arrays may be nested at most " + strconv.Itoa(MaxDepth) + " levels deep"}
}

// smallObject is how many member names an object's duplicate check
// compares linearly; past it the names go into a map.
const smallObject = 16

// keyRef is a member name seen in the object being scanned: the offset of
// its opening quote, the length of the text between the quotes, and
// whether that text holds escapes.
type keyRef struct {
	start, n int32
	esc      bool
}

// object scans the object whose '{' is at data[i]; depth is its own depth
// (1 for the top-level object).
func (p *parser) object(i, depth int, alive uint64) (int, error) {
	if p.tooDeep(depth) {
		return i, errDepth(i)
	}
	data := p.data
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	level := depth - 1 // index of the path component matched at this object
	var consumed uint64
	var small [smallObject]keyRef // the names so far, while they are few
	var seen map[string]struct{}  // the names so far, once they are many
	var sketch uint64             // a bit per name (nameBit) of the unescaped names so far
	anyEsc := false               // some name so far has escapes
	n := 0
	for {
		if i >= len(data) {
			return i, errEOF(i)
		}
		if data[i] != '"' {
			return i, errChar(i, data[i], "looking for beginning of object key string")
		}
		ks := i
		ke, esc, err := scanString(data, i, !p.lax)
		if err != nil {
			return ke, err
		}
		if !p.lax {
			k := keyRef{int32(ks), int32(ke - ks - 2), esc}
			// Most names differ from all earlier ones in length or in their
			// first or last byte: the sketch rules those out without a compare.
			bit := nameBit(data, ks, ke)
			if esc || anyEsc || n >= smallObject || sketch&bit != 0 {
				if seen, err = p.checkDuplicate(small[:min(n, smallObject)], seen, k); err != nil {
					return ks, err
				}
			}
			sketch |= bit
			anyEsc = anyEsc || esc
			if n < smallObject {
				small[n] = k
			}
			n++
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

// checkDuplicate refuses k if an earlier member of its object has the same
// name: small holds the earlier names while there are at most smallObject
// of them, seen (built here when small is full) all of them after that.
// It returns the set to use for the next name.
func (p *parser) checkDuplicate(small []keyRef, seen map[string]struct{}, k keyRef) (map[string]struct{}, error) {
	data := p.data
	name := data[k.start+1 : k.start+1+k.n]
	if seen == nil && len(small) < smallObject {
		for _, o := range small {
			switch {
			case !k.esc && !o.esc:
				// Unescaped names are equal only with equal bytes.
				if o.n == k.n && bytes.Equal(name, data[o.start+1:o.start+1+o.n]) {
					return nil, errDuplicate(int(k.start), string(name))
				}
			case decodeKey(name, k.esc) == decodeKey(data[o.start+1:o.start+1+o.n], o.esc):
				return nil, errDuplicate(int(k.start), decodeKey(name, k.esc))
			}
		}
		return nil, nil
	}
	if seen == nil {
		seen = make(map[string]struct{}, 2*smallObject)
		for _, o := range small {
			seen[decodeKey(data[o.start+1:o.start+1+o.n], o.esc)] = struct{}{}
		}
	}
	if !k.esc {
		if _, dup := seen[string(name)]; dup {
			return nil, errDuplicate(int(k.start), string(name))
		}
		seen[string(name)] = struct{}{}
		return seen, nil
	}
	s := decodeKey(name, true)
	if _, dup := seen[s]; dup {
		return nil, errDuplicate(int(k.start), s)
	}
	seen[s] = struct{}{}
	return seen, nil
}

// nameBit picks one of 64 bits from the length and the first and last bytes
// of the name whose quotes are at data[ks] and data[ke-1]. Equal unescaped
// names get the same bit.
func nameBit(data []byte, ks, ke int) uint64 {
	h := uint(ke - ks)
	if ke-ks > 2 {
		h = h*31 + uint(data[ks+1])*7 + uint(data[ke-2])
	}
	return 1 << (h & 63)
}

func errDuplicate(off int, name string) error {
	const max = 64
	suffix := ""
	if len(name) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name, suffix = name[:cut], "... ("+strconv.Itoa(len(name))+" bytes)"
	}
	return &SyntaxError{Offset: off, Msg: "duplicate property name " + strconv.Quote(name) + suffix + ": a name may appear only once in an object"}
}

// array scans the array whose '[' is at data[i]; depth is its own depth.
// Paths never navigate into arrays.
func (p *parser) array(i, depth int) (int, error) {
	if p.tooDeep(depth) {
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
// quote, a backslash, and the control characters JSON forbids unescaped;
// strStopUTF8 adds the bytes of multi-byte UTF-8 sequences, for checking.
var strStop, strStopUTF8 = func() (t, u [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	u = t
	for c := 0x80; c < 0x100; c++ {
		u[c] = true
	}
	return t, u
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
// With checkUTF8, bytes >= 0x80 must form valid UTF-8 (no overlong forms, no
// surrogates); without, they are not looked at (as in encoding/json).
func scanString(data []byte, i int, checkUTF8 bool) (end int, escaped bool, err error) {
	i++
	stop, high := &strStop, uint64(0)
	if checkUTF8 {
		stop, high = &strStopUTF8, msb
	}
	for {
		// Eight bytes at a time while none of them is '"', '\\' or a control
		// character (SWAR: a byte b is flagged when b-k borrows, i.e. b < k,
		// for b = x, x^'"' and x^'\\'), nor, when checking UTF-8, >= 0x80;
		// then byte by byte to the stopper.
		for i+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[i:])
			q := x ^ (lsb * '"')
			bs := x ^ (lsb * '\\')
			if ((x-lsb*0x20)&^x|(q-lsb)&^q|(bs-lsb)&^bs|x&high)&msb != 0 {
				break
			}
			i += 8
		}
		for i < len(data) && !stop[data[i]] {
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
			if c >= utf8.RuneSelf { // only when checking UTF-8
				r, size := utf8.DecodeRune(data[i:])
				if r == utf8.RuneError && size <= 1 {
					return i, escaped, &SyntaxError{Offset: i, Msg: "invalid UTF-8 (byte 0x" + strconv.FormatUint(uint64(c), 16) + ") in string: text must be UTF-8"}
				}
				i += size
				continue
			}
			return i, escaped, errChar(i, c, "in string literal")
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and
// checks that its value is within the range of a float64 (see finite).
func scanNumber(data []byte, i int) (int, error) {
	n := len(data)
	start := i
	if data[i] == '-' {
		i++
		if i >= n {
			return i, errEOF(i)
		}
	}
	intStart := i
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
	intEnd, fracStart, fracEnd := i, i, i
	if i < n && data[i] == '.' {
		i++
		if i >= n {
			return i, errEOF(i)
		}
		if !isDigit(data[i]) {
			return i, errChar(i, data[i], "after decimal point in numeric literal")
		}
		fracStart = i
		for i < n && isDigit(data[i]) {
			i++
		}
		fracEnd = i
	}
	exp, expNeg := 0, false
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			expNeg = data[i] == '-'
			i++
		}
		if i >= n {
			return i, errEOF(i)
		}
		if !isDigit(data[i]) {
			return i, errChar(i, data[i], "in exponent of numeric literal")
		}
		for i < n && isDigit(data[i]) {
			if exp < 1<<20 { // saturate: any larger exponent is as decisive
				exp = exp*10 + int(data[i]-'0')
			}
			i++
		}
	}
	if expNeg {
		exp = -exp
	}
	if !finite(data, start, intStart, intEnd, fracStart, fracEnd, exp, i) {
		return start, errRange(start, data[start:i])
	}
	return i, nil
}

// finite reports whether the number data[start:end], with integer digits
// data[intStart:intEnd], fraction digits data[fracStart:fracEnd] and
// decimal exponent exp, is within the range of a float64 (values too small
// round to zero and are fine). It decides from the position of the leading
// digit, without parsing, except at the very edge of the range (around
// 1.8e308), where strconv decides.
func finite(data []byte, start, intStart, intEnd, fracStart, fracEnd, exp, end int) bool {
	if exp <= 0 && intEnd-intStart <= 308 {
		return true // below 1e308: almost every number ends here
	}
	var lead int // the decimal exponent of the leading nonzero digit
	if data[intStart] != '0' {
		lead = intEnd - intStart - 1
	} else {
		z := fracStart
		for z < fracEnd && data[z] == '0' {
			z++
		}
		if z == fracEnd {
			return true // zero
		}
		lead = -(z - fracStart + 1)
	}
	switch m := lead + exp; {
	case m < 308:
		return true
	case m > 308:
		return false
	}
	f, err := strconv.ParseFloat(string(data[start:end]), 64)
	return err == nil && !math.IsInf(f, 0)
}

// errRange describes a number beyond the float64 range, abbreviated.
func errRange(off int, text []byte) error {
	shown := string(text)
	if len(text) > 32 {
		digits := 0
		for _, c := range text {
			if isDigit(c) {
				digits++
			}
		}
		what := " digits"
		if digits < len(text)-1 || (digits == len(text)-1 && text[0] != '-') {
			what = " characters"
			digits = len(text)
		}
		shown = string(text[:24]) + "... (" + strconv.Itoa(digits) + what + ")"
	}
	return &SyntaxError{Offset: off, Msg: "number " + shown + " is out of range: numbers must be finite IEEE 754 double-precision values (at most about ±1.8e308)"}
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
