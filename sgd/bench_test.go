package sgd

import (
	"math/rand/v2"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// mnistLike returns n rows shaped like MNIST (784 features, ~150 nonzeros
// in [0,1], about 10% positives).
func mnistLike(n int) *sparsevec.CSR {
	rng := rand.New(rand.NewPCG(11, 12))
	var m sparsevec.CSR
	idx := make([]uint32, 0, 784)
	val := make([]float32, 0, 784)
	for r := 0; r < n; r++ {
		idx, val = idx[:0], val[:0]
		start := 100 + rng.IntN(200)
		for j := start; j < 784 && len(idx) < 150; j += 1 + rng.IntN(4) {
			idx = append(idx, uint32(j))
			val = append(val, rng.Float32())
		}
		y := float32(-1)
		if rng.IntN(10) == 0 {
			y = 1
		}
		m.Append(y, sparsevec.Vector{Idx: idx, Val: val})
	}
	return &m
}

// BenchmarkStep measures SGD steps of one K=10 polytope on MNIST-shaped
// rows (the figure behind "steps/s" in the README).
func BenchmarkStep(b *testing.B) {
	data := mnistLike(20000)
	for _, h := range []float64{0, 1.5} {
		name := "h=0"
		if h > 0 {
			name = "h=1.5"
		}
		b.Run(name, func(b *testing.B) {
			cfg, _ := Config{K: 10, Iterations: 10_000_000, Entropy: h}.withDefaults()
			p, _ := newPolytope(cfg, data.Dim)
			p.asg.Reserve(data.Rows())
			src, _ := NewMemorySource(data, nil, 1, 1, false)
			// Warm up past the first epochs, where almost every row updates.
			for range 200_000 {
				x, y, id, _ := src.Next()
				p.Step(x, y == 1, id)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				x, y, id, _ := src.Next()
				p.Step(x, y == 1, id)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Msteps/s")
		})
	}
}
