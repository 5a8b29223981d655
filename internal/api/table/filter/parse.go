package filter

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/api/table/edm"
)

// SyntaxError is the error of a filter that cannot be parsed or that
// exceeds a limit. The server answers it with 400 InvalidInput.
type SyntaxError struct {
	Offset int    // byte offset in the filter where the problem was found
	Msg    string // what is wrong, for the error message
	Err    error  // ErrLimit for a limit, else the cause or nil
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid $filter at offset %d: %s", e.Offset, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// ErrLimit is wrapped by the *SyntaxError of a filter that is too long,
// has too many comparisons or nests too deeply.
var ErrLimit = errors.New("filter exceeds a limit")

func errAt(off int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func limitAt(off int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...), Err: ErrLimit}
}

// Limits bound the work a filter may cause. A zero field takes the value
// of DefaultLimits.
type Limits struct {
	// MaxLength is the longest filter accepted, in bytes.
	MaxLength int
	// MaxComparisons is the most comparisons (Compare and bare boolean
	// Prop terms) a filter may hold. Azure Table storage documents 15
	// ("no more than 15 discrete comparisons are permitted within a
	// $filter string", querying-tables-and-entities); Cosmos DB's Table API
	// documents no such cap, so the default is generous.
	MaxComparisons int
	// MaxDepth is the deepest nesting of parentheses and not, and the
	// greatest height of the syntax tree (an and/or chain of n terms is n
	// high), so that every recursion over a parsed tree is bounded.
	MaxDepth int
}

// DefaultLimits are the limits Parse applies.
var DefaultLimits = Limits{MaxLength: 64 << 10, MaxComparisons: 100, MaxDepth: 200}

// StorageLimits are the limits of Azure Table storage: at most 15
// comparisons.
var StorageLimits = Limits{MaxLength: 64 << 10, MaxComparisons: 15, MaxDepth: 200}

func (l Limits) norm() Limits {
	if l.MaxLength <= 0 {
		l.MaxLength = DefaultLimits.MaxLength
	}
	if l.MaxComparisons <= 0 {
		l.MaxComparisons = DefaultLimits.MaxComparisons
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	return l
}

// Parse parses a $filter with DefaultLimits. See the package
// documentation for the grammar. Every error is a *SyntaxError.
func Parse(s string) (Expr, error) { return DefaultLimits.Parse(s) }

// Parse parses a $filter within the limits l.
func (l Limits) Parse(s string) (Expr, error) {
	l = l.norm()
	if len(s) > l.MaxLength {
		return nil, limitAt(l.MaxLength, "the filter is %d bytes long; at most %d are allowed", len(s), l.MaxLength)
	}
	p := &parser{lex: lexer{src: s}, lim: l}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == tEOF {
		return nil, errAt(0, "the filter is empty")
	}
	p.first = p.tok.pos
	e, _, err := p.parseOr(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.unexpected("'and', 'or' or the end of the filter")
	}
	return e, nil
}

type parser struct {
	lex         lexer
	tok         token
	lim         Limits
	comparisons int
	first       int // offset of the first token
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) isWord(w string) bool { return p.tok.kind == tWord && p.tok.text == w }

func (p *parser) unexpected(want string) *SyntaxError {
	var got string
	switch p.tok.kind {
	case tEOF:
		got = "the end of the filter"
	case tLParen:
		got = "'('"
	case tRParen:
		got = "')'"
	default:
		got = fmt.Sprintf("%q", p.lex.src[p.tok.pos:p.tok.end])
	}
	return errAt(p.tok.pos, "expected %s, found %s", want, got)
}

func (p *parser) checkHeight(h, off int) error {
	if h > p.lim.MaxDepth {
		return limitAt(off, "the filter nests more than %d levels deep", p.lim.MaxDepth)
	}
	return nil
}

// parseOr reads and-terms joined by or, left-associatively, in a loop.
func (p *parser) parseOr(depth int) (Expr, int, error) {
	left, h, err := p.parseAnd(depth)
	if err != nil {
		return nil, 0, err
	}
	for p.isWord("or") {
		off := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, 0, err
		}
		right, rh, err := p.parseAnd(depth)
		if err != nil {
			return nil, 0, err
		}
		left, h = &Or{L: left, R: right}, max(h, rh)+1
		if err := p.checkHeight(h, off); err != nil {
			return nil, 0, err
		}
	}
	return left, h, nil
}

