package libsvm

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// Stream reads a LIBSVM file that may not fit in memory as a sequence of
// CSR blocks of a fixed number of rows, in file order. Reading,
// decompression and parsing run ahead in goroutines (the pipeline of Load)
// and fill blocks from a fixed pool of StreamBlocks, so memory stays bounded
// by the pool, the chunk buffers and the longest line, whatever the file
// size.
//
//	s, err := libsvm.NewStream(path, 4096)
//	if err != nil { ... }
//	defer s.Close()
//	for {
//		b, err := s.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil { ... }
//		use(b)
//		s.Release(b)
//	}
//
// Next and Release are for one goroutine; Close may be called from any.
type Stream struct {
	rc        io.Closer
	p         *pipeline
	blockRows int

	pool     chan *sparsevec.CSR
	out      chan *sparsevec.CSR
	finalErr error         // set by produce before it closes out
	produced chan struct{} // closed when produce returns

	held      []*sparsevec.CSR
	err       error
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// NewStream opens path (see Open) and starts reading it in blocks of
// blockRows rows; only the last block may be shorter. The options of Load
// apply. It returns an error if blockRows < 1 or the file cannot be opened.
func NewStream(path string, blockRows int, opts ...core.Option) (*Stream, error) {
	if blockRows < 1 {
		return nil, errors.New("reader: NewStream with blockRows < 1")
	}
	o := core.BuildOptions(opts)
	rc, err := core.OpenText(path, &o)
	if err != nil {
		return nil, err
	}
	return startStream(rc, rc, path, blockRows, o, fileIndexMap(path, &o)), nil
}

// newStream is a Stream of r, read in one pass.
func newStream(r io.Reader, c io.Closer, path string, blockRows int, opts []core.Option) *Stream {
	o := core.BuildOptions(opts)
	return startStream(r, c, path, blockRows, o, oneShot(o.ZeroBased))
}

func startStream(r io.Reader, c io.Closer, path string, blockRows int, o core.Options, im indexMap) *Stream {
	s := &Stream{
		rc:        c,
		p:         startPipeline(r, path, o, im),
		blockRows: blockRows,
		pool:      make(chan *sparsevec.CSR, core.StreamBlocks),
		out:       make(chan *sparsevec.CSR, core.StreamBlocks),
		produced:  make(chan struct{}),
	}
	for range core.StreamBlocks {
		s.pool <- new(sparsevec.CSR)
	}
	go s.produce()
	return s
}

// produce moves rows from parsed chunks into pool blocks and sends full
// blocks on out.
func (s *Stream) produce() {
	defer close(s.produced)
	defer close(s.out)
	defer s.p.stop()
	var cur *sparsevec.CSR
	get := func() bool {
		select {
		case cur = <-s.pool:
			return true
		case <-s.p.ctx.Done():
			s.finalErr = s.p.stopErr()
			return false
		}
	}
	send := func() bool {
		select {
		case s.out <- cur:
			cur = nil
			return true
		case <-s.p.ctx.Done():
			s.finalErr = s.p.stopErr()
			return false
		}
	}
	for {
		c, err := s.p.nextChunk()
		last := c == nil || c.last
		if c != nil {
			// Every row of the chunk, including those before an error.
			for lo := 0; lo < c.blk.Rows(); {
				if cur == nil && !get() {
					return
				}
				hi := min(c.blk.Rows(), lo+s.blockRows-cur.Rows())
				core.AppendRows(cur, &c.blk, lo, hi)
				lo = hi
				if cur.Rows() == s.blockRows && !send() {
					return
				}
			}
			s.p.recycle(c)
		}
		if err != nil || last {
			if cur != nil && cur.Rows() > 0 && !send() {
				return
			}
			if err == nil {
				err = io.EOF
			}
			s.finalErr = err
			return
		}
	}
}

// Next returns the next block, or io.EOF after the last one. A block's Dim
// covers its own rows only. The block belongs to the caller until it hands it back with Release; it is never
// modified meanwhile. Errors are sticky and, for bad data, *ParseError
// values with absolute line numbers; the blocks before the error hold every
// row before the bad line.
//
// Next returns ErrBlocksHeld, without blocking, when the caller already
// holds StreamBlocks blocks.
func (s *Stream) Next() (*sparsevec.CSR, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.closed.Load() {
		s.err = core.ErrClosed
		return nil, s.err
	}
	if len(s.held) >= core.StreamBlocks {
		return nil, core.ErrBlocksHeld
	}
	b, ok := <-s.out
	if !ok {
		s.err = s.finalErr
		if s.err == nil || s.err == core.ErrStopped {
			s.err = core.ErrClosed
		}
		return nil, s.err
	}
	s.held = append(s.held, b)
	return b, nil
}

// Release gives a block returned by Next back for reuse. The caller must not
// use b afterwards. It panics if b is not a block the caller holds, since
// releasing a block twice would hand it out twice.
func (s *Stream) Release(b *sparsevec.CSR) {
	s.held = core.Unhold(s.held, b)
	b.Reset()
	s.pool <- b // never blocks: the pool can hold every block
}

// Close stops the goroutines, waits for them to end (including a Read in
// progress) and closes the file. Blocks the caller holds stay valid. Next
// returns ErrClosed afterwards. Close may be called more than once.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.p.stop()
		<-s.produced
		s.closeErr = s.rc.Close()
	})
	return s.closeErr
}
