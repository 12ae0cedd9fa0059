package libsvm_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// WriteQid writes qid:N after the label; a Writer refuses to mix rows with
// and without query ids, writing nothing for the refused row.
func TestWriterQid(t *testing.T) {
	var buf bytes.Buffer
	w := libsvm.NewWriter(&buf)
	x := sparsevec.Vector{Idx: []uint32{2, 9}, Val: []float32{0.5, -1}}
	if err := w.WriteQid(1, 7, x); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteQid(-1, -3, sparsevec.Vector{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(1, x); !errors.Is(err, libsvm.ErrMixedQID) {
		t.Errorf("row without qid after rows with: %v", err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "1 qid:7 2:0.5 9:-1\n-1 qid:-3\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	buf.Reset()
	w = libsvm.NewWriter(&buf)
	if err := w.Write(1, x); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteQid(1, 1, x); !errors.Is(err, libsvm.ErrMixedQID) {
		t.Errorf("row with qid after rows without: %v", err)
	}
}

func TestWriterQidAllocs(t *testing.T) {
	var buf bytes.Buffer
	w := libsvm.NewWriter(&buf)
	x := sparsevec.Vector{Idx: []uint32{2, 9, 700}, Val: []float32{0.5, -1, 0.0117647}}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := w.WriteQid(1, 123456, x); err != nil {
			t.Fatal(err)
		}
		if buf.Len() > 1<<20 {
			buf.Reset()
		}
	})
	if allocs != 0 {
		t.Errorf("WriteQid allocates %v per row", allocs)
	}
}
