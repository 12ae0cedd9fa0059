package core

import (
	"context"
	"os"
	"runtime"

	"github.com/polyhedral/cpm/internal/atomicfile"
)

// Defaults of the options.
const (
	// DefaultMaxLineBytes is the longest line accepted unless
	// WithMaxLineBytes says otherwise.
	DefaultMaxLineBytes = 64 << 20
	// DefaultChunkBytes is the size of the chunks Load and Stream hand to
	// their parser goroutines.
	DefaultChunkBytes = 1 << 20
)

// Option configures a reader (libsvm.Scanner, Load, libsvm.LoadReader,
// libsvm.NewStream, OpenBlocks, rowcache.Open) or a writer (CreateBlocks,
// CreateCompressed). Each option says which of them it concerns; the others
// ignore it.
type Option func(*Options)

type Options struct {
	Ctx context.Context // nil: none

	// readers
	MaxLineBytes int
	MaxIndex     uint32
	ChunkBytes   int
	Workers      int
	Opener       func(path string) (*os.File, error) // nil: os.Open
	ZeroBased    ZeroBased
	Columnar     Columnar // column names of Arrow and Parquet input, Parquet page version

	// writers
	Compression string
	BatchRows   int
	ZstdLevel   ZstdLevel
	File        []atomicfile.Option // rules for the destination (rowcache.Create)
	Err         error               // an invalid option's, reported by the writer

	// reports
	ZeroBasedNotice func(path string) // nil: none
}

// OpenFile opens the input file at path, with the WithOpener function if
// one was given.
func (o *Options) OpenFile(path string) (*os.File, error) {
	if o.Opener != nil {
		return o.Opener(path)
	}
	return os.Open(path)
}

// WithOpener makes OpenBlocks, libsvm.NewStream, Load and rowcache.Open
// open their input file with open instead of os.Open, "-" included (which
// without it is standard input). The
// readers read the file it returns from its start and close it when done;
// errors still name the path given to them. A caller that reads a file
// several times and must read the same file each time, whatever happens to
// its name meanwhile, gives a function returning a new descriptor of a
// file it keeps open.
func WithOpener(open func(path string) (*os.File, error)) Option {
	return func(o *Options) { o.Opener = open }
}

func BuildOptions(opts []Option) Options {
	o := Options{
		MaxLineBytes: DefaultMaxLineBytes,
		MaxIndex:     1<<32 - 1,
		ChunkBytes:   DefaultChunkBytes,
		Workers:      runtime.GOMAXPROCS(0),
		BatchRows:    DefaultBatchRows,
	}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithContext makes Load, libsvm.LoadReader, libsvm.NewStream, OpenBlocks
// (LIBSVM text and the cache) and rowcache.Open stop when ctx is cancelled: their goroutines
// end, and Load or the blocks' Next return an error wrapping ctx.Err()
// instead of the rows not yet read. It makes the output of CreateBlocks
// abandon its work: writes and Close fail with ctx's error and the output is
// discarded, also when the cancellation comes while Close encodes the last
// batch, up to the moment the file is renamed into place. A read of standard input or of another
// file that is not regular (a pipe, a FIFO, a terminal), which may wait
// without end, is abandoned: it goes on in a goroutine of its own until data
// comes or the process exits, and its data is dropped. The Scanner ignores
// the context.
func WithContext(ctx context.Context) Option {
	return func(o *Options) { o.Ctx = ctx }
}

// WithMaxLineBytes sets the longest line accepted, in bytes, not counting
// the newline; a longer line is ErrLineTooLong. Buffers never grow past this
// bound. n <= 0 selects DefaultMaxLineBytes (64 MiB).
func WithMaxLineBytes(n int) Option {
	return func(o *Options) {
		if n <= 0 {
			n = DefaultMaxLineBytes
		}
		o.MaxLineBytes = n
	}
}

// WithMaxIndex sets the largest feature index accepted; a larger one is
// ErrIndexRange, in every format: a *ParseError at the line and column of
// LIBSVM text, a *RowError at the row of an Arrow or Parquet file or a
// cache. Since no row gets past it, it bounds the Dim of every block, and
// so the weights a trainer sizes by it. n == 0 selects the default,
// 1<<32-1.
func WithMaxIndex(n uint32) Option {
	return func(o *Options) {
		if n == 0 {
			n = 1<<32 - 1
		}
		o.MaxIndex = n
	}
}

// WithChunkBytes sets the size of the chunks that Load and Stream cut the
// input into, at line boundaries, for their parser goroutines; a chunk grows
// past it only to hold one line longer than n. n <= 0 selects
// DefaultChunkBytes (1 MiB). The Scanner ignores it.
func WithChunkBytes(n int) Option {
	return func(o *Options) {
		if n <= 0 {
			n = DefaultChunkBytes
		}
		o.ChunkBytes = n
	}
}

// WithWorkers sets the number of parser goroutines of Load and Stream.
// n <= 0 selects GOMAXPROCS. The result never depends on it. The Scanner
// ignores it.
func WithWorkers(n int) Option {
	return func(o *Options) {
		if n <= 0 {
			n = runtime.GOMAXPROCS(0)
		}
		o.Workers = n
	}
}

// WithZeroBased sets how readers map the feature indices they read to the
// 1-based indices rows hold (see ZeroBased); the default is ZeroBasedAuto.
func WithZeroBased(z ZeroBased) Option { return func(o *Options) { o.ZeroBased = z } }

// WithZeroBasedNotice makes readers call notice with the path of each file
// that ZeroBasedAuto reads as 0-based, before its rows are handed out; a
// reader that opens the file again (a pass of each epoch) calls it again.
func WithZeroBasedNotice(notice func(path string)) Option {
	return func(o *Options) { o.ZeroBasedNotice = notice }
}
