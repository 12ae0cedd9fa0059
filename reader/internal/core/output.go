package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/internal/iocount"
)

// ErrNoBzip2Writer is returned by CreateCompressed for a .bz2 output path:
// the Go standard library decompresses bzip2 but cannot compress it.
var ErrNoBzip2Writer = errors.New("bzip2 output is not supported (Go has a bzip2 decoder only); use .zst or .gz")

func Finite32(v float32) bool {
	return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
}

// OutputFile is an output created by CreateCompressed. Data written to it is
// compressed according to the path's extension and written by the rules of
// package internal/atomicfile: a regular file (or the target of a symbolic
// link) lands in a temporary file next to the destination, named
// ".<base>.tmp-<pid>-<random>", that Close renames into place, so the
// destination either does not change or holds the complete output; a
// character device or FIFO is written straight through; a directory, block
// device or socket is refused.
//
// The usual pattern is
//
//	out, err := reader.CreateCompressed(path)
//	if err != nil { ... }
//	defer out.Abort() // removes the temporary file unless Close succeeded
//	... write ...
//	return out.Close()
//
// A process that dies before Close leaves the temporary file behind; a
// later run's write to the same destination removes it. An OutputFile is not safe
// for concurrent use.
type OutputFile struct {
	path string           // destination; "-" for standard output
	file *atomicfile.File // where the compressed bytes go
	cw   iocount.Writer   // counts bytes reaching file
	enc  io.Writer        // cw, or a compressor writing to cw
	zc   io.Closer        // the compressor, if any
	// zs scans the text of a .zst output for a feature index 0 until zero
	// is set, for the note Close appends (zstdnote.go); nil for others.
	zs   *ZeroScanner
	zero bool
	done bool            // Close or Abort has run
	ctx  context.Context // WithContext's (CreateBlocks); nil: none
}

// cancelled returns the error of o's context once it is cancelled.
func (o *OutputFile) cancelled() error {
	if o.ctx == nil {
		return nil
	}
	return o.ctx.Err()
}

// ZstdLevel is the compression level of a .zst output (WithZstdLevel). The
// zero value is ZstdBetter, CreateCompressed's default. Each level maps to a
// klauspost/compress zstd.EncoderLevel (the zstd tool's levels that
// zstd.EncoderLevelFromZstd maps to each):
//
//	ZstdFastest  zstd.SpeedFastest            (zstd -1, -2)
//	ZstdDefault  zstd.SpeedDefault            (zstd -3 to -5)
//	ZstdBetter   zstd.SpeedBetterCompression  (zstd -6 to -9)
//	ZstdBest     zstd.SpeedBestCompression    (zstd -10 and up)
//
// Speeds and sizes of each level on MNIST text are in bench/RESULTS.md.
type ZstdLevel int

// The zstd levels. ZstdBetter is first so that the zero value is the default.
const (
	ZstdBetter  ZstdLevel = iota // zstd.SpeedBetterCompression (the default)
	ZstdFastest                  // zstd.SpeedFastest
	ZstdDefault                  // zstd.SpeedDefault
	ZstdBest                     // zstd.SpeedBestCompression
)

// String returns "fastest", "default", "better" or "best", or
// "ZstdLevel(n)" for a value outside the enum.
func (l ZstdLevel) String() string {
	switch l {
	case ZstdFastest:
		return "fastest"
	case ZstdDefault:
		return "default"
	case ZstdBetter:
		return "better"
	case ZstdBest:
		return "best"
	}
	return "ZstdLevel(" + strconv.Itoa(int(l)) + ")"
}

// encoderLevel maps l to klauspost's level; ok is false outside the enum.
func (l ZstdLevel) encoderLevel() (lvl zstd.EncoderLevel, ok bool) {
	switch l {
	case ZstdFastest:
		return zstd.SpeedFastest, true
	case ZstdDefault:
		return zstd.SpeedDefault, true
	case ZstdBetter:
		return zstd.SpeedBetterCompression, true
	case ZstdBest:
		return zstd.SpeedBestCompression, true
	}
	return 0, false
}

// WithZstdLevel sets the compression level of a .zst output (default
// ZstdBetter); other outputs ignore it. A value outside the enum makes
// CreateCompressed fail.
//
// The encoder compresses one stream on one core (its second goroutine only
// overlaps writing), so its speed bounds how fast an output can be written;
// higher levels are slower and smaller.
func WithZstdLevel(l ZstdLevel) Option {
	return func(o *Options) {
		if _, ok := l.encoderLevel(); !ok {
			o.Err = fmt.Errorf("zstd level %v: not one of fastest, default, better, best", l)
			return
		}
		o.ZstdLevel = l
	}
}

