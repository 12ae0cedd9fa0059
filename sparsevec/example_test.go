package sparsevec_test

import (
	"fmt"

	"github.com/polyhedral/cpm/sparsevec"
)

// One SGD-style step on a 3-face model: score a sparse row, then push it
// down on the faces that scored above zero with a single rank-one update.
func ExampleMatrix_AddOuter() {
	m := sparsevec.NewMatrix(5, 3) // features 0..4, faces 0..2
	m.Set(0, 0, 0.5)               // bias row
	m.Set(2, 1, 1)
	m.Set(4, 2, -1)

	x := sparsevec.Vector{Idx: []uint32{0, 2, 4}, Val: []float32{1, 2, 1}}
	s := make([]float32, m.Stride)
	m.Scores(s, x)
	fmt.Println("scores:", s[:m.K])

	c := make([]float32, m.Stride) // zero padding, as AddOuter requires
	for k := 0; k < m.K; k++ {
		if s[k] > 0 {
			c[k] = -0.25
		}
	}
	m.AddOuter(c, &x)
	m.Scores(s, x)
	fmt.Println("after:", s[:m.K])
	// Output:
	// scores: [0.5 2 -1]
	// after: [-1 0.5 -1]
}
