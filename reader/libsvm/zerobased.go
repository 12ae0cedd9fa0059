package libsvm

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// indexMap is how a parser maps the feature indices it reads to the 1-based
// indices rows hold: it adds shift (0 or 1) to each; zeroErr is the error
// of an index 0 when shift is 0.
//
// With auto set (shift 0, no zeroErr) the parser defers ZeroBasedAuto's
// decision to the end of the input: it keeps the indices as read, an index
// 0 included, records whether one occurred and where the first index equal
// to MaxIndex is, and loadReader shifts the rows and checks the limit at
// the end (see loadAuto).
type indexMap struct {
	shift   uint64
	zeroErr error
	auto    bool
}

// errZeroOnePass is the error of an index 0 read with ZeroBasedAuto from
// input that cannot be scanned ahead.
var errZeroOnePass = fmt.Errorf("%w; zero-based auto reads input it cannot scan ahead (standard input, a pipe, an io.Reader) as 1-based: read 0-based input with zero-based yes", core.ErrIndexZero)

// oneShot returns the indexMap of the options for input read in one pass
// (a Scanner, LoadReader, a Stream of a reader, standard input, a pipe):
// ZeroBasedAuto reads it as 1-based, and an index 0 is an error that says
// so.
func oneShot(z core.ZeroBased) indexMap {
	switch z {
	case core.ZeroBasedYes:
		return indexMap{shift: 1}
	case core.ZeroBasedNo:
		return indexMap{zeroErr: core.ErrIndexZero}
	}
	return indexMap{zeroErr: errZeroOnePass}
}

// rangeError is the error of index v (after the shift) above maxIndex.
func (m indexMap) rangeError(maxIndex uint32, v uint64) error {
	if m.shift == 0 || v >= outOfRange {
		return core.IndexRangeError(maxIndex)
	}
	return fmt.Errorf("%w (0-based index %d, read as %d)", core.IndexRangeError(maxIndex), v-1, v)
}

// fileIndexMap returns the indexMap for reading the file at path with o
// with the decision made ahead (NewStream): for ZeroBasedAuto, a regular
// file (compressed or not) is 0-based if it holds a feature index 0 (see
// IsZeroBased); standard input and files that are not regular are read in
// one pass (oneShot).
func fileIndexMap(path string, o *core.Options) indexMap {
	if o.ZeroBased != core.ZeroBasedAuto {
		return oneShot(o.ZeroBased)
	}
	zero, scanned, _ := scanZeroBased(path, o)
	switch {
	case zero:
		if o.ZeroBasedNotice != nil {
			o.ZeroBasedNotice(path)
		}
		return indexMap{shift: 1}
	case scanned:
		return indexMap{zeroErr: core.ErrIndexZero}
	}
	return oneShot(core.ZeroBasedAuto)
}

// IsZeroBased reports whether Load and NewStream, given opts, read the
// LIBSVM file at path as 0-based, adding 1 to every feature index: always
// with ZeroBasedYes, never with ZeroBasedNo, and with ZeroBasedAuto (the
// default) when path is a regular file, compressed or not, that holds a
// feature index 0 (Load decides that in its own pass, with the same
// answer). Standard input ("-") and files that are not regular (pipes,
// FIFOs) cannot be scanned ahead, so auto reads them as 1-based and an
// index 0 in them is an error.
//
// Auto's scan, which NewStream makes before it reads the rows, reads the
// file through two buffers of a fixed size (reading one while scanning the
// other), up to the first separator followed by "0:" (or "00:", ...)
// outside a comment, or to its end: a 1-based file is read (and
// decompressed) once more. Except that a .zst file that cpm wrote
// (reader.CreateCompressed) ends with a note of what the same scan found
// in its text as it was written: when the note covers the whole file and
// says the text holds no index 0, auto reads the file as 1-based without
// scanning. A note that lies cannot make wrong rows: an index 0 in a file
// read as 1-based is an error naming its line (a note saying the text
// holds an index 0 is not used, and the scan stops at the first one).
// The result is remembered for the process, as Load's decision is, keyed
// by the path and the file's identity (device and inode, size,
// modification time), so that every later pass over an unchanged file (a
// Stream per training epoch) reuses it without scanning again. A file that cannot be opened is an
// error; one that fails to read or decompress part way is judged by the
// bytes read before the failure, and the read of its rows reports the
// failure.
func IsZeroBased(path string, opts ...core.Option) (bool, error) {
	o := core.BuildOptions(opts)
	switch o.ZeroBased {
	case core.ZeroBasedYes:
		return true, nil
	case core.ZeroBasedNo:
		return false, nil
	}
	zero, _, err := scanZeroBased(path, &o)
	return zero, err
}

