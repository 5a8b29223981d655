package eval

import "math"

// Double-double arithmetic: a value is hi + lo with |lo| <= ulp(hi)/2,
// about 106 bits of precision (Dekker 1971; Hida, Li and Bailey, "Library
// for double-double and quad-double arithmetic", 2007). Only what the
// trigonometric functions need.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func ddAdd(a, b dd) dd {
	s := twoSum(a.hi, b.hi)
	t := twoSum(a.lo, b.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func ddNeg(a dd) dd { return dd{-a.hi, -a.lo} }

func ddMul(a, b dd) dd {
	p := twoProd(a.hi, b.hi)
	p.lo += a.hi*b.lo + a.lo*b.hi
	return quickTwoSum(p.hi, p.lo)
}

func ddMulF(a dd, b float64) dd {
	p := twoProd(a.hi, b)
	p.lo += a.lo * b
	return quickTwoSum(p.hi, p.lo)
}

func ddDivF(a dd, b float64) dd {
	q1 := a.hi / b
	r := ddAdd(a, ddNeg(twoProd(q1, b)))
	return quickTwoSum(q1, r.hi/b)
}

func ddDiv(a, b dd) dd {
	q1 := a.hi / b.hi
	r := ddAdd(a, ddNeg(ddMulF(b, q1)))
	q2 := r.hi / b.hi
	r = ddAdd(r, ddNeg(ddMulF(b, q2)))
	q3 := r.hi / b.hi
	return ddAdd(quickTwoSum(q1, q2), dd{q3, 0})
}

// π/2 as the sum of three float64s (each the rounding of what the previous
// ones leave).
const (
	pio2A = 1.5707963267948966
	pio2B = 6.123233995736766e-17
	pio2C = -1.4973849048591698e-33
)

// sinCos reduces x to x = n·π/2 + r with |r| <= ~π/4 and returns n, sin(r)
// and cos(r) in double-double. For |x| < 2^20, x - n·pio2A is exact (x and
// n·pio2A agree in their leading bits and the difference is a multiple of
// 2^-53 below 1), so r is accurate to about 2^-100.
func sinCos(x float64) (int, dd, dd) {
	n := math.Round(x * (2 / math.Pi))
	r := dd{math.FMA(-n, pio2A, x), 0}
	r = ddAdd(r, ddNeg(twoProd(n, pio2B)))
	r = ddAdd(r, dd{-n * pio2C, 0})

	r2 := ddMul(r, r)
	s, term := r, r
	for k := 1; k < 20 && term.hi != 0; k++ {
		term = ddNeg(ddDivF(ddMul(term, r2), float64(2*k*(2*k+1))))
		s = ddAdd(s, term)
		if math.Abs(term.hi) < 1e-40 {
			break
		}
	}
	c, term := dd{1, 0}, dd{1, 0}
	for k := 1; k < 20; k++ {
		term = ddNeg(ddDivF(ddMul(term, r2), float64((2*k-1)*(2*k))))
		c = ddAdd(c, term)
		if math.Abs(term.hi) < 1e-40 {
			break
		}
	}
	return int(n), s, c
}
