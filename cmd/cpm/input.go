package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/shard"
	"github.com/polyhedral/cpm/sparsevec"
)

// streamBlockRows is the block size of streamed training input.
const streamBlockRows = 4096

// input is where streamed training rows come from: a file in any format
// reader.OpenBlocks reads, or a shard set (a directory written by cpm shard,
// or a glob), optionally through a binary cache that the first pass writes
// and later passes read.
//
// Every pass reads the same files: newInput opens each input file (the
// file, or the shards a shard directory's manifest or a glob names then)
// and keeps it open (pin), and the cache too once it is complete; every
// pass reads the kept files (reader.WithOpener), whatever their names
// hold by then, and checks, when it opens and when it ends, that none was
// changed in place (pin.check), failing with an error wrapping
// errInputChanged otherwise. close closes the kept files.
type input struct {
	path     string            // file, shard directory or glob
	cache    string            // cache file, or "" for none
	readers  int               // parallel readers of a shard set
	opts     []reader.Option   // input limits (limits.go) and the opener of kept files, for every reader and the cache
	shards   []string          // a shard set's files, as named when the run started
	manifest []shard.ShardInfo // a shard directory's manifest entries, one per file

	pinMu sync.Mutex
	pins  map[string]*pin // kept files by path: the source's; the cache's once it is complete

	mu         sync.Mutex
	cacheReady bool // the cache is complete and matches the source
	cacheW     *reader.CacheWriter
	stats      inputStats
}

// inputStats splits the time of streamed training between reading and SGD.
type inputStats struct {
	firstPass   time.Duration // wall time of pass 1 (read, parse, cache write)
	passStart   time.Time
	cacheWrite  float64 // seconds spent encoding and writing the cache
	cacheBuilt  bool
	cacheReused bool
	waitNanos   [2]atomic.Int64 // per polytope: time blocked waiting for rows
}

// newInput checks the input and, when cache is set, whether an existing
// cache can be used. cache "auto" means path + ".cpmcache". opts apply to
// every pass and to the cache.
func newInput(path, cache string, readers int, stderr io.Writer, quiet bool, opts ...reader.Option) (*input, error) {
	in := &input{path: path, cache: cache, readers: readers, pins: map[string]*pin{}}
	in.opts = append(slices.Clip(opts), reader.WithOpener(in.open))
	if cache == "auto" {
		if isShardInput(path) {
			return nil, usagef("--cache auto needs a file input; name the cache for a shard set")
		}
		in.cache = path + ".cpmcache"
	}
	if err := in.pinSource(); err != nil {
		in.close()
		return nil, err
	}
	if in.cache == "" {
		return in, nil
	}
	if err := in.checkCache(stderr, quiet); err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

// checkCache decides whether the existing cache file is used (and then
// keeps it open) or the first pass rebuilds it.
func (in *input) checkCache(stderr io.Writer, quiet bool) error {
	if in.path == "-" {
		return usagef("--cache needs a file, not standard input")
	}
	if isShardInput(in.path) && !isDir(in.path) {
		return usagef("--cache with a glob: give the shard directory instead (its manifest identifies the set)")
	}
	err := reader.CheckCache(in.cache, in.identity(), in.opts...)
	if err == nil {
		err = in.pinCache()
	}
	switch {
	case err == nil:
		in.cacheReady, in.stats.cacheReused = true, true
		if !quiet {
			fmt.Fprintf(stderr, "reading rows from cache %s\n", in.cache)
		}
	case errors.Is(err, fs.ErrNotExist):
		if _, serr := reader.DetectFormat(in.identity()); serr != nil {
			return serr
		}
		if !quiet {
			fmt.Fprintf(stderr, "the first pass writes cache %s\n", in.cache)
		}
	case errors.Is(err, reader.ErrCacheStale), errors.Is(err, reader.ErrCorrupt):
		if !quiet {
			fmt.Fprintf(stderr, "rebuilding cache: %v\n", err)
		}
	default:
		return err
	}
	return nil
}

// checkCacheName refuses a --cache name with a compression suffix: the
// cache format is not compressed, and such a name would be read back as a
// compressed file.
func checkCacheName(name string) error {
	for _, ext := range []string{".zst", ".gz", ".bz2"} {
		if len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
			return usagef("--cache %s: a cache file is not compressed (%s); name it *.cpmcache", name, ext)
		}
	}
	return nil
}

// identity is the file whose size, time and head identify the source: the
// input file, or a shard set's manifest.
func (in *input) identity() string {
	if isShardInput(in.path) {
		return shardIdentity(in.path)
	}
	return in.path
}

