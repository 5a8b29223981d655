package lang

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind int

const (
	tEOF    tokKind = iota
	tIdent          // an identifier or keyword: g, __, V, has, T, desc, true, null, ...
	tString         // a quoted string; text holds the decoded value
	tNumber         // a numeric literal; val holds its Value
	tPunct          // one of ( ) [ ] { } , . : ; =
	tError          // the text could not be lexed; err says why
)

type token struct {
	kind      tokKind
	text      string // identifier name, decoded string, punctuation, or the number as written
	val       Value  // numbers only
	err       error  // tError only
	line, col int    // 1-based; col counts characters
}

func (t token) describe() string {
	switch t.kind {
	case tEOF, tError:
		return "end of script"
	case tIdent:
		return fmt.Sprintf("identifier %s", t.text)
	case tString:
		return fmt.Sprintf("string %s", quoteString(truncate(t.text, 40)))
	case tNumber:
		return fmt.Sprintf("number %s", t.text)
	default:
		return fmt.Sprintf("'%s'", t.text)
	}
}

// maxMsgLen bounds a SyntaxError's message, in characters: a message quotes
// names from the script, which may be long.
const maxMsgLen = 300

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "..."
}

// lexer turns a script into tokens. The script's length is bounded by
// Limits.ScriptBytes before lexing, so the token slice is bounded too. Text
// that cannot be lexed ends the slice with a tError token rather than failing
// at once, so that the parser reports the first error in script order (a
// closure's '{' before the '==' inside it).
type lexer struct {
	src       string
	pos       int
	line, col int
	toks      []token
}

func lex(src string) []token {
	lx := &lexer{src: src, line: 1, col: 1}
	for {
		err := lx.skipSpace()
		if err == nil && lx.pos >= len(lx.src) {
			return append(lx.toks, token{kind: tEOF, line: lx.line, col: lx.col})
		}
		if err == nil {
			line, col := lx.line, lx.col
			if err = lx.next(); err == nil {
				continue
			}
			lx.line, lx.col = line, col
		}
		return append(lx.toks, token{kind: tError, err: err, line: lx.line, col: lx.col})
	}
}

func (lx *lexer) errAt(line, col int, format string, args ...any) error {
	return &SyntaxError{Line: line, Column: col, Msg: truncate(fmt.Sprintf(format, args...), maxMsgLen)}
}

// peekRune returns the rune at byte offset off from pos, and its width.
func (lx *lexer) peekRune(off int) (rune, int) {
	if lx.pos+off >= len(lx.src) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(lx.src[lx.pos+off:])
}

// advance moves past one rune, keeping line and column.
func (lx *lexer) advance() rune {
	r, w := utf8.DecodeRuneInString(lx.src[lx.pos:])
	lx.pos += w
	if r == '\n' {
		lx.line++
		lx.col = 1
	} else {
		lx.col++
	}
	return r
}

func (lx *lexer) skipSpace() error {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f':
			lx.advance()
		case strings.HasPrefix(lx.src[lx.pos:], "//"):
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
				if err := lx.checkRune(); err != nil {
					return err
				}
				lx.advance()
			}
		case strings.HasPrefix(lx.src[lx.pos:], "/*"):
			line, col := lx.line, lx.col
			lx.advance()
			lx.advance()
			for {
				if lx.pos >= len(lx.src) {
					return lx.errAt(line, col, "unterminated /* comment")
				}
				if strings.HasPrefix(lx.src[lx.pos:], "*/") {
					lx.advance()
					lx.advance()
					break
				}
				if err := lx.checkRune(); err != nil {
					return err
				}
				lx.advance()
			}
		default:
			return nil
		}
	}
	return nil
}

func (lx *lexer) checkRune() error {
	r, w := utf8.DecodeRuneInString(lx.src[lx.pos:])
	if r == utf8.RuneError && w == 1 {
		return lx.errAt(lx.line, lx.col, "the script is not valid UTF-8")
	}
	return nil
}

