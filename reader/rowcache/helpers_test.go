package rowcache_test

import (
	"github.com/polyhedral/cpm/reader/internal/readertest"
	"github.com/polyhedral/cpm/sparsevec"
)

// Shared test helpers (package readertest).
var (
	benchBytes    = readertest.BenchBytes
	dimOf         = readertest.DimOf
	equalCSR      = readertest.EqualCSR
	genMNIST      = readertest.GenMNIST
	testRand      = readertest.Rand
	writeTempFile = readertest.WriteTempFile
	zstdBytes     = readertest.ZstdBytes
)

// mnist2Train is MNIST "2 vs rest" training data, written by
// scripts/get-mnist.sh, relative to this package's directory.
const mnist2Train = "../../data/mnist2.train.libsvm.zst"

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
