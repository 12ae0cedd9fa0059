package shared

import (
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// testRows returns rows seeded by seed: empty rows, short rows of
// pixel-like values and long rows with large index gaps.
func testRows(rows int, seed uint64) *sparsevec.CSR {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := &sparsevec.CSR{}
	for r := range rows {
		var x sparsevec.Vector
		j := uint32(0)
		for range (r % 3) * (1 + rng.IntN(30)) {
			j += uint32(1 + rng.IntN(1<<(4*(r%3))))
			x.Idx = append(x.Idx, j)
			x.Val = append(x.Val, float32(rng.NormFloat64()))
		}
		m.Append(float32(2*rng.IntN(2)-1), x)
	}
	return m
}

// readAll reads b to its end into one CSR, releasing every block, and
// closes b.
func readAll(t *testing.T, b interface {
	Next() (*sparsevec.CSR, error)
	Release(*sparsevec.CSR)
	Close() error
}) (*sparsevec.CSR, error) {
	t.Helper()
	m := &sparsevec.CSR{Ptr: []int{0}}
	defer b.Close()
	for {
		blk, err := b.Next()
		if err == io.EOF {
			return m, b.Close()
		}
		if err != nil {
			return m, err
		}
		m.AppendCSR(blk)
		b.Release(blk)
	}
}

// assertSameRows fails t unless got and want hold the same rows, bit for
// bit.
func assertSameRows(t *testing.T, got, want *sparsevec.CSR) {
	t.Helper()
	if got.Rows() != want.Rows() {
		t.Fatalf("%d rows, want %d", got.Rows(), want.Rows())
	}
	bits := func(v []float32) []uint32 {
		b := make([]uint32, len(v))
		for i, f := range v {
			b[i] = math.Float32bits(f)
		}
		return b
	}
	for r := range want.Rows() {
		g, w := got.Row(r), want.Row(r)
		if math.Float32bits(got.Labels[r]) != math.Float32bits(want.Labels[r]) ||
			!slices.Equal(g.Idx, w.Idx) || !slices.Equal(bits(g.Val), bits(w.Val)) {
			t.Fatalf("row %d: label %v %v, want %v %v", r, got.Labels[r], g, want.Labels[r], w)
		}
	}
}
