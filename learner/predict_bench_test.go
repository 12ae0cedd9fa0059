package learner

import (
	"math/rand/v2"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// Benchmarks of the predictors NewPredictor returns, one raw row at a
// time, on MNIST-like rows: 150 ascending pixel indices in 1..784 with
// values in (0, 1], cycling through predictBenchRows different rows so
// that the gathers touch the whole matrix. The models have random weights
// over D = 785 rows (bias + 784 pixels), K = 10: the binary CPM the cpm
// tool trains on MNIST-2, the same with a maxabs scaling, a compact one
// (2^20 feature rows of which the pixels are stored), one with feature
// hashing into 2^12 rows, double-sided, and a
// one-vs-one CPM over 10 classes (45 pairs) for reference.

const (
	predictBenchD    = 785
	predictBenchK    = 10
	predictBenchNNZ  = 150
	predictBenchRows = 512
)

// benchRows returns n MNIST-like rows; see above.
func benchRows(rng *rand.Rand, n int) []sparsevec.Vector {
	rows := make([]sparsevec.Vector, n)
	for i := range rows {
		seen := map[uint32]bool{}
		for len(seen) < predictBenchNNZ {
			seen[1+uint32(rng.IntN(predictBenchD-1))] = true
		}
		var x sparsevec.Vector
		for j := uint32(1); j < predictBenchD; j++ {
			if seen[j] {
				x.Idx = append(x.Idx, j)
				x.Val = append(x.Val, 1-rng.Float32())
			}
		}
		rows[i] = x
	}
	return rows
}

// benchCPM returns a CPM model with random weights: d feature rows, K =
// predictBenchK, sides polytopes per binary problem, classes labels
// (one-vs-one for more than 2).
func benchCPM(rng *rand.Rand, d, sides, classes int) *model.Model {
	m := &model.Model{Learner: CPM, Sides: sides, K: predictBenchK, D: d, Bias: 1, Iterations: 1}
	for c := range classes {
		m.Classes = append(m.Classes, float32(c))
	}
	if classes == 2 {
		m.Classes = []float32{1, -1}
	}
	n := sides
	if classes > 2 {
		m.OvO = true
		n = sides * len(sgd.Pairs(classes))
	}
	for range n {
		w := sparsevec.NewMatrix(d, m.K)
		for j := range min(d, predictBenchD) {
			for k := range m.K {
				w.Set(j, k, 2*rng.Float32()-1)
			}
		}
		m.Weights = append(m.Weights, w)
	}
	return m
}

// predictBenchModels are the models of BenchmarkPredict.
func predictBenchModels() []struct {
	name string
	m    *model.Model
} {
	rng := rand.New(rand.NewPCG(1, 2))
	binary := benchCPM(rng, predictBenchD, 1, 2)
	scaled := *binary
	scaled.Scale = &model.Scaling{Mode: "maxabs"}
	for j := uint32(1); j < predictBenchD; j++ {
		scaled.Scale.Index = append(scaled.Scale.Index, j)
		scaled.Scale.Shift = append(scaled.Scale.Shift, 0)
		scaled.Scale.Div = append(scaled.Scale.Div, 0.5+rng.Float64())
	}
	compact := benchCPM(rng, 1<<20, 1, 2).Compact()
	hashed := benchCPM(rng, 1<<12+1, 1, 2)
	hashed.Hash = &model.Hashing{Bits: 12}
	return []struct {
		name string
		m    *model.Model
	}{
		{"binary", binary},
		{"scaled", &scaled},
		{"compact", compact},
		{"hashed", hashed},
		{"double", benchCPM(rng, predictBenchD, 2, 2)},
		{"ovo10", benchCPM(rng, predictBenchD, 1, 10)},
	}
}

// BenchmarkPredict measures Predict of NewPredictor's predictor per row;
// rows/s is the rate of one goroutine.
func BenchmarkPredict(b *testing.B) {
	rows := benchRows(rand.New(rand.NewPCG(3, 4)), predictBenchRows)
	for _, c := range predictBenchModels() {
		b.Run(c.name, func(b *testing.B) {
			p, err := NewPredictor(c.m)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			var sink float32
			for b.Loop() {
				_, s, _ := p.Predict(rows[i%len(rows)])
				sink += s
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			_ = sink
		})
	}
}
