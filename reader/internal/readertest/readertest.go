// Package readertest holds the helpers the tests of reader and its format
// packages share: seeded MNIST-like LIBSVM text, rows that exercise every
// cache encoding, compression of test inputs, temporary files and exact
// comparison of CSR blocks. It imports only reader/internal/core, so that
// the internal tests of every format package can use it.
package readertest

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// BenchBytes is the size of the MNIST-like text the reader benchmarks parse.
const BenchBytes = 30 << 20

// mnistValues are the pixel values k/255 as the LIBSVM site writes them
// (6 significant digits: "0.0117647", "1").
var mnistValues = func() [256]string {
	var v [256]string
	for k := range v {
		v[k] = strconv.FormatFloat(float64(k)/255, 'g', 6, 64)
	}
	return v
}()

// GenMNIST writes MNIST-like LIBSVM text until it holds at least size
// bytes: labels 0-9, indices in 1..784 with about 150 nonzeros a row,
// values k/255. All randomness comes from rng.
func GenMNIST(rng *rand.Rand, size int) []byte {
	b := make([]byte, 0, size+4096)
	for len(b) < size {
		b = AppendMNISTRow(b, rng)
	}
	return b
}

func AppendMNISTRow(b []byte, rng *rand.Rand) []byte {
	b = strconv.AppendInt(b, int64(rng.IntN(10)), 10)
	for j := 1; j <= 784; j++ {
		if rng.IntN(100) < 19 {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(j), 10)
			b = append(b, ':')
			b = append(b, mnistValues[1+rng.IntN(255)]...)
		}
	}
	return append(b, '\n')
}

func ZstdBytes(p []byte) []byte {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	MustNil(err)
	_, err = w.Write(p)
	MustNil(err)
	MustNil(w.Close())
	return buf.Bytes()
}

func GzipBytes(p []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(p)
	MustNil(err)
	MustNil(w.Close())
	return buf.Bytes()
}

// WriteTempFile writes data to a new file in t's temp directory.
func WriteTempFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// EqualCSR reports whether a and b hold the same rows, comparing floats
// bit for bit (so -0 differs from 0).
func EqualCSR(a, b *sparsevec.CSR) bool {
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

// FormatCSR writes m back as LIBSVM text with the shortest float32 forms.
func FormatCSR(m *sparsevec.CSR) []byte {
	var b []byte
	for r := range m.Rows() {
		b = strconv.AppendFloat(b, float64(m.Labels[r]), 'g', -1, 32)
		x := m.Row(r)
		for i, j := range x.Idx {
			b = append(b, ' ')
			b = strconv.AppendUint(b, uint64(j), 10)
			b = append(b, ':')
			b = strconv.AppendFloat(b, float64(x.Val[i]), 'g', -1, 32)
		}
		b = append(b, '\n')
	}
	return b
}

// Rand returns the seeded source of the tests.
func Rand() *rand.Rand { return rand.New(rand.NewPCG(1, 1)) }

// CacheRows returns seeded rows exercising every encoding path: MNIST-like
// rows with few distinct values, rows with many distinct values (raw
// encoding), empty rows, gaps above 127 (multi-byte varints), index
// 4294967295 and explicit zeros.
func CacheRows(rows int, seed uint64) *sparsevec.CSR {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := &sparsevec.CSR{}
	for r := range rows {
		var x sparsevec.Vector
		switch r % 5 {
		case 0: // empty
		case 1: // pixel-like values, small gaps
			for j := uint32(1 + rng.IntN(5)); j < 784; j += uint32(1 + rng.IntN(9)) {
				x.Idx = append(x.Idx, j)
				x.Val = append(x.Val, float32(rng.IntN(256))/255)
			}
		case 2: // large gaps, arbitrary values
			j := uint32(0)
			for range 1 + rng.IntN(40) {
				j += uint32(1 + rng.IntN(1<<20))
				x.Idx = append(x.Idx, j)
				x.Val = append(x.Val, float32(rng.NormFloat64()))
			}
		case 3: // extremes
			x.Idx = []uint32{1, 2, math.MaxUint32}
			x.Val = []float32{0, -math.MaxFloat32, math.SmallestNonzeroFloat32}
		case 4: // binary features
			for j := uint32(1); j < 3000; j += uint32(1 + rng.IntN(300)) {
				x.Idx = append(x.Idx, j)
				x.Val = append(x.Val, 1)
			}
		}
		m.Append(float32(rng.IntN(3))-1, x)
	}
	return m
}

// BlocksOf splits m into blocks of n rows.
func BlocksOf(m *sparsevec.CSR, n int) []*sparsevec.CSR {
	var out []*sparsevec.CSR
	for lo := 0; lo < m.Rows(); lo += n {
		b := &sparsevec.CSR{}
		core.AppendRows(b, m, lo, min(lo+n, m.Rows()))
		for r := range b.Rows() {
			if x := b.Row(r); len(x.Idx) > 0 {
				b.Dim = max(b.Dim, int(x.MaxIndex())+1)
			}
		}
		out = append(out, b)
	}
	return out
}

func MustNil(err error) {
	if err != nil {
		panic(err)
	}
}

// DimOf computes a block's Dim the slow way.
func DimOf(b *sparsevec.CSR) int {
	d := 0
	for _, j := range b.Idx {
		d = max(d, int(j)+1)
	}
	return d
}

// SampleLabels are the labels SampleCSR draws from: signed zeros, a
// denormal, the largest float32 and ordinary values.
var SampleLabels = []float32{1, -1, 0, float32(math.Copysign(0, -1)), 2.5, 1e-45, math.MaxFloat32, -7}

// SampleCSR returns rows covering the cases a format can get wrong: empty
// rows, rows with one nonzero, index 4294967295, explicit zeros, denormal
// and extreme values, and random sparse rows. All randomness comes from rng.
func SampleCSR(rng *rand.Rand, rows int) *sparsevec.CSR {
	m := &sparsevec.CSR{}
	for r := range rows {
		label := SampleLabels[rng.IntN(len(SampleLabels))]
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
