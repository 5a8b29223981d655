package lang

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
)

// parseValue parses one argument value.
func (p *parser) parseValue() (Value, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.peek()
	switch t.kind {
	case tString:
		p.advance()
		if p.isPunct(".") && p.isPunctAt(1, ".") {
			return nil, p.errAt(t, "string ranges are not supported")
		}
		return t.text, nil
	case tNumber:
		p.advance()
		if p.isPunct(".") && p.isPunctAt(1, ".") {
			return p.parseRange(t)
		}
		return t.val, nil
	case tPunct:
		switch t.text {
		case "[":
			return p.parseListOrMap()
		case "{":
			return p.parseSet()
		case "(":
			return nil, p.errAt(t, "a parenthesized value is only allowed as a map key")
		}
		return nil, p.errAt(t, "expected a value, found %s", t.describe())
	case tEOF, tError:
		return nil, p.errAt(t, "expected a value, found end of script")
	}
	return p.parseIdentValue()
}

func (p *parser) parseIdentValue() (Value, error) {
	t := p.advance()
	name := t.text
	switch name {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "g":
		// A traversal from g inside a step: Cosmos DB's idiom
		// addE('knows').to(g.V('mary')) (gremlin/quickstart-console.md),
		// which means __.V('mary') and becomes that anonymous traversal,
		// or gremlin-lang's terminated traversal g.V(1).id().next(), a
		// value computed before the step runs, kept as written.
		tr, err := p.parseRoot()
		if err != nil {
			return nil, err
		}
		if len(tr.Source) == 0 && tr.Terminal.Name == "" {
			tr.Anonymous = true
		}
		return tr, nil
	case "__":
		tr := &Traversal{Anonymous: true}
		if err := p.parseChain(tr); err != nil {
			return nil, err
		}
		return tr, nil
	case "new":
		return nil, p.errAt(t, "new is only allowed for strategies in withStrategies()")
	}
	if p.isPunct(".") && (name == "P" || name == "TextP") {
		p.advance()
		m, err := p.expectIdent("a predicate after " + name + ".")
		if err != nil {
			return nil, err
		}
		methods := pMethods
		if name == "TextP" {
			methods = textPMethods
		}
		if methods[m.text] == "" {
			return nil, p.errAt(m, "unknown predicate %s.%s", name, m.text)
		}
		return p.parsePredicate(m)
	}
	if members, ok := classTokens[name]; ok && p.isPunct(".") {
		p.advance()
		m, err := p.expectIdent("a constant after " + name + ".")
		if err != nil {
			return nil, err
		}
		canon, ok := members[m.text]
		if !ok {
			return nil, p.errAt(m, "unknown constant %s.%s", name, m.text)
		}
		if name == "Cardinality" && p.isPunct("(") {
			return p.parseCardinalityValue(m, canon)
		}
		return Token{Type: name, Name: canon}, nil
	}
	if name == "Lambda" && p.isPunct(".") {
		return nil, p.errAt(t, "lambdas and closures are not supported")
	}
	if p.isPunct("(") {
		switch {
		case terminalMethods[name] != "":
			return nil, p.errAt(t, "the terminal method %s() may only end the whole script", name)
		case name == "not":
			return p.parseNot(t)
		case pMethods[name] != "" || textPMethods[name] != "":
			return p.parsePredicate(t)
		case name == "datetime" || name == "DateTime":
			return p.parseDatetime(t)
		case name == "UUID":
			return p.parseUUID(t)
		case name == "single" || name == "list" || name == "set":
			return p.parseCardinalityValue(t, name)
		}
		args, err := p.parseArgs(t)
		if err != nil {
			return nil, err
		}
		if p.isPunct("{") {
			return nil, p.errAt(p.peek(), "lambdas and closures are not supported (after %s)", name)
		}
		tr := &Traversal{Anonymous: true, Steps: []Step{{Name: name, Args: args}}}
		if err := p.parseChain(tr); err != nil {
			return nil, err
		}
		return tr, nil
	}
	if p.isPunct("{") {
		return nil, p.errAt(p.peek(), "lambdas and closures are not supported (after %s)", name)
	}
	if tok, ok := bareTokens[name]; ok {
		// A binding of the same name yields to the constant, as in
		// gremlin-lang (where constants are keywords) and Groovy (where
		// they are static imports), except for GType and DT: their
		// generic words (string, path, vertex, day) are 3.7/3.8
		// additions that Cosmos DB's scripts may use as binding names.
		v, bound := p.bindings[name]
		if !bound || (tok.Type != "GType" && tok.Type != "DT") {
			return tok, nil
		}
		return p.binding(name, v)
	}
	if v, ok := p.bindings[name]; ok {
		return p.binding(name, v)
	}
	if name == "it" {
		return nil, p.errAt(t, "unknown identifier it: lambdas and closures are not supported")
	}
	return nil, p.errAt(t, "unknown identifier %s: it is neither a Gremlin constant nor a binding of the request", name)
}

