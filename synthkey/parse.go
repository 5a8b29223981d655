package synthkey

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
)

// MaxBound is the largest upper bound of random(lo, hi) and the largest
// bucket count of hash(/path, n).
const MaxBound = 1_000_000

// MaxLevels is the largest number of levels of a hierarchical key.
const MaxLevels = 3

// SyntaxError reports an expression that does not parse. Offset is the
// 0-based byte offset in the expression text where the problem was found;
// Error reports it as a 1-based column:
//
//	synthkey: at column 12: expected ")" after the arguments of random, found ","
type SyntaxError struct {
	Offset int    // 0-based byte offset into the expression text
	Msg    string // what is wrong, without the position
}

func (e *SyntaxError) Error() string {
	return "synthkey: at column " + strconv.Itoa(e.Offset+1) + ": " + e.Msg
}

// Parse parses an expression (see the package documentation for the
// language). Every error is a *SyntaxError.
func Parse(s string) (*Expr, error) {
	if !utf8.ValidString(s) {
		i := 0
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		return nil, &SyntaxError{Offset: i, Msg: "invalid UTF-8"}
	}
	p := parser{src: s, e: &Expr{}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.e, nil
}

// MustParse is like Parse but panics if s does not parse. It is meant for
// expressions written in the program text.
func MustParse(s string) *Expr {
	e, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return e
}

// Token kinds.
const (
	tEOF    = iota
	tPunct  // one of ( ) [ ] ,
	tPath   // /a/b
	tString // "..."
	tNumber // -12, 1.5, 3e4 (only whole numbers are accepted where numbers are)
	tIdent  // concat, random, hash, or an unknown name
	tOther  // any other character
)

type token struct {
	kind int
	off  int    // offset of the first byte
	end  int    // offset just past the token
	text string // source text of the token
	str  string // tString: the decoded value
	segs []string
}

type parser struct {
	src      string
	pos      int
	e        *Expr
	random   bool // a random(...) has been parsed
	levelOff int  // offset of the level being parsed
}

func (p *parser) errorf(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// expected reports that t is not what the grammar wants at this point.
func (p *parser) expected(t token, what string) error {
	return p.errorf(t.off, "expected %s, found %s", what, describe(t))
}

// describe names a token for an error message.
func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tPath:
		return "path " + clip(t.text)
	case tString:
		return "string " + clip(t.text)
	case tNumber:
		return "number " + clip(t.text)
	case tIdent:
		return clip(t.text)
	}
	return strconv.Quote(t.text)
}

func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isPathEnd reports the bytes that end a path token outside quoted segments.
func isPathEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', '(', ')', '[', ']':
		return true
	}
	return false
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
}

// peek lexes the token at the current position without consuming it.
func (p *parser) peek() (token, error) {
	s := p.src
	i := p.pos
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i >= len(s) {
		return token{kind: tEOF, off: i, end: i}, nil
	}
	switch c := s[i]; {
	case c == '(' || c == ')' || c == '[' || c == ']' || c == ',':
		return token{kind: tPunct, off: i, end: i + 1, text: s[i : i+1]}, nil
	case c == '/':
		return p.lexPath(i)
	case c == '"':
		return p.lexString(i)
	case '0' <= c && c <= '9' || c == '-' && i+1 < len(s) && '0' <= s[i+1] && s[i+1] <= '9':
		j := i + 1
		for j < len(s) && (s[j] == '.' || s[j] == '+' || s[j] == '-' || isIdentByte(s[j], false)) {
			j++
		}
		return token{kind: tNumber, off: i, end: j, text: s[i:j]}, nil
	case isIdentByte(c, true):
		j := i + 1
		for j < len(s) && isIdentByte(s[j], false) {
			j++
		}
		return token{kind: tIdent, off: i, end: j, text: s[i:j]}, nil
	default:
		_, size := utf8.DecodeRuneInString(s[i:])
		return token{kind: tOther, off: i, end: i + size, text: s[i : i+size]}, nil
	}
}

// next consumes and returns the next token.
func (p *parser) next() (token, error) {
	t, err := p.peek()
	if err == nil {
		p.pos = t.end
	}
	return t, err
}

