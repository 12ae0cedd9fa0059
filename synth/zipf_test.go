package synth

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The probabilities of the ranks sum to 1, decrease like r^-s, and match the
// frequencies of the draws.
func TestZipf(t *testing.T) {
	for _, tc := range []struct {
		n int
		s float64
	}{{50, 1}, {50, 1.1}, {50, 0.9}, {1, 1}} {
		z := newZipf(tc.n, tc.s)
		var sum float64
		for r := range tc.n {
			p := z.prob(r)
			if p <= 0 || (r > 0 && p > z.prob(r-1)) {
				t.Fatalf("n %d s %v: prob(%d) = %v not positive and decreasing", tc.n, tc.s, r, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("n %d s %v: probabilities sum to %v", tc.n, tc.s, sum)
		}
		if tc.n > 10 {
			// Zipf's law: p(r)·(r+1.5)^s is nearly constant.
			a, b := z.prob(5)*math.Pow(6.5, tc.s), z.prob(40)*math.Pow(41.5, tc.s)
			if math.Abs(a/b-1) > 0.02 {
				t.Errorf("n %d s %v: p(5)·6.5^s = %v, p(40)·41.5^s = %v", tc.n, tc.s, a, b)
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		const draws = 200000
		counts := make([]int, tc.n)
		for range draws {
			counts[z.rank(rng.Float64())]++
		}
		for r, c := range counts {
			want := draws * z.prob(r)
			if math.Abs(float64(c)-want) > 5*math.Sqrt(want)+1 {
				t.Errorf("n %d s %v: rank %d drawn %d times, want %.0f", tc.n, tc.s, r, c, want)
			}
		}
		if r := z.rank(math.Nextafter(1, 0)); r != tc.n-1 {
			t.Errorf("n %d s %v: rank(1-) = %d", tc.n, tc.s, r)
		}
		if r := z.rank(0); r != 0 {
			t.Errorf("n %d s %v: rank(0) = %d", tc.n, tc.s, r)
		}
	}
}