// binding converts a binding's value once per script and depth: a script
// that names a large binding many times shares one converted value, so
// Parse's cost stays linear in the script and the bindings.
func (p *parser) binding(name string, v any) (Value, error) {
	budget := p.limits.Nesting - p.depth + 1
	if c, ok := p.converted[name]; ok && c.budget <= budget {
		return c.v, nil
	}
	bv, err := bindingValue(name, v, budget)
	if err != nil {
		return nil, err
	}
	if p.converted == nil {
		p.converted = map[string]convertedBinding{}
	}
	p.converted[name] = convertedBinding{v: bv, budget: budget}
	return bv, nil
}

type convertedBinding struct {
	v      Value
	budget int // the nesting budget it was converted under
}

// parseCardinalityValue parses the argument of single(v), set(v), list(v).
func (p *parser) parseCardinalityValue(t token, card string) (Value, error) {
	args, err := p.parseArgs(t)
	if err != nil {
		return nil, err
	}
	if len(args) != 1 {
		return nil, p.errAt(t, "%s() takes one value", t.text)
	}
	return CardinalityValue{Cardinality: card, Value: args[0]}, nil
}

// parseNot parses not(...): the predicate P.not when its one argument is a
// predicate, otherwise an anonymous traversal starting with the step not.
func (p *parser) parseNot(t token) (Value, error) {
	args, err := p.parseArgs(t)
	if err != nil {
		return nil, err
	}
	if len(args) == 1 {
		if inner, ok := args[0].(P); ok {
			return p.parsePChain(P{Op: "not", Args: []Value{inner}})
		}
	}
	tr := &Traversal{Anonymous: true, Steps: []Step{{Name: "not", Args: args}}}
	if err := p.parseChain(tr); err != nil {
		return nil, err
	}
	return tr, nil
}

// parsePredicate parses the arguments of the predicate named by m, then any
// chained .and(p), .or(p), .negate().
func (p *parser) parsePredicate(m token) (Value, error) {
	args, err := p.parseArgs(m)
	if err != nil {
		return nil, err
	}
	op := m.text
	if n := predArity[op]; n >= 0 && len(args) != n {
		plural := "s"
		if n == 1 {
			plural = ""
		}
		return nil, p.errAt(m, "the predicate %s() takes %d argument%s, got %d", op, n, plural, len(args))
	}
	switch {
	case op == "within" || op == "without":
		if len(args) == 1 {
			if list, ok := args[0].([]Value); ok {
				args = list
			}
		}
		if len(args) == 0 {
			args = nil
		}
	case op == "not":
		if _, ok := args[0].(P); !ok {
			return nil, p.errAt(m, "the predicate not() takes a predicate")
		}
	case textPMethods[op] != "":
		if _, ok := args[0].(string); !ok {
			return nil, p.errAt(m, "the predicate %s() takes a string", op)
		}
	case op == "typeOf":
		switch a := args[0].(type) {
		case string:
		case Token:
			if a.Type != "GType" {
				return nil, p.errAt(m, "the predicate typeOf() takes a GType or a type name")
			}
		default:
			return nil, p.errAt(m, "the predicate typeOf() takes a GType or a type name")
		}
	}
	return p.parsePChain(P{Op: op, Args: args})
}

