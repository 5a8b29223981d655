package eval

import (
	"fmt"
	"math"
	"sort"

	"github.com/parsecdb/parsec/internal/query/ast"
)

// builtin is one built-in scalar function. Names are matched
// case-insensitively (Cosmos DB: "ToString", "TOSTRING" and "tostring" are
// one function).
type builtin struct {
	name     string // spelling used in messages
	min, max int    // argument counts; max < 0 means no upper bound
	// keepUndefined: called even when an argument is undefined. By default
	// a function with an undefined argument is not called and the result
	// is undefined (scalar-expressions.md, Remarks); the type checks, IIF
	// and ARRAY_CONTAINS_ANY/ALL look at undefined themselves.
	keepUndefined bool
	fn            func(c *callCtx, args []Value) (Value, error)
}

// callCtx is what a function body sees besides its arguments.
type callCtx struct {
	env  *Env
	node *ast.Call
}

// fits checks, before a function builds a value of n bytes, that the
// evaluation's budget (if any) has room for it; the value is counted once
// built.
func (c *callCtx) fits(n int64) error {
	if b := c.env.Budget; b != nil {
		return b.Fits(c.node.Pos(), n)
	}
	return nil
}

// builtins maps the upper-case name of each function to its definition.
// It is built once from the per-family tables and never modified.
var builtins = func() map[string]*builtin {
	m := make(map[string]*builtin)
	for _, table := range [][]*builtin{stringFuncs, mathFuncs, typeFuncs, arrayFuncs, dateFuncs, miscFuncs} {
		for _, b := range table {
			key := upperASCII(b.name)
			if m[key] != nil {
				panic("BUG: eval: function " + b.name + " defined twice")
			}
			m[key] = b
		}
	}
	return m
}()

// aggregates are the aggregate functions, by upper-case name, with the
// spelling used in messages. COUNTIF counts the rows where its argument is
// true; it is not in the Cosmos DB documentation and is offered as an
// extension.
var aggregates = map[string]string{
	"COUNT": "COUNT", "SUM": "SUM", "AVG": "AVG", "MIN": "MIN", "MAX": "MAX", "COUNTIF": "COUNTIF",
	"MAKELIST": "MAKELIST", "MAKESET": "MAKESET",
}

// unsupported are Cosmos DB functions this engine knows by name but does
// not implement.
var unsupported = map[string]string{
	"ST_AREA": "ST_AREA", "ST_DISTANCE": "ST_DISTANCE", "ST_INTERSECTS": "ST_INTERSECTS",
	"ST_ISVALID": "ST_ISVALID", "ST_ISVALIDDETAILED": "ST_ISVALIDDETAILED", "ST_WITHIN": "ST_WITHIN",
}

// FunctionNames returns the names of the built-in scalar functions, sorted.
func FunctionNames() []string {
	names := make([]string, 0, len(builtins))
	for _, b := range builtins {
		names = append(names, b.name)
	}
	sort.Strings(names)
	return names
}

// IsAggregate reports whether name (any case) is an aggregate function.
func IsAggregate(name string) bool {
	_, ok := aggregates[upperASCII(name)]
	return ok
}

