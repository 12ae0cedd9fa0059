// Package reader reads sparse training data in LIBSVM text format, plain or
// compressed, or in Apache Arrow IPC or Parquet form, into sparsevec rows
// and CSR blocks, and writes it back in any of these formats.
//
// # Packages
//
// Package reader is the API: OpenBlocks, Load and Stream open a path in
// whatever format it holds (detected from its first bytes, see DetectFormat),
// CreateBlocks and CreateCompressed write one (chosen by its extension),
// one Option type configures readers and writers alike, and one error
// taxonomy (the sentinels below, all of the ErrBadInput class) covers every
// format. Beside it:
//
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
// format packages share only reader/internal/core.
//
// # Format
//
// One example per line:
//
//	label [qid:N] index:value index:value ... [# comment]
//
// where:
//
//   - label is a decimal float ("+1", "-1", "2", "0.5", "1e-3"); it must be
//     finite. A line that starts with an index:value pair has no label and is
//     an error (ErrNoLabel).
//   - qid:N, if present, must directly follow the label; N is an unsigned
//     decimal integer. It is validated and ignored.
//   - index is a 1-based decimal uint32, at most MaxIndex (WithMaxIndex,
//     default 1<<32-1). Indices within a line are strictly ascending.
//   - value is a float32 written in decimal (anything strconv.ParseFloat
//     accepts) and must be finite. Explicit zeros are kept, so a row reads
//     back exactly as written.
//   - Tokens are separated by spaces or tabs; trailing whitespace and a
//     carriage return before the newline (CRLF files) are tolerated.
//   - "#" begins a comment that runs to the end of the line, at the start
//     of a token or glued to the end of a label, value or qid ("1 1:2#c"
//     is the row 1 1:2, "1#c" a row with no features), as scikit-learn's
//     load_svmlight_file reads it. A "#" where a value is due ("1 1:#")
//     leaves the value empty, a syntax error there as in scikit-learn.
//     Blank and comment-only lines are skipped but counted, so line
//     numbers in errors match the file.
//   - A line may hold at most MaxLineBytes bytes, not counting the newline
//     (WithMaxLineBytes, default 64 MiB). No buffer grows beyond that.
//
// # Input
//
// Open detects gzip, zstd and bzip2 from the first bytes of the file, not
// from its name, and otherwise reads plain text; "-" is standard input.
//
// # Reading
//
// Three ways to read, by data size:
//
//   - Scanner reads one row at a time in the shape of bufio.Scanner; Row's
//     buffers are reused and Scan allocates nothing per row.
//   - Load and LoadReader read a whole file into one CSR, parsing chunks of
//     the input on every core (GOMAXPROCS) while one goroutine reads and
//     decompresses; the result does not depend on scheduling.
//   - Stream hands out CSR blocks of a fixed number of rows for data that
//     does not fit in memory, with the same parallel pipeline running ahead
//     and a fixed pool of reusable blocks, so memory stays bounded.
//
// # Arrow and Parquet
//
// OpenBlocks, Load and CreateBlocks also read and write Apache Arrow IPC
// (file and stream format, bodies uncompressed or compressed with zstd or
// lz4) and Parquet (column chunks uncompressed or compressed with zstd or
// snappy). Both hold exactly two columns, in this order:
//
//	label:    float32
//	features: list<item: struct<index: uint32, value: float32>>
//
// One list per row; the list offsets are the CSR row pointers and the
// struct's children are the index and value arrays. The list's item field
// may have any name; the struct's children must be named index and value
// (in either order). The rules of the text format hold: indices are
// LIBSVM's 1-based indices as stored (0 is invalid, at most MaxIndex),
// strictly ascending within a row; labels and values are finite; explicit
// zeros are kept. Fields may be declared nullable but must hold no nulls.
// Any other schema (a missing, extra or misplaced column, another type,
// large_list, dictionary encoding) is a *SchemaError naming the column.
// Schema returns the schema that CreateBlocks writes, with nothing
// nullable.
//
// Each Arrow record batch is one block, read without copying where the
// types allow: the block's Labels, Idx and Val are the batch's Arrow arrays
// themselves (sliced to the batch's range), and only Ptr is converted from
// the int32 list offsets; the block keeps its batch alive until Release.
// Each Parquet row group (or each 2^20 rows of a larger one) is one block,
// decoded by parquet/file's column readers straight into the block's
// arrays, which are reused after Release. At most StreamBlocks blocks may
// be held at once. Every row is validated as it is handed out; a bad row is
// a *RowError holding the 1-based row number counted from the start of the
// file. A batch holds at most MaxBatchNNZ nonzeros.
//
// Truncated or corrupt files are errors wrapping ErrCorrupt. The ways
// github.com/apache/arrow-go/v18 fails on corrupt input that its own limits
// do not cover are guarded against: its panics are recovered; the
// flatbuffers of an Arrow schema, the Arrow file footer and the lengths of
// each stream message are checked against the bytes that hold them before
// the library trusts them (it would otherwise reserve whatever a length
// claims, a fatal out-of-memory, or recurse forever); the zstd frame
// headers of each compressed Arrow IPC buffer are read before the library's
// streaming decoder allocates their window (content size at most the
// buffer's declared length, window at most 8 MiB or twice that length);
// the snappy and zstd headers of each compressed Parquet page are read
// before its codec allocates what they claim. What any one buffer or page
// may decode to is bounded by 1 GiB or 1024 times the file size, whichever
// is larger. Parquet's Thrift metadata, page headers, level streams and
// dictionary indices are left to the library's own checks and limits
// (ReaderProperties' page size limits at their defaults).
// An Arrow stream must end with its end-of-stream marker: the
// format makes it optional, but every Arrow writer writes it on close, and a
// stream file that ends between two messages without it was cut there, so it
// is refused (ErrCorrupt) rather than read as a shorter stream. The file
// format and Parquet detect truncation by their footers.
//
// CreateBlocks writes LIBSVM text, Arrow IPC files and streams (bodies
// compressed with zstd by default, or lz4, or not at all) and Parquet
// (column chunks compressed with zstd by default, or snappy, or not at
// all; version 2 data pages), in batches of WithBatchRows rows.
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
// Nothing in this package panics on bad data.
package reader
