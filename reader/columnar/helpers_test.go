package columnar

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
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

// sampleCSR returns rows covering the cases a format can get wrong: empty
// rows, rows with one nonzero, index 4294967295, explicit zeros, denormal
// and extreme values, and random sparse rows. All randomness comes from rng.
func sampleCSR(rng *rand.Rand, rows int) *sparsevec.CSR {
	m := &sparsevec.CSR{}
	for r := range rows {
		label := sampleLabels[rng.IntN(len(sampleLabels))]
		var x sparsevec.Vector
		switch r % 6 {
		case 0: // empty
		case 1:
			x.Idx, x.Val = []uint32{1 + rng.Uint32N(1000)}, []float32{rng.Float32()}
		case 2:
			x.Idx, x.Val = []uint32{3, 1 << 31, 1<<32 - 1}, []float32{-1, 2, 3}
		case 3:
			x.Idx, x.Val = []uint32{1, 2, 9}, []float32{0, float32(math.Copysign(0, -1)), 0}
		case 4:
			for j := uint32(1); j <= 300; j++ {
				if rng.IntN(10) == 0 {
					x.Idx = append(x.Idx, j)
					x.Val = append(x.Val, float32(rng.NormFloat64()))
				}
			}
		case 5:
			x.Idx, x.Val = []uint32{7, 8}, []float32{1e-45, -math.MaxFloat32}
		}
		m.Append(label, x)
	}
	return m
}

// testRand returns the seeded source of the tests.
func testRand() *rand.Rand { return rand.New(rand.NewPCG(1, 1)) }

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

// equalCSR reports whether a and b hold the same rows, comparing floats
// bit for bit (so -0 differs from 0).
func equalCSR(a, b *sparsevec.CSR) bool {
	if a.Rows() != b.Rows() || a.NNZ() != b.NNZ() || a.Dim != b.Dim {
		return false
	}
	for r := range a.Rows() {
		if math.Float32bits(a.Labels[r]) != math.Float32bits(b.Labels[r]) {
			return false
		}
		x, y := a.Row(r), b.Row(r)
		if len(x.Idx) != len(y.Idx) {
			return false
		}
		for i := range x.Idx {
			if x.Idx[i] != y.Idx[i] || math.Float32bits(x.Val[i]) != math.Float32bits(y.Val[i]) {
				return false
			}
		}
	}
	return true
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

func mustNil(err error) {
	if err != nil {
		panic(err)
	}
}

// writeTempFile writes data to a new file in t's temp directory.
func writeTempFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sampleLabels are labels with awkward bit patterns, -0 included.
var sampleLabels = []float32{1, -1, 0, float32(math.Copysign(0, -1)), 2.5, 1e-45, math.MaxFloat32, -7}

// dimOf computes a block's Dim the slow way.
func dimOf(b *sparsevec.CSR) int {
	d := 0
	for _, j := range b.Idx {
		d = max(d, int(j)+1)
	}
	return d
}
