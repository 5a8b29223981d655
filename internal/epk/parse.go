package epk

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/jsondoc"
)

// ErrInvalidKey is wrapped by every error about a partition key value: an
// unparseable header, a component of the wrong JSON type, or a key whose
// component count does not fit the container's definition. The API layer
// maps it to 400 Bad Request.
var ErrInvalidKey = errors.New("invalid partition key")

// ParseHeader parses the value of the x-ms-documentdb-partitionkey header:
// a JSON array with one element per partition key path, such as ["a"],
// ["a",2], [null], [true] or [{}] ({} is the undefined value). [] is the
// empty key (len 0). Whitespace between tokens is allowed.
//
// Besides standard JSON, strings may use the escapes that Go's
// strconv.QuoteToASCII produces and the Go SDK sends (\a, \v, \xHH and
// \UHHHHHHHH); a \xHH escape is one raw byte, and the decoded string must be
// valid UTF-8. A lone UTF-16 surrogate in a \u escape decodes to U+FFFD, as
// in encoding/json.
//
// Objects other than {}, nested arrays, a bare value that is not an array,
// numbers outside the float64 range and trailing text are errors; every
// error wraps ErrInvalidKey and names the offending offset.
func ParseHeader(s string) (Key, error) {
	p := parser[string]{src: s, goEscapes: true}
	k, err := p.parseArray()
	if err != nil {
		return nil, fmt.Errorf("%w: cannot parse x-ms-documentdb-partitionkey header %s: %s", ErrInvalidKey, clip(s), err)
	}
	return k, nil
}

// ComponentFromJSON converts one raw JSON value, the value found at a
// partition key path in a document, to a component. raw must be exactly one
// JSON string, number, true, false or null (surrounding whitespace is
// allowed) in strict JSON syntax. An object or array is an error: a
// partition key value must be a string, number, boolean or null. A path that
// is absent from the document is not handled here: callers use Undefined().
// Errors wrap ErrInvalidKey.
//
// The returned Str never aliases raw.
func ComponentFromJSON(raw []byte) (Component, error) {
	p := parser[[]byte]{src: raw}
	p.skipSpace()
	if p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '{':
			return Component{}, fmt.Errorf("%w: the value at the partition key path is an object; a partition key value must be a string, number, boolean or null", ErrInvalidKey)
		case '[':
			return Component{}, fmt.Errorf("%w: the value at the partition key path is an array; a partition key value must be a string, number, boolean or null", ErrInvalidKey)
		}
	}
	c, err := p.parseValue()
	if err == nil {
		p.skipSpace()
		if p.pos != len(p.src) {
			err = p.errorf("unexpected %s after the value", p.describe())
		}
	}
	if err != nil {
		return Component{}, fmt.Errorf("%w: cannot parse partition key value %s: %s", ErrInvalidKey, clip(string(raw)), err)
	}
	return c, nil
}

// clip renders client-supplied text for an error message: in backquotes
// when it has no control characters or backquotes, Go-quoted otherwise, and
// shortened if it is long.
func clip(s string) string {
	const max = 64
	suffix := ""
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s, suffix = s[:cut], "..."
	}
	if strconv.CanBackquote(s) {
		return "`" + s + "`" + suffix
	}
	return strconv.Quote(s) + suffix
}

// parser is a small single-pass JSON scanner for partition key values. It is
// generic so that a []byte document value is scanned without a copy.
type parser[T string | []byte] struct {
	src       T
	pos       int
	goEscapes bool // accept strconv.QuoteToASCII escapes (headers only)
}

type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

func (p *parser[T]) errorf(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), off: p.pos}
}

// describe names the byte at pos for an error message.
func (p *parser[T]) describe() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	b := p.src[p.pos]
	if b < utf8.RuneSelf {
		return fmt.Sprintf("character %q", rune(b))
	}
	r, _ := utf8.DecodeRune([]byte(string(p.src[p.pos:min(p.pos+utf8.UTFMax, len(p.src))])))
	return fmt.Sprintf("character %q", r)
}

