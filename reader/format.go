package reader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/polyhedral/cpm/reader/columnar"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// Format is an on-disk layout of sparse rows that this package reads.
type Format int

const (
	// LIBSVM is LIBSVM text, plain or compressed with zstd, gzip or bzip2
	// (see Open).
	LIBSVM Format = iota
	// ArrowFile is the Arrow IPC file format (Feather v2), magic "ARROW1".
	ArrowFile
	// ArrowStream is the Arrow IPC streaming format.
	ArrowStream
	// Parquet is an Apache Parquet file, magic "PAR1".
	Parquet
	// Cache is the binary row cache of package rowcache.
	Cache
)

func (f Format) String() string {
	switch f {
	case LIBSVM:
		return "libsvm"
	case ArrowFile:
		return "arrow"
	case ArrowStream:
		return "arrow-stream"
	case Parquet:
		return "parquet"
	case Cache:
		return "cache"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Magic numbers at the start of each binary format.
var (
	arrowFileMagic   = []byte("ARROW1")
	arrowStreamMagic = []byte{0xff, 0xff, 0xff, 0xff} // IPC continuation marker
	parquetMagic     = []byte("PAR1")
	cacheMagic       = []byte(rowcache.Magic)
)

// ErrStdinFormat is returned by DetectFormat for "-": the first bytes of
// standard input can be read only by the reader that reads the rest
// (OpenBlocks, Load and OpenStdin tell its format as they open it).
var ErrStdinFormat = errors.New("reader: the format of standard input is told as it is opened (OpenBlocks, Load), not beforehand")

// DetectFormat tells the format of the file at path from its first bytes,
// never from its name. Anything that is not Arrow, Parquet or a cache is
// LIBSVM text (compressed or not; Open tells which). For "-" it returns
// ErrStdinFormat.
func DetectFormat(path string) (Format, error) {
	return detectFormat(path, &core.Options{})
}

// detectFormat is DetectFormat with the file opened by o.openFile.
func detectFormat(path string, o *core.Options) (Format, error) {
	if path == "-" {
		return 0, ErrStdinFormat
	}
	f, err := o.OpenFile(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var head [8]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return sniff(head[:n]), nil
}

// sniff classifies a file by its first bytes.
func sniff(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, cacheMagic):
		return Cache
	case bytes.HasPrefix(head, arrowFileMagic):
		return ArrowFile
	case bytes.HasPrefix(head, parquetMagic):
		return Parquet
	case bytes.HasPrefix(head, arrowStreamMagic):
		return ArrowStream
	}
	return LIBSVM
}

// FormatForOutput chooses the format of an output file from its name
// (case-insensitive): .arrow, .feather and .ipc are the Arrow IPC file
// format, .arrows the Arrow IPC stream format, .parquet and .pq Parquet,
// .cpmcache the binary cache; anything else (including .zst, .gz) is
// LIBSVM text, compressed by the outer extension as CreateCompressed does.
func FormatForOutput(path string) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".arrow", ".feather", ".ipc":
		return ArrowFile
	case ".arrows":
		return ArrowStream
	case ".parquet", ".pq":
		return Parquet
	case ".cpmcache":
		return Cache
	}
	return LIBSVM
}

// OpenBlocks opens path in whatever format DetectFormat finds and returns a
// BlockReader over its rows. blockRows is the block size for LIBSVM text
// and the cache; Arrow and Parquet blocks follow the file's record batches
// (row groups), which are handed out without copying where the types allow.
// The options apply to LIBSVM text; WithMaxIndex and WithOpener apply to
// every format. "-" is standard input in any of these formats, read as
// OpenStdin says (named StdinName in errors; a temporary copy of a
// columnar stream is removed by Close).
func OpenBlocks(path string, blockRows int, opts ...core.Option) (core.BlockReader, error) {
	if path == "-" {
		return openStdinBlocks(os.Stdin, blockRows, opts)
	}
	o := core.BuildOptions(opts)
	f, err := detectFormat(path, &o)
	if err != nil {
		return nil, err
	}
	return openFormat(path, f, blockRows, opts)
}

// openFormat opens path as a file of format f.
func openFormat(path string, f Format, blockRows int, opts []core.Option) (core.BlockReader, error) {
	switch f {
	case ArrowFile, ArrowStream:
		return columnar.OpenArrow(path, f == ArrowStream, opts...)
	case Parquet:
		return columnar.OpenParquet(path, opts...)
	case Cache:
		return rowcache.Open(path, blockRows, opts...)
	}
	return libsvm.NewStream(path, blockRows, opts...)
}

// ReadAll reads every remaining block of b into one CSR and closes b. The
// blocks of a reader that lets the caller keep them (core.Detacher: Arrow
// IPC and Parquet) are kept and joined at the end, so that the rows are
// copied once into exactly sized arrays, or not at all when there is one
// block; those of any other reader are copied as they come, each released
// once copied.
func ReadAll(b core.BlockReader) (*sparsevec.CSR, error) {
	defer b.Close()
	d, keep := b.(core.Detacher)
	m := &sparsevec.CSR{Ptr: []int{0}}
	var kept []*sparsevec.CSR
	for {
		blk, err := b.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if keep {
			d.Detach(blk)
			kept = append(kept, blk)
			continue
		}
		m.AppendCSR(blk)
		b.Release(blk)
	}
	if err := b.Close(); err != nil {
		return nil, err
	}
	switch {
	case len(kept) == 1:
		m = kept[0]
	case len(kept) > 1:
		m = core.ConcatCSR(kept)
	}
	return m, nil
}
