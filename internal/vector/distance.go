package vector

import (
	"fmt"
	"math"
)

// dot returns the inner product of a and b, which must have the same
// length. The loop is unrolled by four with independent accumulators so
// that the compiler keeps them in registers and the additions pipeline.
func dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		s0 += a[i]*b[i] + a[i+4]*b[i+4]
		s1 += a[i+1]*b[i+1] + a[i+5]*b[i+5]
		s2 += a[i+2]*b[i+2] + a[i+6]*b[i+6]
		s3 += a[i+3]*b[i+3] + a[i+7]*b[i+7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// l2sq returns the squared Euclidean distance between a and b, which must
// have the same length.
func l2sq(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		d0 := a[i] - b[i]
		d1 := a[i+1] - b[i+1]
		d2 := a[i+2] - b[i+2]
		d3 := a[i+3] - b[i+3]
		d4 := a[i+4] - b[i+4]
		d5 := a[i+5] - b[i+5]
		d6 := a[i+6] - b[i+6]
		d7 := a[i+7] - b[i+7]
		s0 += d0*d0 + d4*d4
		s1 += d1*d1 + d5*d5
		s2 += d2*d2 + d6*d6
		s3 += d3*d3 + d7*d7
	}
	for ; i < n; i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// norm returns the Euclidean length of a.
func norm(a []float32) float32 {
	return float32(math.Sqrt(float64(dot(a, a))))
}

// normalized returns a copy of a scaled to unit length, or a copy of a
// itself when its length is zero.
func normalized(a []float32) []float32 {
	out := make([]float32, len(a))
	n := norm(a)
	if n == 0 {
		copy(out, a)
		return out
	}
	inv := 1 / n
	for i, x := range a {
		out[i] = x * inv
	}
	return out
}

// Score returns VectorDistance(a, b) under the distance function f, with
// the service's conventions: the cosine similarity (-1 to +1, higher is
// closer) for Cosine, the inner product (higher is closer) for DotProduct,
// and the Euclidean distance (0 to +inf, lower is closer) for Euclidean.
// The cosine of a zero vector with anything is 0. Vectors of different
// lengths, or no elements, give an error wrapping ErrInvalidVector.
func Score(f DistanceFunction, a, b []float32) (float32, error) {
	if len(a) != len(b) || len(a) == 0 {
		return 0, fmt.Errorf("%w: vectors of %d and %d elements", ErrInvalidVector, len(a), len(b))
	}
	switch f {
	case Cosine:
		na, nb := norm(a), norm(b)
		if na == 0 || nb == 0 {
			return 0, nil
		}
		return dot(a, b) / (na * nb), nil
	case DotProduct:
		return dot(a, b), nil
	case Euclidean:
		return float32(math.Sqrt(float64(l2sq(a, b)))), nil
	}
	return 0, fmt.Errorf("%w: unknown distance function %d", ErrInvalidPolicy, f)
}

// Better reports whether score a ranks ahead of score b under f: higher
// first for Cosine and DotProduct, lower first for Euclidean. It is the
// order of ORDER BY VectorDistance(...).
func Better(f DistanceFunction, a, b float32) bool {
	if f == Euclidean {
		return a < b
	}
	return a > b
}

// metric is the internal, lower-is-closer form of a distance function that
// every index uses: the squared distance for Euclidean, the negated inner
// product for DotProduct, and the negated inner product of unit vectors for
// Cosine (indexes store and search normalized vectors for Cosine). key
// converts back to the service's score.
type metric struct {
	f DistanceFunction
}

// prepare returns the form in which an index stores or searches v: unit
// length for Cosine, v itself otherwise.
func (m metric) prepare(v []float32) []float32 {
	if m.f == Cosine {
		return normalized(v)
	}
	return v
}

// dist is the lower-is-closer distance of two prepared vectors.
func (m metric) dist(a, b []float32) float32 {
	if m.f == Euclidean {
		return l2sq(a, b)
	}
	return -dot(a, b)
}

// score converts a dist value back to the service's score.
func (m metric) score(d float32) float32 {
	if m.f == Euclidean {
		if d < 0 {
			d = 0
		}
		return float32(math.Sqrt(float64(d)))
	}
	return -d
}