func isIdentStart(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

func (lx *lexer) next() error {
	if err := lx.checkRune(); err != nil {
		return err
	}
	line, col := lx.line, lx.col
	r, _ := lx.peekRune(0)
	switch {
	case isIdentStart(r):
		start := lx.pos
		for lx.pos < len(lx.src) {
			r, _ := lx.peekRune(0)
			if !isIdentPart(r) {
				break
			}
			lx.advance()
		}
		lx.toks = append(lx.toks, token{kind: tIdent, text: lx.src[start:lx.pos], line: line, col: col})
		return nil
	case r == '\'' || r == '"':
		s, err := lx.lexString(r)
		if err != nil {
			return err
		}
		lx.toks = append(lx.toks, token{kind: tString, text: s, line: line, col: col})
		return nil
	case r >= '0' && r <= '9':
		return lx.lexNumber(line, col)
	case r == '-' || r == '+':
		r1, _ := lx.peekRune(1)
		if r1 >= '0' && r1 <= '9' {
			return lx.lexNumber(line, col)
		}
		if strings.HasPrefix(lx.src[lx.pos+1:], "Infinity") {
			end := lx.pos + 1 + len("Infinity")
			if r2, _ := utf8.DecodeRuneInString(lx.src[end:]); end >= len(lx.src) || !isIdentPart(r2) {
				v := math.Inf(1)
				if r == '-' {
					v = math.Inf(-1)
				}
				text := lx.src[lx.pos:end]
				for lx.pos < end {
					lx.advance()
				}
				lx.toks = append(lx.toks, token{kind: tNumber, text: text, val: v, line: line, col: col})
				return nil
			}
		}
		if r == '-' && r1 == '>' {
			return lx.errAt(line, col, "lambdas and closures are not supported")
		}
		return lx.errAt(line, col, "unexpected '%c': arithmetic is not part of the Gremlin language", r)
	case strings.ContainsRune("()[]{},.:;=", r):
		if r == '=' {
			if r1, _ := lx.peekRune(1); r1 == '=' {
				return lx.errAt(line, col, "unexpected '==': comparisons are written with predicates such as eq()")
			}
		}
		lx.advance()
		lx.toks = append(lx.toks, token{kind: tPunct, text: string(r), line: line, col: col})
		return nil
	default:
		return lx.errAt(line, col, "unexpected character %q", r)
	}
}

// lexString reads a single- or double-quoted string with Java escapes
// (\b \t \n \f \r \" \' \\, octal \0-\377, \uXXXX with surrogate pairs) and
// backslash-newline line joining. A double-quoted string is not a Groovy
// GString: $ is an ordinary character (and \$ is accepted for it).
func (lx *lexer) lexString(q rune) (string, error) {
	line, col := lx.line, lx.col
	lx.advance()
	var b strings.Builder
	var pendingHigh rune = -1 // a high surrogate from \u waiting for its low half
	flush := func() {
		if pendingHigh >= 0 {
			b.WriteRune(utf8.RuneError)
			pendingHigh = -1
		}
	}
	for {
		if lx.pos >= len(lx.src) {
			return "", lx.errAt(line, col, "unterminated string: expected a closing %c", q)
		}
		if err := lx.checkRune(); err != nil {
			return "", err
		}
		r := lx.advance()
		if r == q {
			flush()
			return b.String(), nil
		}
		if r != '\\' {
			flush()
			b.WriteRune(r)
			continue
		}
		if lx.pos >= len(lx.src) {
			return "", lx.errAt(line, col, "unterminated string: expected a closing %c", q)
		}
		eline, ecol := lx.line, lx.col-1
		e := lx.advance()
		if e == 'u' {
			for lx.pos < len(lx.src) && lx.src[lx.pos] == 'u' {
				lx.advance()
			}
			if lx.pos+4 > len(lx.src) {
				return "", lx.errAt(eline, ecol, "malformed \\u escape: expected 4 hex digits")
			}
			n, err := strconv.ParseUint(lx.src[lx.pos:lx.pos+4], 16, 16)
			if err != nil {
				return "", lx.errAt(eline, ecol, "malformed \\u escape: expected 4 hex digits")
			}
			for i := 0; i < 4; i++ {
				lx.advance()
			}
			u := rune(n)
			switch {
			case utf16.IsSurrogate(u) && u < 0xdc00:
				flush()
				pendingHigh = u
			case utf16.IsSurrogate(u):
				if pendingHigh >= 0 {
					b.WriteRune(utf16.DecodeRune(pendingHigh, u))
					pendingHigh = -1
				} else {
					b.WriteRune(utf8.RuneError)
				}
			default:
				flush()
				b.WriteRune(u)
			}
			continue
		}
		flush()
		switch e {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '\r':
			// line continuation (\ CR LF)
			if r1, _ := lx.peekRune(0); r1 == '\n' {
				lx.advance()
			}
		case '"', '\'', '\\', '$':
			b.WriteRune(e)
		case '\n':
			// line continuation
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := int(e - '0')
			max := 2
			if e > '3' {
				max = 1
			}
			for i := 0; i < max && lx.pos < len(lx.src) && lx.src[lx.pos] >= '0' && lx.src[lx.pos] <= '7'; i++ {
				n = n*8 + int(lx.advance()-'0')
			}
			b.WriteRune(rune(n))
		default:
			return "", lx.errAt(eline, ecol, "unknown escape sequence \\%c in string", e)
		}
	}
}

// scanDigits reads digits accepted by ok, with underscores allowed between
// digits (Java), and returns them without the underscores.
func (lx *lexer) scanDigits(ok func(byte) bool) (string, bool) {
	var b strings.Builder
	last := byte(0)
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		if c == '_' {
			if b.Len() == 0 {
				return "", false
			}
		} else if !ok(c) {
			break
		} else {
			b.WriteByte(c)
		}
		last = c
		lx.advance()
	}
	if last == '_' {
		return "", false
	}
	return b.String(), b.Len() > 0
}

