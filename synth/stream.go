package synth

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// Source is a large generated data set whose row i is a pure function of the
// data set's parameters (name, seed, split) and of i. Rows can therefore be
// made in any order, on any number of goroutines, and the output of
// WriteStream does not depend on how many there are.
type Source interface {
	// Dim is the largest feature index a row may hold; indices are 1..Dim.
	Dim() int
	// NewWorker returns the state one goroutine needs to make rows. A
	// Source may be shared by any number of workers.
	NewWorker() Worker
}

// Worker makes the rows of a Source on one goroutine.
type Worker interface {
	// Row returns row i (0-based): its label and its features, with
	// strictly ascending indices in 1..Dim. The vector's slices belong to
	// the Worker and are valid until the next call. Row allocates nothing.
	// It panics if i < 0.
	Row(i int64) (label float32, x sparsevec.Vector)
}

// StreamConfig configures WriteStream. The zero value works.
type StreamConfig struct {
	// Workers is the number of goroutines making rows. 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// BlockRows is the number of rows a worker makes and formats at a time.
	// 0 means 1024 (about 2 MB of text for mnist8m).
	BlockRows int
	// Progress, if not nil, is called with the number of rows written so
	// far after each block, on the goroutine that called WriteStream.
	Progress func(rows int64)
}

// Default block size of WriteStream.
const defaultBlockRows = 1024

// WriteStream writes rows 0..n-1 of src to w as LIBSVM text in row order.
//
// Rows are made in blocks of cfg.BlockRows by cfg.Workers goroutines, each
// formatting its block with its own libsvm.Writer into a reusable buffer; the
// calling goroutine writes the buffers to w in block order. At most
// 2·Workers+1 blocks are in flight (being made or waiting for their turn), so
// memory stays bounded whatever n is, and the bytes written depend only on src
// and n, never on the number of workers or on scheduling. In the steady
// state nothing is allocated per row or per block.
//
// WriteStream returns the first error: that of w, of the formatter (a
// generator bug such as a non-finite value), or ctx.Err() if ctx is cancelled,
// which is checked between blocks. Every goroutine it started has ended
// when it returns. It returns an error if n < 0.
func WriteStream(ctx context.Context, w io.Writer, src Source, n int64, cfg StreamConfig) error {
	if n < 0 {
		return fmt.Errorf("synth: WriteStream: %d rows", n)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	blockRows := int64(cfg.BlockRows)
	if blockRows <= 0 {
		blockRows = defaultBlockRows
	}
	nblocks := (n + blockRows - 1) / blockRows
	workers = int(min(int64(workers), max(nblocks, 1)))
	inflight := 2*workers + 1

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Block b is made into slots[b%inflight]. The feeder takes a token from
	// sem before handing out block b and the writer returns it once block
	// b is written, so block b-inflight has left its slot before block b
	// may enter it.
	slots := make([]streamSlot, inflight)
	for i := range slots {
		slots[i].ready = make(chan struct{}, 1)
	}
	sem := make(chan struct{}, inflight)
	jobs := make(chan int64, inflight)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // feeder
		defer wg.Done()
		defer close(jobs)
		for b := range nblocks {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			jobs <- b // never blocks: at most inflight jobs are outstanding
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bw := newBlockWriter(src.NewWorker())
			for b := range jobs {
				s := &slots[b%int64(inflight)]
				if ctx.Err() != nil {
					s.err = ctx.Err()
				} else {
					lo := b * blockRows
					s.buf, s.err = bw.block(s.buf[:0], lo, min(lo+blockRows, n))
				}
				s.ready <- struct{}{} // never blocks: one signal per slot use
			}
		}()
	}

	err := func() error {
		for b := range nblocks {
			s := &slots[b%int64(inflight)]
			select {
			case <-s.ready:
			case <-ctx.Done():
				return ctx.Err()
			}
			if s.err != nil {
				return s.err
			}
			if _, err := w.Write(s.buf); err != nil {
				return err
			}
			<-sem
			if cfg.Progress != nil {
				cfg.Progress(min((b+1)*blockRows, n))
			}
		}
		return nil
	}()
	cancel()
	wg.Wait()
	return err
}

// streamSlot holds one block in flight. The worker that makes the block
// writes buf and err, then signals ready; the writer reads them after
// receiving from ready, which orders the accesses.
type streamSlot struct {
	buf   []byte
	err   error
	ready chan struct{}
}

// blockWriter formats blocks of rows of one Worker as LIBSVM text.
type blockWriter struct {
	rows Worker
	sink appendSink
	out  *libsvm.Writer
}

func newBlockWriter(rows Worker) *blockWriter {
	bw := &blockWriter{rows: rows}
	bw.out = libsvm.NewWriter(&bw.sink)
	return bw
}

// block appends the text of rows lo..hi-1 to dst and returns it.
func (bw *blockWriter) block(dst []byte, lo, hi int64) ([]byte, error) {
	bw.sink.b = dst
	for i := lo; i < hi; i++ {
		y, x := bw.rows.Row(i)
		if err := bw.out.Write(y, x); err != nil {
			bw.sink.b = nil
			return dst, fmt.Errorf("synth: row %d: %w", i, err)
		}
	}
	err := bw.out.Flush()
	dst, bw.sink.b = bw.sink.b, nil
	return dst, err
}

// appendSink is an io.Writer that appends to a byte slice.
type appendSink struct{ b []byte }

func (s *appendSink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}
