package cv

import "github.com/polyhedral/cpm/sparsevec"

// denseCSR builds a CSR from dense rows, leaving zeros out; feature j of a
// row is index j+1.
func denseCSR(labels []float32, rows [][]float32) *sparsevec.CSR {
	m := new(sparsevec.CSR)
	for r, row := range rows {
		var x sparsevec.Vector
		for j, v := range row {
			if v != 0 {
				x.Idx = append(x.Idx, uint32(j+1))
				x.Val = append(x.Val, v)
			}
		}
		m.Append(labels[r], x)
	}
	return m
}
