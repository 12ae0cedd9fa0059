package csrconv_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/james-bowman/sparse"

	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
	"github.com/polyhedral/cpm/sparsevec/csrconv"
)

// Example trains a Convex Polytope Machine on data held as a *sparse.CSR
// (points of the plane: -1 inside the square |x|,|y| <= 1, +1 outside the
// square of half-side 1.5) and classifies two new points.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	dok := sparse.NewDOK(400, 2)
	labels := make([]float32, 0, 400)
	for len(labels) < 400 {
		// Multiples of 2^-10 are exact in float32, as the conversion wants.
		x := math.Round((rng.Float64()*6-3)*1024) / 1024
		y := math.Round((rng.Float64()*6-3)*1024) / 1024
		r := math.Max(math.Abs(x), math.Abs(y))
		if r > 1 && r < 1.5 {
			continue
		}
		i := len(labels)
		dok.Set(i, 0, x)
		dok.Set(i, 1, y)
		labels = append(labels, float32(math.Copysign(1, r-1)))
	}
	m := dok.ToCSR()

	data, err := csrconv.FromSparse(m, labels, csrconv.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	model, _, err := sgd.Train(context.Background(), sgd.Config{K: 4, Iterations: 200_000, C: 100, Seed: 1}, data, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := sgd.NewClassifier(model)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Column j of the *sparse.CSR is feature index j+1.
	inside, _, _ := c.Predict(sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{0.25, -0.5}})
	outside, _, _ := c.Predict(sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{2.5, 0}})
	fmt.Println(data.Rows(), "rows,", data.Dim-1, "columns")
	fmt.Println(inside, outside)
	// Output:
	// 400 rows, 2 columns
	// -1 1
}
