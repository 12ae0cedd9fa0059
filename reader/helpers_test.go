package reader

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/readertest"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// Shared test helpers (package readertest).
var (
	benchBytes    = readertest.BenchBytes
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
