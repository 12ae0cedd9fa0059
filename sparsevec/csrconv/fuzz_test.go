package csrconv

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/james-bowman/sparse"
)

// FuzzFromSparse builds a *sparse.CSR from arbitrary bytes (row pointers,
// columns and values taken as they come, so most inputs are malformed)
// and checks that FromSparse never panics, fails only with its own error
// kinds, and that what converts goes back through ToSparse to the same
// elements.
func FuzzFromSparse(f *testing.F) {
	f.Add(uint8(2), uint8(5), []byte{0, 2, 3, 4, 0, 2, 1, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40}, false)
	f.Add(uint8(1), uint8(3), []byte{0, 2, 1, 1, 0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f}, false)
	f.Add(uint8(1), uint8(3), []byte{0, 1, 2, 0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f}, true)
	f.Fuzz(func(t *testing.T, rows, cols uint8, b []byte, round bool) {
		r, c := int(rows%8), int(cols%16)
		if len(b) < r+1 {
			return
		}
		ptr := make([]int, r+1)
		for i := range ptr {
			ptr[i] = int(b[i] % 16)
		}
		b = b[r+1:]
		n := len(b) / 5 // one column byte and four value bytes a nonzero
		ind, data := make([]int, n), make([]float64, n)
		for k := range n {
			ind[k] = int(int8(b[k]))
			data[k] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[n+4*k:])))
			if round && k%2 == 1 {
				data[k] += 0x1p-40 * data[k] // inexact in float32
			}
		}
		m := sparse.NewCSR(r, c, ptr, ind, data)
		labels := make([]float32, r)
		out, err := FromSparse(m, labels, Options{Round: round})
		if err != nil {
			for _, kind := range []error{ErrNonFinite, ErrInexact, ErrMalformed} {
				if errors.Is(err, kind) {
					return
				}
			}
			t.Fatalf("unexpected error kind: %v", err)
		}
		back, err := ToSparse(out, c)
		if err != nil {
			t.Fatalf("ToSparse of a converted matrix: %v", err)
		}
		for i := range r {
			for j := range c {
				want := m.At(i, j)
				if round {
					want = float64(float32(want))
				}
				if got := back.At(i, j); got != want && !(want == 0 && got == 0) {
					t.Fatalf("(%d, %d) = %v after the round trip, want %v", i, j, got, want)
				}
			}
		}
	})
}
