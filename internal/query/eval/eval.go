package eval

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/query/ast"
)

// Eval evaluates the scalar expression e in env and returns its value,
// which is undefined where Cosmos DB's is (a missing property, a type
// mismatch, a function given a wrong-typed argument). An error means the
// expression cannot be evaluated at all: an unbound name, an undeclared
// parameter, an unknown function or wrong argument count (which Check
// reports up front), or a subquery, UDF or aggregate without the Env hook
// that evaluates it. Errors are *Error values with the position of the
// offending node. A nil env is an empty one.
func Eval(e ast.Expr, env *Env) (Value, error) {
	if env == nil {
		env = &Env{}
	}
	if b := env.Budget; b != nil {
		if b.steps++; b.steps >= b.next {
			if err := b.slow(e.Pos()); err != nil {
				return Value{}, err
			}
		}
	}
	switch e := e.(type) {
	case *ast.Ident:
		if v, ok := env.Lookup(e.Name); ok {
			return v, nil
		}
		// NaN and Infinity are accepted as constants by Cosmos DB (the
		// ToString and StringToNumber examples use them) although the
		// grammar has no such literal; a binding of the same name wins.
		switch e.Name {
		case "NaN":
			return NumberValue(math.NaN()), nil
		case "Infinity":
			return NumberValue(math.Inf(1)), nil
		}
		return Value{}, errorf(e.At, ErrUnbound, "identifier %s could not be resolved", e.Name)
	case *ast.Param:
		if v, ok := env.Params[e.Name]; ok {
			return v, nil
		}
		return Value{}, errorf(e.At, ErrUndeclaredParam, "parameter @%s has no value", e.Name)
	case *ast.StringLit:
		return StringValue(e.Value), nil
	case *ast.NumberLit:
		return numberLit(e.Text), nil
	case *ast.BoolLit:
		return BoolValue(e.Value), nil
	case *ast.NullLit:
		return NullValue(), nil
	case *ast.UndefinedLit:
		return Value{}, nil
	case *ast.ArrayCreate:
		elems := make([]Value, 0, len(e.Elems))
		for _, x := range e.Elems {
			v, err := Eval(x, env)
			if err != nil {
				return Value{}, err
			}
			if v.kind != Undefined {
				elems = append(elems, v)
			}
		}
		return built(env, e, Value{kind: Array, a: elems})
	case *ast.ObjectCreate:
		a := make([]Value, 0, 2*len(e.Props))
		for _, p := range e.Props {
			v, err := Eval(p.X, env)
			if err != nil {
				return Value{}, err
			}
			a = appendMember(a, p.Key, v)
		}
		return built(env, e, Value{kind: Object, a: a})
	case *ast.Dot:
		x, err := Eval(e.X, env)
		if err != nil {
			return Value{}, err
		}
		return x.Property(e.Name), nil
	case *ast.Index:
		x, err := Eval(e.X, env)
		if err != nil {
			return Value{}, err
		}
		i, err := Eval(e.Index, env)
		if err != nil {
			return Value{}, err
		}
		return index(x, i), nil
	case *ast.Call:
		v, err := evalCall(e, env)
		if err != nil || env.Budget == nil {
			return v, err
		}
		return built(env, e, v)
	case *ast.Unary:
		x, err := Eval(e.X, env)
		if err != nil {
			return Value{}, err
		}
		return unary(e.Op, x), nil
	case *ast.Binary:
		v, err := evalBinary(e, env)
		if err != nil || env.Budget == nil || e.Op != ast.Concat {
			return v, err
		}
		return built(env, e, v)
	case *ast.In:
		return evalIn(e, env)
	case *ast.Between:
		x, err := Eval(e.X, env)
		if err != nil {
			return Value{}, err
		}
		lo, err := Eval(e.Lo, env)
		if err != nil {
			return Value{}, err
		}
		hi, err := Eval(e.Hi, env)
		if err != nil {
			return Value{}, err
		}
		r := and(compareOp(ast.Ge, x, lo), compareOp(ast.Le, x, hi))
		if e.Not {
			r = not(r)
		}
		return r, nil
	case *ast.Like:
		return evalLike(e, env)
	case *ast.Conditional:
		c, err := Eval(e.Cond, env)
		if err != nil {
			return Value{}, err
		}
		if c.kind != Bool {
			// Like the other operators, a non-boolean condition (a missing
			// property included) gives undefined, not the else branch; IIF
			// is the form that treats "not true" as false.
			return Value{}, nil
		}
		if c.isTrue() {
			return Eval(e.Then, env)
		}
		return Eval(e.Else, env)
	case *ast.Subquery:
		v, err := evalSubquery(e, env)
		if err != nil || env.Budget == nil || e.Kind != ast.Array {
			return v, err
		}
		return built(env, e, v)
	}
	panic("BUG: eval: unknown expression node")
}

