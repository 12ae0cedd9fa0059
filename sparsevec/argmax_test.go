package sparsevec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// scanArgmax is the literal scalar transcription ScoresArgmax must match
// bit for bit: the bias epilogue on Scores' sums, then the first-maximum
// scan.
func scanArgmax(m *Matrix, x Vector, s, b float32) ([]float32, int) {
	dst := make([]float32, m.Stride)
	m.Scores(dst, x)
	row0 := m.Row(0)
	best := 0
	for j := 0; j < m.K; j++ {
		dst[j] = s * (dst[j] + float32(b*row0[j]))
		if dst[j] > dst[best] {
			best = j
		}
	}
	return dst, best
}

// specialScores are the values whose order and equality the argmax must
// get right: NaN (never chosen unless first), infinities, signed zeros and
// ties.
var specialScores = []float32{float32(math.NaN()), float32(math.Inf(-1)), float32(math.Inf(1)),
	float32(math.Copysign(0, -1)), 0, 1, -1, 2, 2}

// TestScoresArgmax compares ScoresArgmax, for every implementation, with
// Scores followed by the scalar epilogue and scan, bit for bit, on random
// weights and on bias rows that make the scores special values (the
// matrix's row 0 with b = 1 and an empty x gives dst = s·W[0]). It also
// checks that dst is written only up to Stride.
func TestScoresArgmax(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 21))
		for _, k := range []int{1, 2, 7, 8, 9, 10, 16, 17, 33, 40, 100} {
			const d = 60
			m := NewMatrix(d, k)
			ref := newDense(k, d)
			for trial := range 40 {
				name := fmt.Sprintf("K=%d/%d", k, trial)
				randFill(rng, m, ref)
				x := randVector(rng, d, rng.IntN(d))
				s, b := float32(rng.Float64()), float32(2*rng.Float64()-1)
				if trial%2 == 1 {
					// Special scores through the bias row.
					x = Vector{}
					s, b = float32(1-2*(trial/2%2)), 1
					for kk := 0; kk < k; kk++ {
						m.Set(0, kk, specialScores[rng.IntN(len(specialScores))])
					}
				}
				want, wbest := scanArgmax(m, x, s, b)
				got, whole := guarded(m.Stride)
				gbest := m.ScoresArgmax(got, &x, s, b)
				checkGuards(t, name, whole)
				if gbest != wbest {
					t.Errorf("%s: argmax %d, want %d (scores %v)", name, gbest, wbest, want[:k])
				}
				for kk := range want {
					if math.Float32bits(got[kk]) != math.Float32bits(want[kk]) {
						t.Errorf("%s: dst[%d] = %v, want %v", name, kk, got[kk], want[kk])
					}
				}
			}
		}
	})
}

// TestScoresArgmaxPanics checks the programmer errors ScoresArgmax refuses.
func TestScoresArgmaxPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"short dst":   func() { NewMatrix(3, 10).ScoresArgmax(make([]float32, 10), &Vector{}, 1, 1) },
		"no bias row": func() { NewMatrix(0, 2).ScoresArgmax(make([]float32, 8), &Vector{}, 1, 1) },
		"index >= D": func() {
			NewMatrix(3, 2).ScoresArgmax(make([]float32, 8), &Vector{Idx: []uint32{3}, Val: []float32{1}}, 1, 1)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestScoresArgmaxAllocs pins ScoresArgmax at zero allocations.
func TestScoresArgmaxAllocs(t *testing.T) {
	m := NewMatrix(20, 10)
	x := Vector{Idx: []uint32{1, 4, 19}, Val: []float32{1, 2, 3}}
	dst := make([]float32, m.Stride)
	if a := testing.AllocsPerRun(100, func() { m.ScoresArgmax(dst, &x, 0.5, 1) }); a != 0 {
		t.Fatalf("ScoresArgmax allocates %v times", a)
	}
}

// BenchmarkScoresArgmax is BenchmarkScores with the bias epilogue and the
// argmax of a CPM step, with the bias row's weights nonzero.
func BenchmarkScoresArgmax(b *testing.B) {
	for _, k := range benchKs {
		bc := newBenchCase(k, 150)
		benchImpls(b, bc, func(b *testing.B) {
			i, best := 0, 0
			for b.Loop() {
				best += bc.m.ScoresArgmax(bc.dst, &bc.xs[i%benchRows], 0.5, 1)
				i++
			}
			benchSink += float32(best)
		})
	}
}
