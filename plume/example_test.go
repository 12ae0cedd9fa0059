package plume_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/polyhedral/cpm/plume"
	"github.com/polyhedral/cpm/sparsevec"
)

// Learn the wedge {x + y > 0, x − y > 0} of the plane with two experts.
func ExampleTrain() {
	rng := rand.New(rand.NewPCG(1, 1))
	data := &sparsevec.CSR{}
	for range 400 {
		x, y := 2*rng.Float64()-1, 2*rng.Float64()-1
		label := float32(-1)
		if x+y > 0 && x-y > 0 {
			label = 1
		}
		data.Append(label, sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{float32(x), float32(y)}})
	}
	m, rep, err := plume.Train(context.Background(), plume.Config{K: 2, MStep: plume.BFGS, Seed: 1}, data)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := m.NewPredictor()
	inside, _, _ := p.Predict(sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{0.8, 0.1}})
	outside, _, _ := p.Predict(sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{-0.5, 0.1}})
	fmt.Printf("training error below 3%%: %v\n", rep.TrainError < 0.03)
	fmt.Println("(0.8, 0.1):", inside, " (-0.5, 0.1):", outside)
	// Output:
	// training error below 3%: true
	// (0.8, 0.1): 1  (-0.5, 0.1): -1
}
