package cv

import "github.com/polyhedral/cpm/sparsevec"

// entry is one nonzero of a test row, with a 1-based index.
type entry struct {
	j uint32
	v float32
}

// csrOf builds a CSR from rows of entries (ascending indices).
func csrOf(labels []float32, rows [][]entry) *sparsevec.CSR {
	m := new(sparsevec.CSR)
	for r, row := range rows {
		var x sparsevec.Vector
		for _, e := range row {
			x.Idx = append(x.Idx, e.j)
			x.Val = append(x.Val, e.v)
		}
		m.Append(labels[r], x)
	}
	return m
}

// denseCSR builds a CSR from dense rows, leaving zeros out.
func denseCSR(labels []float32, rows [][]float32) *sparsevec.CSR {
	sp := make([][]entry, len(rows))
	for r, row := range rows {
		sp[r] = []entry{}
		for j, v := range row {
			if v != 0 {
				sp[r] = append(sp[r], entry{uint32(j + 1), v})
			}
		}
	}
	return csrOf(labels, sp)
}