func (p *parser) parseAnd(depth int) (Expr, int, error) {
	left, h, err := p.parseUnary(depth)
	if err != nil {
		return nil, 0, err
	}
	for p.isWord("and") {
		off := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, 0, err
		}
		right, rh, err := p.parseUnary(depth)
		if err != nil {
			return nil, 0, err
		}
		left, h = &And{L: left, R: right}, max(h, rh)+1
		if err := p.checkHeight(h, off); err != nil {
			return nil, 0, err
		}
	}
	return left, h, nil
}

// parseUnary reads "not" unary, a group "(" or ")", or a comparison. Only this
// function recurses, and each recursion is one level of depth.
func (p *parser) parseUnary(depth int) (Expr, int, error) {
	off := p.tok.pos
	switch {
	case p.isWord("not"):
		if depth+1 > p.lim.MaxDepth {
			return nil, 0, limitAt(off, "the filter nests more than %d levels deep", p.lim.MaxDepth)
		}
		if err := p.advance(); err != nil {
			return nil, 0, err
		}
		x, h, err := p.parseUnary(depth + 1)
		if err != nil {
			return nil, 0, err
		}
		if err := p.checkHeight(h+1, off); err != nil {
			return nil, 0, err
		}
		return &Not{X: x}, h + 1, nil
	case p.tok.kind == tLParen:
		if depth+1 > p.lim.MaxDepth {
			return nil, 0, limitAt(off, "the filter nests more than %d levels deep", p.lim.MaxDepth)
		}
		if err := p.advance(); err != nil {
			return nil, 0, err
		}
		x, h, err := p.parseOr(depth + 1)
		if err != nil {
			return nil, 0, err
		}
		if p.tok.kind != tRParen {
			return nil, 0, p.unexpected("')'")
		}
		if err := p.advance(); err != nil {
			return nil, 0, err
		}
		return x, h, nil
	}
	return p.parseComparison()
}

// operand is one side of a comparison: a property or a literal.
type operand struct {
	pos    int
	isProp bool
	name   string
	val    edm.Value
}

func (p *parser) parseOperand() (operand, error) {
	t := p.tok
	o := operand{pos: t.pos}
	switch t.kind {
	case tWord:
		switch t.text {
		case "true", "false":
			o.val = edm.BooleanValue(t.text == "true")
		case "and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le":
			return o, p.unexpected("a property name or a literal")
		case "NaN", "NaND", "NaNd", "INF", "INFD", "INFd":
			v, err := numberLiteral(t)
			if err != nil {
				return o, err
			}
			o.val = v
		case "null":
			return o, errAt(t.pos, "null literals are not supported: the Table service stores no null properties")
		default:
			if utf8.RuneCountInString(t.text) > 255 {
				return o, errAt(t.pos, "property names are at most 255 characters")
			}
			o.isProp, o.name = true, t.text
		}
	case tString:
		o.val = edm.StringValue(t.val)
	case tTyped:
		v, err := typedLiteral(t)
		if err != nil {
			return o, err
		}
		o.val = v
	case tNumber:
		v, err := numberLiteral(t)
		if err != nil {
			return o, err
		}
		o.val = v
	default:
		return o, p.unexpected("a property name or a literal")
	}
	if err := p.advance(); err != nil {
		return o, err
	}
	if o.isProp && p.tok.kind == tLParen && p.tok.pos == t.end {
		return o, errAt(t.pos, "functions such as %s() are not supported; the Table service has only eq, ne, gt, ge, lt, le, and, or and not", t.text)
	}
	return o, nil
}

func (p *parser) parseComparison() (Expr, int, error) {
	left, err := p.parseOperand()
	if err != nil {
		return nil, 0, err
	}
	op, isOp := Op(0), false
	if p.tok.kind == tWord {
		for i, n := range opNames {
			if p.tok.text == n {
				op, isOp = Op(i), true
			}
		}
	}
	if !isOp {
		// A term on its own: a boolean property or true/false.
		if left.isProp {
			if err := p.count(left.pos); err != nil {
				return nil, 0, err
			}
			return &Prop{Name: left.name}, 1, nil
		}
		if left.val.Type == edm.Boolean {
			return &Const{V: left.val.B}, 1, nil
		}
		if p.tok.kind == tEOF && left.pos == p.first {
			// The service's words for a lone literal such as "1".
			return nil, 0, errAt(left.pos, "the $filter expression must evaluate to a single boolean value")
		}
		return nil, 0, p.unexpected("a comparison operator (eq, ne, gt, ge, lt, le)")
	}
	if err := p.advance(); err != nil {
		return nil, 0, err
	}
	right, err := p.parseOperand()
	if err != nil {
		return nil, 0, err
	}
	switch {
	case left.isProp && right.isProp:
		return nil, 0, errAt(left.pos, "cannot compare property %s with property %s: one side of a comparison must be a literal", left.name, right.name)
	case !left.isProp && !right.isProp:
		return nil, 0, errAt(left.pos, "a comparison must have a property on one side")
	case !left.isProp:
		left, right, op = right, left, op.Flip()
	}
	if err := p.count(left.pos); err != nil {
		return nil, 0, err
	}
	return &Compare{Prop: left.name, Op: op, Value: right.val}, 1, nil
}

