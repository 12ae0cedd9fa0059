package shard

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// credit is the most blocks of one shard that a Reader takes from the
// shard's reader before the consumer releases one: all of a libsvm.Stream's
// or CacheReader's pool, so their Next never refuses with ErrBlocksHeld.
const credit = reader.StreamBlocks

// MaxHeld is the most blocks the caller of a Reader may hold at once; Next
// refuses with reader.ErrBlocksHeld beyond it, as libsvm.Stream does.
const MaxHeld = reader.StreamBlocks

var _ reader.BlockReader = (*Reader)(nil)

// Reader reads a shard set as one reader.BlockReader. Each shard is opened
// with reader.OpenBlocks and read by goroutine s mod Readers; the blocks
// are handed out in this order, whatever the scheduling:
//
//	round 0: block 0 of shard 0, block 0 of shard 1, ..., block 0 of shard N-1
//	round 1: block 1 of shard 0, block 1 of shard 1, ..., block 1 of shard N-1
//	...
//
// where a shard that has no k-th block is skipped from round k on (it has
// ended). Equivalently, block k of shard s comes before block k' of shard
// s' if and only if k < k', or k == k' and s < s'. Shards are numbered in
// the order of Files. A block is what the shard's reader hands out: for
// LIBSVM text and the cache, BlockRows rows (the last block of a shard may
// be shorter); for Arrow and Parquet, a record batch or row group (which
// Split makes Config.BlockRows rows).
//
// Blocks are the shard readers' own, handed on without copying; Release
// sends a block back to the goroutine reading its shard. Memory is bounded
// by the shard readers' pools: each shard's reader runs at most
// reader.StreamBlocks blocks ahead of the consumer, so memory grows with
// the number of shards (for LIBSVM text, about StreamBlocks blocks and
// 2·Workers+2 chunks of reader.DefaultChunkBytes per shard). A shard
// reader that lends fewer blocks than StreamBlocks at a time makes Next
// wait, rather than fail, until the caller releases one of its blocks.
//
// Next and Release are for one goroutine; Close may be called from any.
type Reader struct {
	files   []string
	want    []ShardInfo // the manifest's counts per shard; nil: not known (a glob)
	got     []counted   // rows and nonzeros handed out per shard
	workers []*worker
	order   []int // shards still going, ascending; the round-robin cycle
	pos     int   // index in order of the shard whose block is next
	held    []heldBlock
	err     error

	done      chan struct{}
	wg        sync.WaitGroup
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// counted is what Next has handed out of one shard.
type counted struct{ rows, nnz int64 }

type heldBlock struct {
	blk   *sparsevec.CSR
	shard int
}

// item is what a worker sends the consumer: a block of shard, or the
// shard's end (err == io.EOF), or its error.
type item struct {
	shard int
	blk   *sparsevec.CSR
	err   error
}

// released is a block on its way back to its shard's reader.
type released struct {
	slot int // index in worker.shards
	blk  *sparsevec.CSR
}

// worker is one reading goroutine with its shards.
type worker struct {
	shards  []int // global shard numbers, ascending
	paths   []string
	streams []reader.BlockReader
	out     chan item
	rel     chan released
	total   int   // shards in the set, for error messages
	err     error // first Close error, read after the goroutine ends
}

// Open opens the shard set pattern names (see Files: a directory with a
// complete manifest, or a glob) and returns a *Reader over all its rows in
// the order documented on Reader. The options are passed to
// reader.OpenBlocks for every shard, after reader.WithWorkers(cfg.Workers),
// so they may override it. Errors name the shard file. For a directory,
// the rows and nonzeros read from each shard are checked against its
// manifest when the shard ends: a difference is an error wrapping
// ErrManifestMismatch that names the shard and both counts. The caller
// must Close the reader.
func Open(pattern string, cfg ReadConfig, opts ...reader.Option) (reader.BlockReader, error) {
	if fi, err := os.Stat(pattern); err == nil && fi.IsDir() {
		files, m, err := dirFiles(pattern)
		if err != nil {
			return nil, err
		}
		r, err := OpenFiles(files, cfg, opts...)
		if err != nil {
			return nil, err
		}
		r.ExpectCounts(m.Shards)
		return r, nil
	}
	files, err := Files(pattern)
	if err != nil {
		return nil, err
	}
	return OpenFiles(files, cfg, opts...)
}

// OpenFiles is Open over the given shard files, in the given order, with
// no manifest to check their counts against (see ExpectCounts).
func OpenFiles(files []string, cfg ReadConfig, opts ...reader.Option) (*Reader, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("shard: no shard files: %w", ErrNoMatch)
	}
	cfg, err := cfg.withDefaults(len(files))
	if err != nil {
		return nil, err
	}
	ropts := append([]reader.Option{reader.WithWorkers(cfg.Workers)}, opts...)
	r := &Reader{files: slices.Clone(files), got: make([]counted, len(files)), done: make(chan struct{})}
	r.workers = make([]*worker, cfg.Readers)
	for i := range r.workers {
		r.workers[i] = &worker{total: len(files)}
	}
	for s, path := range files {
		br, err := reader.OpenBlocks(path, cfg.BlockRows, ropts...)
		if err != nil {
			for _, w := range r.workers {
				for _, b := range w.streams {
					b.Close()
				}
			}
			return nil, shardErr(s, len(files), path, err)
		}
		w := r.workers[s%cfg.Readers]
		w.shards = append(w.shards, s)
		w.paths = append(w.paths, path)
		w.streams = append(w.streams, br)
		r.order = append(r.order, s)
	}
	for _, w := range r.workers {
		// Neither channel ever blocks its sender for long: at most
		// credit blocks per shard are out at once.
		w.out = make(chan item, credit*len(w.shards)+1)
		w.rel = make(chan released, credit*len(w.shards))
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			w.run(r.done)
		}()
	}
	return r, nil
}

