package libsvm

import (
	"io"
	"os"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// Load reads the whole LIBSVM file at path (see core's Open: compressed or
// not, "-" for standard input) into one CSR.
//
// One goroutine reads and decompresses the input into chunks of whole
// lines (WithChunkBytes); WithWorkers goroutines (default GOMAXPROCS) parse
// chunks into blocks; the blocks are joined in file order, so the result
// does not depend on scheduling. The first error in file order is returned,
// with its absolute line number, and every goroutine has ended when Load
// returns. An empty input gives a CSR with no rows.
//
// With ZeroBasedAuto (the default) a regular file, compressed or not, is
// read in that one pass with its indices as written, recording whether one
// is 0 and where the first index equal to MaxIndex is; if one is 0, every
// index is shifted by 1 at the end and MaxIndex applies to the shifted
// indices. The rows and errors are those of reading the file with the
// decision made ahead (IsZeroBased, as NewStream does), an error's line
// and column included: in the rare case of an error whose text or place
// depends on the decision (ErrIndexRange) and no index 0 before it, the
// file is scanned for an index 0 after all. The decision is remembered as
// IsZeroBased's scan is, and WithZeroBasedNotice hears of a 0-based file
// before Load returns. Standard input and files that are not regular are
// read as 1-based, as by LoadReader.
func Load(path string, opts ...core.Option) (*sparsevec.CSR, error) {
	o := core.BuildOptions(opts)
	if o.ZeroBased == core.ZeroBasedAuto {
		if m, done, err := loadAuto(path, &o); done {
			return m, err
		}
	}
	rc, err := core.OpenText(path, &o)
	if err != nil {
		return nil, err
	}
	m, _, err := loadReader(rc, path, o, oneShot(o.ZeroBased))
	if cerr := rc.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	return m, err
}

// LoadReader is Load reading LIBSVM text from r, which it does not close.
// path names the input in error messages only. On an error LoadReader
// waits for a Read in progress to return before it returns, so that no
// goroutine is left using r.
func LoadReader(r io.Reader, path string, opts ...core.Option) (*sparsevec.CSR, error) {
	o := core.BuildOptions(opts)
	m, _, err := loadReader(r, path, o, oneShot(o.ZeroBased))
	return m, err
}

// loadReader reads r into one CSR, mapping indices by im. With im.auto it
// decides ZeroBasedAuto at the end: zero reports an index 0, in which case
// the indices have been shifted by 1 (see finishAuto and autoError).
func loadReader(r io.Reader, path string, o core.Options, im indexMap) (_ *sparsevec.CSR, zero bool, _ error) {
	size := inputSize(r)
	p := startPipeline(r, path, o, im)
	defer p.stop()
	var (
		m      *sparsevec.CSR   // size known: the result, sized from the first chunk
		blocks []*sparsevec.CSR // size unknown: the blocks, joined at the end
	)
	for {
		c, err := p.nextChunk()
		if err != nil {
			if im.auto {
				err = p.autoError(err, c)
			}
			return nil, false, err // the rows before it go with the rest
		}
		if c == nil {
			break
		}
		switch {
		case c.blk.Rows() == 0:
		case size > 0:
			if m == nil {
				m = presized(&c.blk, len(c.data), size)
			}
			m.AppendCSR(&c.blk)
		default:
			// Take the block's arrays; the parser sizes new ones from
			// the density of the chunks it has seen.
			b := c.blk
			blocks = append(blocks, &b)
			c.blk = sparsevec.CSR{}
		}
		p.recycle(c)
	}
	switch {
	case m != nil:
		if cap(m.Idx) > len(m.Idx)+len(m.Idx)/2+1024 {
			// The first chunk was much denser than the rest.
			m = core.ConcatCSR([]*sparsevec.CSR{m})
		}
	case len(blocks) == 0:
		m = new(sparsevec.CSR)
	case len(blocks) == 1:
		m = blocks[0]
	default:
		m = core.ConcatCSR(blocks)
	}
	if im.auto {
		if err := p.finishAuto(m); err != nil {
			return nil, false, err
		}
	}
	return m, p.zero, nil
}

// inputSize returns the number of bytes r will yield if it is known
// cheaply (a plain file from Open, an *os.File, a bytes or strings
// Reader), else -1.
func inputSize(r io.Reader) int64 {
	var f *os.File
	if pf, ok := core.PlainFile(r); ok {
		if pf == nil {
			return -1
		}
		r = pf
	}
	switch v := r.(type) {
	case *os.File:
		f = v
	case interface{ Len() int }:
		return int64(v.Len())
	default:
		return -1
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1
	}
	return fi.Size() - off
}

// minPresizeSample is the shortest sample presized extrapolates from.
const minPresizeSample = 64 << 10

// presized returns an empty CSR with room for the rows and nonzeros of size
// bytes of input at the density of blk, parsed from n bytes, plus 1/32.
// Appending past that grows the arrays as usual. A sample shorter than
// minPresizeSample counts as that long: the few short lines before a
// long one (a first chunk cut short by a line of megabytes) would
// otherwise extrapolate to arrays many times the file's size.
func presized(blk *sparsevec.CSR, n int, size int64) *sparsevec.CSR {
	f := float64(size) / float64(max(n, minPresizeSample)) * (1 + 1.0/32)
	rows, nnz := int(f*float64(blk.Rows()))+16, int(f*float64(blk.NNZ()))+64
	return &sparsevec.CSR{
		Labels: make([]float32, 0, rows),
		Ptr:    make([]int, 1, rows+1),
		Idx:    make([]uint32, 0, nnz),
		Val:    make([]float32, 0, nnz),
	}
}
