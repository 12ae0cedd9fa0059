package reader

import (
	"context"
	"io"
	"os"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/libsvm"
)

// The types, errors and options that every format shares are defined in
// reader/internal/core, which the format packages import; these are their
// names for callers, documented here, with the full detail (fields,
// methods, the exact defaults) in reader/internal/core.

// BlockReader hands out blocks of rows in file order: Next returns io.EOF
// after the last block; a block stays valid and unmodified until it is given
// back with Release; Close stops any goroutines and closes the input and
// may be called more than once. Next and Release are for one goroutine.
type BlockReader = core.BlockReader

// BlockWriter writes blocks of rows to one output (see CreateBlocks).
type BlockWriter = core.BlockWriter

// Option configures a reader or a writer; each option says which of them
// it concerns, and the others ignore it.
type Option = core.Option

// ParseError is the error of a LIBSVM text file at a line and column.
type ParseError = core.ParseError

// RowError is the error of a bad row of an Arrow or Parquet file or a cache.
type RowError = core.RowError

// SchemaError is the error of an Arrow or Parquet file whose columns are not
// the two the package documentation describes.
type SchemaError = core.SchemaError

// OutputFile is a file written by CreateCompressed.
type OutputFile = core.OutputFile

// ZstdLevel is a zstd compression level for writers.
type ZstdLevel = core.ZstdLevel

// Zstd levels (see WithZstdLevel).
const (
	ZstdBetter  = core.ZstdBetter  // zstd.SpeedBetterCompression (the default)
	ZstdFastest = core.ZstdFastest // zstd.SpeedFastest
	ZstdDefault = core.ZstdDefault // zstd.SpeedDefault
	ZstdBest    = core.ZstdBest    // zstd.SpeedBestCompression
)

// Defaults and bounds of the readers and writers.
const (
	// DefaultMaxLineBytes is the longest line accepted unless
	// WithMaxLineBytes says otherwise.
	DefaultMaxLineBytes = core.DefaultMaxLineBytes
	// DefaultChunkBytes is the size of the chunks Load and Stream hand to
	// their parser goroutines.
	DefaultChunkBytes = core.DefaultChunkBytes
	// DefaultBatchRows is the number of rows per Arrow record batch or
	// Parquet row group that CreateBlocks writes by default.
	DefaultBatchRows = core.DefaultBatchRows
	// StreamBlocks is the most blocks a caller may hold at a time from a
	// BlockReader of this package.
	StreamBlocks = core.StreamBlocks
)

// The error taxonomy: every sentinel matches ErrBadInput (see the package
// documentation).
var (
	ErrBadInput    = core.ErrBadInput
	ErrSyntax      = core.ErrSyntax
	ErrIndexZero   = core.ErrIndexZero
	ErrIndexRange  = core.ErrIndexRange
	ErrUnsorted    = core.ErrUnsorted
	ErrDuplicate   = core.ErrDuplicate
	ErrNonFinite   = core.ErrNonFinite
	ErrNoLabel     = core.ErrNoLabel
	ErrLineTooLong = core.ErrLineTooLong
	ErrCorrupt     = core.ErrCorrupt
	ErrSchema      = core.ErrSchema
	ErrNull        = core.ErrNull
)

// Errors of misuse and of unsupported output.
var (
	// ErrClosed is returned by Next after Close.
	ErrClosed = core.ErrClosed
	// ErrBlocksHeld is returned by Next when the caller holds so many
	// blocks that the reader has none left to fill.
	ErrBlocksHeld = core.ErrBlocksHeld
	// ErrNoBzip2Writer is returned by CreateCompressed for a .bz2 path.
	ErrNoBzip2Writer = core.ErrNoBzip2Writer
)

// Open opens the file at path for reading, "-" meaning standard input, and
// decompresses it if it starts with the magic number of zstd, gzip or
// bzip2; anything else is read as it is.
func Open(path string) (io.ReadCloser, error) { return core.Open(path) }

