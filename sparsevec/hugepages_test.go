package sparsevec

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Advising huge pages under packed rows (megabytes of them, in every
// encoding, and empty ones) leaves every row as it was packed.
func TestAdviseHugePagesKeepsRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var m CSR
	for range 20000 {
		var x Vector
		j := uint32(0)
		for range rng.IntN(60) {
			j += 1 + uint32(rng.IntN(1000))
			x.Idx, x.Val = append(x.Idx, j), append(x.Val, float32(rng.IntN(200))/199)
		}
		m.Append(float32(rng.IntN(2)), x)
	}
	var ps []*Packed
	for _, mode := range []Packing{0, PackNarrow, PackCodes, PackCompact} {
		ps = append(ps, Pack(&m, nil, mode))
	}
	ps = append(ps, Pack(&CSR{}, nil, PackCompact))
	AdviseHugePages(ps)
	AdviseHugePages(nil)
	var buf Vector
	for _, p := range ps[:4] {
		for r := range m.Rows() {
			got, want := p.Row(r, &buf), m.Row(r)
			if !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) || p.Label(r) != m.Labels[r] {
				t.Fatalf("row %d differs after AdviseHugePages", r)
			}
		}
	}
}
