// Package shard splits a data set into N compressed shard files with a
// seeded global shuffle that works for inputs larger than memory, and reads
// a shard set back as one deterministic stream of blocks with the shards
// decoded concurrently.
//
// # Writing: Split
//
// Split reads any input reader.OpenBlocks reads and writes N shards in two
// passes:
//
//  1. Scatter. The input is streamed block by block; row i (0-based, in
//     input order) is appended to one of N temporary bucket files in the
//     output directory. With Config.Shuffle the bucket is chosen by a
//     seeded hash of (Seed, i), uniform over the N buckets (see bucketOf);
//     otherwise row i goes to bucket (i / Config.BlockRows) mod N, so runs
//     of BlockRows consecutive rows are dealt to the shards round-robin.
//  2. Write. Bucket k becomes shard k. With Shuffle it is loaded into memory
//     and permuted by Fisher–Yates with a math/rand/v2 PCG seeded by
//     (Seed, k) (rng.ShuffleMod of internal/rng, one draw per row);
//     without, it is copied in order.
//
// Memory is about one bucket (plus one input block). A bucket that would
// take more than Config.MaxBucketBytes in memory is scattered again into
// smaller sub-buckets by a further seeded hash, each shuffled on its own and
// appended in turn; the result is still a uniformly random permutation of
// the bucket, because the rows land in sub-buckets independently and
// uniformly. The shuffled shard set as a whole, read shard after shard, is a
// uniform random permutation of the input.
//
// Shards are named ShardName(k, N, ext), e.g. part-00000-of-00004.libsvm.zst,
// and written atomically (temporary file, then rename): LIBSVM text through
// reader.CreateCompressed and libsvm.Writer, Arrow and Parquet through
// reader.CreateBlocks, the extension deciding the format. A manifest,
// ManifestName ("SHARDS"), is written last and atomically; it lists every
// shard with its row, nonzero and byte counts, so a reader can tell a
// complete shard set from a half-written one.
//
// Query ids (sparsevec.CSR.Qid, the qid:N of LIBSVM text) go with their
// rows through the buckets into LIBSVM text shards; Arrow and Parquet
// shards have no column for them, so Split refuses such input for them
// rather than drop the ids. A shuffled split scatters the rows of one
// query over the shards.
//
// # Reading: Open
//
// Open returns a reader.BlockReader over a shard set (a directory with a
// manifest, or a glob). Every shard is opened with reader.OpenBlocks, so
// shards may be in any format that reads; ReadConfig.Readers goroutines
// pull blocks from the shards concurrently, and the blocks are handed out
// in an order that does not depend on scheduling: round-robin over the
// shards, one block of each in turn (see Reader). For shards written
// without shuffle (LIBSVM text read with the BlockRows they were written
// with, or Arrow and Parquet, whose batches hold that many rows), that
// order is exactly the order of the original input.
package shard