// CreateCompressed creates an output at path, compressed by the path's
// extension (case-insensitive):
//
//	.zst  zstd (klauspost/compress, 2 goroutines, with checksum), level
//	      WithZstdLevel, default ZstdBetter (SpeedBetterCompression),
//	      then a skippable frame recording whether the text holds a
//	      LIBSVM feature index 0 (see ZstdNote)
//	.gz   gzip (klauspost/compress, default level)
//	.bz2  rejected with ErrNoBzip2Writer
//	other uncompressed
//
// The path "-" means standard output, uncompressed, written directly; Close
// then flushes but does not close os.Stdout, and Abort cannot take back what
// was written. See OutputFile for the rules by which the path is written.
// An invalid option is an error naming the path, and nothing is created.
func CreateCompressed(path string, opts ...Option) (*OutputFile, error) {
	return CreateOutput(nil, path, opts...)
}

// CreateOutput is CreateCompressed with a context: once ctx is cancelled,
// Write and Close fail with its error and the output is discarded, as
// WithContext describes for CreateBlocks. ctx may be nil.
func CreateOutput(ctx context.Context, path string, opts ...Option) (*OutputFile, error) {
	cfg := BuildOptions(opts)
	if cfg.Err != nil {
		return nil, fmt.Errorf("%s: %w", path, cfg.Err)
	}
	ext := strings.ToLower(filepath.Ext(path))
	if path == "-" {
		ext = ""
	} else if ext == ".bz2" {
		return nil, fmt.Errorf("%s: %w", path, ErrNoBzip2Writer)
	}
	file, err := atomicfile.Create(path, append(cfg.File, atomicfile.Stdout(os.Stdout))...)
	if err != nil {
		return nil, err
	}
	o := &OutputFile{path: path, file: file, ctx: ctx}
	o.cw.W = file
	o.enc = &o.cw
	switch ext {
	case ".zst":
		lvl, _ := cfg.ZstdLevel.encoderLevel() // checked by WithZstdLevel
		zw, err := zstd.NewWriter(&o.cw,
			zstd.WithEncoderLevel(lvl),
			zstd.WithEncoderConcurrency(2))
		if err != nil {
			file.Abort()
			return nil, fmt.Errorf("%s: zstd: %w", path, err)
		}
		o.enc, o.zc = zw, zw
		o.zs = new(ZeroScanner)
	case ".gz":
		zw := gzip.NewWriter(&o.cw)
		o.enc, o.zc = zw, zw
	}
	return o, nil
}

// Write compresses p into the output.
func (o *OutputFile) Write(p []byte) (int, error) {
	if o.done {
		return 0, fmt.Errorf("%s: write after Close or Abort: %w", o.path, os.ErrClosed)
	}
	if err := o.cancelled(); err != nil {
		return 0, err
	}
	if o.zs != nil && !o.zero {
		o.zero = o.zs.Scan(p)
	}
	return o.enc.Write(p)
}

// Written returns the number of bytes, after compression, that have reached
// the temporary file (or standard output) so far; the zstd compressor works
// in the background, so this lags behind Write. After a successful Close it
// is the size of the output.
func (o *OutputFile) Written() int64 { return o.cw.N() }

// Close finishes the compressed stream and closes the output
// (atomicfile.File.Close): a temporary file is synced, renamed over the
// destination (the target of a symbolic link at path) and the directory
// synced. On error the temporary file is removed and the destination is
// left as it was. Calling Close more than once, or after Abort, returns an
// error wrapping os.ErrClosed.
func (o *OutputFile) Close() error {
	if o.done {
		return fmt.Errorf("%s: %w", o.path, os.ErrClosed)
	}
	o.done = true
	if o.zc != nil {
		if err := o.zc.Close(); err != nil {
			o.file.Abort()
			return fmt.Errorf("%s: finishing compressed stream: %w", o.path, err)
		}
	}
	if o.zs != nil {
		if _, err := o.cw.Write(appendZstdNote(nil, o.cw.N(), o.zero)); err != nil {
			o.file.Abort()
			return fmt.Errorf("%s: finishing compressed stream: %w", o.path, err)
		}
	}
	if err := o.cancelled(); err != nil {
		o.file.Abort()
		return err
	}
	return o.file.Close()
}

// Abort discards the output: it stops the compressor and removes the
// temporary file, leaving the destination untouched. It is a no-op after
// Close or a previous Abort, so it can be deferred unconditionally.
func (o *OutputFile) Abort() {
	if o.done {
		return
	}
	o.done = true
	if o.zc != nil {
		if zw, ok := o.zc.(*zstd.Encoder); ok {
			zw.Reset(io.Discard) // release the encoder without writing a frame end
		}
		o.zc.Close()
	}
	o.file.Abort()
}