// shardErr names shard s of n and its file in err, unless err names the
// file already.
func shardErr(s, n int, path string, err error) error {
	if strings.Contains(err.Error(), path) {
		return fmt.Errorf("shard %d of %d: %w", s, n, err)
	}
	return fmt.Errorf("shard %d of %d: %s: %w", s, n, path, err)
}

// run reads the worker's shards round-robin, one block of each in turn,
// until they all end, an error, or done; then it keeps taking releases
// until done and closes its shards' readers.
func (w *worker) run(done <-chan struct{}) {
	defer func() {
		for _, b := range w.streams {
			if err := b.Close(); err != nil && w.err == nil {
				w.err = err
			}
		}
	}()
	w.loop(done)
	for {
		select {
		case rb := <-w.rel:
			w.streams[rb.slot].Release(rb.blk)
		case <-done:
			return
		}
	}
}

func (w *worker) loop(done <-chan struct{}) {
	out := make([]int, len(w.shards)) // blocks out per slot
	release := func(rb released) {
		w.streams[rb.slot].Release(rb.blk)
		out[rb.slot]--
	}
	active := make([]int, len(w.shards)) // slots still going
	for i := range active {
		active[i] = i
	}
	send := func(it item) bool {
		select {
		case w.out <- it:
			return true
		case <-done:
			return false
		}
	}
	for i := 0; len(active) > 0; {
		slot := active[i]
		// Take back what the consumer has released, waiting if this
		// shard has all its credit out.
		for drained := false; !drained; {
			select {
			case rb := <-w.rel:
				release(rb)
			case <-done:
				return
			default:
				if out[slot] < credit {
					drained = true
					break
				}
				select {
				case rb := <-w.rel:
					release(rb)
				case <-done:
					return
				}
			}
		}
		blk, err := w.streams[slot].Next()
		switch {
		case errors.Is(err, reader.ErrBlocksHeld):
			// A shard reader with a smaller pool than credit: wait for
			// a release and try again.
			select {
			case rb := <-w.rel:
				release(rb)
			case <-done:
				return
			}
		case err == io.EOF:
			if !send(item{shard: w.shards[slot], err: io.EOF}) {
				return
			}
			active = slices.Delete(active, i, i+1)
			if i == len(active) {
				i = 0
			}
		case err != nil:
			send(item{shard: w.shards[slot], err: shardErr(w.shards[slot], w.total, w.paths[slot], err)})
			return
		default:
			out[slot]++
			if !send(item{shard: w.shards[slot], blk: blk}) {
				return
			}
			i = (i + 1) % len(active)
		}
	}
}

