package plume

import (
	"math/rand/v2"

	"github.com/polyhedral/cpm/sparsevec"
)

// testObjective returns an objective over data (inside class the larger
// label) and seeded random weights for it, with π set by an E-step at
// those weights.
func testObjective(data *sparsevec.CSR, k int, gamma float64, hard bool, lambda float64) (*objective, *sparsevec.Matrix) {
	classes, err := checkData(data, nil)
	if err != nil {
		panic(err)
	}
	d := max(data.Dim, 1)
	ys := signs(data, classes)
	o := newObjective(data, ys, d, k, 1, gamma, hard, lambda, true)
	w := sparsevec.NewMatrix(d, k)
	initWeights(w, rand.New(rand.NewPCG(7, 7)), data, ys, 1, make([]float64, d), make([]float64, d))
	o.pass(w, eStep, nil, nil)
	return o, w
}
