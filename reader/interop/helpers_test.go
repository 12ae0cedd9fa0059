package interop_test

import (
	"math"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// The reference rows hold what gen.mjs's ROWS.json promises: every
// feature 1..nFeatures occurs, no value is 0, both labels occur, and one
// row is empty; and the same seed gives the same rows.
func TestReferenceRows(t *testing.T) {
	m := referenceRows()
	if m.Rows() != nRows || m.Dim != nFeatures+1 {
		t.Fatalf("%d rows, Dim %d; want %d rows, Dim %d", m.Rows(), m.Dim, nRows, nFeatures+1)
	}
	seen := make([]bool, nFeatures+1)
	labels := map[float32]int{}
	empty := 0
	for r := range m.Rows() {
		x := m.Row(r)
		labels[m.Labels[r]]++
		if len(x.Idx) == 0 {
			empty++
		}
		for k, j := range x.Idx {
			seen[j] = true
			if x.Val[k] == 0 || math.IsNaN(float64(x.Val[k])) {
				t.Fatalf("row %d: value %v", r+1, x.Val[k])
			}
		}
	}
	for j := 1; j <= nFeatures; j++ {
		if !seen[j] {
			t.Errorf("feature %d never occurs", j)
		}
	}
	if labels[1] == 0 || labels[-1] == 0 || len(labels) != 2 || empty != 1 {
		t.Fatalf("labels %v, %d empty rows; want both of ±1 and one empty row", labels, empty)
	}
	if d := diffRows(referenceRows(), m); d != "" {
		t.Fatalf("a second call: %s", d)
	}
}

// diffRows, sortedRows and diffRead find every kind of difference the
// matrix must catch.
func TestDiffs(t *testing.T) {
	ref := referenceRows()
	mutate := map[string]func(m *sparsevec.CSR){
		"label":       func(m *sparsevec.CSR) { m.Labels[3] = -m.Labels[3] },
		"index":       func(m *sparsevec.CSR) { m.Idx[10]++ },
		"value bits":  func(m *sparsevec.CSR) { m.Val[20] = math.Nextafter32(m.Val[20], 10) },
		"nonzero out": func(m *sparsevec.CSR) { m.Ptr[5]-- },
	}
	for name, f := range mutate {
		m := ref.Permute(identity(ref.Rows()))
		f(m)
		if diffRows(m, ref) == "" {
			t.Errorf("%s: diffRows found no difference", name)
		}
		if diffRows(sortedRows(m), sortedRows(ref)) == "" {
			t.Errorf("%s: diffRows of sorted rows found no difference", name)
		}
		if diffRead(toRead(m), ref) == "" {
			t.Errorf("%s: diffRead found no difference", name)
		}
	}
	if d := diffRead(toRead(ref), ref); d != "" {
		t.Fatalf("diffRead of equal rows: %s", d)
	}
	rev := make([]int32, ref.Rows())
	for i := range rev {
		rev[i] = int32(len(rev) - 1 - i)
	}
	if d := diffRows(sortedRows(ref.Permute(rev)), sortedRows(ref)); d != "" {
		t.Fatalf("sortedRows depends on the row order: %s", d)
	}
	if diffRows(ref.Permute(rev), ref) == "" {
		t.Fatal("diffRows ignores the row order")
	}
}

func identity(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	return p
}

// toRead returns m's rows as read.mjs's lines hold them.
func toRead(m *sparsevec.CSR) []readRow {
	out := make([]readRow, m.Rows())
	for r := range m.Rows() {
		x := m.Row(r)
		out[r].Label = float64(m.Labels[r])
		for k, j := range x.Idx {
			out[r].Features = append(out[r].Features, [2]float64{float64(j), float64(x.Val[k])})
		}
	}
	return out
}