// upperASCII upper-cases ASCII letters; function names are identifiers.
func upperASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'a' && c <= 'z' {
					b[j] = c - 'a' + 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// lookupBuiltin finds a built-in by name in any case without allocating
// for names up to 64 bytes.
func lookupBuiltin(name string) *builtin {
	var buf [64]byte
	if len(name) > len(buf) {
		return builtins[upperASCII(name)]
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	return builtins[string(buf[:len(name)])]
}

// arityText describes the allowed argument counts of b.
func (b *builtin) arityText() string {
	switch {
	case b.max == b.min:
		return plural(b.min, "argument")
	case b.max < 0:
		return "at least " + plural(b.min, "argument")
	default:
		return fmt.Sprintf("%d to %d arguments", b.min, b.max)
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// checkCall reports an unknown or unsupported function or a wrong argument
// count. It returns the built-in (nil for UDFs and aggregates) and whether
// the call is an aggregate.
func checkCall(c *ast.Call) (*builtin, bool, error) {
	if c.UDF {
		return nil, false, nil
	}
	key := upperASCII(c.Name)
	if name, ok := aggregates[key]; ok {
		if len(c.Args) != 1 {
			return nil, true, errorf(c.At, ErrArgCount, "%s expects 1 argument, got %d", name, len(c.Args))
		}
		return nil, true, nil
	}
	b := builtins[key]
	if b == nil {
		if name, ok := unsupported[key]; ok {
			return nil, false, errorf(c.At, ErrUnsupported, "function %s is not supported", name)
		}
		return nil, false, errorf(c.At, ErrUnknownFunction, "unknown function %s", c.Name)
	}
	if n := len(c.Args); n < b.min || b.max >= 0 && n > b.max {
		return nil, false, errorf(c.At, ErrArgCount, "%s expects %s, got %d", b.name, b.arityText(), n)
	}
	return b, false, nil
}

func evalCall(c *ast.Call, env *Env) (Value, error) {
	if c.UDF {
		return evalUDF(c, env)
	}
	b := lookupBuiltin(c.Name)
	if b == nil || len(c.Args) < b.min || b.max >= 0 && len(c.Args) > b.max {
		var isAgg bool
		var err error
		b, isAgg, err = checkCall(c)
		switch {
		case err != nil:
			return Value{}, err
		case isAgg:
			if env.Aggregate == nil {
				return Value{}, errorf(c.At, ErrAggregatePlacement, "aggregate %s cannot be evaluated outside an aggregation", upperASCII(c.Name))
			}
			return env.Aggregate(c, env)
		}
	}
	var buf [4]Value
	args := buf[:0]
	undef := false
	for _, a := range c.Args {
		v, err := Eval(a, env)
		if err != nil {
			return Value{}, err
		}
		undef = undef || v.kind == Undefined
		args = append(args, v)
	}
	if undef && !b.keepUndefined {
		return Value{}, nil
	}
	return b.fn(&callCtx{env: env, node: c}, args)
}

func evalUDF(c *ast.Call, env *Env) (Value, error) {
	if env.UDF == nil {
		return Value{}, errorf(c.At, ErrNeedsExecutor, "udf.%s needs Env.UDF", c.Name)
	}
	args := make([]Value, 0, len(c.Args))
	for _, a := range c.Args {
		v, err := Eval(a, env)
		if err != nil {
			return Value{}, err
		}
		if v.kind == Undefined {
			return Value{}, nil
		}
		args = append(args, v)
	}
	return env.UDF(c.Name, args)
}

// Argument helpers. Each returns ok false when v has the wrong type, which
// the functions turn into an undefined result.

func numArg(v Value) (float64, bool) {
	if v.kind != Number {
		return 0, false
	}
	return v.AsFloat(), true
}

func strArg(v Value) (string, bool) {
	if v.kind != String {
		return "", false
	}
	return v.s, true
}

func boolArg(v Value) (bool, bool) {
	if v.kind != Bool {
		return false, false
	}
	return v.isTrue(), true
}

// truncArg returns a finite number truncated toward zero and clamped to
// the int range, for lengths and positions.
func truncArg(v Value) (int, bool) {
	if v.kind != Number {
		return 0, false
	}
	if i, ok := v.AsInt(); ok {
		return clampInt(i), true
	}
	f := v.AsFloat()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	f = math.Trunc(f)
	switch {
	case f > math.MaxInt32:
		return math.MaxInt32, true
	case f < math.MinInt32:
		return math.MinInt32, true
	}
	return int(f), true
}

func clampInt(i int64) int {
	switch {
	case i > math.MaxInt32:
		return math.MaxInt32
	case i < math.MinInt32:
		return math.MinInt32
	}
	return int(i)
}

// undef is the undefined result of a function given a wrong-typed argument.
var undef = Value{}
