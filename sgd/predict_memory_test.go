package sgd

import (
	"runtime"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// TestClassifierMemory checks that a one-vs-one Classifier costs memory in
// the number of classes, not of pairs: on 300 classes (44,850 pairs, whose
// list alone would take 700 KB) it allocates a few KB, so that a model's
// file size bounds what predicting with it takes (model.MemoryFactor).
func TestClassifierMemory(t *testing.T) {
	m := &model.Model{Learner: "cpm", Sides: 1, K: 1, D: 2, Lambda: 1e-4, Bias: 1, Iterations: 1, OvO: true}
	for i := range 300 {
		m.Classes = append(m.Classes, float32(i))
	}
	for range m.Matrices() {
		m.Weights = append(m.Weights, sparsevec.NewMatrix(m.D, m.K))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := NewClassifier(m)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("NewClassifier of %d pairs allocated %d bytes, want at most 64 KiB", m.Matrices(), n)
	}
	x := sparsevec.Vector{Idx: []uint32{1}, Val: []float32{1}}
	if a := testing.AllocsPerRun(5, func() { c.Predict(x) }); a != 0 {
		t.Errorf("Predict made %v allocations, want 0", a)
	}
}
