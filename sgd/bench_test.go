package sgd

import (
	"fmt"
	"testing"

	"github.com/polyhedral/cpm/internal/cputime"
	"github.com/polyhedral/cpm/learner/learnertest"
	"github.com/polyhedral/cpm/sparsevec"
)

// BenchmarkStep measures SGD steps of one K=10 polytope on MNIST-shaped
// rows (the figure behind "steps/s" in the README); compact reads them
// from a sparsevec.PackCompact copy (2-byte indices, float32 values: the
// rows' values are not 256 grey levels); grey rounds the values to 256
// grey levels, which compact stores as 1-byte codes (MNIST's 3 bytes per
// nonzero).
func BenchmarkStep(b *testing.B) {
	data := learnertest.MNISTLike(20000)
	grey := data.Permute(nil)
	grey.AppendCSR(data)
	for i, v := range grey.Val {
		grey.Val[i] = float32(int(v*255)) / 255
	}
	for _, c := range []struct {
		name string
		h    float64
		mode sparsevec.Packing
		data *sparsevec.CSR
	}{
		{"h=0", 0, 0, data}, {"h=1.5", 1.5, 0, data},
		{"compact-h=0", 0, sparsevec.PackCompact, data},
		{"grey-h=0", 0, 0, grey}, {"grey-compact-h=0", 0, sparsevec.PackCompact, grey},
	} {
		h, data := c.h, c.data
		b.Run(c.name, func(b *testing.B) {
			cfg, _ := Config{K: 10, Iterations: 10_000_000, Entropy: h}.withDefaults()
			p, _ := newPolytope(cfg, data.Dim)
			p.asg.Reserve(data.Rows())
			src, _ := newMemorySource(sparsevec.Pack(data, nil, c.mode), nil, 1, 1, false)
			// Warm up past the first epochs, where almost every row updates.
			for range 200_000 {
				benchStep(p, src)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Process()
			for b.Loop() {
				benchStep(p, src)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Msteps/s")
			cputime.Report(b, cpu0, "step")
		})
	}
}

// benchStep takes a step on the next row of src as task.steps does, with
// label 1 outside.
func benchStep(p *polytope, src *memorySource) {
	if src.coded {
		x, y, id := src.nextCoded()
		p.stepCoded(x, y == 1, id)
		return
	}
	x, y, id, _ := src.Next()
	p.step(&x, y == 1, id)
}

// BenchmarkStepK is BenchmarkStep (h = 0) with more faces.
func BenchmarkStepK(b *testing.B) {
	data := learnertest.MNISTLike(20000)
	for _, k := range []int{40, 100} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			cfg, _ := Config{K: k, Iterations: 10_000_000}.withDefaults()
			p, _ := newPolytope(cfg, data.Dim)
			p.asg.Reserve(data.Rows())
			src, _ := newMemorySource(sparsevec.Pack(data, nil, 0), nil, 1, 1, false)
			for range 200_000 {
				x, y, id, _ := src.Next()
				p.Step(x, y == 1, id)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Process()
			for b.Loop() {
				x, y, id, _ := src.Next()
				p.Step(x, y == 1, id)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Msteps/s")
			cputime.Report(b, cpu0, "step")
		})
	}
}