// parsePChain parses .and(p), .or(p) and .negate() after a predicate.
// Chained and/or flatten as TinkerPop's AndP/OrP do: a.and(b).and(c) is
// and(a, b, c). negate() wraps the predicate in not.
//
// A wrapping (negate, or a connective around the predicate so far) pushes
// the predicate one level deeper, so the depth of the result is checked
// against the nesting limit as it grows.
func (p *parser) parsePChain(cur P) (Value, error) {
	depth := -1 // the depth of cur, once the chain changes it
	check := func() error {
		if p.depth-1+depth > p.limits.Nesting {
			return &LimitError{Name: LimitNesting, Max: p.limits.Nesting, Value: p.depth - 1 + depth}
		}
		return nil
	}
	for p.isPunct(".") {
		m := p.peekN(1)
		if m.kind != tIdent || (m.text != "and" && m.text != "or" && m.text != "negate") {
			return nil, p.errAt(m, "expected and(), or() or negate() after a predicate, found %s", m.describe())
		}
		p.advance()
		p.advance()
		args, err := p.parseArgs(m)
		if err != nil {
			return nil, err
		}
		if depth < 0 {
			depth = valueDepth(cur)
		}
		if m.text == "negate" {
			if len(args) != 0 {
				return nil, p.errAt(m, "negate() takes no arguments")
			}
			cur = P{Op: "not", Args: []Value{cur}}
			depth++
			if err := check(); err != nil {
				return nil, err
			}
			continue
		}
		if len(args) != 1 {
			return nil, p.errAt(m, "%s() takes one predicate", m.text)
		}
		other, ok := args[0].(P)
		if !ok {
			return nil, p.errAt(m, "%s() takes a predicate", m.text)
		}
		if cur.Op == m.text {
			cur.Args = append(cur.Args, other)
		} else {
			cur = P{Op: m.text, Args: []Value{cur, other}}
			depth++
		}
		depth = max(depth, 1+valueDepth(other))
		if err := check(); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

func (p *parser) parseDatetime(t token) (Value, error) {
	args, err := p.parseArgs(t)
	if err != nil {
		return nil, err
	}
	if len(args) != 1 {
		return nil, p.errAt(t, "%s() takes one date string (the current time, datetime(), is not supported)", t.text)
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, p.errAt(t, "%s() takes a date string", t.text)
	}
	tm, err := ParseDatetime(s)
	if err != nil {
		return nil, p.errAt(t, "%v", err)
	}
	return tm, nil
}

func (p *parser) parseUUID(t token) (Value, error) {
	args, err := p.parseArgs(t)
	if err != nil {
		return nil, err
	}
	if len(args) != 1 {
		return nil, p.errAt(t, "UUID() takes one UUID string (a random UUID, UUID(), is not supported)")
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, p.errAt(t, "UUID() takes a UUID string")
	}
	u, err := ParseUUID(s)
	if err != nil {
		return nil, p.errAt(t, "%v", err)
	}
	return u, nil
}

// parseRange parses the rest of an integer range start..end (Groovy's
// inclusive range, ascending or descending) into a list of int32.
func (p *parser) parseRange(start token) (Value, error) {
	p.advance()
	p.advance()
	end := p.peek()
	if end.kind != tNumber {
		return nil, p.errAt(end, "expected an integer after '..', found %s", end.describe())
	}
	p.advance()
	a, ok1 := start.val.(int32)
	b, ok2 := end.val.(int32)
	if !ok1 || !ok2 {
		return nil, p.errAt(start, "a range takes two int literals")
	}
	n := int64(b) - int64(a)
	step := int64(1)
	if n < 0 {
		n, step = -n, -1
	}
	if n+1 > int64(p.rangeLeft) {
		return nil, &LimitError{Name: LimitRangeLength, Max: MaxRangeLength, Value: MaxRangeLength - p.rangeLeft + int(n+1)}
	}
	p.rangeLeft -= int(n + 1)
	out := make([]Value, 0, n+1)
	for i := int64(0); i <= n; i++ {
		out = append(out, int32(int64(a)+i*step))
	}
	return out, nil
}

// parseListOrMap parses [a, b], [], [k: v, ...] or [:].
func (p *parser) parseListOrMap() (Value, error) {
	open := p.advance()
	if p.isPunct("]") {
		p.advance()
		return []Value{}, nil
	}
	if p.isPunct(":") && p.isPunctAt(1, "]") {
		p.advance()
		p.advance()
		return &Map{}, nil
	}
	firstTok := p.peek()
	first, isKey, err := p.parseKeyOrValue()
	if err != nil {
		return nil, err
	}
	if isKey || p.isPunct(":") {
		return p.parseMapRest(firstTok, first)
	}
	list := []Value{first}
	for {
		if p.isPunct("]") {
			p.advance()
			return list, nil
		}
		if _, err := p.expect(",", "or ']' in the list that starts at line "+fmt.Sprint(open.line)+", column "+fmt.Sprint(open.col)); err != nil {
			return nil, err
		}
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
}

// parseKeyOrValue parses a list element or a map key. A map key may be a
// naked identifier ([name: 'marko'] has the string key "name", and so have
// keywords: [id: 1], [true: 1] have the keys "id" and "true") or a
// parenthesized value ([(T.id): 1]); isKey reports those two forms.
func (p *parser) parseKeyOrValue() (Value, bool, error) {
	t := p.peek()
	if t.kind == tIdent && p.isPunctAt(1, ":") && t.text != "NaN" && t.text != "Infinity" {
		// NaN and Infinity are numbers here too: Gremlin.g4's mapKey
		// tries numericLiteral before a naked key.
		p.advance()
		return t.text, true, nil
	}
	if p.isPunct("(") {
		p.advance()
		v, err := p.parseValue()
		if err != nil {
			return nil, false, err
		}
		if _, err := p.expect(")", "after the parenthesized map key"); err != nil {
			return nil, false, err
		}
		return v, true, nil
	}
	v, err := p.parseValue()
	return v, false, err
}

func (p *parser) parseMapRest(keyTok token, firstKey Value) (Value, error) {
	m := &Map{}
	key := firstKey
	for {
		if !validMapKey(key) {
			return nil, p.errAt(keyTok, "a map key must be a string, a number, a T or Direction constant, or a list, set or map, not %s", FormatValue(key))
		}
		if _, err := p.expect(":", "after a map key"); err != nil {
			return nil, err
		}
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		m.Entries = append(m.Entries, MapEntry{Key: key, Value: v})
		if p.isPunct("]") {
			p.advance()
			return m, nil
		}
		if _, err := p.expect(",", "or ']' in a map"); err != nil {
			return nil, err
		}
		keyTok = p.peek()
		key, _, err = p.parseKeyOrValue()
		if err != nil {
			return nil, err
		}
	}
}

// validMapKey reports whether a map key is of a kind Gremlin.g4's mapKey
// rule allows: a string, a number, a T or Direction constant, or a list,
// set or map literal ([Scope.local: 100] is not a map).
func validMapKey(k Value) bool {
	switch x := k.(type) {
	case string, int32, int64, float32, float64, *big.Int, *big.Float, []Value, Set, *Map:
		return true
	case Token:
		return x.Type == "T" || x.Type == "Direction"
	}
	return false
}

// parseSet parses {a, b}; duplicates are dropped, the first kept.
func (p *parser) parseSet() (Value, error) {
	p.advance()
	var sb setBuilder
	for n := 0; !p.isPunct("}"); n++ {
		if n > 0 {
			if _, err := p.expect(",", "or '}' in a set"); err != nil {
				return nil, err
			}
		}
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		sb.add(v)
	}
	p.advance()
	return sb.set(), nil
}

// A setBuilder collects distinct values in order. Values are bucketed by
// their canonical text so that a large set literal costs linear time, then
// compared with ValueEqual.
type setBuilder struct {
	s   Set
	idx map[string][]int
}

func (b *setBuilder) add(v Value) {
	if b.idx == nil {
		b.idx = map[string][]int{}
	}
	key := FormatValue(v)
	for _, i := range b.idx[key] {
		if ValueEqual(b.s[i], v) {
			return
		}
	}
	b.idx[key] = append(b.idx[key], len(b.s))
	b.s = append(b.s, v)
}

func (b *setBuilder) set() Set {
	if b.s == nil {
		return Set{}
	}
	return b.s
}

// ParseDatetime parses the argument of datetime() as TinkerPop's
// DatetimeHelper does: a date (2018-03-22), a year and month (2018-03, the
// first of the month), or a date and time with optional seconds, fraction
// and offset (2018-03-22T00:35:44.741Z, +16:00, +1600, +16:00:00, +160000;
// no offset is UTC), letters in either case. The result is in UTC.
func ParseDatetime(s string) (time.Time, error) {
	u := strings.ToUpper(s)
	for _, l := range datetimeLayouts {
		if t, err := time.Parse(l, u); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot parse %q as an ISO-8601 date or date-time", truncate(s, 60))
}

var datetimeLayouts = func() []string {
	var ls []string
	for _, clock := range []string{"T15:04:05.999999999", "T15:04"} {
		for _, zone := range []string{"", "Z07:00", "Z0700", "Z07:00:00", "Z070000"} {
			ls = append(ls, "2006-01-02"+clock+zone)
		}
	}
	return append(ls, "2006-01-02", "2006-1")
}()

// ParseUUID checks a UUID's text and returns it in canonical lower case.
func ParseUUID(s string) (UUID, error) {
	if len(s) != 36 {
		return "", fmt.Errorf("cannot parse %q as a UUID", s)
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return "", fmt.Errorf("cannot parse %q as a UUID", s)
			}
			continue
		}
		if !isHex(c) {
			return "", fmt.Errorf("cannot parse %q as a UUID", s)
		}
	}
	return UUID(strings.ToLower(s)), nil
}
