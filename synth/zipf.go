package synth

import "math"

// zipf draws ranks 0..n-1 with Zipf-like, power-law frequencies: a continuous
// X on [1, n+1] with density proportional to x^-s, drawn by inverting its
// distribution function
//
//	F(x) = ln x / ln(n+1)                       (s = 1)
//	F(x) = (x^(1-s) - 1) / ((n+1)^(1-s) - 1)    (s ≠ 1)
//
// and rank = floor(X) - 1. Rank r therefore has probability F(r+2) - F(r+1),
// close to r^-s / H(n, s) as in Zipf's law but with a closed-form inverse, so
// a draw costs one Pow or Exp, not a search.
type zipf struct {
	n    int
	s    float64
	c    float64 // ln(n+1) for s = 1, (n+1)^(1-s) - 1 otherwise
	invq float64 // 1/(1-s)
}

func newZipf(n int, s float64) zipf {
	z := zipf{n: n, s: s}
	if s == 1 {
		z.c = math.Log(float64(n) + 1)
	} else {
		z.c = math.Pow(float64(n)+1, 1-s) - 1
		z.invq = 1 / (1 - s)
	}
	return z
}

// rank returns the rank for u uniform in [0, 1).
func (z zipf) rank(u float64) int {
	var x float64
	if z.s == 1 {
		x = math.Exp(u * z.c)
	} else {
		x = math.Exp(z.invq * math.Log(1+u*z.c)) // (1+u·c)^(1/(1-s)); faster than math.Pow
	}
	return min(max(int(x)-1, 0), z.n-1)
}

// cdf is F above.
func (z zipf) cdf(x float64) float64 {
	if z.s == 1 {
		return math.Log(x) / z.c
	}
	return (math.Pow(x, 1-z.s) - 1) / z.c
}

// prob returns the probability of rank r.
func (z zipf) prob(r int) float64 {
	if r == z.n-1 {
		return 1 - z.cdf(float64(r)+1)
	}
	return z.cdf(float64(r)+2) - z.cdf(float64(r)+1)
}
