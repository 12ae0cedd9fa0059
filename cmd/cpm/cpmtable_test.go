package main

import (
	"math"
	"testing"

	"github.com/polyhedral/cpm/tune"
)

// The entropy grid of section 5.1 is ln(iK/10), i = 1..9: the entropy of
// an even spread over iK/10 faces, without targets that are not positive.
func TestHGrid(t *testing.T) {
	for _, tc := range []struct {
		k     int
		faces []float64 // exp of each target
	}{
		{20, []float64{2, 4, 6, 8, 10, 12, 14, 16, 18}},
		{10, []float64{2, 3, 4, 5, 6, 7, 8, 9}},
		{100, []float64{10, 20, 30, 40, 50, 60, 70, 80, 90}},
		{4, []float64{1.2, 1.6, 2, 2.4, 2.8, 3.2, 3.6}},
	} {
		g := tune.PaperH(tc.k)
		if len(g) != len(tc.faces) {
			t.Fatalf("K=%d: grid %v, want ln of %v", tc.k, g, tc.faces)
		}
		for i, h := range g {
			if math.Abs(math.Exp(h)-tc.faces[i]) > 1e-9 {
				t.Fatalf("K=%d: target %d is exp(%g) = %g faces, want %g", tc.k, i, h, math.Exp(h), tc.faces[i])
			}
		}
	}
}
