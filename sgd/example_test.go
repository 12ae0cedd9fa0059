package sgd_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// Train a 4-faced CPM that encloses the unit square (label -1) and keeps a
// surrounding ring (label +1) outside, then classify two points.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	var data sparsevec.CSR
	for data.Rows() < 400 {
		x, y := rng.Float64()*6-3, rng.Float64()*6-3
		switch r := math.Max(math.Abs(x), math.Abs(y)); {
		case r <= 1:
			data.Append(-1, sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{float32(x), float32(y)}})
		case r >= 1.5:
			data.Append(+1, sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{float32(x), float32(y)}})
		}
	}
	m, _, err := sgd.Train(context.Background(), sgd.Config{K: 4, Iterations: 200_000, C: 100, Seed: 1}, &data, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := sgd.NewClassifier(m)
	inside, _, _ := c.Predict(sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{0.2, -0.3}})
	outside, _, _ := c.Predict(sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{2.5, 0}})
	fmt.Println(inside, outside)
	// Output: -1 1
}