func (p *parser) count(off int) error {
	p.comparisons++
	if p.comparisons > p.lim.MaxComparisons {
		return limitAt(off, "the filter has more than %d comparisons", p.lim.MaxComparisons)
	}
	return nil
}

func typedLiteral(t token) (edm.Value, error) {
	switch t.text {
	case "datetime":
		tm, err := edm.ParseDateTime(t.val)
		if err != nil {
			return edm.Value{}, &SyntaxError{Offset: t.pos, Msg: fmt.Sprintf("invalid datetime literal %q: want YYYY-MM-DDThh:mm:ss[.fffffff][Z]", t.val), Err: err}
		}
		return edm.DateTimeValue(tm), nil
	case "guid":
		g, err := edm.ParseGuid(t.val)
		if err != nil {
			return edm.Value{}, &SyntaxError{Offset: t.pos, Msg: fmt.Sprintf("invalid guid literal %q: want xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", t.val), Err: err}
		}
		return edm.GuidValue(g), nil
	default: // binary, X
		b, err := hex.DecodeString(t.val)
		if err != nil {
			return edm.Value{}, &SyntaxError{Offset: t.pos, Msg: fmt.Sprintf("invalid binary literal %q: want an even number of hex digits", t.val), Err: err}
		}
		if b == nil {
			b = []byte{}
		}
		return edm.BinaryValue(b), nil
	}
}

// numberLiteral types a number token as OData does: digits alone are an
// Int32 (an Int64 when they do not fit an Int32), an L suffix makes an
// Int64, a fraction, an exponent or a D suffix makes a Double.
func numberLiteral(t token) (edm.Value, error) {
	text := t.text
	// OData's special Double literals, with an optional D suffix.
	switch strings.TrimRight(text, "Dd") {
	case "NaN":
		return edm.DoubleValue(math.NaN()), nil
	case "INF":
		return edm.DoubleValue(math.Inf(1)), nil
	case "-INF":
		return edm.DoubleValue(math.Inf(-1)), nil
	}
	suffix := byte(0)
	if c := text[len(text)-1]; isASCIILetter(c) {
		suffix, text = c, text[:len(text)-1]
	}
	isInt := !strings.ContainsAny(text, ".eE")
	switch suffix {
	case 0:
		if isInt {
			// An unsuffixed integer is an Int32 when it fits and an Int64
			// when only that fits, as ODataLib types it.
			i, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				return edm.Value{}, &SyntaxError{Offset: t.pos, Msg: fmt.Sprintf("integer literal %s is out of the Edm.Int64 range", text), Err: err}
			}
			if i < math.MinInt32 || i > math.MaxInt32 {
				return edm.Int64Value(i), nil
			}
			return edm.Int32Value(int32(i)), nil
		}
	case 'L', 'l':
		if !isInt {
			return edm.Value{}, errAt(t.pos, "malformed Edm.Int64 literal %q: the L suffix takes an integer", t.text)
		}
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return edm.Value{}, &SyntaxError{Offset: t.pos, Msg: fmt.Sprintf("integer literal %s is out of the Edm.Int64 range", text), Err: err}
		}
		return edm.Int64Value(i), nil
	case 'D', 'd':
	case 'M', 'm':
		return edm.Value{}, errAt(t.pos, "Edm.Decimal literals (%s) are not supported by the Table service; write a Double without the M", t.text)
	case 'F', 'f':
		return edm.Value{}, errAt(t.pos, "Edm.Single literals (%s) are not supported by the Table service; write a Double without the F", t.text)
	default:
		return edm.Value{}, errAt(t.pos, "malformed number %q", t.text)
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return edm.Value{}, &SyntaxError{Offset: t.pos, Msg: fmt.Sprintf("malformed Edm.Double literal %q", t.text), Err: err}
	}
	if math.IsInf(f, 0) {
		return edm.Value{}, errAt(t.pos, "Edm.Double literal %s is out of range", t.text)
	}
	return edm.DoubleValue(f), nil
}