// built counts the bytes of a value that node e made (not one it passed
// on: a property, a coalesced operand or a scalar subquery's row was
// counted where it was built) against env's budget, if any.
func built(env *Env, e ast.Expr, v Value) (Value, error) {
	if b := env.Budget; b != nil {
		if n := ShallowSize(v); n > 0 {
			if err := b.Charge(e.Pos(), n); err != nil {
				return Value{}, err
			}
		}
	}
	return v, nil
}

// numberLit returns the value of a number literal's text: an exact int64
// for a decimal or hex integer that fits, a float64 otherwise.
func numberLit(text string) Value {
	if len(text) > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') {
		if u, err := strconv.ParseUint(text[2:], 16, 64); err == nil && u <= math.MaxInt64 {
			return IntValue(int64(u))
		}
	} else if isDecimalInt(text) {
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return IntValue(i)
		}
	}
	f := (&ast.NumberLit{Text: text}).Float()
	return NumberValue(f)
}

func isDecimalInt(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// index is x[i]: an array element by integer position, or an object
// property by string; anything else is undefined.
func index(x, i Value) Value {
	switch {
	case x.kind == Array && i.kind == Number:
		n, ok := i.AsInt()
		if !ok || n < 0 || n >= int64(len(x.a)) {
			return Value{}
		}
		return x.a[n]
	case x.kind == Object && i.kind == String:
		return x.Property(i.s)
	}
	return Value{}
}

func unary(op ast.UnaryOp, x Value) Value {
	switch op {
	case ast.Not:
		return not(x)
	case ast.BitNot:
		if x.kind != Number {
			return Value{}
		}
		return IntValue(int64(^toInt32(x)))
	}
	if x.kind != Number {
		return Value{}
	}
	if op == ast.Plus {
		return x
	}
	if x.exact {
		if i := int64(x.n); i != math.MinInt64 {
			return IntValue(-i)
		}
	}
	return NumberValue(-x.AsFloat())
}

// not, and and or are the three-valued logic of Cosmos DB
// (logical-operators.md): anything but true and false counts as undefined.
func not(x Value) Value {
	if x.kind != Bool {
		return Value{}
	}
	return BoolValue(!x.isTrue())
}

func and(x, y Value) Value {
	if x.kind == Bool && !x.isTrue() || y.kind == Bool && !y.isTrue() {
		return BoolValue(false)
	}
	if x.kind == Bool && y.kind == Bool {
		return BoolValue(true)
	}
	return Value{}
}

func or(x, y Value) Value {
	if x.isTrue() || y.isTrue() {
		return BoolValue(true)
	}
	if x.kind == Bool && y.kind == Bool {
		return BoolValue(false)
	}
	return Value{}
}

func evalBinary(e *ast.Binary, env *Env) (Value, error) {
	l, err := Eval(e.L, env)
	if err != nil {
		return Value{}, err
	}
	// Short circuits: the result cannot change, so the right side is not
	// evaluated (nor can it fail).
	switch {
	case e.Op == ast.And && l.kind == Bool && !l.isTrue():
		return l, nil
	case e.Op == ast.Or && l.isTrue():
		return l, nil
	case e.Op == ast.Coalesce && l.kind != Undefined:
		return l, nil
	}
	r, err := Eval(e.R, env)
	if err != nil {
		return Value{}, err
	}
	return binaryOp(e.Op, l, r), nil
}

// binaryOp applies a binary operator to two evaluated operands.
func binaryOp(op ast.BinaryOp, l, r Value) Value {
	switch op {
	case ast.And:
		return and(l, r)
	case ast.Or:
		return or(l, r)
	case ast.Coalesce:
		if l.kind != Undefined {
			return l
		}
		return r
	case ast.Concat:
		if l.kind != String || r.kind != String {
			return Value{}
		}
		return StringValue(l.s + r.s)
	case ast.Eq, ast.Ne, ast.Lt, ast.Gt, ast.Le, ast.Ge:
		return compareOp(op, l, r)
	case ast.Add, ast.Sub, ast.Mul, ast.Div, ast.Mod:
		if l.kind != Number || r.kind != Number {
			return Value{}
		}
		return arith(op, l, r)
	case ast.BitAnd, ast.BitOr, ast.BitXor, ast.Shl, ast.Shr, ast.ShrZero:
		if l.kind != Number || r.kind != Number {
			return Value{}
		}
		return bitwise(op, l, r)
	}
	panic("BUG: eval: unknown binary operator")
}

// compareOp is = != < > <= >= (equality-comparison-operators.md): across
// types the result is undefined; = and != compare any two values of one
// type, arrays and objects deeply; < > <= >= are undefined for arrays and
// objects. Numbers follow IEEE 754 here (NaN = NaN is false), unlike
// Compare.
func compareOp(op ast.BinaryOp, l, r Value) Value {
	if l.kind == Undefined || r.kind == Undefined || l.kind != r.kind {
		return Value{}
	}
	var c int
	switch l.kind {
	case Null:
		c = 0
	case Bool:
		c = cmpInt(int(l.n), int(r.n))
	case Number:
		if math.IsNaN(l.AsFloat()) || math.IsNaN(r.AsFloat()) {
			return BoolValue(op == ast.Ne)
		}
		c = compareNumbers(l, r)
	case String:
		c = strings.Compare(l.s, r.s)
	case Array, Object:
		switch op {
		case ast.Eq:
			return BoolValue(Equal(l, r))
		case ast.Ne:
			return BoolValue(!Equal(l, r))
		}
		return Value{}
	}
	switch op {
	case ast.Eq:
		return BoolValue(c == 0)
	case ast.Ne:
		return BoolValue(c != 0)
	case ast.Lt:
		return BoolValue(c < 0)
	case ast.Gt:
		return BoolValue(c > 0)
	case ast.Le:
		return BoolValue(c <= 0)
	case ast.Ge:
		return BoolValue(c >= 0)
	}
	panic("BUG: eval: not a comparison")
}

// arith is + - * / % on two numbers, in float64 as JavaScript does, except
// that integers stay exact int64 while the result is an integer that fits.
func arith(op ast.BinaryOp, l, r Value) Value {
	if l.exact && r.exact {
		x, y := int64(l.n), int64(r.n)
		switch op {
		case ast.Add:
			if s := x + y; (s > x) == (y > 0) {
				return IntValue(s)
			}
		case ast.Sub:
			if d := x - y; (d < x) == (y > 0) {
				return IntValue(d)
			}
		case ast.Mul:
			if p, ok := mulInt64(x, y); ok {
				return IntValue(p)
			}
		case ast.Div:
			if y != 0 && !(x == math.MinInt64 && y == -1) && x%y == 0 {
				return IntValue(x / y)
			}
		case ast.Mod:
			if y != 0 {
				return IntValue(x % y) // sign of the dividend, as JavaScript's %
			}
		}
	}
	x, y := l.AsFloat(), r.AsFloat()
	switch op {
	case ast.Add:
		return NumberValue(x + y)
	case ast.Sub:
		return NumberValue(x - y)
	case ast.Mul:
		return NumberValue(x * y)
	case ast.Div:
		return NumberValue(x / y)
	case ast.Mod:
		return NumberValue(math.Mod(x, y))
	}
	panic("BUG: eval: not arithmetic")
}

// mulInt64 multiplies exactly or reports overflow.
func mulInt64(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, true
	}
	neg := (x < 0) != (y < 0)
	ux, uy := absU(x), absU(y)
	hi, lo := bits.Mul64(ux, uy)
	if hi != 0 {
		return 0, false
	}
	if neg {
		if lo > 1<<63 {
			return 0, false
		}
		return -int64(lo), true
	}
	if lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

func absU(x int64) uint64 {
	if x < 0 {
		return uint64(-x) // MinInt64 wraps to 1<<63, as wanted
	}
	return uint64(x)
}

// toInt32 is JavaScript's ToInt32: truncate, wrap modulo 2^32, NaN and
// infinities to 0. The bitwise operators work on 32 bits "as in JavaScript"
// (bitwise-operators.md).
func toInt32(v Value) int32 {
	if v.exact {
		return int32(uint32(uint64(v.n)))
	}
	f := math.Float64frombits(v.n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	f = math.Mod(math.Trunc(f), 1<<32)
	if f < 0 {
		f += 1 << 32
	}
	return int32(uint32(f))
}

func bitwise(op ast.BinaryOp, l, r Value) Value {
	x, y := toInt32(l), toInt32(r)
	shift := uint32(y) & 31
	switch op {
	case ast.BitAnd:
		return IntValue(int64(x & y))
	case ast.BitOr:
		return IntValue(int64(x | y))
	case ast.BitXor:
		return IntValue(int64(x ^ y))
	case ast.Shl:
		return IntValue(int64(x << shift))
	case ast.Shr:
		return IntValue(int64(x >> shift))
	case ast.ShrZero:
		return IntValue(int64(uint32(x) >> shift))
	}
	panic("BUG: eval: not bitwise")
}

// evalIn is x IN (a, b, ...): true if x = some item, otherwise undefined if
// some comparison was undefined (a type mismatch, as with =), otherwise
// false. NOT IN negates that three-valued result.
func evalIn(e *ast.In, env *Env) (Value, error) {
	x, err := Eval(e.X, env)
	if err != nil {
		return Value{}, err
	}
	result := BoolValue(false)
	for _, item := range e.List {
		v, err := Eval(item, env)
		if err != nil {
			return Value{}, err
		}
		result = or(result, compareOp(ast.Eq, x, v))
		if result.isTrue() {
			break
		}
	}
	if e.Not {
		result = not(result)
	}
	return result, nil
}

func evalLike(e *ast.Like, env *Env) (Value, error) {
	x, err := Eval(e.X, env)
	if err != nil {
		return Value{}, err
	}
	pat, err := Eval(e.Pattern, env)
	if err != nil {
		return Value{}, err
	}
	esc := rune(-1)
	if e.Escape != nil {
		r, size := utf8.DecodeRuneInString(e.Escape.Value)
		if size == 0 || size != len(e.Escape.Value) {
			return Value{}, errorf(e.Escape.At, ErrBadArgument, "the ESCAPE of LIKE must be one character, not %s", ast.Quote(e.Escape.Value))
		}
		esc = r
	}
	if x.kind != String || pat.kind != String {
		return Value{}, nil
	}
	m := env.Cache.likePattern(likeKey{pat.s, esc}).match(x.s)
	if e.Not {
		m = !m
	}
	return BoolValue(m), nil
}

func evalSubquery(e *ast.Subquery, env *Env) (Value, error) {
	if env.Subquery == nil {
		return Value{}, errorf(e.At, ErrNeedsExecutor, "%s subquery needs Env.Subquery", subqueryName(e.Kind))
	}
	rows, err := env.Subquery(e.Query, env)
	if err != nil {
		return Value{}, err
	}
	switch e.Kind {
	case ast.Scalar, ast.First:
		// A scalar subquery is the value of its (first) row, undefined if
		// it has none.
		if len(rows) == 0 {
			return Value{}, nil
		}
		return rows[0], nil
	case ast.Last:
		if len(rows) == 0 {
			return Value{}, nil
		}
		return rows[len(rows)-1], nil
	case ast.Exists:
		return BoolValue(len(rows) > 0), nil
	case ast.Array:
		return ArrayValue(rows), nil
	case ast.All:
		for _, r := range rows {
			if !r.isTrue() {
				return BoolValue(false), nil
			}
		}
		return BoolValue(true), nil
	}
	panic("BUG: eval: unknown subquery kind")
}

func subqueryName(k ast.SubqueryKind) string {
	if k == ast.Scalar {
		return "scalar"
	}
	return k.String()
}
