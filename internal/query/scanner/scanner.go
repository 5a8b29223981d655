// Package scanner turns query text into tokens. It is the second stage of
// the front end (token → scanner → ast → parser); see package parser for the
// manual and the grammar it follows.
package scanner

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/token"
)

// ErrSyntax is the sentinel every *Error wraps: errors.Is(err, ErrSyntax)
// tells a malformed query (a client error, HTTP 400) from other failures.
var ErrSyntax = errors.New("syntax error")

// Error is a lexical or syntax error at a position in the query text.
type Error struct {
	Pos token.Pos
	Msg string
}

// Error formats the error as "syntax error at line L, column C: Msg".
func (e *Error) Error() string {
	return fmt.Sprintf("syntax error at %s: %s", e.Pos, e.Msg)
}

// Unwrap returns ErrSyntax.
func (e *Error) Unwrap() error { return ErrSyntax }

// Scanner reads tokens from a query string. The zero value is not usable;
// call Init. A Scanner is not safe for concurrent use.
type Scanner struct {
	src  string
	off  int // byte offset of the next unread byte
	line int
	col  int // column of src[off]
}

// Init prepares s to scan src from the beginning.
func (s *Scanner) Init(src string) {
	s.src = src
	s.off = 0
	s.line = 1
	s.col = 1
}

// Tokenize scans all of src. The result ends with one EOF token. On a
// lexical error it returns the tokens so far and an *Error.
func Tokenize(src string) ([]token.Token, error) {
	var s Scanner
	s.Init(src)
	toks := make([]token.Token, 0, len(src)/4+1)
	for {
		t, err := s.Next()
		if err != nil {
			return toks, err
		}
		toks = append(toks, t)
		if t.Kind == token.EOF {
			return toks, nil
		}
	}
}

func (s *Scanner) pos() token.Pos {
	return token.Pos{Offset: s.off, Line: s.line, Col: s.col}
}

// advance consumes n bytes, none of which is a newline.
func (s *Scanner) advance(n int) {
	s.off += n
	s.col += n
}

func (s *Scanner) peek(i int) byte {
	if s.off+i < len(s.src) {
		return s.src[s.off+i]
	}
	return 0
}

// skipSpace skips whitespace ([ \t\r\n], sql.g4's WS rule) and "--" line
// comments (an extension: sql.g4 has no comment rule).
func (s *Scanner) skipSpace() {
	for s.off < len(s.src) {
		switch c := s.src[s.off]; c {
		case ' ', '\t', '\r':
			s.advance(1)
		case '\n':
			s.off++
			s.line++
			s.col = 1
		case '-':
			if s.peek(1) != '-' {
				return
			}
			for s.off < len(s.src) && s.src[s.off] != '\n' {
				s.advance(1)
			}
		default:
			return
		}
	}
}

