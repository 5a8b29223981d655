package traversal

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// buildMath compiles math(expression): arithmetic (+ - * / % ^, unary
// minus, parentheses) over numbers, the functions of TinkerPop's math step
// (abs, acos, asin, atan, cbrt, ceil, cos, cosh, exp, floor, log, log10,
// log2, signum, sin, sinh, sqrt, tan, tanh), "_" for the object in hand
// and any other name for a labelled object; by() modulators apply to the
// variables in order of first appearance. The result is a float64.
func buildMath(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if len(st.Args) != 1 {
		return nil, invalid(st.Name, "takes one expression")
	}
	src, ok := st.Args[0].(string)
	if !ok {
		return nil, invalid(st.Name, "takes a string expression")
	}
	if len(src) > 4096 {
		return nil, invalid(st.Name, "the expression is longer than 4096 bytes")
	}
	p := &mathParser{src: src}
	expr, err := p.parse()
	if err != nil {
		return nil, invalid(st.Name, "%v", err)
	}
	bys, err := c.byMods(st, mods)
	if err != nil {
		return nil, err
	}
	vars := p.vars
	return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) {
		env := map[string]float64{}
		for i, name := range vars {
			var v any
			if name == "_" {
				v = t.obj
			} else {
				x, ok := r.selectLabel(t, name, "last")
				if !ok {
					return nil, invalid(st.Name, "no object labelled %q", name)
				}
				v = x
			}
			if len(bys) > 0 {
				x, ok, err := r.byValue(bys[i%len(bys)], t.fresh(v))
				if err != nil {
					return nil, err
				}
				if !ok {
					return nil, nil
				}
				v = x
			}
			f, ok := toFloat(v)
			if !ok {
				return nil, invalid(st.Name, "the variable %s is %s, not a number", name, describe(v))
			}
			env[name] = f
		}
		return []any{expr(env)}, nil
	})}, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	if !graph.IsNumber(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
	return f, err == nil
}

type mathExpr func(env map[string]float64) float64

// mathParser is a recursive-descent parser; depth bounds its recursion.
type mathParser struct {
	src   string
	pos   int
	depth int
	vars  []string
}

func (p *mathParser) parse() (mathExpr, error) {
	e, err := p.sum()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(p.src) {
		return nil, fmt.Errorf("unexpected %q at %d", p.src[p.pos:p.pos+1], p.pos)
	}
	return e, nil
}

func (p *mathParser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *mathParser) peek() byte {
	p.space()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *mathParser) sum() (mathExpr, error) {
	l, err := p.product()
	if err != nil {
		return nil, err
	}
	for {
		switch c := p.peek(); c {
		case '+', '-':
			p.pos++
			r, err := p.product()
			if err != nil {
				return nil, err
			}
			a, b := l, r
			if c == '+' {
				l = func(e map[string]float64) float64 { return a(e) + b(e) }
			} else {
				l = func(e map[string]float64) float64 { return a(e) - b(e) }
			}
		default:
			return l, nil
		}
	}
}

func (p *mathParser) product() (mathExpr, error) {
	l, err := p.power()
	if err != nil {
		return nil, err
	}
	for {
		switch c := p.peek(); c {
		case '*', '/', '%':
			p.pos++
			r, err := p.power()
			if err != nil {
				return nil, err
			}
			a, b := l, r
			switch c {
			case '*':
				l = func(e map[string]float64) float64 { return a(e) * b(e) }
			case '/':
				l = func(e map[string]float64) float64 { return a(e) / b(e) }
			default:
				l = func(e map[string]float64) float64 { return math.Mod(a(e), b(e)) }
			}
		default:
			return l, nil
		}
	}
}

func (p *mathParser) power() (mathExpr, error) {
	base, err := p.unary()
	if err != nil {
		return nil, err
	}
	if p.peek() == '^' {
		p.pos++
		exp, err := p.power() // right-associative
		if err != nil {
			return nil, err
		}
		return func(e map[string]float64) float64 { return math.Pow(base(e), exp(e)) }, nil
	}
	return base, nil
}

var mathFuncs = map[string]func(float64) float64{
	"abs": math.Abs, "acos": math.Acos, "asin": math.Asin, "atan": math.Atan,
	"cbrt": math.Cbrt, "ceil": math.Ceil, "cos": math.Cos, "cosh": math.Cosh,
	"exp": math.Exp, "floor": math.Floor, "log": math.Log, "log10": math.Log10,
	"log2": math.Log2, "sin": math.Sin, "sinh": math.Sinh, "sqrt": math.Sqrt,
	"tan": math.Tan, "tanh": math.Tanh,
	"signum": func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x
	},
}

func (p *mathParser) unary() (mathExpr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 100 {
		return nil, fmt.Errorf("expression nested deeper than 100")
	}
	c := p.peek()
	switch {
	case c == '-' || c == '+':
		p.pos++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if c == '-' {
			return func(e map[string]float64) float64 { return -x(e) }, nil
		}
		return x, nil
	case c == '(':
		p.pos++
		x, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, fmt.Errorf("missing ) at %d", p.pos)
		}
		p.pos++
		return x, nil
	case c >= '0' && c <= '9' || c == '.':
		start := p.pos
		for p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '.' || p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
			p.pos++
		}
		f, err := strconv.ParseFloat(p.src[start:p.pos], 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", p.src[start:p.pos])
		}
		return func(map[string]float64) float64 { return f }, nil
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		start := p.pos
		for p.pos < len(p.src) {
			ch := p.src[p.pos]
			if ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' {
				p.pos++
				continue
			}
			break
		}
		name := p.src[start:p.pos]
		if f, ok := mathFuncs[name]; ok && p.peek() == '(' {
			p.pos++
			x, err := p.sum()
			if err != nil {
				return nil, err
			}
			if p.peek() != ')' {
				return nil, fmt.Errorf("missing ) after %s( at %d", name, p.pos)
			}
			p.pos++
			return func(e map[string]float64) float64 { return f(x(e)) }, nil
		}
		if !slices.Contains(p.vars, name) {
			p.vars = append(p.vars, name)
		}
		return func(e map[string]float64) float64 { return e[name] }, nil
	case c == 0:
		return nil, fmt.Errorf("unexpected end of expression")
	}
	return nil, fmt.Errorf("unexpected %q at %d", strings.TrimSpace(p.src[p.pos:p.pos+1]), p.pos)
}
