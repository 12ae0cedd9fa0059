package libsvm

import (
	"os"
	"sync"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// loadAuto is Load with ZeroBasedAuto for a regular file, compressed or
// not: one pass with a deferring indexMap (indexMap.auto), no scan ahead.
// done is false, and Load reads the input in one pass as 1-based, when
// path is standard input or not a regular file (a pipe, a FIFO, which
// cannot be read twice should an error need the scan) or cannot be
// stat'ed (Load's open reports why).
func loadAuto(path string, o *core.Options) (m *sparsevec.CSR, done bool, err error) {
	if path == "-" {
		return nil, false, nil
	}
	// Stat before opening: opening a FIFO would wait for its writer.
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil, false, nil
	}
	f, err := o.OpenFile(path)
	if err != nil {
		return nil, true, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, false, nil
	}
	fo := *o
	fo.Opener = func(string) (*os.File, error) { return f, nil }
	rc, err := core.OpenText(path, &fo) // closes f on error
	if err != nil {
		return nil, true, err
	}
	m, zero, err := loadReader(rc, path, *o, indexMap{auto: true})
	if cerr := rc.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, true, err
	}
	zeroMemo.put(path, st, zero)
	if zero && o.ZeroBasedNotice != nil {
		o.ZeroBasedNotice(path)
	}
	return m, true, nil
}

// finishAuto completes a deferred read of the whole input into m: if an
// index 0 occurred the file is 0-based, so an index equal to MaxIndex is
// an error (the first one's) and otherwise every index is shifted by 1.
func (p *pipeline) finishAuto(m *sparsevec.CSR) error {
	if !p.zero {
		return nil
	}
	if p.limErr != nil {
		return p.limErr
	}
	shiftIndices(m, p.opt.Workers)
	return nil
}

// autoError returns the error of a read with ZeroBasedAuto decided ahead
// for err, the first error in file order of a deferred read, c its chunk
// (nil if the pipeline stopped). The deferred parse differs from a parse
// with the decision made only for a 0-based file, where an index equal to
// MaxIndex is an error, and an index above it is reported with its 0-based
// value: so err stands unless an index equal to MaxIndex comes before it
// (p.limErr, at most on its line, which the shifted parse would report
// first) or err is ErrIndexRange. Then the decision is needed: an index 0
// read before err makes the file 0-based, and otherwise the file is
// scanned (scanZeroBased, as a read with the decision made ahead does).
func (p *pipeline) autoError(err error, c *chunk) error {
	e, ok := err.(*core.ParseError)
	if !ok || c == nil {
		return err
	}
	lim := p.limErr != nil && p.limErr.Line <= e.Line
	if !lim && c.errRange == 0 {
		return err
	}
	zero := p.zero
	if !zero {
		p.stop()
		zero, _, _ = scanZeroBased(p.path, &p.opt)
	}
	switch {
	case !zero:
		return err
	case lim:
		return p.limErr
	}
	e.Err = indexMap{shift: 1}.rangeError(p.opt.MaxIndex, c.errRange+1)
	return e
}

// minShiftParallel is the number of indices from which shiftIndices
// splits the work.
const minShiftParallel = 1 << 20

// shiftIndices adds 1 to every index of m, read from a 0-based file as
// written, and so to its Dim (the largest index plus 1); up to workers
// goroutines share a long Idx.
func shiftIndices(m *sparsevec.CSR, workers int) {
	idx := m.Idx
	if len(idx) == 0 {
		return
	}
	n := 1
	if len(idx) >= minShiftParallel {
		n = max(1, workers)
	}
	var wg sync.WaitGroup
	for k := range n {
		part := idx[len(idx)*k/n : len(idx)*(k+1)/n]
		wg.Go(func() {
			for i := range part {
				part[i]++
			}
		})
	}
	wg.Wait()
	m.Dim++
}
