package sparsevec

import (
	"slices"
	"testing"
)

// The query ids of a CSR follow its rows through every method, with
// query id 0 for a row that comes without one into a block that has them.
func TestCSRQid(t *testing.T) {
	x := Vector{Idx: []uint32{2, 5}, Val: []float32{1, 2}}
	m := &CSR{}
	m.Append(1, x)
	m.Append(2, x)
	if m.HasQid() || len(m.Qid) != 0 {
		t.Fatalf("rows without query ids: Qid %v", m.Qid)
	}
	m.AppendQid(3, -7, x)
	if !slices.Equal(m.Qid, []int64{0, 0, -7}) {
		t.Fatalf("AppendQid after rows without: %v", m.Qid)
	}
	m.Append(4, x)
	if !slices.Equal(m.Qid, []int64{0, 0, -7, 0}) {
		t.Fatalf("Append after rows with: %v", m.Qid)
	}

	a := &CSR{}
	a.AppendQid(1, 10, x)
	a.AppendQid(1, 11, x)
	b := &CSR{}
	b.Append(2, x)
	c := &CSR{}
	c.AppendCSR(b) // neither has query ids
	if c.HasQid() {
		t.Fatalf("AppendCSR of rows without query ids gave %v", c.Qid)
	}
	c.AppendCSR(a)
	c.AppendCSR(b)
	if !slices.Equal(c.Qid, []int64{0, 10, 11, 0}) || c.Rows() != 4 {
		t.Fatalf("AppendCSR: %v", c.Qid)
	}
	e := &CSR{}
	e.AppendCSR(a)
	if !slices.Equal(e.Qid, []int64{10, 11}) {
		t.Fatalf("AppendCSR into an empty block: %v", e.Qid)
	}

	p := c.Permute([]int32{2, 1, 3})
	if !slices.Equal(p.Qid, []int64{11, 10, 0}) || !slices.Equal(p.Labels, []float32{1, 1, 2}) {
		t.Fatalf("Permute: %v %v", p.Qid, p.Labels)
	}
	// PermuteInto a block that had query ids, from one without.
	q := b.PermuteInto(p, []int32{0, 0})
	if q.HasQid() || q.Rows() != 2 {
		t.Fatalf("PermuteInto from rows without query ids: %v", q.Qid)
	}

	c.Reset()
	if c.HasQid() || c.Rows() != 0 {
		t.Fatalf("Reset kept %v", c.Qid)
	}
	c.Append(1, x)
	if c.HasQid() {
		t.Fatalf("Append after Reset: %v", c.Qid)
	}
}
