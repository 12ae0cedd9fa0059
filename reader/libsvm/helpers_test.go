package libsvm

import (
	"bytes"
	"sync"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/internal/readertest"
	"github.com/polyhedral/cpm/sparsevec"
)

// Shared test helpers (package readertest).
var (
	benchBytes     = readertest.BenchBytes
	appendMNISTRow = readertest.AppendMNISTRow
	equalCSR       = readertest.EqualCSR
	formatCSR      = readertest.FormatCSR
	genMNIST       = readertest.GenMNIST
	gzipBytes      = readertest.GzipBytes
	mustNil        = readertest.MustNil
	testRand       = readertest.Rand
	writeTempFile  = readertest.WriteTempFile
	zstdBytes      = readertest.ZstdBytes
)

// benchData is ~30 MB of MNIST-like text, made once per test binary, with
// its zstd and gzip forms.
var benchData struct {
	once            sync.Once
	text, zst, gz   []byte
	plainPath       string // files written by loadBenchData for the
	zstPath, gzPath string // current benchmark
}

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
	benchData.zstPath = writeTempFile(b, "mnist.zst", benchData.zst)
	benchData.gzPath = writeTempFile(b, "mnist.gz", benchData.gz)
}

// scanAll reads r with a Scanner into a CSR.
func scanAll(data []byte, path string, opts ...core.Option) (*sparsevec.CSR, error) {
	s := NewScanner(bytes.NewReader(data), path, opts...)
	m := new(sparsevec.CSR)
	for s.Scan() {
		m.Append(s.Label(), s.Row())
	}
	return m, s.Err()
}
