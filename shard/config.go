package shard

import (
	"cmp"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/polyhedral/cpm/reader"
)

// Defaults of Config and ReadConfig.
const (
	// DefaultExt is the shard file extension: zstd-compressed LIBSVM text.
	DefaultExt = ".libsvm.zst"
	// DefaultBlockRows is the block size of reading and of the
	// round-robin runs.
	DefaultBlockRows = 4096
	// DefaultMaxBucketBytes is the memory a shuffled bucket may take
	// before it is split into sub-buckets (1 GiB).
	DefaultMaxBucketBytes = 1 << 30
	// DefaultProgressEvery is the number of rows between Progress calls.
	DefaultProgressEvery = 1 << 20
	// MaxShards bounds Config.Shards: pass 1 keeps one file open per
	// shard, and names have five digits.
	MaxShards = 99999
)

// Config configures Split. The zero value works: one shard, no shuffle,
// zstd-compressed LIBSVM text.
type Config struct {
	// Shards is the number of shards N. If 0, it defaults to 1. At most
	// MaxShards; pass 1 keeps N bucket files open at once, so N is also
	// bounded by the process's open-file limit.
	Shards int
	// Shuffle permutes the rows globally (see the package documentation);
	// otherwise row i goes to shard (i / BlockRows) mod Shards, in input
	// order.
	Shuffle bool
	// Seed seeds the shuffle. The same input, Shards, Seed and
	// MaxBucketBytes give byte-identical shuffled shards, whatever
	// BlockRows, the input's format or the Go release. (A bucket over
	// MaxBucketBytes is shuffled in parts, which draws another order.)
	Seed uint64
	// Ext is the shard file extension, which decides the format as
	// reader.FormatForOutput does: LIBSVM text compressed by the outer
	// extension as reader.CreateCompressed does (".libsvm.zst" zstd,
	// ".libsvm.gz" gzip, ".libsvm" plain), or through reader.CreateBlocks
	// an Arrow IPC file (".arrow"), Arrow IPC stream (".arrows") or Parquet
	// file (".parquet"), with record batches or row groups of BlockRows
	// rows. If empty, it defaults to DefaultExt. It must start with a dot.
	// The binary cache (".cpmcache") and bzip2 are refused.
	Ext string
	// ZstdLevel is the compression level of LIBSVM .zst shards; the zero
	// value is reader.ZstdBetter, reader.CreateCompressed's default. Arrow
	// and Parquet shards use reader.CreateBlocks' default compression.
	ZstdLevel reader.ZstdLevel
	// BlockRows is the number of rows per block read from the input, of
	// the record batches of Arrow and Parquet shards and, without Shuffle,
	// the length of the runs dealt to the shards round-robin. If 0, it defaults to DefaultBlockRows. Read the shard set
	// with the same ReadConfig.BlockRows to get the input order back.
	BlockRows int
	// MaxBucketBytes bounds the memory of one shuffled bucket, counted as
	// 16 bytes per row plus 8 per nonzero (its CSR form and permutation);
	// a larger bucket is split into sub-buckets first. If 0, it defaults
	// to DefaultMaxBucketBytes. A single row is always loaded whole.
	MaxBucketBytes int64
	// Force lets Split write into a directory that holds other files:
	// the files of a previous shard set (its manifest and files named like
	// shards) are removed, and unrelated files are left alone.
	Force bool
	// Progress, if set, is called about every ProgressEvery rows of each
	// phase, from the goroutine running Split.
	Progress func(Progress)
	// ProgressEvery is the number of rows between Progress calls. If 0, it
	// defaults to DefaultProgressEvery.
	ProgressEvery int64
}

// withDefaults returns cfg with defaults filled in, or an error for a value
// that can have no meaning.
func (cfg Config) withDefaults() (Config, error) {
	cfg.Shards = cmp.Or(cfg.Shards, 1)
	if cfg.Shards < 0 || cfg.Shards > MaxShards {
		return cfg, fmt.Errorf("shard: %d shards: want 1..%d", cfg.Shards, MaxShards)
	}
	if cfg.Ext == "" {
		cfg.Ext = DefaultExt
	}
	if !strings.HasPrefix(cfg.Ext, ".") || strings.ContainsAny(cfg.Ext, `/\`) {
		return cfg, fmt.Errorf("shard: extension %q: want a dot and no path separator, e.g. %s", cfg.Ext, DefaultExt)
	}
	switch f := reader.FormatForOutput("x" + cfg.Ext); {
	case f == reader.Cache:
		return cfg, fmt.Errorf("shard: extension %s (%v): %w; use LIBSVM text, Arrow or Parquet", cfg.Ext, f, ErrFormat)
	case strings.EqualFold(filepath.Ext(cfg.Ext), ".bz2"):
		return cfg, fmt.Errorf("shard: extension %s: %w", cfg.Ext, reader.ErrNoBzip2Writer)
	}
	cfg.BlockRows = cmp.Or(cfg.BlockRows, DefaultBlockRows)
	if cfg.BlockRows < 0 {
		return cfg, fmt.Errorf("shard: BlockRows %d < 0", cfg.BlockRows)
	}
	cfg.MaxBucketBytes = cmp.Or(cfg.MaxBucketBytes, DefaultMaxBucketBytes)
	if cfg.MaxBucketBytes < 0 {
		return cfg, fmt.Errorf("shard: MaxBucketBytes %d < 0", cfg.MaxBucketBytes)
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = DefaultProgressEvery
	}
	return cfg, nil
}

// Phase is a stage of Split.
type Phase int

const (
	// Scatter is pass 1: reading the input into bucket files.
	Scatter Phase = iota
	// WriteShards is pass 2: turning buckets into shard files.
	WriteShards
)

func (p Phase) String() string {
	switch p {
	case Scatter:
		return "scatter"
	case WriteShards:
		return "write"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// Progress reports how far Split has come.
type Progress struct {
	Phase Phase
	// Rows is the number of rows done in this phase so far.
	Rows int64
	// Shard is the shard being written (WriteShards only).
	Shard int
	// Elapsed is the time since the phase began.
	Elapsed time.Duration
}

// ReadConfig configures Open. The zero value works.
type ReadConfig struct {
	// Readers is the number of goroutines pulling blocks from the shards;
	// shard s is read by goroutine s mod Readers. If 0, it defaults to
	// min(2, number of shards); it is capped at the number of shards.
	Readers int
	// BlockRows is the block size asked of every shard's reader (see
	// reader.OpenBlocks). If 0, it defaults to DefaultBlockRows.
	BlockRows int
	// Workers is the number of parser goroutines of each LIBSVM shard
	// (reader.WithWorkers). If 0, it defaults to
	// max(1, GOMAXPROCS / number of shards), so that all shards together
	// parse on about GOMAXPROCS goroutines, each shard with its own
	// decompressor; a reader.WithWorkers option given to Open overrides it.
	Workers int
}

// withDefaults fills in the defaults for a set of n shards.
func (cfg ReadConfig) withDefaults(n int) (ReadConfig, error) {
	if cfg.Readers < 0 || cfg.BlockRows < 0 || cfg.Workers < 0 {
		return cfg, fmt.Errorf("shard: negative ReadConfig %+v", cfg)
	}
	cfg.Readers = cmp.Or(cfg.Readers, 2)
	cfg.Readers = max(1, min(cfg.Readers, n))
	cfg.BlockRows = cmp.Or(cfg.BlockRows, DefaultBlockRows)
	cfg.Workers = cmp.Or(cfg.Workers, max(1, runtime.GOMAXPROCS(0)/max(n, 1)))
	return cfg, nil
}
