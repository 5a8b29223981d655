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
	end, esc, err := scanString(raw, 0)
	if err != nil || end != len(raw) {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if !esc && utf8.Valid(body) {
		return string(body), true
	}
	return string(appendUnescape(make([]byte, 0, len(body)), body)), true
}

// appendUnescape appends the decoded form of body, the inside of a string
// token already validated by scanString.
func appendUnescape(dst, body []byte) []byte {
	for r := 0; r < len(body); {
		c := body[r]
		switch {
		case c == '\\':
			r++
			switch body[r] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := getu4(body[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) && r+6 <= len(body) && body[r] == '\\' && body[r+1] == 'u' {
					if dec := utf16.DecodeRune(rr, getu4(body[r+2:])); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						r += 6
						continue
					}
				}
				if utf16.IsSurrogate(rr) {
					rr = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, body[r])
			}
			r++
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

// getu4 decodes the 4 hex digits at the start of s (validated by scanString).
func getu4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		v := hexVal[c]
		if v < 0 {
			return -1
		}
		r = r<<4 | rune(v)
	}
	return r
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
