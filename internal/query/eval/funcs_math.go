package eval

import (
	"math"
)

// Mathematical functions (abs.md ... trunc.md, intadd.md ... intsub.md,
// numberbin.md). They take numbers and give undefined for anything else;
// domain errors follow IEEE 754 (SQRT(-1) is NaN, IS_FINITE_NUMBER's
// example). ABS, CEILING, FLOOR, ROUND, TRUNC, SIGN and NumberBin keep an
// exact integer exact; the Int* functions work on 64-bit integers only.
var mathFuncs = []*builtin{
	{name: "ABS", min: 1, max: 1, fn: intPreserving(math.Abs, func(i int64) (int64, bool) {
		if i == math.MinInt64 {
			return 0, false
		}
		if i < 0 {
			return -i, true
		}
		return i, true
	})},
	{name: "CEILING", min: 1, max: 1, fn: intPreserving(math.Ceil, identityInt)},
	{name: "FLOOR", min: 1, max: 1, fn: intPreserving(math.Floor, identityInt)},
	// ROUND rounds half away from zero (round.md: -6.5 → -7, 0.5 → 1).
	{name: "ROUND", min: 1, max: 1, fn: intPreserving(math.Round, identityInt)},
	{name: "TRUNC", min: 1, max: 1, fn: intPreserving(math.Trunc, identityInt)},
	{name: "SIGN", min: 1, max: 1, fn: intPreserving(sign, func(i int64) (int64, bool) {
		switch {
		case i > 0:
			return 1, true
		case i < 0:
			return -1, true
		}
		return 0, true
	})},
	{name: "EXP", min: 1, max: 1, fn: unaryMath(math.Exp)},
	{name: "LOG", min: 1, max: 2, fn: fnLog},
	{name: "LOG10", min: 1, max: 1, fn: unaryMath(log10)},
	{name: "POWER", min: 2, max: 2, fn: binaryMath(math.Pow)},
	{name: "SQRT", min: 1, max: 1, fn: unaryMath(math.Sqrt)},
	{name: "SQUARE", min: 1, max: 1, fn: unaryMath(func(x float64) float64 { return x * x })},
	{name: "PI", min: 0, max: 0, fn: func(c *callCtx, a []Value) (Value, error) { return NumberValue(math.Pi), nil }},
	{name: "SIN", min: 1, max: 1, fn: unaryMath(sin)},
	{name: "COS", min: 1, max: 1, fn: unaryMath(cos)},
	{name: "TAN", min: 1, max: 1, fn: unaryMath(tan)},
	{name: "COT", min: 1, max: 1, fn: unaryMath(cot)},
	{name: "ASIN", min: 1, max: 1, fn: unaryMath(math.Asin)},
	{name: "ACOS", min: 1, max: 1, fn: unaryMath(math.Acos)},
	{name: "ATAN", min: 1, max: 1, fn: unaryMath(math.Atan)},
	// ATN2(y, x) is the angle of the point (x, y): atn2.md's example
	// ATN2(35.175643, 129.44) = 0.265344532064832 = atan2(35.175643, 129.44).
	{name: "ATN2", min: 2, max: 2, fn: binaryMath(math.Atan2)},
	{name: "DEGREES", min: 1, max: 1, fn: unaryMath(func(x float64) float64 { return x * (180 / math.Pi) })},
	{name: "RADIANS", min: 1, max: 1, fn: unaryMath(func(x float64) float64 { return x * (math.Pi / 180) })},
	{name: "RAND", min: 0, max: 0, fn: func(c *callCtx, a []Value) (Value, error) {
		if c.env.Rand == nil {
			return undef, errorf(c.node.At, ErrMissingEnv, "RAND needs Env.Rand")
		}
		return NumberValue(c.env.Rand()), nil
	}},
	{name: "NumberBin", min: 1, max: 2, fn: fnNumberBin},

	{name: "IntAdd", min: 2, max: 2, fn: intOp(func(x, y int64) (int64, bool) { return x + y, true })},
	{name: "IntSub", min: 2, max: 2, fn: intOp(func(x, y int64) (int64, bool) { return x - y, true })},
	{name: "IntMul", min: 2, max: 2, fn: intOp(func(x, y int64) (int64, bool) { return x * y, true })},
	{name: "IntDiv", min: 2, max: 2, fn: intOp(func(x, y int64) (int64, bool) {
		if y == 0 {
			return 0, false
		}
		return x / y, true
	})},
	{name: "IntMod", min: 2, max: 2, fn: intOp(func(x, y int64) (int64, bool) {
		if y == 0 {
			return 0, false
		}
		return x % y, true
	})},
	{name: "IntBitAnd", min: 2, max: 2, fn: intOp(func(x, y int64) (int64, bool) { return x & y, true })},
	{name: "IntBitOr", min: 2, max: 2, fn: intOp(func(x, y int64) (int64, bool) { return x | y, true })},
	{name: "IntBitXor", min: 2, max: 2, fn: intOp(func(x, y int64) (int64, bool) { return x ^ y, true })},
	{name: "IntBitLeftShift", min: 2, max: 2, fn: intOp(func(x, n int64) (int64, bool) {
		if n < 0 {
			return 0, false
		}
		if n >= 64 {
			return 0, true
		}
		return x << uint(n), true
	})},
	{name: "IntBitRightShift", min: 2, max: 2, fn: intOp(func(x, n int64) (int64, bool) {
		if n < 0 {
			return 0, false
		}
		if n >= 64 {
			n = 63
		}
		return x >> uint(n), true
	})},
	{name: "IntBitNot", min: 1, max: 1, fn: func(c *callCtx, a []Value) (Value, error) {
		x, ok := a[0].AsInt()
		if !ok {
			return undef, nil
		}
		return IntValue(^x), nil
	}},
}

