package advise

import (
	"math"
	"slices"
)

// gini returns the Gini coefficient of xs (all >= 0): 0 when every value is
// equal, (n-1)/n when one value holds everything, 0 for an empty or all-zero
// list. With xs sorted ascending and 1-based ranks i,
//
//	G = 2·Σ i·x_i / (n·Σ x_i) − (n+1)/n.
func gini(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum, weighted float64
	for i, x := range s {
		sum += x
		weighted += float64(i+1) * x
	}
	if sum <= 0 {
		return 0
	}
	g := 2*weighted/(float64(n)*sum) - float64(n+1)/float64(n)
	return clamp(g, 0, 1)
}

// maxOverMean returns max(xs) / mean(xs): 1 when even, n when one value
// holds everything, 0 for an empty or all-zero list.
func maxOverMean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum, mx float64
	for _, x := range xs {
		sum += x
		mx = max(mx, x)
	}
	if sum <= 0 {
		return 0
	}
	return mx / (sum / float64(len(xs)))
}

// pearson returns the correlation coefficient of the paired samples, or 0
// when either has no variance.
func pearson(xs, ys []float64) float64 {
	n := float64(len(xs))
	if len(xs) < 2 || len(xs) != len(ys) {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return clamp(sxy/math.Sqrt(sxx*syy), -1, 1)
}

// midranks returns, for groups of tied values in ascending order with the
// given sizes, the rank every member of each group gets in a Spearman
// correlation: the mean of the 1-based positions the group occupies.
func midranks(sizes []int) []float64 {
	out := make([]float64, len(sizes))
	pos := 0
	for i, c := range sizes {
		out[i] = float64(pos) + float64(c+1)/2
		pos += c
	}
	return out
}

func clamp(x, lo, hi float64) float64 { return min(max(x, lo), hi) }

// share returns a/b, or 0 when b is 0.
func share(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// round rounds x to d decimal places, for JSON output that reads well.
func round(x float64, d int) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}
