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
// # Input
//
// Open detects gzip, zstd and bzip2 from the first bytes of the file, not
// from its name, and otherwise reads plain text; "-" is standard input.
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