func identityInt(i int64) (int64, bool) { return i, true }

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // 0, -0 or NaN
}

// intPreserving applies f to a number, or fi to an exact integer (falling
// back to f when fi reports overflow).
func intPreserving(f func(float64) float64, fi func(int64) (int64, bool)) func(*callCtx, []Value) (Value, error) {
	return func(c *callCtx, a []Value) (Value, error) {
		v := a[0]
		if v.kind != Number {
			return undef, nil
		}
		if v.exact {
			if r, ok := fi(int64(v.n)); ok {
				return IntValue(r), nil
			}
		}
		return NumberValue(f(v.AsFloat())), nil
	}
}

func unaryMath(f func(float64) float64) func(*callCtx, []Value) (Value, error) {
	return func(c *callCtx, a []Value) (Value, error) {
		x, ok := numArg(a[0])
		if !ok {
			return undef, nil
		}
		return NumberValue(f(x)), nil
	}
}

func binaryMath(f func(float64, float64) float64) func(*callCtx, []Value) (Value, error) {
	return func(c *callCtx, a []Value) (Value, error) {
		x, ok1 := numArg(a[0])
		y, ok2 := numArg(a[1])
		if !ok1 || !ok2 {
			return undef, nil
		}
		return NumberValue(f(x, y)), nil
	}
}

// fnLog is LOG(x [, base]). With a base it is log10(x)/log10(base), which
// reproduces log-base.md's LOG(2, 10) = 0.3010299956639812 exactly
// (ln(2)/ln(10) is one unit in the last place off).
func fnLog(c *callCtx, a []Value) (Value, error) {
	x, ok := numArg(a[0])
	if !ok {
		return undef, nil
	}
	if len(a) == 1 {
		return NumberValue(math.Log(x)), nil
	}
	b, ok := numArg(a[1])
	if !ok {
		return undef, nil
	}
	return NumberValue(log10(x) / log10(b)), nil
}

