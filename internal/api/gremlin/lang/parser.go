package lang

import (
	"fmt"
	"strings"
)

// Parse parses a gremlin-groovy or gremlin-lang script into the traversal it
// describes. bindings are the request's bindings: an identifier that is not
// a constant of the grammar is replaced by its binding's value: tree Values
// pass unchanged, Go integers become int32 when they fit and int64
// otherwise, json.Number follows the literal rules, slices become []Value
// and maps with string keys become *Map with sorted keys. A zero Limits
// takes the defaults.
//
// The error is a *LimitError when the script exceeds a limit, a
// *SyntaxError when it does not follow the grammar (or uses a form Parsec
// refuses, such as a lambda or an unknown identifier), or a *BindingError
// when a binding's value cannot be used.
func Parse(script string, bindings map[string]any, limits Limits) (*Traversal, error) {
	limits = limits.withDefaults()
	if len(script) > limits.ScriptBytes {
		return nil, &LimitError{Name: LimitScriptLength, Max: limits.ScriptBytes, Value: len(script)}
	}
	p := &parser{toks: lex(script), bindings: bindings, limits: limits, rangeLeft: MaxRangeLength}
	t, err := p.parseScript()
	if err != nil {
		return nil, err
	}
	if n := CountOperators(t); n > limits.Operators {
		return nil, &LimitError{Name: LimitOperatorDepth, Max: limits.Operators, Value: n}
	}
	return t, nil
}

type parser struct {
	toks     []token
	i        int
	bindings map[string]any
	limits   Limits
	depth    int
	// converted caches binding values already converted.
	converted map[string]convertedBinding
	// rangeLeft is how many more elements range literals may expand to.
	rangeLeft int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekN(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1] // EOF
}

func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tEOF && t.kind != tError {
		p.i++
	}
	return t
}

func (p *parser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tPunct && t.text == s
}

func (p *parser) isPunctAt(n int, s string) bool {
	t := p.peekN(n)
	return t.kind == tPunct && t.text == s
}

// errAt reports a syntax error at t; at a token the lexer could not read,
// the lexer's error.
func (p *parser) errAt(t token, format string, args ...any) error {
	if t.kind == tError {
		return t.err
	}
	return &SyntaxError{Line: t.line, Column: t.col, Msg: truncate(fmt.Sprintf(format, args...), maxMsgLen)}
}

// expect consumes the punctuation s or fails naming what was expected.
func (p *parser) expect(s, context string) (token, error) {
	t := p.peek()
	if t.kind == tPunct && t.text == s {
		return p.advance(), nil
	}
	return t, p.errAt(t, "expected '%s' %s, found %s", s, context, t.describe())
}

func (p *parser) expectIdent(context string) (token, error) {
	t := p.peek()
	if t.kind == tIdent {
		return p.advance(), nil
	}
	return t, p.errAt(t, "expected %s, found %s", context, t.describe())
}