func (p *parser[T]) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser[T]) parseArray() (Key, error) {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return nil, p.errorf("empty value; want a JSON array such as [\"a\"]")
	}
	if p.src[p.pos] != '[' {
		return nil, p.errorf("want a JSON array such as [\"a\"], found %s", p.describe())
	}
	p.pos++
	p.skipSpace()
	k := Key{}
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
	} else {
		for {
			p.skipSpace()
			c, err := p.parseElement(len(k))
			if err != nil {
				return nil, err
			}
			k = append(k, c)
			p.skipSpace()
			if p.pos >= len(p.src) {
				return nil, p.errorf("unterminated array; want ',' or ']'")
			}
			if p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.src[p.pos] == ']' {
				p.pos++
				break
			}
			return nil, p.errorf("want ',' or ']' after component %d, found %s", len(k)-1, p.describe())
		}
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return nil, p.errorf("unexpected %s after the closing ']'", p.describe())
	}
	return k, nil
}

// parseElement parses one element of the header array: a value or {}.
func (p *parser[T]) parseElement(idx int) (Component, error) {
	if p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '[':
			return Component{}, p.errorf("component %d is a nested array; a partition key component must be a string, number, boolean, null or {}", idx)
		case '{':
			return Component{Kind: KindUndefined}, p.parseEmptyObject(idx)
		}
	}
	return p.parseValue()
}

// parseEmptyObject consumes "{}" (with optional inner whitespace), the
// undefined value. Any other object is an error.
func (p *parser[T]) parseEmptyObject(idx int) error {
	p.pos++ // '{'
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		return nil
	}
	return p.errorf("component %d is a non-empty object; a partition key component must be a string, number, boolean, null or {} (undefined)", idx)
}

// parseValue parses a JSON string, number, true, false or null at pos.
func (p *parser[T]) parseValue() (Component, error) {
	if p.pos >= len(p.src) {
		return Component{}, p.errorf("unexpected end of input; want a value")
	}
	switch b := p.src[p.pos]; {
	case b == '"':
		s, err := p.parseString()
		if err != nil {
			return Component{}, err
		}
		return Component{Kind: KindString, Str: s}, nil
	case b == '-' || (b >= '0' && b <= '9'):
		return p.parseNumber()
	case b == 't':
		return Component{Kind: KindTrue}, p.literal("true")
	case b == 'f':
		return Component{Kind: KindFalse}, p.literal("false")
	case b == 'n':
		return Component{Kind: KindNull}, p.literal("null")
	case b == '{' || b == '[':
		return Component{}, p.errorf("unexpected %s; a partition key value must be a string, number, boolean or null", p.describe())
	default:
		return Component{}, p.errorf("unexpected %s; want a string, number, true, false or null", p.describe())
	}
}

func (p *parser[T]) literal(word string) error {
	end := p.pos + len(word)
	if end > len(p.src) || string(p.src[p.pos:end]) != word {
		return p.errorf("invalid literal; want %s", word)
	}
	p.pos = end
	return nil
}

// parseNumber scans a number with strict JSON grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser[T]) parseNumber() (Component, error) {
	start := p.pos
	i := p.pos
	n := len(p.src)
	if i < n && p.src[i] == '-' {
		i++
	}
	switch {
	case i < n && p.src[i] == '0':
		i++
	case i < n && p.src[i] >= '1' && p.src[i] <= '9':
		for i < n && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
	default:
		p.pos = i
		return Component{}, p.errorf("invalid number; want a digit")
	}
	if i < n && p.src[i] == '.' {
		i++
		if i >= n || p.src[i] < '0' || p.src[i] > '9' {
			p.pos = i
			return Component{}, p.errorf("invalid number; want a digit after '.'")
		}
		for i < n && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
	}
	if i < n && (p.src[i] == 'e' || p.src[i] == 'E') {
		i++
		if i < n && (p.src[i] == '+' || p.src[i] == '-') {
			i++
		}
		if i >= n || p.src[i] < '0' || p.src[i] > '9' {
			p.pos = i
			return Component{}, p.errorf("invalid number; want a digit in the exponent")
		}
		for i < n && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
	}
	text := string(p.src[start:i])
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return Component{}, p.errorf("invalid number %s", text) // unreachable after the grammar check
	}
	if math.IsInf(f, 0) {
		return Component{}, p.errorf("number %s is out of the float64 range", text)
	}
	p.pos = i
	return Component{Kind: KindNumber, Num: f}, nil
}

