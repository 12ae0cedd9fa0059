package cv

import (
	"fmt"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

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

// entriesOf returns row r of m as entries.
func entriesOf(m *sparsevec.CSR, r int) []entry {
	x := m.Row(r)
	out := []entry{}
	for i, j := range x.Idx {
		out = append(out, entry{j, x.Val[i]})
	}
	return out
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

// checkCSR fails unless m is well formed with the given rows.
func checkCSR(t *testing.T, m *sparsevec.CSR, labels []float32, rows [][]entry) {
	t.Helper()
	if !slices.Equal(m.Labels, labels) {
		t.Errorf("labels %v, want %v", m.Labels, labels)
	}
	if m.Rows() != len(rows) || len(m.Ptr) != len(rows)+1 {
		t.Fatalf("%d rows, len(Ptr) %d, want %d rows", m.Rows(), len(m.Ptr), len(rows))
	}
	for r, want := range rows {
		if want == nil {
			want = []entry{}
		}
		if got := entriesOf(m, r); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("row %d = %v, want %v", r, got, want)
		}
	}
}
