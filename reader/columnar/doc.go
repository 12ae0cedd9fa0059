// Package columnar reads and writes sparse rows as Apache Arrow IPC
// (file and stream format, bodies uncompressed or compressed with zstd or
// lz4) and Parquet.
//
// # Reading
//
// Columns are found by name, in any order; columns a layout does not name
// are not read (Arrow IPC decodes them with the batch, Parquet skips their
// column chunks). The label column, "label" or WithLabelColumn's name, may
// be of any integer type (int8 to int64, uint8 to uint64) or floating type
// (float16, float32, float64). The rows are held in one of three layouts,
// chosen from the schema (Describe and each reader's Layout tell which):
//
//   - StructList: a column "features" (or WithFeaturesColumn's name) of type
//     list<struct<index, value>>, the list a list, large_list or
//     fixed_size_list, the struct's fields named index and value in either
//     order (other fields ignored), index of any integer type, value of any
//     floating or integer type. The list's item field may have any name.
//   - TwoLists, when there is no features column: two list columns "index"
//     and "value" (or WithIndexColumn's and WithValueColumn's names; without
//     them, "indices" and "values" too), the indices of any integer type,
//     the values of any floating or integer type, the two lists of each row
//     of equal length (the arrays of a row of a scipy CSR matrix).
//   - Dense, when there is neither: every column but the label is a numeric
//     (integer or floating) or boolean scalar, as pandas' to_parquet writes
//     a data frame. Column i in schema order, the label left out, is
//     feature i (1-based); zeros are not stored, as in LIBSVM text; false
//     is 0 and true 1. Columns named __index_level_N__, where pandas
//     stores a data frame's index, are not features and are not read.
//
// Any other schema is a *reader.SchemaError naming the column and listing
// the file's columns. Values are converted to float32 and indices to the
// uint32 1-based indices of LIBSVM: an integer label or value that a
// float32 cannot hold exactly, a float64 beyond float32's range (it would
// become ±Inf), a negative index, or an index above reader.WithMaxIndex is
// a *reader.RowError naming the row and column; float64 values are rounded
// to the nearest float32.
//
// Indices are 1-based unless the file or the caller says otherwise:
// WithZeroBased(ZeroBasedYes) reads them as 0-based, ZeroBasedNo as
// 1-based, and ZeroBasedAuto (the default) follows the file's metadata key
// cpm.index_base (IndexBaseKey) if present, "0" or "1" (the Arrow schema's
// metadata, or Parquet's key-value metadata), else 1-based. 0-based indices
// are read as index+1, so that rows equal those of the same data in LIBSVM
// text. Index 0 in a 1-based file is an error that says how to read the
// file as 0-based. The rules of the text format hold for the rows read:
// indices strictly ascending within a row, labels and values finite,
// explicit zeros of the list layouts kept. Fields may be declared nullable
// but must hold no nulls: a null label, list, list element, index or value
// is a RowError naming the row and column.
//
// The canonical schema, label: float32, features: list<struct<index:
// uint32, value: float32>> with 1-based indices, is read without
// conversion. Each Arrow record batch of it is one block, read without
// copying: the block's Labels, Idx and Val are the batch's Arrow arrays
// themselves (sliced to the batch's range), and only Ptr is converted from
// the int32 list offsets; the block keeps its batch alive until Release.
// Each Parquet row group of it (or each 2^20 rows of a larger one) is one
// block, decoded by parquet/file's column readers straight into the
// block's arrays, which are reused after Release. Any other schema is
// converted: an Arrow record batch, or a Parquet batch read by pqarrow's
// record reader one row group at a time (at most 2^16 rows, and for a
// dense file at most 2^22 cells, that is 2^22 divided by the number of
// feature columns rows, but at least 256), becomes one block of the
// reader's own arrays. At most reader.StreamBlocks blocks may
// be held at once. Every row is validated as it is handed out; a bad row is
// a *reader.RowError holding the 1-based row number counted from the start
// of the file. A batch holds at most MaxBatchNNZ nonzeros.
//
// Parquet column chunks may be uncompressed or compressed with snappy,
// gzip, brotli, zstd or lz4_raw, in data pages of version 1 or 2, with
// any encoding the Parquet library decodes (PLAIN, dictionary,
// DELTA_BINARY_PACKED, DELTA_BYTE_ARRAY, DELTA_LENGTH_BYTE_ARRAY,
// BYTE_STREAM_SPLIT). A chunk compressed with a codec the library does not
// decode (LZO, the Hadoop framing of LZ4) is an error wrapping
// reader.ErrUnsupported.
//
// # Hostile input
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
// the page headers of every Parquet column chunk read, by either path, are
// walked before the library reads the chunk, and the snappy and zstd
// headers of each compressed page are read before its codec allocates what
// they claim (gzip, brotli and lz4_raw decode into the page's declared
// size and stop there). What any one buffer or page may decode to is
// bounded by 1 GiB or 1024 times the file size, whichever is larger, for
// every codec. The copy of the writer's Arrow schema in a Parquet file's
// key-value metadata (ARROW:schema) is ignored, the Arrow schema derived
// from the Parquet schema alone, so that no unguarded IPC decoding takes
// place. Parquet's Thrift metadata, level streams and dictionary indices
// are left to the library's own checks and limits (ReaderProperties' page
// size limits at their defaults). An Arrow stream must end with its
// end-of-stream marker: the format makes it optional, but every Arrow
// writer writes it on close, and a stream file that ends between two
// messages without it was cut there, so it is refused (ErrCorrupt) rather
// than read as a shorter stream. The file format and Parquet detect
// truncation by their footers.
//
// # Writing
//
// CreateArrow writes Arrow IPC files and streams (bodies uncompressed by
// default, since the Arrow JavaScript library reads compressed bodies only
// with a codec its user registers, or compressed with zstd or lz4) and
// CreateParquet writes Parquet (column chunks compressed with zstd by
// default, or snappy, or not at all; version 1 data pages by default, or
// version 2 with WithParquetPageVersion), in batches of
// reader.WithBatchRows rows. Both write the schema Schema returns, label:
// float32 and features: list<struct<index: uint32, value: float32>>,
// nothing nullable, with 1-based indices and cpm.index_base = "1" in the
// schema metadata (Arrow) and the key-value metadata (Parquet, beside the
// Arrow schema as ARROW:schema).
package columnar
