package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/shard"
)

const shardUsage = `cpm shard -n N [--shuffle [--seed S]] [--ext .libsvm.zst] [flags] IN OUTDIR

Splits IN (LIBSVM text, plain or zstd/gzip/bzip2-compressed, or any format
"cpm train" reads; - for standard input) into N shard files in OUTDIR,
named part-00000-of-0000N.EXT, then writes the manifest OUTDIR/SHARDS last.

With --shuffle the rows are shuffled globally with the seed, in two passes
that hold about one shard in memory (inputs larger than memory work):
pass 1 scatters every row to one of N hidden bucket files in OUTDIR by a
seeded hash of its row number, pass 2 shuffles each bucket and writes it.
Without --shuffle, runs of --block-rows consecutive rows are dealt to the
shards round-robin (run j to shard j mod N), keeping the input order within
each shard; "cpm train --stream -t OUTDIR" then reads the rows in input order.

The shard extension picks the format: LIBSVM text compressed by the outer
extension (.libsvm.zst zstd, .libsvm.gz gzip, .libsvm plain), or an Arrow
IPC file (.arrow), Arrow stream (.arrows) or Parquet file (.parquet) with
record batches of --block-rows rows.
OUTDIR must be empty or hold the same shard set (same -n and --ext);
--force replaces another shard set and leaves unrelated files alone. Bucket
files are removed on success and on failure; on failure no manifest is left.`

// runShard implements "cpm shard". It prints progress (with --progress)
// and a one-line summary to stderr.
func runShard(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseShard(args, stderr)
	if err != nil {
		return err
	}
	defer o.lim.annotate(&err)
	if err := checkOutDir(o.out, o.in); err != nil {
		return err
	}
	if o.progress {
		o.cfg.ProgressEvery = 4096
		o.cfg.Progress = shardProgress(stderr, o.cfg.Shards)
	}
	start := time.Now()
	m, err := shard.Split(ctx, o.in, o.out, o.cfg, o.lim.opts(ctx)...)
	switch {
	case errors.Is(err, shard.ErrFormat), errors.Is(err, reader.ErrNoBzip2Writer):
		return usageError{err}
	case errors.Is(err, shard.ErrNotEmpty):
		return fmt.Errorf("%w; --force writes there anyway", err)
	case err != nil:
		return err
	}
	order := "in runs of " + strconv.Itoa(o.cfg.BlockRows) + " rows"
	if m.Shuffled {
		order = "shuffled with seed " + strconv.FormatUint(m.Seed, 10)
	}
	fmt.Fprintf(stderr, "shard: %d rows, %d nonzeros -> %d shards in %s (%s), %d bytes, %.2fs\n",
		m.Rows(), m.NNZ(), len(m.Shards), o.out, order, m.Bytes(), time.Since(start).Seconds())
	return nil
}

// shardOptions is the command line of "cpm shard".
type shardOptions struct {
	in, out  string
	cfg      shard.Config
	progress bool
	lim      *inputLimits
}

// parseShard parses and checks the command line of "cpm shard".
func parseShard(args []string, stderr io.Writer) (*shardOptions, error) {
	fs := newFlags("shard", stderr, shardUsage)
	n := fs.Int("n", 0, "number of shards `N` (1.."+strconv.Itoa(shard.MaxShards)+")")
	shuffle := fs.Bool("shuffle", false, "shuffle the rows globally with --seed")
	seed := fs.Uint64("seed", 1, "shuffle `seed`")
	ext := fs.String("ext", shard.DefaultExt, "shard file `extension`: .libsvm.zst, .libsvm.gz, .libsvm, .arrow, .arrows or .parquet")
	level := fs.String("level", "better", "zstd `level` of .libsvm.zst shards: fastest, default, better, best")
	blockRows := fs.Int("block-rows", shard.DefaultBlockRows, "`rows` per input block and per round-robin run without --shuffle")
	maxBucket := fs.Int64("max-bucket-mb", shard.DefaultMaxBucketBytes>>20, "memory `MiB` one shuffled bucket may take; larger buckets are shuffled in parts")
	force := fs.Bool("force", false, "write into an OUTDIR holding another shard set or other files")
	o := &shardOptions{}
	fs.BoolVar(&o.progress, "progress", false, "report progress (rows, rows/s) on stderr")
	o.lim = addLimitFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	switch {
	case len(pos) != 2:
		return nil, usagef("want IN and OUTDIR; got %d arguments", len(pos))
	case *n < 1 || *n > shard.MaxShards:
		return nil, usagef("-n %d: want 1..%d shards", *n, shard.MaxShards)
	case *blockRows < 1:
		return nil, usagef("--block-rows %d: want at least 1", *blockRows)
	case *maxBucket < 1:
		return nil, usagef("--max-bucket-mb %d: want at least 1", *maxBucket)
	}
	lvl, err := parseZstdLevel(*level) // gen.go
	if err != nil {
		return nil, usageError{err}
	}
	o.in, o.out = pos[0], pos[1]
	o.cfg = shard.Config{
		Shards:         *n,
		Shuffle:        *shuffle,
		Seed:           *seed,
		Ext:            *ext,
		ZstdLevel:      lvl,
		BlockRows:      *blockRows,
		MaxBucketBytes: *maxBucket << 20,
		Force:          *force,
	}
	return o, nil
}

// shardProgress returns the shard.Config.Progress of --progress: told
// every 4096 rows, it prints about once a second.
func shardProgress(stderr io.Writer, shards int) func(shard.Progress) {
	var last time.Time
	return func(p shard.Progress) {
		if time.Since(last) < time.Second {
			return
		}
		last = time.Now()
		rate := float64(p.Rows) / max(p.Elapsed.Seconds(), 1e-9)
		if p.Phase == shard.WriteShards {
			fmt.Fprintf(stderr, "shard: %s: %d rows, %.0f rows/s (shard %d of %d)\n", p.Phase, p.Rows, rate, p.Shard+1, shards)
		} else {
			fmt.Fprintf(stderr, "shard: %s: %d rows, %.0f rows/s\n", p.Phase, p.Rows, rate)
		}
	}
}

// checkOutDir checks OUTDIR before any input is read: a directory that
// exists must be writable and its manifest path writable by the rules of
// checkOutputs (not the input); a path that exists and is not a directory
// is refused (wrapping atomicfile.ErrRefused). A directory that does not
// exist is left for shard.Split to create.
func checkOutDir(dir, in string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("OUTDIR: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("OUTDIR: %s: %w: it is not a directory", dir, atomicfile.ErrRefused)
	}
	return checkOutputs(outputPath{flag: "OUTDIR", path: filepath.Join(dir, shard.ManifestName), inputs: []string{in}})
}
