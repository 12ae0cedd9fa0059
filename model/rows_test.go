package model

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// sparseModel returns a binary one-face model over D = d whose only
// nonzero weights are the bias row and feature d-1.
func sparseModel(d int) *Model {
	w := sparsevec.NewMatrix(d, 1)
	w.Set(0, 0, 0.5)
	w.Set(d-1, 0, -2)
	return &Model{Learner: "cpm", Sides: 1, K: 1, D: d, Bias: 1, Classes: []float32{1, -1}, Weights: []*sparsevec.Matrix{w}}
}

// TestCompactHuge checks that a model over 30,000,001 feature rows with
// two nonzero rows takes bytes, not gigabytes, on disk and once read.
func TestCompactHuge(t *testing.T) {
	const d = 30_000_001
	m := &Model{Learner: "cpm", Sides: 1, K: 1, D: d, Bias: 1, Classes: []float32{1, -1},
		Rows: []uint32{0, d - 1}, Weights: []*sparsevec.Matrix{sparsevec.NewMatrix(2, 1)}}
	m.Weights[0].Set(0, 0, 0.5)
	m.Weights[0].Set(1, 0, -2)
	b := encodeT(t, m)
	if len(b) > 200 {
		t.Fatalf("file of %d bytes", len(b))
	}
	for how, read := range readers(b) {
		var got *Model
		var err error
		n := allocated(func() { got, err = read() })
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if d := diff(m, got); d != "" {
			t.Fatalf("%s: %s", how, d)
		}
		if n > 1<<20 {
			t.Errorf("%s: reading allocated %d bytes", how, n)
		}
	}
	dense := m.Dense()
	if dense.Rows != nil || dense.Weights[0].D != d || dense.Weights[0].At(d-1, 0) != -2 || dense.Weights[0].At(0, 0) != 0.5 {
		t.Fatal("Dense lost a weight")
	}
	if c := dense.Compact(); !slices.Equal(c.Rows, m.Rows) || !bytes.Equal(encodeT(t, c), b) || !bytes.Equal(encodeT(t, dense), b) {
		t.Fatal("dense and compact forms encode differently")
	}
}

// TestReadDensifies checks the form Read gives: dense when the dense
// matrices take at most twice the compact ones (D = 8: 312 bytes against
// 160 for two stored rows and the zero row), compact otherwise (D = 9:
// 344).
func TestReadDensifies(t *testing.T) {
	for _, c := range []struct {
		d       int
		compact bool
	}{{2, false}, {8, false}, {9, true}, {1000, true}} {
		m := sparseModel(c.d)
		got, err := Read(bytes.NewReader(encodeT(t, m)), "test.cpm")
		if err != nil {
			t.Fatal(err)
		}
		if (got.Rows != nil) != c.compact {
			t.Errorf("D = %d: Rows %v, want compact %v", c.d, got.Rows, c.compact)
		}
		if d := diff(m, got.Dense()); d != "" {
			t.Errorf("D = %d: %s", c.d, d)
		}
		if c.compact {
			if lim, err := ReadLimit(bytes.NewReader(encodeT(t, m)), "test.cpm", got.MemoryBytes()); err != nil || lim.Rows == nil {
				t.Errorf("D = %d: within the compact memory: %v", c.d, err)
			}
		}
	}
}

// TestRowMap checks the row lookup with and without its table.
func TestRowMap(t *testing.T) {
	rows := []uint32{0, 3, 7, 1 << 20}
	x := sparsevec.Vector{Idx: []uint32{1, 3, 4, 7, 9, 1 << 20, 1<<20 + 1}, Val: []float32{1, 2, 3, 4, 5, 6, 7}}
	for _, tableBytes := range []int64{0, 8 << 20} {
		r := newRowMap(rows, 1<<20+1, tableBytes)
		if (r.table != nil) != (tableBytes > 0) {
			t.Fatalf("table %v with %d bytes", r.table != nil, tableBytes)
		}
		// 1, 4 and 9 are not stored (zero row 4); 2^20 + 1 is beyond D.
		idx, val := r.AppendRow(nil, nil, x)
		if !slices.Equal(idx, []uint32{4, 1, 4, 2, 4, 3}) || !slices.Equal(val, []float32{1, 2, 3, 4, 5, 6}) {
			t.Fatalf("table %v: got %v %v", r.table != nil, idx, val)
		}
		if i, ok := r.Row(0); !ok || i != 0 {
			t.Fatal("row 0")
		}
		if _, ok := r.Row(math32); ok {
			t.Fatal("max uint32 found")
		}
		buf := struct {
			idx []uint32
			val []float32
		}{make([]uint32, 0, 8), make([]float32, 0, 8)}
		if a := testing.AllocsPerRun(100, func() { buf.idx, buf.val = r.AppendRow(buf.idx[:0], buf.val[:0], x) }); a != 0 {
			t.Errorf("AppendRow into reused buffers: %v allocations", a)
		}
	}
}

const math32 = 1<<32 - 1

// TestReadVersion1Corpus reads the version-1 files of the fuzz corpus,
// written by the version-1 encoder, and checks that they hold the test
// models of the same names.
func TestReadVersion1Corpus(t *testing.T) {
	models := testModels()
	for _, name := range []string{"binary", "double", "kperceptron", "multiclass", "ovo"} {
		body, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzRead", "v1-"+name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(body), "\n")
		b, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v := binary.LittleEndian.Uint32([]byte(b[8:12])); v != 1 {
			t.Fatalf("%s: format version %d, want 1", name, v)
		}
		got, err := Read(strings.NewReader(b), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := diff(models[name], got); d != "" {
			t.Fatalf("%s: %s", name, d)
		}
	}
}