// lexPath lexes the path starting with the '/' at s[i]. The token ends at
// whitespace or one of , ( ) [ ] outside a quoted segment; its text must then
// be a path that epk.ParsePath accepts. The checks here repeat ParsePath's
// rules only to report the exact position of a problem.
func (p *parser) lexPath(start int) (token, error) {
	s := p.src
	i := start
	for i < len(s) && s[i] == '/' {
		slash := i
		i++
		if i < len(s) && s[i] == '"' {
			end, ok := quotedEnd(s, i)
			if !ok {
				return token{}, p.errorf(i, "unterminated quoted path segment")
			}
			seg, err := strconv.Unquote(s[i:end])
			switch {
			case err != nil:
				return token{}, p.errorf(i, "invalid quoted path segment %s", clip(s[i:end]))
			case seg == "":
				return token{}, p.errorf(slash, `empty path segment after "/"`)
			case !utf8.ValidString(seg):
				return token{}, p.errorf(i, "quoted path segment %s is not valid UTF-8", clip(s[i:end]))
			}
			i = end
			if i < len(s) && s[i] != '/' && !isPathEnd(s[i]) {
				return token{}, p.errorf(i, "unexpected text after the quoted path segment %s", clip(s[slash+1:end]))
			}
			continue
		}
		j := i
		for j < len(s) && s[j] != '/' && !isPathEnd(s[j]) {
			if s[j] == '"' {
				return token{}, p.errorf(j, `a path segment can contain '"' only if it is quoted, as in /"a\"b"`)
			}
			j++
		}
		switch s[i:j] {
		case "":
			return token{}, p.errorf(slash, `empty path segment after "/"`)
		case "*", "?":
			return token{}, p.errorf(i, "wildcard path segment %s (quote it to mean the property name: /%q)", s[i:j], s[i:j])
		}
		i = j
	}
	text := s[start:i]
	segs, err := epk.ParsePath(text)
	if err != nil {
		return token{}, p.errorf(start, "%s", strings.TrimPrefix(err.Error(), epk.ErrInvalidDefinition.Error()+": "))
	}
	return token{kind: tPath, off: start, end: i, text: text, segs: segs}, nil
}

// quotedEnd returns the offset just past the closing quote of the quoted
// path segment that starts at s[i] == '"' (the same rule epk.ParsePath uses).
func quotedEnd(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// lexString lexes a JSON string literal starting at s[start] == '"'.
func (p *parser) lexString(start int) (token, error) {
	s := p.src
	for i := start + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			text := s[start : i+1]
			v, ok := jsondoc.UnquoteString([]byte(text))
			if !ok { // not reached: the loop validated the literal
				return token{}, p.errorf(start, "invalid string %s", clip(text))
			}
			return token{kind: tString, off: start, end: i + 1, text: text, str: v}, nil
		case c == '\\':
			if i+1 >= len(s) {
				return token{}, p.errorf(start, "unterminated string")
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+6 > len(s) || !isHex4(s[i+2:i+6]) {
					return token{}, p.errorf(i, `invalid escape in string: \u needs 4 hex digits`)
				}
				i += 5
			default:
				_, size := utf8.DecodeRuneInString(s[i+1:])
				return token{}, p.errorf(i, `invalid escape \%s in string (JSON escapes are \" \\ \/ \b \f \n \r \t \uXXXX)`, s[i+1:i+1+size])
			}
		case c < 0x20:
			return token{}, p.errorf(i, "control character U+%04X in string; write it as an escape", c)
		}
	}
	return token{}, p.errorf(start, "unterminated string")
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// parse parses the whole input into p.e.
func (p *parser) parse() error {
	t, err := p.peek()
	if err != nil {
		return err
	}
	if t.kind == tEOF {
		return p.errorf(0, "empty expression")
	}
	if t.kind == tPunct && t.text == "[" {
		if err := p.hierarchical(); err != nil {
			return err
		}
	} else {
		lv, err := p.level(0)
		if err != nil {
			return err
		}
		p.e.levels = []level{lv}
	}
	t, err = p.peek()
	if err != nil {
		return err
	}
	if t.kind != tEOF {
		return p.expected(t, "end of input")
	}
	return nil
}