// Files returns the shard files in shard order.
func (r *Reader) Files() []string { return slices.Clone(r.files) }

// Next returns the next block in the order documented on Reader, or io.EOF
// after the last. The block stays valid and unmodified until Release.
// Errors are sticky and name the shard file; for bad data in LIBSVM text
// they wrap the *reader.ParseError with its line. Next returns
// reader.ErrBlocksHeld, without blocking, when the caller holds MaxHeld
// blocks, and reader.ErrClosed after Close.
func (r *Reader) Next() (*sparsevec.CSR, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.closed.Load() {
		r.err = reader.ErrClosed
		return nil, r.err
	}
	if len(r.held) >= MaxHeld {
		return nil, reader.ErrBlocksHeld
	}
	for len(r.order) > 0 {
		s := r.order[r.pos]
		var it item
		select {
		case it = <-r.workers[s%len(r.workers)].out:
		case <-r.done:
			r.err = reader.ErrClosed
			return nil, r.err
		}
		switch {
		case it.shard != s:
			r.err = fmt.Errorf("shard: internal error: block of shard %d where shard %d was due", it.shard, s)
			return nil, r.err
		case it.err == io.EOF:
			if err := r.checkCounts(s); err != nil {
				r.err = err
				return nil, err
			}
			r.order = slices.Delete(r.order, r.pos, r.pos+1)
			if r.pos == len(r.order) {
				r.pos = 0
			}
			continue
		case it.err != nil:
			r.err = it.err
			return nil, r.err
		}
		r.pos = (r.pos + 1) % len(r.order)
		r.got[s].rows += int64(it.blk.Rows())
		r.got[s].nnz += int64(it.blk.NNZ())
		r.held = append(r.held, heldBlock{blk: it.blk, shard: s})
		return it.blk, nil
	}
	r.err = io.EOF
	return nil, io.EOF
}

// ExpectCounts makes r check, as each shard ends, that the rows and
// nonzeros it gave are those of shards (a manifest's, in the order of the
// files), failing with an error wrapping ErrManifestMismatch otherwise.
// Call it before the first Next. It panics if shards does not have one
// entry per file.
func (r *Reader) ExpectCounts(shards []ShardInfo) {
	if len(shards) != len(r.files) {
		panic(fmt.Sprintf("shard: ExpectCounts with %d shards for %d files", len(shards), len(r.files)))
	}
	r.want = slices.Clone(shards)
}

// checkCounts compares what shard s gave with its manifest's counts, if
// there is a manifest.
func (r *Reader) checkCounts(s int) error {
	if r.want == nil {
		return nil
	}
	w, g := r.want[s], r.got[s]
	if g.rows == w.Rows && g.nnz == w.NNZ {
		return nil
	}
	return fmt.Errorf("shard %d of %d: %s: %w: read %d rows and %d nonzeros, the manifest records %d rows and %d nonzeros",
		s, len(r.files), r.files[s], ErrManifestMismatch, g.rows, g.nnz, w.Rows, w.NNZ)
}

// Release gives a block returned by Next back to its shard's reader. The
// caller must not use b afterwards. It panics if b is not a block the
// caller holds, since releasing a block twice would hand it out twice.
func (r *Reader) Release(b *sparsevec.CSR) {
	for i, h := range r.held {
		if h.blk != b {
			continue
		}
		r.held = slices.Delete(r.held, i, i+1)
		w := r.workers[h.shard%len(r.workers)]
		slot := h.shard / len(r.workers)      // shards s, s+R, s+2R, ... in order
		w.rel <- released{slot: slot, blk: b} // never blocks: rel holds every block out
		return
	}
	panic("shard: Release of a block that Next did not hand out or that was released already")
}

// Close stops the reading goroutines, waits for them to end and closes
// every shard's reader. Blocks the caller holds stay valid as far as the
// shard readers keep them so (libsvm.Stream does). Next returns
// reader.ErrClosed afterwards. Close may be called more than once.
func (r *Reader) Close() error {
	r.closeOnce.Do(func() {
		r.closed.Store(true)
		close(r.done)
		r.wg.Wait()
		for _, w := range r.workers {
			if w.err != nil && r.closeErr == nil {
				r.closeErr = w.err
			}
		}
	})
	return r.closeErr
}
