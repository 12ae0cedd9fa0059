package columnar

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/internal/readertest"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// Shared test helpers (package readertest).
var (
	sampleCSR     = readertest.SampleCSR
	sampleLabels  = readertest.SampleLabels
	dimOf         = readertest.DimOf
	equalCSR      = readertest.EqualCSR
	mustNil       = readertest.MustNil
	testRand      = readertest.Rand
	writeTempFile = readertest.WriteTempFile
)

// createBlocks, openBlocks and load stand in for package reader's
// dispatch, which these tests cannot import (reader imports columnar): they
// choose between this package and libsvm by the path's extension or the
// file's first bytes.
func createBlocks(path string, opts ...core.Option) (core.BlockWriter, error) {
	switch {
	case strings.HasSuffix(path, ".arrow"):
		return CreateArrow(path, false, opts...)
	case strings.HasSuffix(path, ".arrows"):
		return CreateArrow(path, true, opts...)
	case strings.HasSuffix(path, ".parquet"):
		return CreateParquet(path, opts...)
	}
	o := core.BuildOptions(opts)
	out, err := core.CreateOutput(o.Ctx, path)
	if err != nil {
		return nil, err
	}
	return libsvm.NewBlockWriter(path, out), nil
}

func openBlocks(path string, blockRows int, opts ...core.Option) (core.BlockReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 6)
	n, _ := io.ReadFull(f, head)
	f.Close()
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("ARROW1")):
		return OpenArrow(path, false, opts...)
	case bytes.HasPrefix(head, []byte{0xff, 0xff, 0xff, 0xff}):
		return OpenArrow(path, true, opts...)
	case bytes.HasPrefix(head, []byte("PAR1")):
		return OpenParquet(path, opts...)
	}
	return libsvm.NewStream(path, blockRows, opts...)
}

func load(path string, opts ...core.Option) (*sparsevec.CSR, error) {
	b, err := openBlocks(path, 1<<16, opts...)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	m := &sparsevec.CSR{Ptr: []int{0}}
	for {
		blk, err := b.Next()
		if err == io.EOF {
			return m, b.Close()
		}
		if err != nil {
			return nil, err
		}
		m.AppendCSR(blk)
		b.Release(blk)
	}
}

// writeAll writes m with CreateBlocks in blocks of blockRows rows.
func writeAll(t testing.TB, path string, m *sparsevec.CSR, blockRows int, opts ...core.Option) {
	t.Helper()
	w, err := createBlocks(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for lo := 0; lo < m.Rows(); lo += blockRows {
		blk := &sparsevec.CSR{}
		core.AppendRows(blk, m, lo, min(m.Rows(), lo+blockRows))
		if err := w.Write(blk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// readAllBlocks reads every block of path with OpenBlocks into one CSR and
// returns the row counts of the blocks. It checks each block's Dim.
func readAllBlocks(t testing.TB, path string, opts ...core.Option) (*sparsevec.CSR, []int, error) {
	t.Helper()
	br, err := openBlocks(path, 5, opts...)
	if err != nil {
		return nil, nil, err
	}
	defer br.Close()
	m := &sparsevec.CSR{Ptr: []int{0}}
	var sizes []int
	for {
		b, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return m, sizes, err
		}
		if want := dimOf(b); b.Dim != want {
			t.Errorf("%s: block Dim %d, want %d", path, b.Dim, want)
		}
		sizes = append(sizes, b.Rows())
		m.AppendCSR(b)
		br.Release(b)
	}
	return m, sizes, br.Close()
}

func csrOf(rows ...wantRow) *sparsevec.CSR {
	m := new(sparsevec.CSR)
	for _, r := range rows {
		m.Append(r.label, sparsevec.Vector{Idx: r.idx, Val: r.val})
	}
	return m
}

// row is one expected row.
type wantRow struct {
	label float32
	idx   []uint32
	val   []float32
}

// canonicalPlan is the plan of a file of Schema().
func canonicalPlan(t testing.TB) *plan {
	t.Helper()
	p, err := newPlan("mem", rowSchema, core.BuildOptions(nil), "1", true)
	if err != nil || !p.fast {
		t.Fatalf("plan of the package schema: %+v, %v", p, err)
	}
	return p
}