// fnNumberBin is NumberBin(x [, size]): x rounded down to a multiple of
// size (default 1); size 0 gives undefined (numberbin.md). A negative size
// rounds "down" in its own direction: NumberBin(37.752, -100) is 100, as
// the documentation's example shows.
func fnNumberBin(c *callCtx, a []Value) (Value, error) {
	x := a[0]
	size := IntValue(1)
	if len(a) == 2 {
		size = a[1]
	}
	if x.kind != Number || size.kind != Number {
		return undef, nil
	}
	if x.exact && size.exact {
		xi, si := int64(x.n), int64(size.n)
		if si == 0 {
			return undef, nil
		}
		q := xi / si
		if (xi%si != 0) && ((xi < 0) != (si < 0)) {
			q--
		}
		if r, ok := mulInt64(q, si); ok {
			return IntValue(r), nil
		}
	}
	s := size.AsFloat()
	if s == 0 {
		return undef, nil
	}
	return NumberValue(math.Floor(x.AsFloat()/s) * s), nil
}

// intOp applies a 64-bit integer operation; both arguments must be
// integers (IS_INTEGER true), else the result is undefined (intadd.md:
// IntAdd(20, 0.10) is undefined). Overflow wraps around, as the service
// documents (intadd.md: "Overflow behavior is similar to the
// implementation in C++ (wrap-around)").
func intOp(f func(x, y int64) (int64, bool)) func(*callCtx, []Value) (Value, error) {
	return func(c *callCtx, a []Value) (Value, error) {
		x, ok1 := a[0].AsInt()
		y, ok2 := a[1].AsInt()
		if !ok1 || !ok2 {
			return undef, nil
		}
		r, ok := f(x, y)
		if !ok {
			return undef, nil
		}
		return IntValue(r), nil
	}
}

// Trigonometry. Go's math.Sin, Cos and Tan are accurate to about an ulp
// but not correctly rounded, and the C library behind Cosmos DB's examples
// is: TAN(124.1332) is -24.80651023035602 there and -24.806510230356018
// with math.Tan; TAN(PI()/2) is 16331239353195370 there and
// 16331239353195392 with math.Tan. So for |x| < 2^20 the argument is
// reduced by π/2 in double-double arithmetic and sin and cos are summed as
// double-double Taylor series (mathdd.go), which rounds correctly in all
// but astronomically rare cases; larger arguments use package math.

const trigMax = 1 << 20

func sin(x float64) float64 {
	if !(math.Abs(x) < trigMax) {
		return math.Sin(x)
	}
	n, s, c := sinCos(x)
	switch n & 3 {
	case 0:
		return s.hi
	case 1:
		return c.hi
	case 2:
		return -s.hi
	}
	return -c.hi
}

func cos(x float64) float64 {
	if !(math.Abs(x) < trigMax) {
		return math.Cos(x)
	}
	n, s, c := sinCos(x)
	switch n & 3 {
	case 0:
		return c.hi
	case 1:
		return -s.hi
	case 2:
		return -c.hi
	}
	return s.hi
}

func tan(x float64) float64 {
	if !(math.Abs(x) < trigMax) {
		return math.Tan(x)
	}
	n, s, c := sinCos(x)
	if n&1 == 0 {
		return ddDiv(s, c).hi
	}
	return -ddDiv(c, s).hi
}

func cot(x float64) float64 {
	if !(math.Abs(x) < trigMax) {
		return 1 / math.Tan(x)
	}
	n, s, c := sinCos(x)
	if n&1 == 0 {
		return ddDiv(c, s).hi
	}
	return -ddDiv(s, c).hi
}

// log10 is fdlibm's e_log10.c formula, k·log10(2) + log(m)/ln(10) with
// log10(2) split in two, which gives LOG10(5) = 0.6989700043360189 as
// log10.md does (math.Log10 gives ...187, one ulp off, and LOG10(1000) is
// exactly 3).
func log10(x float64) float64 {
	const (
		ivln10   = 4.34294481903251816668e-01 // 1/ln(10)
		log102Hi = 3.01029995663611771306e-01 // log10(2), leading bits
		log102Lo = 3.69423907715893078616e-13 // log10(2) - log102Hi
	)
	if !(x > 0) || math.IsInf(x, 1) {
		return math.Log10(x) // NaN, -Inf, +Inf
	}
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac in [0.5, 1)
	m, k := 2*frac, exp-1      // m in [1, 2)
	if k < 0 {
		m, k = frac, exp
	}
	y := float64(k)
	return y*log102Lo + ivln10*math.Log(m) + y*log102Hi
}