// CreateCompressed creates the file at path, compressed as its extension
// says (.zst, .gz; anything else plain), replaced atomically on Close. A
// .zst file ends with a skippable frame that every zstd decoder skips,
// noting whether its text holds a LIBSVM feature index 0, so that
// reading it with ZeroBasedAuto in blocks need not scan it first.
func CreateCompressed(path string, opts ...Option) (*OutputFile, error) {
	return core.CreateCompressed(path, opts...)
}

// WithContext makes readers stop and writers abandon their output when ctx
// is cancelled.
func WithContext(ctx context.Context) Option { return core.WithContext(ctx) }

// WithOpener makes the readers open their input file with open instead of
// os.Open.
func WithOpener(open func(path string) (*os.File, error)) Option {
	return core.WithOpener(open)
}

// WithMaxLineBytes sets the longest LIBSVM line accepted, in bytes; n <= 0
// selects DefaultMaxLineBytes.
func WithMaxLineBytes(n int) Option { return core.WithMaxLineBytes(n) }

// WithMaxIndex sets the largest feature index accepted, in every format;
// n == 0 selects 1<<32-1.
func WithMaxIndex(n uint32) Option { return core.WithMaxIndex(n) }

// WithChunkBytes sets the size of the chunks that Load and Stream parse in
// parallel; n <= 0 selects DefaultChunkBytes.
func WithChunkBytes(n int) Option { return core.WithChunkBytes(n) }

// WithWorkers sets the number of parser goroutines of Load and Stream;
// n <= 0 selects GOMAXPROCS.
func WithWorkers(n int) Option { return core.WithWorkers(n) }

// WithCompression sets the compression of Arrow ("zstd", "lz4", "none") or
// Parquet ("zstd", "snappy", "none") output.
func WithCompression(name string) Option { return core.WithCompression(name) }

// WithBatchRows sets the rows per Arrow record batch or Parquet row group
// that CreateBlocks writes.
func WithBatchRows(n int) Option { return core.WithBatchRows(n) }

// WithZstdLevel sets the zstd level of compressed output.
func WithZstdLevel(l ZstdLevel) Option { return core.WithZstdLevel(l) }

// ZeroBased says how readers map the feature indices they read to the
// 1-based indices rows hold: ZeroBasedNo keeps them (index 0 is an error),
// ZeroBasedYes adds 1 to each, ZeroBasedAuto (the default) decides per file.
type ZeroBased = core.ZeroBased

// The ZeroBased modes (see WithZeroBased).
const (
	ZeroBasedAuto = core.ZeroBasedAuto
	ZeroBasedNo   = core.ZeroBasedNo
	ZeroBasedYes  = core.ZeroBasedYes
)

// ParseZeroBased parses "auto", "no" or "yes".
func ParseZeroBased(s string) (ZeroBased, error) { return core.ParseZeroBased(s) }

// WithZeroBased sets how readers map the feature indices they read to the
// 1-based indices rows hold; see ZeroBased and, for LIBSVM text, the
// documentation of package libsvm.
func WithZeroBased(z ZeroBased) Option { return core.WithZeroBased(z) }

// WithZeroBasedNotice makes readers call notice with the path of each file
// that ZeroBasedAuto reads as 0-based, before its rows are handed out (once
// per reader of the file).
func WithZeroBasedNotice(notice func(path string)) Option { return core.WithZeroBasedNotice(notice) }

// IsZeroBased reports whether the readers, given opts, read the file at
// path as 0-based, adding 1 to every feature index. For LIBSVM text see
// libsvm.IsZeroBased (auto scans a regular file for an index 0); for the
// other formats it reports whether WithZeroBased is ZeroBasedYes.
func IsZeroBased(path string, opts ...Option) (bool, error) {
	o := core.BuildOptions(opts)
	f, err := detectFormat(path, &o)
	if err != nil {
		return false, err
	}
	if f == LIBSVM {
		return libsvm.IsZeroBased(path, opts...)
	}
	return o.ZeroBased == ZeroBasedYes, nil
}
