package plume

import (
	"context"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

func loadUCI(tb testing.TB, name string) *sparsevec.CSR {
	tb.Helper()
	data, err := reader.Load("../testdata/uci/" + name + ".libsvm")
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// BenchmarkFit times one EM fit (default Config) on Ionosphere.
func BenchmarkFit(b *testing.B) {
	data := loadUCI(b, "ionosphere")
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"ga", Config{MStep: GradientAscent}},
		{"newton", Config{MStep: Newton}},
		{"bfgs", Config{MStep: BFGS}},
		{"spla1-ga", Config{MStep: GradientAscent, Hard: true}},
		{"spla1-newton", Config{MStep: Newton, Hard: true}},
		{"spla1-bfgs", Config{MStep: BFGS, Hard: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var iters int
			for b.Loop() {
				_, rep, err := Train(context.Background(), tc.cfg, data)
				if err != nil {
					b.Fatal(err)
				}
				iters = rep.Iterations
			}
			b.ReportMetric(float64(iters), "em-iters")
		})
	}
}

// BenchmarkPass times one E-step pass with the gradient on Ionosphere.
func BenchmarkPass(b *testing.B) {
	data := loadUCI(b, "ionosphere")
	o, w := testObjective(data, 2, 1, false, 0)
	for _, tc := range []struct {
		name string
		hess bool
	}{{"grad", false}, {"hessian", true}} {
		b.Run(tc.name, func(b *testing.B) {
			grad := make([]float64, o.p)
			var h []float64
			if tc.hess {
				h = make([]float64, o.p*o.p)
			}
			b.ReportAllocs()
			for b.Loop() {
				o.pass(w, eStep, grad, h)
			}
		})
	}
	b.Run("value", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			o.lineValue(w)
		}
	})
}