// hierarchical parses [level, level(, level)].
func (p *parser) hierarchical() error {
	open, _ := p.next()
	for {
		n := len(p.e.levels) + 1
		lv, err := p.level(n)
		if err != nil {
			return err
		}
		for i, prev := range p.e.levels {
			if p.e.levelText(prev) == p.e.levelText(lv) {
				return p.errorf(p.levelOff, "level %d repeats level %d (%s)", n, i+1, clip(p.e.levelText(lv)))
			}
		}
		p.e.levels = append(p.e.levels, lv)
		t, err := p.next()
		if err != nil {
			return err
		}
		switch {
		case t.kind == tPunct && t.text == ",":
			if n == MaxLevels {
				next, err := p.peek()
				if err != nil {
					return err
				}
				return p.errorf(next.off, "a hierarchical key has at most %d levels", MaxLevels)
			}
		case t.kind == tPunct && t.text == "]":
			if n < 2 {
				return p.errorf(open.off, "a hierarchical key needs 2 or 3 levels, found 1")
			}
			return nil
		default:
			return p.expected(t, fmt.Sprintf(`"," or "]" after level %d of the hierarchical key`, n))
		}
	}
}

// level parses a path or a concat(...). n is the level number inside a
// hierarchical key, or 0 for a top-level expression.
func (p *parser) level(n int) (level, error) {
	t, err := p.peek()
	if err != nil {
		return level{}, err
	}
	p.levelOff = t.off
	what := `a path, "[" or concat(...)`
	if n > 0 {
		what = fmt.Sprintf("a path or concat(...) as level %d of the hierarchical key", n)
	}
	switch t.kind {
	case tPath:
		p.pos = t.end
		return level{path: p.addPath(t)}, nil
	case tIdent:
		switch t.text {
		case "concat":
			return p.concat()
		case "random":
			return level{}, p.errorf(t.off, `random(...) is only allowed as an argument of concat(...), as in concat(/date, ".", random(1, 400))`)
		case "hash":
			return level{}, p.errorf(t.off, `hash(...) is only allowed as an argument of concat(...), as in concat(/date, ".", hash(/vin, 400))`)
		}
		return level{}, p.unknown(t, what)
	case tPunct:
		if t.text == "[" {
			return level{}, p.errorf(t.off, "hierarchical keys cannot be nested")
		}
	case tString:
		return level{}, p.errorf(t.off, "a string is only allowed as an argument of concat(...)")
	}
	return level{}, p.expected(t, what)
}

// unknown reports an identifier that is not a function name.
func (p *parser) unknown(t token, what string) error {
	save := p.pos
	p.pos = t.end
	after, err := p.peek()
	p.pos = save
	if err != nil || after.kind != tPunct || after.text != "(" {
		return p.errorf(t.off, "expected %s, found %s (paths start with \"/\", as in /%s)", what, clip(t.text), clip(t.text))
	}
	switch lower := strings.ToLower(t.text); lower {
	case "concat", "random", "hash":
		return p.errorf(t.off, "unknown function %s; function names are lower case: %s", clip(t.text), lower)
	}
	return p.errorf(t.off, "unknown function %s; the functions are concat, random and hash", clip(t.text))
}

// addPath records a path token's path among the base paths and returns its
// index.
func (p *parser) addPath(t token) int {
	canon := pathText(t.segs)
	if i := slices.Index(p.e.paths, canon); i >= 0 {
		return i
	}
	p.e.paths = append(p.e.paths, canon)
	p.e.segs = append(p.e.segs, t.segs)
	return len(p.e.paths) - 1
}

// expectPunct consumes the punctuation c or reports what it found instead.
func (p *parser) expectPunct(c string, context string) (token, error) {
	t, err := p.next()
	if err != nil {
		return t, err
	}
	if t.kind != tPunct || t.text != c {
		return t, p.expected(t, strconv.Quote(c)+" "+context)
	}
	return t, nil
}

// concat parses concat(arg, arg, ...); the current token is "concat".
func (p *parser) concat() (level, error) {
	name, _ := p.next()
	if _, err := p.expectPunct("(", "after concat"); err != nil {
		return level{}, err
	}
	var args []arg
	computed := false
	for {
		a, err := p.arg(len(args) + 1)
		if err != nil {
			return level{}, err
		}
		args = append(args, a)
		computed = computed || a.kind != argString
		t, err := p.next()
		if err != nil {
			return level{}, err
		}
		if t.kind == tPunct && t.text == "," {
			continue
		}
		if t.kind == tPunct && t.text == ")" {
			if len(args) < 2 {
				return level{}, p.errorf(t.off, "concat needs at least 2 arguments, found 1")
			}
			if !computed {
				return level{}, p.errorf(name.off, "concat needs a path, random(...) or hash(...) among its arguments, not only strings")
			}
			return level{path: -1, concat: args}, nil
		}
		return level{}, p.expected(t, fmt.Sprintf(`"," or ")" after argument %d of concat`, len(args)))
	}
}

