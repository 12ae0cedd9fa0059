// Package interop holds only tests: the interoperability matrix of cpm's
// readers and writers with independent tools.
//
// TestToolsWriteCPMReads builds one small seeded data set (200 rows, 30
// features, labels ±1, every value a float32), writes it as LIBSVM text
// with cpm's writer (the reference) and as JSON, and runs
// scripts/interop/gen.mjs, which writes the same rows in every variant
// that DuckDB, polars, Apache Arrow JS, parquet-wasm (arrow-rs) and
// hyparquet-writer produce, and as scikit-learn's dump_svmlight_file
// writes LIBSVM text (0-based, "%.16g", with qid, a comment header and
// CRLF, gzipped), and reads every file back with a reader other than cpm
// to check it. Each variant is one subtest named tool/variant: cpm reads
// it with its default options (reader.Load, and reader.OpenBlocks, which
// must agree; a directory of Parquet files as input.Load reads it,
// checked against its files read one by one in path order) and must hand
// out exactly the reference rows (labels, 1-based indices,
// values as float32; rows of a directory compared as a multiset), and a
// CPM trained on them (K = 2, fixed seed) must be byte-identical to the
// one trained on the reference file. A variant whose files cannot give
// the rows (Hive partitions by the label leave the label out of the
// files; Parquet's deprecated Hadoop LZ4 codec) must be refused with an
// error of the ErrBadInput class naming the file and what is wrong.
//
// TestCPMWritesToolsRead writes the reference rows with reader.CreateBlocks
// as Parquet (zstd, snappy, none) and Arrow IPC files and streams (zstd,
// lz4, none), and runs scripts/interop/read.mjs, which reads them with
// DuckDB, hyparquet, parquet-wasm and polars (Parquet) or Apache Arrow JS
// and polars (Arrow IPC); each tool must read exactly the rows written.
//
// The tests need node and the packages scripts/interop/package-lock.json
// pins (cd scripts/interop && npm ci). Without them they skip, unless
// CPM_INTEROP is set (as CI sets it), when they fail. The log names the
// version of every tool that wrote or read a file.
package interop