func (s *Scanner) errorf(p token.Pos, format string, args ...any) *Error {
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// Next returns the next token, an EOF token at the end of the text, or an
// *Error for text that is not a token.
func (s *Scanner) Next() (token.Token, error) {
	s.skipSpace()
	p := s.pos()
	if s.off >= len(s.src) {
		return token.Token{Kind: token.EOF, Pos: p}, nil
	}
	c := s.src[s.off]
	switch {
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		end := s.off + 1
		for end < len(s.src) && token.IsIdentByte(s.src[end]) {
			end++
		}
		w := s.src[s.off:end]
		s.advance(end - s.off)
		return token.Token{Kind: token.Lookup(w), Pos: p, Text: w, Value: w}, nil
	case c >= '0' && c <= '9' || c == '.' && isDigit(s.peek(1)):
		return s.number(p)
	case c == '"' || c == '\'':
		return s.string(p, c)
	case c == '@':
		end := s.off + 1
		for end < len(s.src) && token.IsIdentByte(s.src[end]) {
			end++
		}
		name := s.src[s.off+1 : end]
		if !token.IsIdentShaped(name) {
			return token.Token{}, s.errorf(p, "invalid parameter name %q", s.src[s.off:end])
		}
		text := s.src[s.off:end]
		s.advance(end - s.off)
		return token.Token{Kind: token.Param, Pos: p, Text: text, Value: name}, nil
	}
	k, n := operator(s.src[s.off:])
	if k == token.Illegal {
		r, _ := utf8.DecodeRuneInString(s.src[s.off:])
		if r == utf8.RuneError {
			return token.Token{}, s.errorf(p, "unexpected byte 0x%02x", c)
		}
		return token.Token{}, s.errorf(p, "unexpected character %q", r)
	}
	text := s.src[s.off : s.off+n]
	s.advance(n)
	return token.Token{Kind: k, Pos: p, Text: text, Value: text}, nil
}

// operator returns the longest operator at the start of src and its length.
func operator(src string) (token.Kind, int) {
	at := func(i int) byte {
		if i < len(src) {
			return src[i]
		}
		return 0
	}
	switch src[0] {
	case '=':
		return token.Eq, 1
	case '!':
		if at(1) == '=' {
			return token.Ne, 2
		}
	case '<':
		switch at(1) {
		case '=':
			return token.Le, 2
		case '>':
			return token.LtGt, 2
		case '<':
			return token.Shl, 2
		}
		return token.Lt, 1
	case '>':
		switch at(1) {
		case '=':
			return token.Ge, 2
		case '>':
			if at(2) == '>' {
				return token.ShrZero, 3
			}
			return token.Shr, 2
		}
		return token.Gt, 1
	case '+':
		return token.Plus, 1
	case '-':
		return token.Minus, 1
	case '*':
		return token.Star, 1
	case '/':
		return token.Slash, 1
	case '%':
		return token.Percent, 1
	case '|':
		if at(1) == '|' {
			return token.Concat, 2
		}
		return token.BitOr, 1
	case '&':
		return token.BitAnd, 1
	case '^':
		return token.BitXor, 1
	case '~':
		return token.Tilde, 1
	case '?':
		if at(1) == '?' {
			return token.Coalesce, 2
		}
		return token.Question, 1
	case ':':
		return token.Colon, 1
	case '.':
		return token.Dot, 1
	case ',':
		return token.Comma, 1
	case '(':
		return token.LParen, 1
	case ')':
		return token.RParen, 1
	case '[':
		return token.LBrack, 1
	case ']':
		return token.RBrack, 1
	case '{':
		return token.LBrace, 1
	case '}':
		return token.RBrace, 1
	}
	return token.Illegal, 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number scans NUMERIC_LITERAL without its sign (a sign is a unary operator
// here):
//
//	DIGIT+ ('.' DIGIT*)? (E [-+]? DIGIT+)?  |  '.' DIGIT+ (E [-+]? DIGIT+)?
//
// and, as an extension the Cosmos DB documentation describes, 0x followed by
// hex digits. A number running into an identifier character ("1e", "0x",
// "12ab") is an error rather than two tokens.
func (s *Scanner) number(p token.Pos) (token.Token, error) {
	src := s.src
	i := s.off
	if src[i] == '0' && i+1 < len(src) && (src[i+1] == 'x' || src[i+1] == 'X') {
		i += 2
		for i < len(src) && isHex(src[i]) {
			i++
		}
		if i == s.off+2 {
			return s.badNumber(p, i)
		}
	} else {
		for i < len(src) && isDigit(src[i]) {
			i++
		}
		if i < len(src) && src[i] == '.' {
			i++
			for i < len(src) && isDigit(src[i]) {
				i++
			}
		}
		if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
			j := i + 1
			if j < len(src) && (src[j] == '+' || src[j] == '-') {
				j++
			}
			if j < len(src) && isDigit(src[j]) {
				for j < len(src) && isDigit(src[j]) {
					j++
				}
				i = j
			}
		}
	}
	if i < len(src) && token.IsIdentByte(src[i]) {
		return s.badNumber(p, i)
	}
	text := src[s.off:i]
	if _, err := token.ParseNumber(text); err != nil {
		return token.Token{}, s.errorf(p, "number %s out of range", text)
	}
	s.advance(i - s.off)
	return token.Token{Kind: token.Number, Pos: p, Text: text, Value: text}, nil
}

func (s *Scanner) badNumber(p token.Pos, i int) (token.Token, error) {
	for i < len(s.src) && token.IsIdentByte(s.src[i]) {
		i++
	}
	return token.Token{}, s.errorf(p, "invalid number %q", s.src[s.off:i])
}

// string scans STRING_LITERAL: text between matching quotes, with the
// escapes \" \\ \/ \b \f \n \r \t \uXXXX (sql.g4's ESC) and \' (listed by the
// Cosmos DB documentation, missing from sql.g4). Raw control characters
// U+0000-U+001F are not allowed (sql.g4's SAFECODEPOINT rules). \u escapes
// of a UTF-16 surrogate pair combine into one character; a lone surrogate
// decodes to U+FFFD.
func (s *Scanner) string(p token.Pos, quote byte) (token.Token, error) {
	src := s.src
	var b strings.Builder
	i := s.off + 1
	start := i // start of the pending run of plain bytes
	for {
		if i >= len(src) {
			return token.Token{}, s.errorf(p, "unterminated string")
		}
		c := src[i]
		if c == quote {
			break
		}
		if c < 0x20 {
			if c == '\n' || c == '\r' {
				return token.Token{}, s.errorf(p, "newline in string")
			}
			return token.Token{}, s.errorf(s.posAt(i), "control character %q in string", rune(c))
		}
		if c != '\\' {
			i++
			continue
		}
		b.WriteString(src[start:i])
		if i+1 >= len(src) {
			return token.Token{}, s.errorf(p, "unterminated string")
		}
		if src[i+1] == '\'' {
			b.WriteByte('\'')
			i += 2
		} else {
			var tmp [4]byte
			out, n := jsondoc.AppendEscape(tmp[:0], src, i)
			switch {
			case n > 0:
				b.Write(out)
				i += n
			case src[i+1] == 'u':
				return token.Token{}, s.errorf(s.posAt(i), "invalid escape %s in string: \\u takes four hex digits", escapeText(src, i, 6))
			default:
				return token.Token{}, s.errorf(s.posAt(i), "invalid escape %s in string", escapeText(src, i, 2))
			}
		}
		start = i
	}
	b.WriteString(src[start:i])
	text := src[s.off : i+1]
	// Strings cannot contain newlines, so the token stays on one line.
	s.advance(i + 1 - s.off)
	return token.Token{Kind: token.String, Pos: p, Text: text, Value: b.String()}, nil
}

// posAt is the position of byte i, which must be on the current line.
func (s *Scanner) posAt(i int) token.Pos {
	return token.Pos{Offset: i, Line: s.line, Col: s.col + i - s.off}
}

// escapeText is the escape sequence at src[i] for an error message: up to n
// characters, cut at a quote or a control character.
func escapeText(src string, i, n int) string {
	j := i + 1 // past the backslash
	for k := 1; k < n && j < len(src); k++ {
		r, size := utf8.DecodeRuneInString(src[j:])
		if r == '"' || r == '\'' || r < 0x20 {
			break
		}
		j += size
	}
	return src[i:j]
}
