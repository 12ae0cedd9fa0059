package csrconv

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// BenchmarkScores scores MNIST-like rows (D = 785 feature rows, bias +
// 784 pixels, 150 nonzeros a row, benchRows different rows) against K
// faces in three ways, and reports nonzeros scored per second:
//
//   - sparsevec: Matrix.Scores, one pass over the row reading K
//     contiguous float32 weights per nonzero (the trainers' kernel);
//   - DoRowNonZero: *sparse.CSR's row iterator, once per face over K
//     face-major float64 weight vectors;
//   - MulVecTo: K sparse matrix–vector products of the whole block, one
//     per face (the library's batch form, timed per row).
//
// The first is the layout the trainers use; the others are the ways a
// general sparse library computes the same numbers.
func BenchmarkScores(b *testing.B) {
	const d, nnz, benchRows = 785, 150, 256
	for _, k := range []int{1, 10, 40, 100} {
		rng := rand.New(rand.NewPCG(uint64(k), nnz))
		w := sparsevec.NewMatrix(d, k)
		faces := make([][]float64, k) // faces[k][j−1] = weight of feature j
		for kk := range faces {
			faces[kk] = make([]float64, d-1)
		}
		for j := range d {
			for kk := range k {
				v := 2*rng.Float32() - 1
				w.Set(j, kk, v)
				if j > 0 {
					faces[kk][j-1] = float64(v)
				}
			}
		}
		var data sparsevec.CSR
		x := sparsevec.Vector{Idx: make([]uint32, nnz), Val: make([]float32, nnz)}
		for range benchRows {
			for i, j := range rng.Perm(d - 1)[:nnz] {
				x.Idx[i], x.Val[i] = uint32(j+1), rng.Float32()
			}
			sortRow(x)
			data.Append(1, x)
		}
		m, err := ToSparse(&data, d-1)
		if err != nil {
			b.Fatal(err)
		}
		report := func(b *testing.B, rows int) {
			b.ReportMetric(float64(nnz)*float64(rows)/b.Elapsed().Seconds(), "nnz/s")
		}
		name := fmt.Sprintf("K=%d,nnz=%d", k, nnz)
		b.Run(name+"/sparsevec", func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]float32, w.Stride)
			i := 0
			for b.Loop() {
				w.Scores(dst, data.Row(i%benchRows))
				i++
			}
			report(b, i)
		})
		b.Run(name+"/DoRowNonZero", func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]float64, k)
			var s float64
			var face []float64
			add := func(_, j int, v float64) { s += v * face[j] }
			i := 0
			for b.Loop() {
				for kk := range faces {
					s, face = 0, faces[kk]
					m.DoRowNonZero(i%benchRows, add)
					dst[kk] = s
				}
				i++
			}
			report(b, i)
		})
		b.Run(name+"/MulVecTo", func(b *testing.B) {
			b.ReportAllocs()
			out := make([][]float64, k)
			for kk := range out {
				out[kk] = make([]float64, benchRows)
			}
			blocks := 0
			for b.Loop() {
				for kk := range faces {
					m.MulVecTo(out[kk], false, faces[kk])
				}
				blocks++
			}
			report(b, blocks*benchRows)
		})
	}
}

// sortRow sorts x's indices ascending, carrying the values.
func sortRow(x sparsevec.Vector) {
	for i := 1; i < len(x.Idx); i++ {
		for j := i; j > 0 && x.Idx[j] < x.Idx[j-1]; j-- {
			x.Idx[j], x.Idx[j-1] = x.Idx[j-1], x.Idx[j]
			x.Val[j], x.Val[j-1] = x.Val[j-1], x.Val[j]
		}
	}
}