// pinSource keeps the source's files open: the input file, or the shards
// a shard directory's manifest (whose counts every pass checks) or a glob
// names now. Standard input is read once and has nothing to keep.
func (in *input) pinSource() error {
	switch {
	case in.path == "-":
		return nil
	case isDir(in.path):
		m, err := shard.Check(in.path)
		if err != nil {
			return err
		}
		for _, s := range m.Shards {
			in.shards = append(in.shards, filepath.Join(in.path, s.Name))
		}
		in.manifest = m.Shards
	case isShardInput(in.path):
		list, err := shard.Files(in.path)
		if err != nil {
			return err
		}
		in.shards = list
	default:
		return in.pinFile(in.path)
	}
	for _, f := range in.shards {
		if err := in.pinFile(f); err != nil {
			return err
		}
	}
	return nil
}

// pinFile opens path and keeps it.
func (in *input) pinFile(path string) error {
	p, err := pinFile(path)
	if err != nil {
		return err
	}
	in.pinMu.Lock()
	defer in.pinMu.Unlock()
	if old := in.pins[path]; old != nil {
		old.close()
	}
	in.pins[path] = p
	return nil
}

// pinCache keeps the complete cache file open, so that every later pass
// reads this cache even if another run rebuilds one under the same name.
func (in *input) pinCache() error { return in.pinFile(in.cache) }

// open is the reader.WithOpener function of the run's readers: a new
// descriptor of the kept file at path, or of path itself if it is not kept
// (the cache while the first pass writes it).
func (in *input) open(path string) (*os.File, error) {
	in.pinMu.Lock()
	p := in.pins[path]
	in.pinMu.Unlock()
	if p == nil {
		return os.Open(path)
	}
	return p.open()
}

// checkPins checks that no kept file was changed.
func (in *input) checkPins() error {
	in.pinMu.Lock()
	defer in.pinMu.Unlock()
	for _, p := range in.pins {
		if err := p.check(); err != nil {
			return err
		}
	}
	return nil
}

// close closes the kept files.
func (in *input) close() {
	in.pinMu.Lock()
	defer in.pinMu.Unlock()
	for path, p := range in.pins {
		p.close()
		delete(in.pins, path)
	}
}

// openSource opens one pass over the source itself.
func (in *input) openSource() (reader.BlockReader, error) {
	if in.shards == nil {
		return reader.OpenBlocks(in.path, streamBlockRows, in.opts...)
	}
	r, err := shard.OpenFiles(in.shards, shard.ReadConfig{Readers: in.readers, BlockRows: streamBlockRows}, in.opts...)
	if err != nil {
		return nil, err
	}
	if in.manifest != nil {
		r.ExpectCounts(in.manifest)
	}
	return r, nil
}

// openPass opens pass k: from the cache when it is complete, otherwise from
// the source, writing the cache on the way when this is the first pass.
// It first checks that the input files are the ones the run started with.
func (in *input) openPass(k int) (reader.BlockReader, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if k == 1 {
		in.stats.passStart = time.Now()
	}
	if err := in.checkPins(); err != nil {
		return nil, err
	}
	if in.cacheReady {
		r, err := reader.OpenCache(in.cache, streamBlockRows, in.opts...)
		if err != nil {
			return nil, err
		}
		return &passTimer{BlockReader: r, in: in}, nil
	}
	src, err := in.openSource()
	if err != nil {
		return nil, err
	}
	if in.cache == "" || k > 1 {
		return &passTimer{BlockReader: src, in: in, first: k == 1}, nil
	}
	w, err := reader.CreateCache(in.cache, in.identity(), in.opts...)
	if err != nil {
		src.Close()
		return nil, err
	}
	in.cacheW = w
	return &passTimer{BlockReader: reader.TeeCache(src, w), in: in, first: true, cache: true}, nil
}

// passTimer checks at the end of every pass that the input files are
// still the ones the run started with, and notes when the first pass ends
// and whether it completed the cache (which it then records).
type passTimer struct {
	reader.BlockReader
	in    *input
	first bool
	cache bool
	ended bool
	err   error // sticky: an input file changed during the pass
}

func (p *passTimer) Next() (*sparsevec.CSR, error) {
	if p.err != nil {
		return nil, p.err
	}
	b, err := p.BlockReader.Next()
	if err != io.EOF || p.ended {
		return b, err
	}
	p.ended = true
	in := p.in
	in.mu.Lock()
	defer in.mu.Unlock()
	if p.err = in.checkPins(); p.err != nil {
		return nil, p.err
	}
	if p.first {
		in.stats.firstPass = time.Since(in.stats.passStart)
		if p.cache {
			if p.err = in.pinCache(); p.err != nil {
				return nil, p.err
			}
			in.cacheReady, in.stats.cacheBuilt = true, true
			in.stats.cacheWrite = in.cacheW.Seconds()
		}
	}
	return b, err
}

