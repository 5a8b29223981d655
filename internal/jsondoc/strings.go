package jsondoc

import (
	"unicode/utf16"
	"unicode/utf8"
)

// UnquoteString decodes a raw JSON string token (with its quotes, no
// surrounding whitespace) into a Go string. It reports false if raw is not
// exactly one valid JSON string. Decoding matches encoding/json: invalid UTF-8
// and unpaired surrogates become U+FFFD.
func UnquoteString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	end, esc, err := scanString(raw, 0, false)
	if err != nil || end != len(raw) {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if !esc && utf8.Valid(body) {
		return string(body), true
	}
	return string(appendUnescape(make([]byte, 0, len(body)), body)), true
}

// UnpairedSurrogate returns the first \u escape of raw, a JSON string
// token, that is a UTF-16 surrogate without its pair ("\ud800"), or "".
// Such an escape is valid JSON syntax but no Unicode character (RFC 8259,
// section 8.2): UnquoteString, like encoding/json, decodes it to U+FFFD,
// so that strings differing only there decode alike.
func UnpairedSurrogate(raw []byte) string {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		_, n := AppendEscape(nil, raw, i)
		if n == 0 {
			continue
		}
		if r, _ := Hex(raw, i+2, 4); n == 6 && raw[i+1] == 'u' && utf16.IsSurrogate(r) {
			return string(raw[i : i+6])
		}
		i += n - 1
	}
	return ""
}

// appendUnescape appends the decoded form of body, the inside of a string
// token already validated by scanString.
func appendUnescape(dst, body []byte) []byte {
	for r := 0; r < len(body); {
		c := body[r]
		switch {
		case c == '\\':
			var n int
			if dst, n = AppendEscape(dst, body, r); n == 0 {
				dst, n = append(dst, c), 1 // not after scanString
			}
			r += n
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(body[r:])
			dst = utf8.AppendRune(dst, rr)
			r += size
		}
	}
	return dst
}

// AppendEscape appends the character of the JSON escape sequence at s[i:]
// (s[i] is the backslash) to dst, and returns the extended dst and the
// sequence's length in bytes; the length is 0 when s[i:] does not start
// with a valid JSON escape. A \u high surrogate followed by a \u low
// surrogate is one character; any other surrogate is U+FFFD and takes its
// own six bytes, as in encoding/json. It is the one escape decoder of the
// project's JSON readers (documents, keys, stored values, query strings).
func AppendEscape[T ~string | ~[]byte](dst []byte, s T, i int) ([]byte, int) {
	if i+1 >= len(s) || s[i] != '\\' {
		return dst, 0
	}
	switch e := s[i+1]; e {
	case '"', '\\', '/':
		return append(dst, e), 2
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		r, ok := Hex(s, i+2, 4)
		if !ok {
			return dst, 0
		}
		if utf16.IsSurrogate(r) {
			if i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
				if r2, ok := Hex(s, i+8, 4); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						return utf8.AppendRune(dst, d), 12
					}
				}
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(dst, r), 6
	}
	return dst, 0
}

// Hex decodes the n hex digits at s[i:]; false if s has fewer there or one
// is not a hex digit.
func Hex[T ~string | ~[]byte](s T, i, n int) (rune, bool) {
	if i < 0 || i+n > len(s) {
		return 0, false
	}
	var r rune
	for j := i; j < i+n; j++ {
		v := hexVal[s[j]]
		if v < 0 {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// keyEqual reports whether the member name whose raw inside-the-quotes text
// is key (escaped says whether it contains backslashes) equals want.
func keyEqual(key []byte, escaped bool, want string) bool {
	if !escaped {
		return string(key) == want
	}
	if len(want) > 3*len(key) { // an escape never expands a name more than this
		return false
	}
	var buf [64]byte
	return string(appendUnescape(buf[:0], key)) == want
}

// decodeKey returns the member name for raw inside-the-quotes text key.
func decodeKey(key []byte, escaped bool) string {
	if !escaped && utf8.Valid(key) {
		return string(key)
	}
	return string(appendUnescape(make([]byte, 0, len(key)), key))
}

const hexDigits = "0123456789abcdef"

// AppendQuote appends s as a JSON string token, in the one canonical form
// the project writes: '"', '\\' and control characters are escaped (\n \r
// \t \b \f, else \u00xx in lowercase hex; no HTML escaping), and invalid
// UTF-8 is written as the escape \ufffd, so the output is always valid JSON.
func AppendQuote(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendUnescaped appends the decoded form of body, the inside of a string
// token (without its quotes) of a document accepted by Scan: escapes decoded,
// invalid UTF-8 as U+FFFD, as UnquoteString decodes it.
func AppendUnescaped(dst, body []byte) []byte { return appendUnescape(dst, body) }
