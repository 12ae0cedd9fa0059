// Package reader reads sparse training data in LIBSVM text format, plain or
// compressed, or in Apache Arrow IPC or Parquet form, into sparsevec rows
// and CSR blocks, and writes it back in any of these formats.
//
// # Packages
//
// Package reader is the API: OpenBlocks and Load open a path in
// whatever format it holds (detected from its first bytes, see DetectFormat),
// CreateBlocks and CreateCompressed write one (chosen by its extension),
// one Option type configures readers and writers alike, and one error
// taxonomy (the sentinels below, all of the ErrBadInput class) covers every
// format. Beside it:
//
//   - reader/libsvm reads and writes LIBSVM text: Scanner, Load and
//     LoadReader, Stream (NewStream), Writer, and the BlockWriter that
//     CreateBlocks returns for text; OpenBlocks and Load dispatch every file
//     that is not Arrow, Parquet or a cache to it;
//   - reader/columnar reads Apache Arrow IPC (file and stream format) and
//     Parquet files whose columns hold the rows as a list<struct<index,
//     value>> column, as index and value list columns, or as dense numeric
//     columns, found by name (WithLabelColumn, WithFeaturesColumn,
//     WithIndexColumn, WithValueColumn; DescribeColumns tells which), and
//     writes label: float32, features: list<struct<index: uint32, value:
//     float32>> (OpenArrow, OpenParquet, CreateArrow, CreateParquet,
//     Describe); OpenBlocks dispatches files
//     that start with their magic numbers to it, and CreateBlocks the
//     extensions .arrow, .feather, .ipc, .arrows, .parquet and .pq;
//   - reader/rowcache writes and reads the binary row cache (Create, Open,
//     Tee, Check); OpenBlocks dispatches a file starting with
//     rowcache.Magic to rowcache.Open;
//   - reader/internal/core holds what every format shares: the BlockReader
//     and BlockWriter interfaces, the options, the error taxonomy, row
//     validation, Open's decompression and the compressed output file;
//     reader gives its names to callers;
//   - reader/idx decodes the MNIST idx files (LoadIDX opens them through
//     Open, compressed or not);
//   - reader/internal/colguard holds the checks that protect the Arrow IPC
//     and Parquet readers against arrow-go's failures on hostile input; it
//     returns plain errors, which reader wraps in ErrCorrupt.
//
// The subpackages import nothing of reader, so reader may import them; the
// format packages share only reader/internal/core, and columnar also
// reader/internal/colguard.
//
// # Input
//
// Open detects gzip, zstd and bzip2 from the first bytes of the file, not
// from its name, and otherwise reads plain text; "-" is standard input.
//
// OpenBlocks and Load read "-", standard input, in any format: OpenStdin
// reads its first bytes to tell which. LIBSVM text (plain or compressed)
// is then read as it arrives, relayed through a pipe (or in place when
// standard input is a regular file); the other formats need random access
// or a known size, so standard input is first copied to a temporary file
// in os.TempDir() (cpm-stdin-*), removed when the reader is closed.
// Errors name standard input "-". DetectFormat cannot tell the format of
// "-" without consuming it and returns ErrStdinFormat. Directories and
// globs of files are package input's (input.Resolve).
//
// # LIBSVM text
//
// One row a line: a label, an optional qid:N, then index:value pairs with
// strictly ascending indices; "#" starts a comment (a whole line, or the
// end of one); blank lines and CRLF line ends are accepted. This is the
// dialect of LIBSVM, svmlight and scikit-learn's load_svmlight_file and
// dump_svmlight_file; package libsvm states it exactly.
//
// Rows hold 1-based feature indices. WithZeroBased says how a file's
// indices map to them: ZeroBasedNo keeps them (index 0 is ErrIndexZero),
// ZeroBasedYes adds 1 to each, ZeroBasedAuto (the default) treats a file
// as 0-based when one of its indices is 0: Load decides it for a regular
// LIBSVM file in its one pass, Stream by scanning the file before reading
// it (IsZeroBased, WithZeroBasedNotice); standard input and pipes are read
// as 1-based. The cache records the
// mode, and a cache built with another is stale.
//
// Query ids (qid:N) are kept in sparsevec.CSR.Qid, on every row of a file
// or on none (a file that mixes them is an error at the first row that
// breaks the rule); the LIBSVM writer, the cache and shard.Split carry
// them, and learners ignore them. The Arrow and Parquet readers and
// writers have no column for them; the writers refuse rows that have them
// (ErrUnsupported) rather than drop them.
//
// # Errors
//
// Malformed input is reported as a *ParseError holding the path, the 1-based
// line and byte column, and one of the sentinel errors (ErrSyntax,
// ErrIndexZero, ...), which errors.Is finds. Every sentinel of malformed
// input matches ErrBadInput, and so does every *RowError and every
// *ParseError, *SchemaError and *rowcache.Error that wraps one; one that carries
// an I/O error of the operating system does not. errors.Is(err, ErrBadInput) thus tells a
// bad file from an unreadable one, whatever its format. ErrIndexRange and
// ErrLineTooLong say which limit was exceeded, so that a caller can say how
// to raise it. WithMaxIndex holds in every format, the cache included, so
// that no row handed out has a larger index: it bounds the Dim of every
// block and whatever a trainer sizes by it. Truncated or corrupt
// compressed input is an error wrapping ErrCorrupt, never a silent early end.
// A well-formed Arrow or Parquet file that needs what the readers lack (a
// Parquet codec the library does not decode) is an error wrapping
// ErrUnsupported.
// Nothing in this package panics on bad data.
package reader