func isDec(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool { return isDec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }

// bigDecimalPrec is the precision, in bits, of BigDecimal literals (suffix
// m) kept as *big.Float: about 77 significant decimal digits.
const bigDecimalPrec = 256

// bigDecimalMaxExp bounds the binary exponent of a BigDecimal value to
// about ±400 in decimal, past double's range: enough for real values, and
// it keeps writing the value as text (Format) cheap, where an exponent of a
// million takes seconds.
const bigDecimalMaxExp = 1330

func bigDecimalInRange(f *big.Float) bool {
	if f.IsInf() {
		return false
	}
	e := f.MantExp(nil)
	return e <= bigDecimalMaxExp && e >= -bigDecimalMaxExp
}

// lexNumber reads an integer or floating-point literal with its optional
// sign and type suffix, and converts it to its Value (see ast.go).
func (lx *lexer) lexNumber(line, col int) error {
	start := lx.pos
	neg := false
	if c := lx.src[lx.pos]; c == '-' || c == '+' {
		neg = c == '-'
		lx.advance()
	}
	bad := func() error {
		for lx.pos < len(lx.src) {
			r, _ := lx.peekRune(0)
			if !isIdentPart(r) && r != '.' {
				break
			}
			lx.advance()
		}
		return lx.errAt(line, col, "malformed number %s", truncate(lx.src[start:lx.pos], 40))
	}
	var mag *big.Int
	isFloat := false
	var floatText string
	suffix := byte(0)
	if strings.HasPrefix(lx.src[lx.pos:], "0x") || strings.HasPrefix(lx.src[lx.pos:], "0X") {
		lx.advance()
		lx.advance()
		digits, ok := lx.scanDigits(isHex)
		if !ok {
			return bad()
		}
		mag, _ = new(big.Int).SetString(digits, 16)
	} else {
		intPart, ok := lx.scanDigits(isDec)
		if !ok {
			return bad()
		}
		text := intPart
		if lx.pos+1 < len(lx.src) && lx.src[lx.pos] == '.' && isDec(lx.src[lx.pos+1]) {
			lx.advance()
			frac, ok := lx.scanDigits(isDec)
			if !ok {
				return bad()
			}
			text += "." + frac
			isFloat = true
		}
		if lx.pos < len(lx.src) && (lx.src[lx.pos] == 'e' || lx.src[lx.pos] == 'E') {
			save, sline, scol := lx.pos, lx.line, lx.col
			lx.advance()
			sign := ""
			if lx.pos < len(lx.src) && (lx.src[lx.pos] == '-' || lx.src[lx.pos] == '+') {
				sign = string(lx.src[lx.pos])
				lx.advance()
			}
			exp, ok := lx.scanDigits(isDec)
			if !ok {
				lx.pos, lx.line, lx.col = save, sline, scol
				return bad()
			}
			text += "e" + sign + exp
			isFloat = true
		}
		if lx.pos < len(lx.src) && strings.IndexByte("fFdDmM", lx.src[lx.pos]) >= 0 {
			isFloat = true
		}
		if isFloat {
			floatText = text
		} else if len(intPart) > 1 && intPart[0] == '0' {
			var ok bool
			mag, ok = new(big.Int).SetString(intPart, 8)
			if !ok {
				return lx.errAt(line, col, "malformed octal number %s", truncate(lx.src[start:lx.pos], 40))
			}
		} else {
			mag, _ = new(big.Int).SetString(intPart, 10)
		}
	}
	if lx.pos < len(lx.src) {
		c := lx.src[lx.pos] | 0x20 // lower case
		if (isFloat && strings.IndexByte("fdm", c) >= 0) || (!isFloat && strings.IndexByte("bsnil", c) >= 0) {
			suffix = c
			lx.advance()
		}
	}
	if lx.pos < len(lx.src) {
		if r, _ := lx.peekRune(0); isIdentPart(r) {
			return bad()
		}
	}
	text := truncate(lx.src[start:lx.pos], 40) // for messages and describe()
	var v Value
	if isFloat {
		if neg {
			floatText = "-" + floatText
		}
		switch suffix {
		case 'm':
			f, _, err := big.ParseFloat(floatText, 10, bigDecimalPrec, big.ToNearestEven)
			if err != nil || !bigDecimalInRange(f) {
				return lx.errAt(line, col, "number %s is out of range for a BigDecimal literal", text)
			}
			v = f
		case 'f':
			f, err := strconv.ParseFloat(floatText, 32)
			if err != nil {
				return lx.errAt(line, col, "number %s is out of range for a float", text)
			}
			v = float32(f)
		default:
			f, err := strconv.ParseFloat(floatText, 64)
			if err != nil {
				return lx.errAt(line, col, "number %s is out of range for a double", text)
			}
			v = f
		}
	} else {
		if neg {
			mag.Neg(mag)
		}
		var err error
		v, err = intValue(mag, suffix)
		if err != nil {
			return lx.errAt(line, col, "number %s %v", text, err)
		}
	}
	lx.toks = append(lx.toks, token{kind: tNumber, text: text, val: v, line: line, col: col})
	return nil
}

// intValue applies the suffix rules of ast.go to an integer: b, s, i make
// int32 (the tree has no byte or short) within their Java ranges; l makes
// int64; n makes *big.Int; no suffix makes int32, else int64, else *big.Int.
func intValue(n *big.Int, suffix byte) (Value, error) {
	inRange := func(lo, hi int64) bool { return n.IsInt64() && n.Int64() >= lo && n.Int64() <= hi }
	switch suffix {
	case 'b':
		if !inRange(math.MinInt8, math.MaxInt8) {
			return nil, fmt.Errorf("is out of range for a byte")
		}
		return int32(n.Int64()), nil
	case 's':
		if !inRange(math.MinInt16, math.MaxInt16) {
			return nil, fmt.Errorf("is out of range for a short")
		}
		return int32(n.Int64()), nil
	case 'i':
		if !inRange(math.MinInt32, math.MaxInt32) {
			return nil, fmt.Errorf("is out of range for an int")
		}
		return int32(n.Int64()), nil
	case 'l':
		if !n.IsInt64() {
			return nil, fmt.Errorf("is out of range for a long")
		}
		return n.Int64(), nil
	case 'n':
		return n, nil
	}
	if inRange(math.MinInt32, math.MaxInt32) {
		return int32(n.Int64()), nil
	}
	if n.IsInt64() {
		return n.Int64(), nil
	}
	return n, nil
}