// enter counts one level of nesting; leave undoes it.
func (p *parser) enter() error {
	p.depth++
	if p.depth > p.limits.Nesting {
		return &LimitError{Name: LimitNesting, Max: p.limits.Nesting, Value: p.depth}
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// parseScript: one traversal from g, optionally ending with ';'.
func (p *parser) parseScript() (*Traversal, error) {
	t := p.peek()
	if t.kind == tEOF {
		return nil, p.errAt(t, "empty script: expected a traversal such as g.V()")
	}
	if t.kind == tIdent && (t.text == "def" || t.text == "var" || p.isPunctAt(1, "=")) {
		return nil, p.errAt(t, "variable assignment is not supported: send one traversal starting with g, and values as bindings")
	}
	if t.kind != tIdent || t.text != "g" {
		return nil, p.errAt(t, "expected a traversal starting with g, found %s", t.describe())
	}
	p.advance()
	tr, err := p.parseRoot()
	if err != nil {
		return nil, err
	}
	for p.isPunct(";") {
		p.advance()
	}
	if end := p.peek(); end.kind != tEOF {
		if end.kind == tIdent {
			return nil, p.errAt(end, "only one statement is supported per script: found %s after the traversal", end.describe())
		}
		return nil, p.errAt(end, "expected end of script after the traversal, found %s", end.describe())
	}
	return tr, nil
}

// parseRoot parses what follows g: source steps, a start step, chained
// steps and an optional terminal method.
func (p *parser) parseRoot() (*Traversal, error) {
	tr := &Traversal{}
	if !p.isPunct(".") {
		t := p.peek()
		return nil, p.errAt(t, "expected '.' and a start step (V, E, addV, addE, inject, ...) after g, found %s", t.describe())
	}
	started := false
	for p.isPunct(".") {
		p.advance()
		nameTok, err := p.expectIdent("a step name after '.'")
		if err != nil {
			return nil, err
		}
		name := nameTok.text
		if name == "tx" {
			return nil, p.errAt(nameTok, "transactions (g.tx()) are not supported")
		}
		if name == "toString" {
			return nil, p.errAt(nameTok, "toString() is not supported")
		}
		if !started && terminalMethods[name] != "" {
			return nil, p.errAt(nameTok, "expected a start step (V, E, addV, addE, inject, ...) before the terminal method %s()", name)
		}
		var args []Value
		if !started && strings.HasPrefix(name, "with") && (name == "withStrategies" || name == "withoutStrategies") {
			args, err = p.parseStrategyArgs(nameTok)
		} else {
			args, err = p.parseArgs(nameTok)
		}
		if err != nil {
			return nil, err
		}
		if p.isPunct("{") {
			return nil, p.errAt(p.peek(), "lambdas and closures are not supported (after %s)", name)
		}
		step := Step{Name: name, Args: args}
		switch {
		case !started && strings.HasPrefix(name, "with"):
			tr.Source = append(tr.Source, step)
		case terminalMethods[name] != "":
			if err := checkTerminal(p, nameTok, args); err != nil {
				return nil, err
			}
			if name != "toList" {
				tr.Terminal = step
			}
			if p.isPunct(".") {
				return nil, p.errAt(p.peek(), "nothing may follow the terminal method %s()", name)
			}
			return tr, nil
		default:
			started = true
			tr.Steps = append(tr.Steps, step)
		}
	}
	if !started {
		t := p.peek()
		return nil, p.errAt(t, "expected '.' and a start step (V, E, addV, addE, inject, ...) after the source steps, found %s", t.describe())
	}
	return tr, nil
}

func checkTerminal(p *parser, nameTok token, args []Value) error {
	if nameTok.text == "next" && len(args) == 1 {
		switch args[0].(type) {
		case int32, int64:
			return nil
		}
		return p.errAt(nameTok, "next() takes an integer count")
	}
	if len(args) != 0 {
		return p.errAt(nameTok, "the terminal method %s() takes no arguments", nameTok.text)
	}
	return nil
}

// parseChain parses '.' step '(' args ')' ... onto an anonymous traversal.
func (p *parser) parseChain(tr *Traversal) error {
	for p.isPunct(".") {
		p.advance()
		nameTok, err := p.expectIdent("a step name after '.'")
		if err != nil {
			return err
		}
		if terminalMethods[nameTok.text] != "" {
			return p.errAt(nameTok, "the terminal method %s() may only end the whole script", nameTok.text)
		}
		args, err := p.parseArgs(nameTok)
		if err != nil {
			return err
		}
		if p.isPunct("{") {
			return p.errAt(p.peek(), "lambdas and closures are not supported (after %s)", nameTok.text)
		}
		tr.Steps = append(tr.Steps, Step{Name: nameTok.text, Args: args})
	}
	return nil
}

// parseArgs parses '(' value, ... ')' after a step or method name.
func (p *parser) parseArgs(nameTok token) ([]Value, error) {
	if p.isPunct("{") {
		return nil, p.errAt(p.peek(), "lambdas and closures are not supported (after %s)", nameTok.text)
	}
	if _, err := p.expect("(", fmt.Sprintf("after %s", nameTok.text)); err != nil {
		return nil, err
	}
	if p.isPunct(")") {
		p.advance()
		return nil, nil
	}
	var args []Value
	for {
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		args = append(args, v)
		if p.isPunct(",") {
			p.advance()
			continue
		}
		if _, err := p.expect(")", fmt.Sprintf("or ',' in the arguments of %s()", nameTok.text)); err != nil {
			return nil, err
		}
		return args, nil
	}
}

// parseStrategyArgs parses the arguments of withStrategies (strategies,
// each "new"? Name ("(" key: value, ... ")")?) and withoutStrategies
// (class names).
func (p *parser) parseStrategyArgs(nameTok token) ([]Value, error) {
	if _, err := p.expect("(", fmt.Sprintf("after %s", nameTok.text)); err != nil {
		return nil, err
	}
	var args []Value
	for !p.isPunct(")") {
		if len(args) > 0 {
			if _, err := p.expect(",", fmt.Sprintf("or ')' in the arguments of %s()", nameTok.text)); err != nil {
				return nil, err
			}
		}
		s, err := p.parseStrategy(nameTok)
		if err != nil {
			return nil, err
		}
		args = append(args, s)
	}
	p.advance()
	return args, nil
}

// parseStrategy parses one argument of withStrategies ("new"? Name, then
// "(" key: value, ... ")" or a builder chain, or nothing) or of
// withoutStrategies (a class name).
func (p *parser) parseStrategy(nameTok token) (Strategy, error) {
	if err := p.enter(); err != nil {
		return Strategy{}, err
	}
	defer p.leave()
	without := nameTok.text == "withoutStrategies"
	hasNew := false
	if t := p.peek(); t.kind == tIdent && t.text == "new" {
		if without {
			return Strategy{}, p.errAt(t, "withoutStrategies() takes strategy class names, not new instances")
		}
		p.advance()
		hasNew = true
	}
	cls, err := p.expectIdent("a strategy class name")
	if err != nil {
		return Strategy{}, err
	}
	s := Strategy{Name: cls.text}
	switch {
	case !hasNew && !without && p.isPunct("."):
		s.Config, err = p.parseStrategyBuilder(cls)
		return s, err
	case p.isPunct("("):
		if without {
			return Strategy{}, p.errAt(p.peek(), "withoutStrategies() takes strategy class names without configuration")
		}
		p.advance()
		cfg := &Map{}
		for !p.isPunct(")") {
			if len(cfg.Entries) > 0 {
				if _, err := p.expect(",", "or ')' in the strategy configuration"); err != nil {
					return Strategy{}, err
				}
			}
			key, err := p.expectIdent("a configuration key")
			if err != nil {
				return Strategy{}, err
			}
			if _, err := p.expect(":", "after the configuration key "+key.text); err != nil {
				return Strategy{}, err
			}
			v, err := p.parseValue()
			if err != nil {
				return Strategy{}, err
			}
			cfg.Entries = append(cfg.Entries, MapEntry{Key: key.text, Value: v})
		}
		p.advance()
		if len(cfg.Entries) > 0 {
			s.Config = cfg
		}
	case hasNew:
		return Strategy{}, p.errAt(p.peek(), "expected '(' after new %s", cls.text)
	}
	return s, nil
}

// parseStrategyBuilder parses the Java builder form of a strategy that
// Cosmos DB's partitioning guide writes (gremlin/partitioning.md):
// PartitionStrategy.build().partitionKey('pk').readPartitions('a').create().
// Each builder call becomes a configuration entry: its one argument, or the
// list of its arguments when it has several.
func (p *parser) parseStrategyBuilder(cls token) (*Map, error) {
	p.advance()
	b, err := p.expectIdent("build() after " + cls.text + ".")
	if err != nil {
		return nil, err
	}
	if b.text != "build" {
		return nil, p.errAt(b, "expected build() after %s., found %s", cls.text, b.text)
	}
	if args, err := p.parseArgs(b); err != nil {
		return nil, err
	} else if len(args) != 0 {
		return nil, p.errAt(b, "build() takes no arguments")
	}
	cfg := &Map{}
	for {
		if _, err := p.expect(".", "and a builder method or create() in the strategy "+cls.text); err != nil {
			return nil, err
		}
		m, err := p.expectIdent("a builder method or create()")
		if err != nil {
			return nil, err
		}
		// The arguments may be packed into a list: one level deeper.
		if err := p.enter(); err != nil {
			return nil, err
		}
		args, err := p.parseArgs(m)
		p.leave()
		if err != nil {
			return nil, err
		}
		if m.text == "create" {
			if len(args) != 0 {
				return nil, p.errAt(m, "create() takes no arguments")
			}
			break
		}
		var v Value
		switch len(args) {
		case 0:
			return nil, p.errAt(m, "the builder method %s() needs a value", m.text)
		case 1:
			v = args[0]
		default:
			v = args
		}
		cfg.Entries = append(cfg.Entries, MapEntry{Key: m.text, Value: v})
	}
	if len(cfg.Entries) == 0 {
		return nil, nil
	}
	return cfg, nil
}