// scanZeroBased scans the file at path for a feature index 0 and reports
// whether it found one, and whether the file could be scanned at all (a
// regular file that opened).
func scanZeroBased(path string, o *core.Options) (zero, scanned bool, err error) {
	if path == "-" {
		return false, false, nil
	}
	// Stat before opening: opening a FIFO would wait for its writer, and
	// closing it again would break the writer's pipe.
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return false, false, err
	}
	f, err := o.OpenFile(path)
	if err != nil {
		return false, false, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return false, false, err
	}
	if zero, ok := zeroMemo.get(path, st); ok {
		f.Close()
		return zero, true, nil
	}
	if zero, ok := core.ZstdNote(f, st.Size()); ok && !zero {
		f.Close()
		zeroMemo.put(path, st, false)
		return false, true, nil
	}
	fo := *o
	fo.Opener = func(string) (*os.File, error) { return f, nil }
	rc, err := core.OpenText(path, &fo) // closes f on error
	if err != nil {
		return false, true, nil // the read of the rows reports it
	}
	zero, complete := hasIndexZero(o.Ctx, rc)
	rc.Close()
	if complete {
		zeroMemo.put(path, st, zero)
	}
	return zero, true, nil
}

// zeroMemo remembers IsZeroBased's scans and Load's decisions.
var zeroMemo = zeroCache{m: map[zeroKey]zeroEntry{}}

// maxZeroMemo bounds the scans remembered; the memo is emptied when full.
const maxZeroMemo = 4096

type zeroKey struct {
	path        string
	size, mtime int64
}

type zeroEntry struct {
	fi   os.FileInfo // compared with os.SameFile: the same device and inode
	zero bool
}

type zeroCache struct {
	mu sync.Mutex
	m  map[zeroKey]zeroEntry
}

func (c *zeroCache) get(path string, st os.FileInfo) (zero, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[zeroKey{path, st.Size(), st.ModTime().UnixNano()}]
	if !ok || !os.SameFile(e.fi, st) {
		return false, false
	}
	return e.zero, true
}

func (c *zeroCache) put(path string, st os.FileInfo, zero bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxZeroMemo {
		clear(c.m)
	}
	c.m[zeroKey{path, st.Size(), st.ModTime().UnixNano()}] = zeroEntry{st, zero}
}

// zeroScanBytes is the size of each of hasIndexZero's two buffers.
const zeroScanBytes = 1 << 20

// hasIndexZero reads r to its end, or to the first feature index 0, and
// reports whether it found one, and whether the answer covers the whole
// input: it does not when a read fails or ctx (nil: none) is cancelled
// (the read of the rows reports either). A goroutine reads (and so
// decompresses) r into one of two buffers of zeroScanBytes while the
// caller scans the other, so that on two cores the scan costs no time
// beyond the reading, whatever the length of the lines. It returns once
// that goroutine has returned, so r is no longer read.
func hasIndexZero(ctx context.Context, r io.Reader) (zero, complete bool) {
	free := make(chan []byte, 2)
	full := make(chan zeroPiece, 1)
	for range 2 {
		free <- make([]byte, zeroScanBytes)
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { readPieces(r, free, full, quit) })
	defer wg.Wait()
	defer close(quit)
	var z zeroScanner
	for p := range full {
		if ctx != nil && ctx.Err() != nil {
			return false, false
		}
		if z.Scan(p.buf[:p.n]) {
			return true, true
		}
		switch p.err {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			return false, true
		default:
			return false, false
		}
		free <- p.buf
	}
	return false, false // not reached: the last piece has an error
}

// zeroPiece is a buffer readPieces filled: n bytes, then err.
type zeroPiece struct {
	buf []byte
	n   int
	err error
}

// readPieces fills the buffers it takes from free with io.ReadFull of r
// and sends them on full, until a read returns an error (sent with its
// piece) or quit is closed; it closes full when it returns.
func readPieces(r io.Reader, free <-chan []byte, full chan<- zeroPiece, quit <-chan struct{}) {
	defer close(full)
	for {
		var buf []byte
		select {
		case buf = <-free:
		case <-quit:
			return
		}
		n, err := io.ReadFull(r, buf)
		select {
		case full <- zeroPiece{buf, n, err}:
		case <-quit:
			return
		}
		if err != nil {
			return
		}
	}
}

// lineZero reports whether the text b holds a feature index 0 (see
// zeroScanner).
func lineZero(b []byte) bool {
	var z zeroScanner
	return z.Scan(b)
}

// zeroScanner is the rule of auto's scan, which package core keeps so that
// a zstd output can record what it found (core.ZstdNote).
type zeroScanner = core.ZeroScanner
