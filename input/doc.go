// Package input turns a path into training input: the passes that
// sgd.TrainStream reads, or the rows in memory that sgd.Train and the other
// learners take.
//
// # Data path
//
// A path names a file in any format reader.OpenBlocks reads (LIBSVM text,
// plain or compressed, Arrow IPC, Parquet, a row cache; "-" for standard
// input), a shard directory written by shard.Split (its manifest lists the
// files and their row and nonzero counts), or a glob of shard files. Open
// resolves it to a list of files and keeps each one open (see Identity
// below). Every pass then reads the files as blocks of Config.BlockRows
// rows: one reader.OpenBlocks for a file, a shard.Reader with
// Config.Readers parallel readers for a shard set, whose per-shard counts
// are checked against the manifest.
//
// With Config.Cache the first pass also writes the rows to a binary row
// cache (rowcache.Create, rowcache.Tee), which records the identity
// of the source (the file, or a shard directory's manifest: size,
// modification time, CRC-64 of the first 64 KiB); every later pass, and a
// later run whose source still matches (rowcache.Check), reads the
// cache instead of parsing the source. A stale or corrupt cache is
// rebuilt. CacheStatus says which of these happened.
//
// Input.Passes gives the n polytopes of a run one sgd.Input: they share
// each pass (package input/shared), so that the two polytopes of a
// double-sided CPM parse the source once per pass, each holding at most a
// window of blocks. sgd.TrainStream copies the rows of every block into
// its bounded shuffle buffer and draws SGD steps from it.
// Input.Load and the function Load instead read one pass into a
// sparsevec.CSR for in-memory training.
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
// (standard input, a glob, "auto" for a shard set) with an error wrapping
// ErrNoCache, before any file is opened. ErrInputChanged says that the
// input changed during the run; ErrClosed, that a pass was opened after
// Close. Errors of the readers (reader.ParseError,
// reader.ErrCorrupt, shard.ErrManifestMismatch, ...) and of the operating
// system are returned wrapped, as they come.
package input
