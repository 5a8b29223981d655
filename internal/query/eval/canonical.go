package eval

import (
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// maxCanonicalDepth bounds the nesting CanonicalJSON follows; deeper
// documents are reported as not canonical (and take the decoding path).
const maxCanonicalDepth = 200

// maxCanonicalMembers bounds the members of an object CanonicalJSON checks
// for repeated names (pairwise); objects with more take the decoding path.
const maxCanonicalMembers = 64

// CanonicalJSON reports whether raw is exactly the text AppendJSON writes
// for the value FromJSON reads from it, so that a caller may copy raw
// instead of decoding and encoding it; if so it also returns JSONSize of
// that value. It reads raw once and allocates nothing but for objects of more than 16
// members. A false answer
// proves nothing: raw may be invalid JSON, or valid but written differently
// (whitespace, escapes, number spellings, a repeated member name).
func CanonicalJSON(raw []byte) (size int, ok bool) {
	c := canonical{src: raw}
	end, ok := c.value(0, 0)
	if !ok || end != len(raw) {
		return 0, false
	}
	return c.size, true
}

type canonical struct {
	src  []byte
	size int // JSONSize of what was read so far
}

func (c *canonical) value(i, depth int) (int, bool) {
	src := c.src
	if i >= len(src) {
		return 0, false
	}
	switch src[i] {
	case '{':
		return c.object(i, depth+1)
	case '[':
		return c.array(i, depth+1)
	case '"':
		return c.str(i)
	case 'n':
		return c.literal(i, "null")
	case 't':
		return c.literal(i, "true")
	case 'f':
		return c.literal(i, "false")
	}
	return c.number(i)
}

func (c *canonical) literal(i int, lit string) (int, bool) {
	if len(c.src)-i < len(lit) || string(c.src[i:i+len(lit)]) != lit {
		return 0, false
	}
	c.size += len(lit)
	return i + len(lit), true
}

func (c *canonical) object(i, depth int) (int, bool) {
	if depth > maxCanonicalDepth {
		return 0, false
	}
	src := c.src
	i++
	c.size += 2
	if i < len(src) && src[i] == '}' {
		return i + 1, true
	}
	// The names seen so far, to refuse a repeated one (FromJSON keeps one
	// member of it). Canonical names compare by their bytes.
	var small [16][2]int32
	names := small[:0]
	for n := 0; ; n++ {
		if i >= len(src) || src[i] != '"' {
			return 0, false
		}
		end, ok := c.str(i)
		if !ok || n >= maxCanonicalMembers {
			return 0, false
		}
		c.size++ // the ':'
		name := src[i:end]
		for _, nm := range names {
			if int(nm[1]-nm[0]) == len(name) && string(src[nm[0]:nm[1]]) == string(name) {
				return 0, false
			}
		}
		names = append(names, [2]int32{int32(i), int32(end)})
		if end >= len(src) || src[end] != ':' {
			return 0, false
		}
		if i, ok = c.value(end+1, depth); !ok {
			return 0, false
		}
		if i >= len(src) {
			return 0, false
		}
		switch src[i] {
		case ',':
			c.size++
			i++
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func (c *canonical) array(i, depth int) (int, bool) {
	if depth > maxCanonicalDepth {
		return 0, false
	}
	src := c.src
	i++
	c.size += 2
	if i < len(src) && src[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = c.value(i, depth); !ok || i >= len(src) {
			return 0, false
		}
		switch src[i] {
		case ',':
			c.size++
			i++
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// str checks the string token at src[i] against AppendQuote's one form:
// only '"', '\\' and control characters escaped, as \" \\ \n \r \t \b \f or
// else \u00xx in lowercase hex, and everything else valid UTF-8 as is.
func (c *canonical) str(i int) (int, bool) {
	src := c.src
	start := i
	saved := 0 // bytes the escapes take beyond the characters they stand for
	for i++; i < len(src); {
		b := src[i]
		switch {
		case b == '"':
			c.size += i + 1 - start - saved
			return i + 1, true
		case b < 0x20:
			return 0, false
		case b == '\\':
			if i+1 >= len(src) {
				return 0, false
			}
			switch src[i+1] {
			case '"', '\\', 'n', 'r', 't', 'b', 'f':
				saved++
				i += 2
			case 'u':
				if len(src)-i < 6 || src[i+2] != '0' || src[i+3] != '0' {
					return 0, false
				}
				h, l := src[i+4], src[i+5]
				if h != '0' && h != '1' || !(l >= '0' && l <= '9' || l >= 'a' && l <= 'f') {
					return 0, false
				}
				switch ch := (h-'0')<<4 | hexNibble(l); ch {
				case '\n', '\r', '\t', '\b', '\f':
					return 0, false // written with its short escape
				}
				saved += 5
				i += 6
			default:
				return 0, false
			}
		case b < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && n == 1 {
				return 0, false
			}
			i += n
		}
	}
	return 0, false
}

func hexNibble(b byte) byte {
	if b >= 'a' {
		return b - 'a' + 10
	}
	return b - '0'
}

// number checks the number token at src[i]: an integer that fits an
// int64 is written in full (so "-0" is not canonical: it reads as -0 and
// prints as 0); any other number as appendNumber writes its float64.
func (c *canonical) number(i int) (int, bool) {
	src := c.src
	start := i
	isInt := true
	for i < len(src) {
		b := src[i]
		if b >= '0' && b <= '9' || b == '-' || b == '+' {
			i++
			continue
		}
		if b == '.' || b == 'e' || b == 'E' {
			isInt = false
			i++
			continue
		}
		break
	}
	text := src[start:i]
	if len(text) == 0 {
		return 0, false
	}
	if isInt && len(text) <= 20 {
		if v, ok := ParseInt64(text); ok {
			var buf [24]byte
			if string(strconv.AppendInt(buf[:0], v, 10)) != string(text) {
				return 0, false // leading zeros, "-0", a '+'
			}
			c.size += JSONSize(IntValue(v)) // its estimate, exact but for MinInt64
			return i, true
		}
	}
	f, err := strconv.ParseFloat(unsafe.String(&text[0], len(text)), 64)
	if err != nil {
		return 0, false
	}
	var buf [32]byte
	if string(appendNumber(buf[:0], f)) != string(text) {
		return 0, false
	}
	c.size += 12 // JSONSize's estimate for a number that is not an exact integer
	return i, true
}
