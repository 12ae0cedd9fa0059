// Package input turns a data path into training input: the passes that
// sgd.TrainStream reads, or the rows in memory that sgd.Train and the other
// learners take.
//
// # Data path
//
// Resolve is the one interpretation of a data path, which every command
// of cpm uses for every data flag:
//
//   - a file in any format reader.OpenBlocks reads (LIBSVM text, plain or
//     compressed, Arrow IPC, Parquet, a row cache);
//   - "-", standard input, in any of these formats (reader.OpenStdin:
//     LIBSVM text is read as it arrives, a columnar stream is copied to a
//     temporary file first);
//   - a shard directory written by shard.Split: a directory holding the
//     manifest shard.ManifestName, which lists the files and their row and
//     nonzero counts;
//   - any other directory: its files, found recursively (Hive-style
//     partition directories such as year=2024/ included; the values in
//     their names are not features and are not read), sorted bytewise by
//     their slash-separated path relative to the directory;
//   - a glob (a path that does not exist and holds *, ? or [): its
//     matches, directories among them replaced by their files, sorted
//     bytewise by path.
//
// In a directory or glob, names starting with "." or "_" are skipped, and
// a skipped directory with all it holds: the _SUCCESS, _committed_*,
// .crc and _delta_log entries that Spark, Hadoop, DuckDB and polars write
// beside data. So are SHARDS files in subdirectories and a row cache
// X.cpmcache beside a file X of the set. A directory or glob left with no
// file is an error wrapping ErrNoFiles (and shard.ErrNoMatch); files named as Split names
// shards (part-00000-of-00004...) without their manifest are an error
// wrapping shard.ErrIncomplete. Each file's format is told from its own
// first bytes, so a set may mix formats.
//
// Open resolves the path and keeps every file open (see Identity below).
// Every pass then reads the files as blocks of Config.BlockRows rows: one
// reader.OpenBlocks for a file; for a directory or glob, the files one
// after the other in their order, each closed once it has ended and its
// blocks are released; a shard.Reader with Config.Readers parallel
// readers for a shard set, whose blocks come round-robin over the shards
// and whose per-shard counts are checked against the manifest. Input.Load
// and the function Load read a directory or glob file by file
// (reader.Load) and append the rows in that order.
//
// With Config.Cache the first pass also writes the rows to a binary row
// cache (rowcache.Create, rowcache.Tee), which records the identity
// of the source (the file, or a shard directory's manifest: size,
// modification time, CRC-64 of the first 64 KiB); every later pass, and a
// later run whose source still matches (rowcache.Check), reads the
// cache instead of parsing the source. A stale or corrupt cache is
// rebuilt. CacheStatus says which of these happened.
//
// Config.Cache TempCache is a cache in a temporary file instead (a new
// directory in Config.SpillDir, removed by Close): it records no source,
// serves only the passes of its run, and any input may have one.
// Config.Optional makes the cache one the run can do without, as cpm's
// default cache of --stream is: an error writing it, or putting it in
// place, drops it (Stats.CacheDropped) and the passes go on reading the
// source; and the cache the first pass completes is put in place only
// when the second pass opens, so a run that ends within its first pass
// leaves no cache file.
//
// Input.Passes gives the n polytopes of a run one sgd.Input: they share
// each pass (package input/shared), so that the two polytopes of a
// double-sided CPM parse the source once per pass, each holding at most a
// window of blocks. sgd.TrainStream draws SGD steps from a bounded
// shuffle buffer: rows copied into its arena, or, while the rows packed
// fit in the arena's bytes, pointing into a packed copy that serves every
// later pass without reading the input (a polytope holding one leaves the
// shared passes).
// Input.Load and the function Load instead read one pass into a
// sparsevec.CSR for in-memory training.
//
// # Zero-based indices
//
// With reader.ZeroBasedAuto (the default) the first pass over a LIBSVM
// file scans it for an index 0 before reading its rows
// (reader.IsZeroBased, remembered for the later passes), unless it is a
// .zst file whose note says it holds none: for another tool's file, a
// second read and decompression of it. Run, which opens an Input for one
// run of passes (a streamed training), skips that scan for LIBSVM text
// in regular files: it reads them as 1-based, and when the run meets an
// index 0 (or ends, or fails on the text, in a way the scan would have
// decided otherwise) it discards the run, its cache and temporary files
// with the Input, and runs it again from scratch on an Input read as auto
// reads it, so that the result is the one of the scan-first reading.
//
// # Standard input
//
// Standard input can be read once. Load reads it in one pass. Open, whose
// passes are many, keeps the rows of its first pass in a spill file: a
// row cache (rowcache.Tee) in a new temporary directory in
// Config.SpillDir (os.TempDir() by default, so $TMPDIR), at most
// Config.SpillLimit bytes, read by every later pass, and removed with its
// directory by Close; CacheStatus says CacheSpill and names the file. A
// spill beyond its limit fails the first pass with an error wrapping
// ErrSpillLimit; a pass that would need standard input again (the first
// pass did not complete) fails with ErrStdinOnce. A named Config.Cache
// for standard input is refused (ErrNoCache): it could never be checked
// against its source.
//
// # Identity
//
// A run that makes many passes must read the same rows on each. Open keeps
// every input file open (and the cache once it is complete), and every
// pass reads the kept files (reader.WithOpener) whatever their names hold
// by then: a file replaced by a rename, or a cache rebuilt by another run,
// changes nothing. Each kept file's size, modification time and CRC-64 of
// its first and last 64 KiB are recorded when it is opened and checked
// when every pass opens and when it ends; a file rewritten in place, grown
// or truncated fails the pass with an error wrapping ErrInputChanged that
// names the file and what differs.
//
// # Errors
//
// Open and Load refuse a cache for an input that cannot have one
// (standard input, a directory without a manifest or a glob, "auto" for a
// shard set) with an error wrapping ErrNoCache, before any file is opened.
// An error of one file of a directory or glob names the file (and its
// line or row, as the readers do), after "file i of n". ErrInputChanged says that the
// input changed during the run; ErrClosed, that a pass was opened after
// Close. Errors of the readers (reader.ParseError,
// reader.ErrCorrupt, shard.ErrManifestMismatch, ...) and of the operating
// system are returned wrapped, as they come.
package input
