package reader

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/readertest"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// Shared test helpers (package readertest).
var (
	blocksOf      = readertest.BlocksOf
	cacheRows     = readertest.CacheRows
	equalCSR      = readertest.EqualCSR
	formatCSR     = readertest.FormatCSR
	genMNIST      = readertest.GenMNIST
	gzipBytes     = readertest.GzipBytes
	mustNil       = readertest.MustNil
	testRand      = readertest.Rand
	writeTempFile = readertest.WriteTempFile
	zstdBytes     = readertest.ZstdBytes
)

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

// scanAll reads r with a Scanner into a CSR.
func scanAll(data []byte, path string, opts ...Option) (*sparsevec.CSR, error) {
	s := libsvm.NewScanner(bytes.NewReader(data), path, opts...)
	m := new(sparsevec.CSR)
	for s.Scan() {
		m.Append(s.Label(), s.Row())
	}
	return m, s.Err()
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
