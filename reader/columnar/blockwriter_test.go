package columnar

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// TestBlockWriterNNZLimit lowers the nonzero limit of a batch and checks
// that batches are cut before they exceed it, and that a row over the
// limit is refused.
func TestBlockWriterNNZLimit(t *testing.T) {
	defer func(n int) { batchNNZLimit = n }(batchNNZLimit)
	batchNNZLimit = 10
	m := &sparsevec.CSR{}
	row := func(k int) sparsevec.Vector {
		x := sparsevec.Vector{}
		for j := range k {
			x.Idx = append(x.Idx, uint32(j+1))
			x.Val = append(x.Val, float32(j))
		}
		return x
	}
	for _, k := range []int{4, 4, 4, 10, 0, 0, 1, 9, 3} {
		m.Append(1, row(k))
	}
	for _, blockRows := range []int{1, 2, 9} {
		path := filepath.Join(t.TempDir(), "x.arrow")
		writeAll(t, path, m, blockRows, core.WithBatchRows(4))
		got, sizes, err := readAllBlocks(t, path)
		if err != nil {
			t.Fatal(err)
		}
		if !equalCSR(got, m) {
			t.Error("rows differ")
		}
		// 4+4 | 4 (then 10 does not fit) | 10,0,0 | 1,9 | 3
		if want := []int{2, 1, 3, 2, 1}; !slices.Equal(sizes, want) {
			t.Errorf("blocks of %d: batches of %v rows, want %v", blockRows, sizes, want)
		}
	}

	w, err := createBlocks(filepath.Join(t.TempDir(), "y.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	big := &sparsevec.CSR{}
	big.Append(1, row(3))
	big.Append(1, row(11))
	var re *core.RowError
	if err := w.Write(big); !errors.As(err, &re) || re.Row != 2 {
		t.Errorf("row of 11 nonzeros: got %v, want a RowError at row 2", err)
	}
}

// TestBlockWriterNoCopy checks that a block holding whole batches is
// written straight from its arrays: the record handed to the Arrow writer
// aliases them.
func TestBlockWriterNoCopy(t *testing.T) {
	m := sampleCSR(testRand(), 30)
	w, err := createBlocks(filepath.Join(t.TempDir(), "x.arrow"), core.WithBatchRows(10))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	aw := w.(*arrowBlockWriter)
	spy := &spyWriter{recordWriter: aw.rw}
	aw.rw = spy
	if err := w.Write(m); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(spy.idx) != 3 {
		t.Fatalf("%d record batches, want 3", len(spy.idx))
	}
	for i, p := range spy.idx {
		if want := &m.Idx[m.Ptr[10*i]]; p != want {
			t.Errorf("batch %d: indices copied (at %p, block's at %p)", i, p, want)
		}
	}
}

// Rows with query ids are refused by both writers, which have no column
// for them, rather than written without them; nothing is left behind.
func TestBlockWriterRefusesQid(t *testing.T) {
	m := &sparsevec.CSR{}
	m.Append(1, sparsevec.Vector{Idx: []uint32{1}, Val: []float32{2}})
	m.Append(-1, sparsevec.Vector{Idx: []uint32{2}, Val: []float32{3}})
	m.Qid = []int64{7, 7}
	dir := t.TempDir()
	for _, name := range []string{"x.arrow", "x.parquet"} {
		path := filepath.Join(dir, name)
		var w core.BlockWriter
		var err error
		if name == "x.parquet" {
			w, err = CreateParquet(path)
		} else {
			w, err = CreateArrow(path, false)
		}
		if err != nil {
			t.Fatal(err)
		}
		err = w.Write(m)
		if !errors.Is(err, core.ErrUnsupported) || !strings.Contains(err.Error(), "qid") || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Write of rows with query ids: %v; want ErrUnsupported naming the file and qid", name, err)
		}
		if err := w.Close(); err == nil {
			t.Errorf("%s: Close after the refusal succeeded", name)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: output left behind after the refusal: %v", name, err)
		}
	}
}
