// Package columnar reads and writes sparse rows as Apache Arrow IPC
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
// LIBSVM's 1-based indices as stored (0 is invalid, at most reader.WithMaxIndex),
// strictly ascending within a row; labels and values are finite; explicit
// zeros are kept. Fields may be declared nullable but must hold no nulls.
// Any other schema (a missing, extra or misplaced column, another type,
// large_list, dictionary encoding) is a *reader.SchemaError naming the
// column. Schema returns the schema that CreateArrow and CreateParquet
// write, with nothing nullable.
//
// Each Arrow record batch is one block, read without copying where the
// types allow: the block's Labels, Idx and Val are the batch's Arrow arrays
// themselves (sliced to the batch's range), and only Ptr is converted from
// the int32 list offsets; the block keeps its batch alive until Release.
// Each Parquet row group (or each 2^20 rows of a larger one) is one block,
// decoded by parquet/file's column readers straight into the block's
// arrays, which are reused after Release. At most reader.StreamBlocks blocks may
// be held at once. Every row is validated as it is handed out; a bad row is
// a *reader.RowError holding the 1-based row number counted from the start of the
// file. A batch holds at most MaxBatchNNZ nonzeros.
//
// Truncated or corrupt files are errors wrapping reader.ErrCorrupt. The ways
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
// CreateArrow writes Arrow IPC files and streams (bodies compressed with
// zstd by default, or lz4, or not at all) and CreateParquet writes Parquet
// (column chunks compressed with zstd by default, or snappy, or not at
// all; version 2 data pages), in batches of reader.WithBatchRows rows.
package columnar
