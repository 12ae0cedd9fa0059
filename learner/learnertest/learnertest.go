// Package learnertest holds the test fixtures that the learner packages
// share: data sets written as CSR and a model-file round trip.
package learnertest

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// DenseCSR returns points[i] labelled labels[i] as a CSR whose feature
// j+1 is coordinate j (feature 0 is left to the bias); zero coordinates
// are not stored.
func DenseCSR(points [][]float64, labels []float32) *sparsevec.CSR {
	data := &sparsevec.CSR{Ptr: []int{0}, Dim: 1}
	for i, p := range points {
		var x sparsevec.Vector
		for j, v := range p {
			if v != 0 {
				x.Idx = append(x.Idx, uint32(j+1))
				x.Val = append(x.Val, float32(v))
			}
		}
		data.Append(labels[i], x)
	}
	return data
}

// Vec returns the sparse vector of the given indices and values.
func Vec(idx []uint32, val []float32) sparsevec.Vector {
	return sparsevec.Vector{Idx: idx, Val: val}
}

// ModelErrors counts the rows of data that model m mispredicts after a
// trip through the model file, predicting with the predictor newP returns.
func ModelErrors[P interface {
	Predict(sparsevec.Vector) (float32, float32, int)
}](t testing.TB, m *model.Model, data *sparsevec.CSR, newP func(*model.Model) (P, error)) int {
	t.Helper()
	var buf bytes.Buffer
	if err := model.Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	m2, err := model.Read(&buf, "test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := newP(m2)
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for r := range data.Rows() {
		if y, _, _ := c.Predict(data.Row(r)); y != data.Labels[r] {
			wrong++
		}
	}
	return wrong
}

// MNISTLike returns n rows shaped like MNIST (784 features, ~150 nonzeros
// in [0,1], about 10% positives), the same rows for every call.
func MNISTLike(n int) *sparsevec.CSR {
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
