package sparsevec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/polyhedral/cpm/internal/cputime"
)

// Benchmarks of one SGD step's kernels on MNIST-like rows: D = 785 feature
// rows (bias + 784 pixels), rows of nnz ascending pixel indices. Each
// iteration takes the next of benchRows different rows, so the branch
// predictor cannot learn one row and the gathers touch the whole matrix,
// as in training.

const (
	benchD    = 785
	benchRows = 256
)

var benchKs = []int{1, 10, 40, 100}

type benchCase struct {
	m    *Matrix
	xs   []Vector
	dst  []float32
	c    []float32
	name string
	nnz  int
}

func newBenchCase(k, nnz int) *benchCase {
	rng := rand.New(rand.NewPCG(uint64(k), uint64(nnz)))
	m := NewMatrix(benchD, k)
	for j := 0; j < m.D; j++ {
		for kk := 0; kk < k; kk++ {
			m.Set(j, kk, 2*rng.Float32()-1)
		}
	}
	xs := make([]Vector, benchRows)
	for i := range xs {
		xs[i] = mnistVector(rng, nnz)
	}
	c := make([]float32, m.Stride)
	for kk := 0; kk < k; kk++ {
		c[kk] = 1e-6 * float32(kk+1)
	}
	return &benchCase{m: m, xs: xs, dst: make([]float32, m.Stride), c: c,
		name: fmt.Sprintf("K=%d,nnz=%d", k, nnz), nnz: nnz}
}

func (bc *benchCase) report(b *testing.B) {
	b.ReportMetric(float64(bc.nnz)*float64(b.N)/b.Elapsed().Seconds(), "nnz/s")
}

// benchImpls runs f as a sub-benchmark per kernel implementation.
func benchImpls(b *testing.B, bc *benchCase, f func(b *testing.B)) {
	b.Run(bc.name, func(b *testing.B) {
		for _, impl := range kernelImpls() {
			b.Run(impl.name, func(b *testing.B) {
				defer impl.use()()
				b.ReportAllocs()
				cpu0 := cputime.Process()
				f(b)
				cputime.Report(b, cpu0, "op")
				bc.report(b)
			})
		}
	})
}

var benchSink float32

func BenchmarkScores(b *testing.B) {
	for _, k := range benchKs {
		bc := newBenchCase(k, 150)
		benchImpls(b, bc, func(b *testing.B) {
			i := 0
			for b.Loop() {
				bc.m.Scores(bc.dst, bc.xs[i%benchRows])
				i++
			}
			benchSink += bc.dst[0]
		})
	}
}

// BenchmarkScoresNNZ varies the row length at MNIST's K = 10.
func BenchmarkScoresNNZ(b *testing.B) {
	for _, nnz := range []int{10, 50, 400} {
		bc := newBenchCase(10, nnz)
		benchImpls(b, bc, func(b *testing.B) {
			i := 0
			for b.Loop() {
				bc.m.Scores(bc.dst, bc.xs[i%benchRows])
				i++
			}
		})
	}
}

func BenchmarkAddOuter(b *testing.B) {
	for _, k := range benchKs {
		bc := newBenchCase(k, 150)
		benchImpls(b, bc, func(b *testing.B) {
			i := 0
			for b.Loop() {
				bc.m.AddOuter(bc.c, &bc.xs[i%benchRows])
				i++
			}
		})
	}
}

func BenchmarkAddToFace(b *testing.B) {
	for _, k := range benchKs {
		bc := newBenchCase(k, 150)
		benchImpls(b, bc, func(b *testing.B) {
			i := 0
			for b.Loop() {
				bc.m.AddToFace(i%k, 1e-6, bc.xs[i%benchRows])
				i++
			}
		})
	}
}

// BenchmarkStep is one CPM-style SGD step: Scores, then an AddOuter.
func BenchmarkStep(b *testing.B) {
	for _, k := range benchKs {
		bc := newBenchCase(k, 150)
		benchImpls(b, bc, func(b *testing.B) {
			i := 0
			for b.Loop() {
				x := bc.xs[i%benchRows]
				bc.m.Scores(bc.dst, x)
				bc.m.AddOuter(bc.c, &x)
				i++
			}
		})
	}
}

// dusdot is the sparse·dense dot product of a general sparse BLAS
// (Dusdot in the Sparse BLAS standard; james-bowman/sparse blas/dot.go is
// this loop), with the bounds check on val hoisted.
func dusdot(val []float32, idx []uint32, y []float32) float32 {
	var s float32
	val = val[:len(idx)]
	for i, j := range idx {
		s += val[i] * y[j]
	}
	return s
}

// dusdot4 is dusdot with four independent partial sums, so that it is not
// bound by the latency of one chain of additions: the fastest a scalar
// sparse dot gets.
func dusdot4(val []float32, idx []uint32, y []float32) float32 {
	var s0, s1, s2, s3 float32
	val = val[:len(idx)]
	n := len(idx) &^ 3
	for i := 0; i < n; i += 4 {
		s0 += val[i] * y[idx[i]]
		s1 += val[i+1] * y[idx[i+1]]
		s2 += val[i+2] * y[idx[i+2]]
		s3 += val[i+3] * y[idx[i+3]]
	}
	for i := n; i < len(idx); i++ {
		s0 += val[i] * y[idx[i]]
	}
	return (s0 + s1) + (s2 + s3)
}

// BenchmarkScoresFaceMajor computes the same K scores the way a general
// sparse×dense library stores and computes them: the weights face-major,
// K dense rows of D floats, and one sparse dot product per face, i.e. K
// passes over x, each gathering nnz scattered floats from a different row.
// Compare with BenchmarkScores, which makes one pass over x and reads
// Stride contiguous floats per nonzero.
func BenchmarkScoresFaceMajor(b *testing.B) {
	for _, k := range benchKs {
		bc := newBenchCase(k, 150)
		faces := make([][]float32, k)
		for kk := range faces {
			faces[kk] = make([]float32, benchD)
			for j := range faces[kk] {
				faces[kk][j] = bc.m.At(j, kk)
			}
		}
		for _, dot := range []struct {
			name string
			f    func([]float32, []uint32, []float32) float32
		}{{"dusdot", dusdot}, {"dusdot4", dusdot4}} {
			b.Run(bc.name+"/"+dot.name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					x := bc.xs[i%benchRows]
					for kk, w := range faces {
						bc.dst[kk] = dot.f(x.Val, x.Idx, w)
					}
					i++
				}
				bc.report(b)
			})
		}
	}
}
