package reader

import (
	"io"

	"github.com/polyhedral/cpm/sparsevec"
)

// Load reads the whole LIBSVM file at path (see Open: compressed or not, "-"
// for standard input) into one CSR.
//
// One goroutine reads and decompresses the input into chunks of whole
// lines (WithChunkBytes); WithWorkers goroutines (default GOMAXPROCS) parse
// chunks into blocks; the blocks are joined in file order, so the result
// does not depend on scheduling. The first error in file order is returned,
// with its absolute line number, and every goroutine has ended when Load
// returns. An empty input gives a CSR with no rows.
func Load(path string, opts ...Option) (*sparsevec.CSR, error) {
	rc, err := Open(path)
	if err != nil {
		return nil, err
	}
	m, err := LoadReader(rc, path, opts...)
	if cerr := rc.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	return m, err
}

// LoadReader is Load reading LIBSVM text from r, which it does not close.
// path names the input in error messages only.
func LoadReader(r io.Reader, path string, opts ...Option) (*sparsevec.CSR, error) {
	p := startPipeline(r, path, buildOptions(opts))
	defer p.stop()
	var blocks []*sparsevec.CSR
	for {
		c, err := p.nextChunk()
		if err != nil {
			return nil, err
		}
		if c == nil {
			break
		}
		if c.blk.Rows() > 0 {
			blocks = append(blocks, cloneCSR(&c.blk))
		}
		p.recycle(c)
	}
	switch len(blocks) {
	case 0:
		return new(sparsevec.CSR), nil
	case 1:
		return blocks[0], nil
	}
	return concatCSR(blocks), nil
}

// cloneCSR copies m into exactly sized arrays.
func cloneCSR(m *sparsevec.CSR) *sparsevec.CSR {
	return &sparsevec.CSR{
		Labels: append([]float32(nil), m.Labels...),
		Ptr:    append([]int(nil), m.Ptr...),
		Idx:    append([]uint32(nil), m.Idx...),
		Val:    append([]float32(nil), m.Val...),
		Dim:    m.Dim,
	}
}

// concatCSR joins blocks in order into one exactly sized CSR, dropping each
// block as it is copied.
func concatCSR(blocks []*sparsevec.CSR) *sparsevec.CSR {
	rows, nnz := 0, 0
	for _, b := range blocks {
		rows += b.Rows()
		nnz += b.NNZ()
	}
	m := &sparsevec.CSR{
		Labels: make([]float32, 0, rows),
		Ptr:    make([]int, 1, rows+1),
		Idx:    make([]uint32, 0, nnz),
		Val:    make([]float32, 0, nnz),
	}
	for i, b := range blocks {
		m.AppendCSR(b)
		blocks[i] = nil
	}
	return m
}
