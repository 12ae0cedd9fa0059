package core

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// MaxZstdWindow is the largest zstd window Open accepts (128 MiB, 2^27). It
// covers every standard level, including --ultra -22 and --long (window
// 2^27), and is the zstd tool's own default limit for decompression (a
// frame made with --long=28 or more needs --memory there too). It caps what
// a hostile frame header can make the decoder hold: the decoder keeps up to
// a window of history, so a 10 KB file of run-length blocks claiming the
// largest window makes one pass of Load or Stream take about 170 MB
// (measured peak RSS of cpm convert and train); a 2^28 window took twice
// that.
const MaxZstdWindow = 128 << 20

// zstdConcurrency is the decoder's number of in-flight blocks. 1 decodes
// synchronously in the reading goroutine, which measured faster than the
// default (2 on two cores) for Load, whose parser goroutines already use
// every core; see BenchmarkOpenZstd.
var zstdConcurrency = 1

// Magic numbers of the compressed formats Open detects.
var (
	magicZstd  = []byte{0x28, 0xB5, 0x2F, 0xFD}
	magicGzip  = []byte{0x1F, 0x8B}
	magicBzip2 = []byte("BZh")
)

// Open opens the file at path for reading, "-" meaning standard input, and
// decompresses it if its first bytes are the magic number of zstd (28 B5 2F
// FD), gzip (1F 8B) or bzip2 ("BZh"); anything else is read as it is. The
// file name plays no part. Concatenated frames or members are read in turn.
//
// Read errors are *ParseError values naming the file (with Line 0); a
// truncated or corrupt compressed stream gives an error wrapping ErrCorrupt.
// Close closes the decoder and the file, but never standard input.
func Open(path string) (io.ReadCloser, error) {
	return OpenText(path, &Options{})
}

// OpenText is Open with the file opened by o.openFile and, with the
// context of WithContext (nil: none), reads of a file that is not regular
// waiting for that context as well as for data.
func OpenText(path string, o *Options) (io.ReadCloser, error) {
	ctx := o.Ctx
	var f *os.File
	if path == "-" && o.Opener == nil {
		f = os.Stdin
	} else {
		var err error
		if f, err = o.OpenFile(path); err != nil {
			return nil, err
		}
	}
	var cr *ctxReads
	if ctx != nil {
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			cr = &ctxReads{ctx: ctx, f: f}
		}
	}
	rc, err := newDecompressor(f, cr, path)
	if err != nil {
		if f != os.Stdin {
			f.Close()
		}
		return nil, err
	}
	return rc, nil
}

// newDecompressor sniffs f and wraps it in the matching decoder.
func newDecompressor(f *os.File, cr *ctxReads, path string) (*decompressor, error) {
	d := &decompressor{file: fileReader{f: f, cr: cr}, path: path}
	br := bufio.NewReaderSize(&d.file, 64<<10)
	magic, err := br.Peek(4)
	if err != nil && err != io.EOF {
		return nil, d.wrap(err)
	}
	switch {
	case bytes.HasPrefix(magic, magicZstd):
		d.format = "zstd"
		dec, err := zstd.NewReader(br,
			zstd.WithDecoderConcurrency(zstdConcurrency),
			zstd.WithDecoderMaxMemory(MaxZstdWindow))
		if err != nil {
			return nil, d.wrap(err)
		}
		d.r, d.close = dec, func() error { dec.Close(); return nil }
	case bytes.HasPrefix(magic, magicGzip):
		d.format = "gzip"
		dec, err := gzip.NewReader(br)
		if err != nil {
			return nil, d.wrap(err)
		}
		d.r, d.close = dec, dec.Close
	case bytes.HasPrefix(magic, magicBzip2):
		d.format = "bzip2"
		d.r = bzip2.NewReader(br)
	default:
		d.r = br
	}
	return d, nil
}

// fileReader remembers the first error of the file itself, to tell it from
// a decoder's complaint about the data.
type fileReader struct {
	f   *os.File
	cr  *ctxReads // nil: read f directly
	err error
}

func (r *fileReader) Read(p []byte) (int, error) {
	var n int
	var err error
	if r.cr != nil {
		n, err = r.cr.read(p)
	} else {
		n, err = r.f.Read(p)
	}
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// decompressor is the ReadCloser returned by Open.
type decompressor struct {
	file   fileReader
	r      io.Reader
	close  func() error
	path   string
	format string // "" for plain text
	err    error  // sticky read error
	closed bool
}

func (d *decompressor) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		d.err = d.wrap(err)
		err = d.err
	}
	return n, err
}

// wrap names the file in err and marks a decoder's error as ErrCorrupt. An
// io.EOF here means the stream ended inside a header, so it is corrupt too.
func (d *decompressor) wrap(err error) error {
	if d.file.err != nil {
		return &ParseError{Path: d.path, Err: d.file.err}
	}
	if d.format == "" {
		return &ParseError{Path: d.path, Err: err}
	}
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return &ParseError{Path: d.path, Err: fmt.Errorf("%w: %s stream: %w (a frame may use a window of at most %d MiB)", ErrCorrupt, d.format, err, MaxZstdWindow>>20)}
	}
	return &ParseError{Path: d.path, Err: fmt.Errorf("%w: %s stream: %w", ErrCorrupt, d.format, err)}
}

// Close closes the decoder, then the file unless it is standard input.
func (d *decompressor) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	var err error
	if d.close != nil {
		err = d.close()
	}
	if d.file.f != os.Stdin {
		if cerr := d.file.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// ctxReads reads a file that may block without end (standard input, a
// pipe) so that a read returns when ctx is cancelled: each read runs in a
// goroutine into a buffer of its own and is copied out when it returns. A
// read abandoned by cancellation keeps its goroutine until the file yields
// data, an error or end of file; every later read returns ctx.Err() at
// once, so the buffer is never reused meanwhile.
type ctxReads struct {
	ctx     context.Context
	f       *os.File
	buf     []byte
	pending chan readResult // the read in progress, or nil
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReads) read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if c.pending == nil {
		if cap(c.buf) < len(p) {
			c.buf = make([]byte, len(p))
		}
		buf, ch := c.buf[:len(p)], make(chan readResult, 1)
		go func() {
			n, err := c.f.Read(buf)
			ch <- readResult{n, err}
		}()
		c.pending = ch
	}
	select {
	case r := <-c.pending:
		c.pending = nil
		return copy(p, c.buf[:r.n]), r.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}

// PlainFile tells whether r is a reader returned by Open, and if so returns
// the file it reads when that file holds plain text (nil when it is
// compressed), so that a caller can learn the input's size.
func PlainFile(r io.Reader) (*os.File, bool) {
	d, ok := r.(*decompressor)
	if !ok {
		return nil, false
	}
	if d.format != "" {
		return nil, true
	}
	return d.file.f, true
}
