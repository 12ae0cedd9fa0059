package rowcache_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/polyhedral/cpm/sparsevec"
)

// mnist2Train is MNIST "2 vs rest" training data, written by
// scripts/get-mnist.sh, relative to this package's directory.
const mnist2Train = "../../data/mnist2.train.libsvm.zst"

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

// writeTempFile writes data to a new file in t's temp directory.
func writeTempFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// testRand returns the seeded source of the tests.
func testRand() *rand.Rand { return rand.New(rand.NewPCG(1, 1)) }

const benchBytes = 30 << 20

// dimOf computes a block's Dim the slow way.
func dimOf(b *sparsevec.CSR) int {
	d := 0
	for _, j := range b.Idx {
		d = max(d, int(j)+1)
	}
	return d
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

// mnistValues are the pixel values k/255 as the LIBSVM site writes them
// (6 significant digits: "0.0117647", "1").
var mnistValues = func() [256]string {
	var v [256]string
	for k := range v {
		v[k] = strconv.FormatFloat(float64(k)/255, 'g', 6, 64)
	}
	return v
}()

func withDim(m *sparsevec.CSR) *sparsevec.CSR {
	c := *m
	c.Dim = 0
	for r := range c.Rows() {
		if x := c.Row(r); len(x.Idx) > 0 {
			c.Dim = max(c.Dim, int(x.MaxIndex())+1)
		}
	}
	return &c
}