// parseString parses a quoted string at pos (which holds '"').
func (p *parser[T]) parseString() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes.
	for i := start; i < len(p.src); i++ {
		b := p.src[i]
		if b == '"' {
			s := string(p.src[start:i])
			if !utf8.ValidString(s) {
				p.pos = start
				return "", p.errorf("string is not valid UTF-8")
			}
			p.pos = i + 1
			return s, nil
		}
		if b == '\\' {
			break
		}
		if b < 0x20 {
			p.pos = i
			return "", p.errorf("control character %#02x in string; it must be escaped", b)
		}
	}
	buf := make([]byte, 0, len(p.src)-start)
	for p.pos < len(p.src) {
		b := p.src[p.pos]
		switch {
		case b == '"':
			p.pos++
			if !utf8.Valid(buf) {
				p.pos = start
				return "", p.errorf("string is not valid UTF-8")
			}
			return string(buf), nil
		case b < 0x20:
			return "", p.errorf("control character %#02x in string; it must be escaped", b)
		case b != '\\':
			buf = append(buf, b)
			p.pos++
			continue
		}
		// Escape sequence.
		if p.pos+1 >= len(p.src) {
			p.pos++
			return "", p.errorf("unterminated escape sequence")
		}
		e := p.src[p.pos+1]
		if want, isGo := goEscapeWant[e]; isGo && p.goEscapes {
			var ok bool
			if buf, ok = p.goEscape(buf, e); !ok {
				return "", p.errorf("invalid \\%c escape; want %s", e, want)
			}
			continue
		}
		var n int
		if buf, n = jsondoc.AppendEscape(buf, p.src, p.pos); n > 0 {
			p.pos += n
			continue
		}
		switch {
		case e == 'u':
			return "", p.errorf(`invalid \u escape; want 4 hex digits`)
		case e < utf8.RuneSelf && e >= 0x20:
			return "", p.errorf("invalid escape sequence \\%c", e)
		}
		return "", p.errorf("invalid escape sequence")
	}
	p.pos = start - 1
	return "", p.errorf("unterminated string")
}

// goEscapeWant says, for each escape strconv.QuoteToASCII writes beyond
// JSON's, what must follow it.
var goEscapeWant = map[byte]string{'a': "nothing", 'v': "nothing", 'x': "2 hex digits", 'U': "8 hex digits of a valid code point"}

// goEscape appends the character of the \a, \v, \xHH or \UHHHHHHHH escape
// at p.pos and moves past it; ok is false for an invalid one.
func (p *parser[T]) goEscape(buf []byte, e byte) ([]byte, bool) {
	switch e {
	case 'a':
		buf = append(buf, '\a')
		p.pos += 2
	case 'v':
		buf = append(buf, '\v')
		p.pos += 2
	case 'x':
		v, ok := jsondoc.Hex(p.src, p.pos+2, 2)
		if !ok {
			return buf, false
		}
		buf = append(buf, byte(v))
		p.pos += 4
	case 'U':
		r, ok := jsondoc.Hex(p.src, p.pos+2, 8)
		if !ok || !utf8.ValidRune(r) {
			return buf, false
		}
		buf = utf8.AppendRune(buf, r)
		p.pos += 10
	}
	return buf, true
}
