package filter

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tEOF    tokKind = iota
	tLParen         // (
	tRParen         // )
	tWord           // identifier or keyword
	tString         // 'text'
	tTyped          // prefix'text': datetime, guid, binary, X
	tNumber         // 12, -3, 1.5, 1e10, 5L, 2.0D
)

type token struct {
	kind tokKind
	pos  int    // byte offset of the token in the filter
	end  int    // byte offset just past it
	text string // the word, the number text, or the prefix of a typed literal
	val  string // the unquoted content of a string or typed literal
}

// lexer splits a filter into tokens on demand. It never allocates more
// than the input's size and never loops without consuming input.
type lexer struct {
	src string
	pos int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdentStart and isIdentPart follow the property-name rule of the Table
// service, which takes C# identifiers: a letter or underscore, then
// letters, digits and underscores.
func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func isIdentPart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) ||
		unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Pc, r)
}

func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
	start := l.pos
	if start >= len(l.src) {
		return token{kind: tEOF, pos: start, end: start}, nil
	}
	c := l.src[start]
	switch {
	case c == '(':
		l.pos++
		return token{kind: tLParen, pos: start, end: l.pos}, nil
	case c == ')':
		l.pos++
		return token{kind: tRParen, pos: start, end: l.pos}, nil
	case c == '\'':
		val, err := l.quoted()
		if err != nil {
			return token{}, err
		}
		return token{kind: tString, pos: start, end: l.pos, val: val}, nil
	case isDigit(c) || (c == '-' && start+1 < len(l.src) && isDigit(l.src[start+1])):
		return l.number()
	case c == '-' && strings.HasPrefix(l.src[start:], "-INF"):
		// -INF, the negative infinity literal; INF and NaN lex as words.
		l.pos += len("-INF")
		if l.pos < len(l.src) && (l.src[l.pos] == 'D' || l.src[l.pos] == 'd') {
			l.pos++
		}
		if l.pos < len(l.src) && !isSpace(l.src[l.pos]) && l.src[l.pos] != '(' && l.src[l.pos] != ')' {
			return token{}, errAt(start, "malformed number %q", l.src[start:l.pos+1])
		}
		return token{kind: tNumber, pos: start, end: l.pos, text: l.src[start:l.pos]}, nil
	case c == '"':
		return token{}, errAt(start, "strings are written in single quotes ('text'), not double quotes")
	}
	r, n := utf8.DecodeRuneInString(l.src[start:])
	if r == utf8.RuneError && n <= 1 {
		return token{}, errAt(start, "invalid UTF-8 in filter")
	}
	if !isIdentStart(r) {
		return token{}, errAt(start, "unexpected character %q", r)
	}
	l.pos += n
	for l.pos < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[l.pos:])
		if !isIdentPart(r) || (r == utf8.RuneError && n <= 1) {
			break
		}
		l.pos += n
	}
	word := l.src[start:l.pos]
	if l.pos < len(l.src) && l.src[l.pos] == '\'' {
		// Prefixes are matched without regard to case, as WCF Data Services
		// (the service's original OData stack) and Azurite do.
		switch strings.ToLower(word) {
		case "datetime", "guid", "binary", "x":
			word = strings.ToLower(word)
		default:
			return token{}, errAt(start, "unknown literal prefix %q; want datetime, guid, binary or X", word)
		}
		val, err := l.quoted()
		if err != nil {
			return token{}, err
		}
		return token{kind: tTyped, pos: start, end: l.pos, text: word, val: val}, nil
	}
	return token{kind: tWord, pos: start, end: l.pos, text: word}, nil
}

// quoted reads a single-quoted literal at l.pos, in which a doubled quote
// stands for one quote, and returns its content.
func (l *lexer) quoted() (string, error) {
	open := l.pos
	l.pos++
	var b strings.Builder
	from := l.pos
	for {
		i := strings.IndexByte(l.src[l.pos:], '\'')
		if i < 0 {
			return "", errAt(open, "unterminated string literal")
		}
		l.pos += i
		if l.pos+1 < len(l.src) && l.src[l.pos+1] == '\'' {
			b.WriteString(l.src[from : l.pos+1])
			l.pos += 2
			from = l.pos
			continue
		}
		b.WriteString(l.src[from:l.pos])
		l.pos++
		return b.String(), nil
	}
}

// number reads [-]digits[.digits][(e|E)[+|-]digits][suffix] where the
// suffix is a letter; the parser decides what the text means.
func (l *lexer) number() (token, error) {
	start := l.pos
	if l.src[l.pos] == '-' {
		l.pos++
	}
	digits := func() int {
		n := 0
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
			n++
		}
		return n
	}
	digits()
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		l.pos++
		if digits() == 0 {
			return token{}, errAt(start, "malformed number: want digits after '.'")
		}
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		l.pos++
		if l.pos < len(l.src) && (l.src[l.pos] == '+' || l.src[l.pos] == '-') {
			l.pos++
		}
		if digits() == 0 {
			return token{}, errAt(start, "malformed number: want digits in the exponent")
		}
	}
	// One optional type suffix letter, then a delimiter.
	if l.pos < len(l.src) && isASCIILetter(l.src[l.pos]) {
		l.pos++
	}
	if l.pos < len(l.src) {
		c := l.src[l.pos]
		if !isSpace(c) && c != '(' && c != ')' {
			return token{}, errAt(start, "malformed number %q", l.src[start:min(l.pos+1, len(l.src))])
		}
	}
	return token{kind: tNumber, pos: start, end: l.pos, text: l.src[start:l.pos]}, nil
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