// sgdInput is the sgd.Input of n polytopes: with two (a double-sided CPM)
// they share each pass, so the source is parsed once for both.
func (in *input) sgdInput(ctx context.Context, n int) sgd.Input {
	return &sharedInput{in: in, p: reader.NewPasses(ctx, n, in.openPass)}
}

type sharedInput struct {
	in *input
	p  *reader.Passes
}

func (s *sharedInput) Open(i int) (sgd.Blocks, error) {
	b, err := s.p.Open(i)
	if err != nil {
		return nil, err
	}
	return &waitTimer{BlockReader: b, wait: &s.in.stats.waitNanos[i]}, nil
}

func (s *sharedInput) Leave(i int) { s.p.Leave(i) }

// waitTimer adds the time a polytope spends waiting for blocks to wait.
type waitTimer struct {
	reader.BlockReader
	wait *atomic.Int64
}

func (w *waitTimer) Next() (*sparsevec.CSR, error) {
	t := time.Now()
	b, err := w.BlockReader.Next()
	w.wait.Add(int64(time.Since(t)))
	return b, err
}

// isShardInput reports whether path names a shard set rather than a file:
// a directory, or a pattern with glob metacharacters.
func isShardInput(path string) bool {
	if strings.ContainsAny(path, "*?[") {
		return true
	}
	return isDir(path)
}

// inputMetrics is the --json record of where streamed training spent its
// time.
type inputMetrics struct {
	Cache             string    `json:"cache,omitempty"`
	CacheBuilt        bool      `json:"cache_built,omitempty"`
	CacheReused       bool      `json:"cache_reused,omitempty"`
	CacheWriteSeconds float64   `json:"cache_write_seconds,omitempty"`
	FirstPassSeconds  float64   `json:"first_pass_seconds,omitempty"`
	WaitSeconds       []float64 `json:"read_wait_seconds"` // per polytope: blocked waiting for rows
	SGDSeconds        []float64 `json:"sgd_seconds"`       // per polytope: training minus waiting
}

func (in *input) metrics(trainSeconds float64) *inputMetrics {
	in.mu.Lock()
	defer in.mu.Unlock()
	m := &inputMetrics{Cache: in.cache, CacheBuilt: in.stats.cacheBuilt, CacheReused: in.stats.cacheReused,
		CacheWriteSeconds: in.stats.cacheWrite, FirstPassSeconds: in.stats.firstPass.Seconds()}
	for i := range in.stats.waitNanos {
		w := time.Duration(in.stats.waitNanos[i].Load()).Seconds()
		if i > 0 && w == 0 {
			break
		}
		m.WaitSeconds = append(m.WaitSeconds, w)
		m.SGDSeconds = append(m.SGDSeconds, max(trainSeconds-w, 0))
	}
	return m
}

func (in *input) printSplit(w io.Writer, trainSeconds float64) {
	m := in.metrics(trainSeconds)
	fmt.Fprintf(w, "input: ")
	if m.FirstPassSeconds > 0 {
		fmt.Fprintf(w, "first pass %.1fs", m.FirstPassSeconds)
	} else {
		fmt.Fprintf(w, "first pass not finished")
	}
	if m.CacheBuilt {
		fmt.Fprintf(w, " (cache writing %.1fs of it)", m.CacheWriteSeconds)
	}
	if m.CacheReused {
		fmt.Fprintf(w, " from the cache")
	}
	for i := range m.WaitSeconds {
		fmt.Fprintf(w, "; polytope %d waited %.1fs for rows, stepped %.1fs", i, m.WaitSeconds[i], m.SGDSeconds[i])
	}
	fmt.Fprintln(w)
}

// loadTraining loads in-memory training data, through the cache when one
// is named: a cache that matches the source is read instead of it; otherwise
// the source is read and the cache written on the way.
func loadTraining(path, cache string, stderr io.Writer, quiet bool, opts ...reader.Option) (*sparsevec.CSR, error) {
	if cache == "" {
		return reader.Load(path, opts...)
	}
	in, err := newInput(path, cache, 1, stderr, quiet, opts...)
	if err != nil {
		return nil, err
	}
	defer in.close()
	if isShardInput(path) {
		return nil, usagef("a shard set is read with --stream")
	}
	b, err := in.openPass(1)
	if err != nil {
		return nil, err
	}
	return reader.ReadAll(b)
}