// arg parses argument n of concat.
func (p *parser) arg(n int) (arg, error) {
	t, err := p.peek()
	if err != nil {
		return arg{}, err
	}
	what := fmt.Sprintf("a path, a string, random(...) or hash(...) as argument %d of concat", n)
	switch t.kind {
	case tPath:
		p.pos = t.end
		return arg{kind: argPath, path: p.addPath(t)}, nil
	case tString:
		p.pos = t.end
		return arg{kind: argString, str: t.str}, nil
	case tNumber:
		return arg{}, p.errorf(t.off, "a number cannot be an argument of concat; write it as a string, as in %q", t.text)
	case tIdent:
		switch t.text {
		case "random":
			return p.randomArg()
		case "hash":
			return p.hashArg()
		case "concat":
			return arg{}, p.errorf(t.off, "concat(...) cannot be nested; list all the parts in one concat(...)")
		}
		return arg{}, p.unknown(t, what)
	case tPunct:
		if t.text == "[" {
			return arg{}, p.errorf(t.off, "a hierarchical key cannot be an argument of concat")
		}
	}
	return arg{}, p.expected(t, what)
}

// randomArg parses random(lo, hi); the current token is "random".
func (p *parser) randomArg() (arg, error) {
	name, _ := p.next()
	if p.random {
		return arg{}, p.errorf(name.off, "only one random(...) is allowed in an expression")
	}
	p.random = true
	if _, err := p.expectPunct("(", "after random"); err != nil {
		return arg{}, err
	}
	loTok, lo, err := p.bound("the lower bound of random")
	if err != nil {
		return arg{}, err
	}
	if _, err := p.expectPunct(",", "after the lower bound of random"); err != nil {
		return arg{}, err
	}
	_, hi, err := p.bound("the upper bound of random")
	if err != nil {
		return arg{}, err
	}
	if _, err := p.expectPunct(")", "after the arguments of random"); err != nil {
		return arg{}, err
	}
	if lo > hi {
		return arg{}, p.errorf(loTok.off, "random(%d, %d) is empty: the lower bound is greater than the upper bound", lo, hi)
	}
	p.e.lo, p.e.hi = lo, hi
	return arg{kind: argRandom, lo: lo, hi: hi}, nil
}

// hashArg parses hash(/path, n); the current token is "hash".
func (p *parser) hashArg() (arg, error) {
	p.next()
	if _, err := p.expectPunct("(", "after hash"); err != nil {
		return arg{}, err
	}
	t, err := p.next()
	if err != nil {
		return arg{}, err
	}
	if t.kind != tPath {
		return arg{}, p.expected(t, "a path as the first argument of hash")
	}
	path := p.addPath(t)
	if _, err := p.expectPunct(",", "after the path in hash"); err != nil {
		return arg{}, err
	}
	_, n, err := p.bound("the bucket count of hash")
	if err != nil {
		return arg{}, err
	}
	if _, err := p.expectPunct(")", "after the arguments of hash"); err != nil {
		return arg{}, err
	}
	return arg{kind: argHash, path: path, n: n}, nil
}

// bound parses a whole number from 1 to MaxBound.
func (p *parser) bound(what string) (token, int, error) {
	t, err := p.next()
	if err != nil {
		return t, 0, err
	}
	if t.kind != tNumber {
		return t, 0, p.expected(t, "a whole number as "+what)
	}
	s := t.text
	digits := s != ""
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			digits = false
		}
	}
	switch {
	case !digits:
		return t, 0, p.errorf(t.off, "%s must be a whole number from 1 to %d, found %s", what, MaxBound, clip(s))
	case len(s) > 1 && s[0] == '0':
		return t, 0, p.errorf(t.off, "%s must be written without leading zeros, found %s", what, clip(s))
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxBound {
		return t, 0, p.errorf(t.off, "%s must be from 1 to %d, found %s", what, MaxBound, clip(s))
	}
	return t, n, nil
}
