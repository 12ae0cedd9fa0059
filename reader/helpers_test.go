package reader

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// mnistValues are the pixel values k/255 as the LIBSVM site writes them
// (6 significant digits: "0.0117647", "1").
var mnistValues = func() [256]string {
	var v [256]string
	for k := range v {
		v[k] = strconv.FormatFloat(float64(k)/255, 'g', 6, 64)
	}
	return v
}()

// genMNIST writes MNIST-like LIBSVM text until it holds at least size
// bytes: labels 0-9, indices in 1..784 with about 150 nonzeros a row,
// values k/255. All randomness comes from rng.
func genMNIST(rng *rand.Rand, size int) []byte {
	b := make([]byte, 0, size+4096)
	for len(b) < size {
		b = appendMNISTRow(b, rng)
	}
	return b
}

func appendMNISTRow(b []byte, rng *rand.Rand) []byte {
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

// benchData is ~30 MB of MNIST-like text, made once per test binary, with
// its zstd and gzip forms.
var benchData struct {
	once            sync.Once
	text, zst, gz   []byte
	plainPath       string // files written by loadBenchData for the
	zstPath, gzPath string // current benchmark
}

const benchBytes = 30 << 20

// loadBenchData makes benchData and writes its three forms to b's temp
// directory.
func loadBenchData(b *testing.B) {
	b.Helper()
	benchData.once.Do(func() {
		benchData.text = genMNIST(testRand(), benchBytes)
		benchData.zst = zstdBytes(benchData.text)
		benchData.gz = gzipBytes(benchData.text)
	})
	benchData.plainPath = writeTempFile(b, "mnist.libsvm", benchData.text)
	benchData.zstPath = writeTempFile(b, "mnist.libsvm.zst", benchData.zst)
	benchData.gzPath = writeTempFile(b, "mnist.libsvm.gz", benchData.gz)
}

func mustNil(err error) {
	if err != nil {
		panic(err)
	}
}

func zstdBytes(p []byte) []byte {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	mustNil(err)
	_, err = w.Write(p)
	mustNil(err)
	mustNil(w.Close())
	return buf.Bytes()
}

func gzipBytes(p []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(p)
	mustNil(err)
	mustNil(w.Close())
	return buf.Bytes()
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

// scanAll reads r with a Scanner into a CSR.
func scanAll(data []byte, path string, opts ...Option) (*sparsevec.CSR, error) {
	s := libsvm.NewScanner(bytes.NewReader(data), path, opts...)
	m := new(sparsevec.CSR)
	for s.Scan() {
		m.Append(s.Label(), s.Row())
	}
	return m, s.Err()
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

// formatCSR writes m back as LIBSVM text with the shortest float32 forms.
func formatCSR(m *sparsevec.CSR) []byte {
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

// testRand returns the seeded source of the tests.
func testRand() *rand.Rand { return rand.New(rand.NewPCG(1, 1)) }

// cacheRows returns seeded rows exercising every encoding path: MNIST-like
// rows with few distinct values, rows with many distinct values (raw
// encoding), empty rows, gaps above 127 (multi-byte varints), index
// 4294967295 and explicit zeros.
func cacheRows(rows int, seed uint64) *sparsevec.CSR {
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

// blocksOf splits m into blocks of n rows.
func blocksOf(m *sparsevec.CSR, n int) []*sparsevec.CSR {
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

func writeCache(t testing.TB, path, src string, blocks []*sparsevec.CSR) {
	t.Helper()
	w, err := rowcache.Create(path, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeSource(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src.libsvm")
	if err := os.WriteFile(src, []byte("1 1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}
