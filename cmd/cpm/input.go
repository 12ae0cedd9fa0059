package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// streamBlockRows is the block size of streamed training input.
const streamBlockRows = 4096

// input is where streamed training rows come from: a file in any format
// reader.OpenBlocks reads, or a shard set (a directory written by cpm shard,
// or a glob), optionally through a binary cache that the first pass writes
// and later passes read.
type input struct {
	path    string          // file, shard directory or glob
	cache   string          // cache file, or "" for none
	readers int             // parallel readers of a shard set
	opts    []reader.Option // input limits (limits.go), for every reader and the cache

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
	in := &input{path: path, cache: cache, readers: readers, opts: opts}
	if cache == "auto" {
		if isShardInput(path) {
			return nil, usagef("--cache auto needs a file input; name the cache for a shard set")
		}
		in.cache = path + ".cpmcache"
	}
	if in.cache == "" {
		return in, nil
	}
	if path == "-" {
		return nil, usagef("--cache needs a file, not standard input")
	}
	if isShardInput(path) && !isDir(path) {
		return nil, usagef("--cache with a glob: give the shard directory instead (its manifest identifies the set)")
	}
	err := reader.CheckCache(in.cache, in.identity(), in.opts...)
	switch {
	case err == nil:
		in.cacheReady, in.stats.cacheReused = true, true
		if !quiet {
			fmt.Fprintf(stderr, "reading rows from cache %s\n", in.cache)
		}
	case errors.Is(err, fs.ErrNotExist):
		if _, serr := reader.DetectFormat(in.identity()); serr != nil {
			return nil, serr
		}
		if !quiet {
			fmt.Fprintf(stderr, "the first pass writes cache %s\n", in.cache)
		}
	case errors.Is(err, reader.ErrCacheStale), errors.Is(err, reader.ErrCorrupt):
		if !quiet {
			fmt.Fprintf(stderr, "rebuilding cache: %v\n", err)
		}
	default:
		return nil, err
	}
	return in, nil
}

// identity is the file whose size, time and head identify the source: the
// input file, or a shard set's manifest.
func (in *input) identity() string {
	if isShardInput(in.path) {
		return shardIdentity(in.path)
	}
	return in.path
}

// openSource opens one pass over the source itself.
func (in *input) openSource() (reader.BlockReader, error) {
	if isShardInput(in.path) {
		return openShards(in.path, in.readers, in.opts...)
	}
	return reader.OpenBlocks(in.path, streamBlockRows, in.opts...)
}

// openPass opens pass k: from the cache when it is complete, otherwise from
// the source, writing the cache on the way when this is the first pass.
func (in *input) openPass(k int) (reader.BlockReader, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if k == 1 {
		in.stats.passStart = time.Now()
	}
	if in.cacheReady {
		return reader.OpenCache(in.cache, streamBlockRows, in.opts...)
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

// passTimer notes when the first pass ends and whether it completed the
// cache.
type passTimer struct {
	reader.BlockReader
	in    *input
	first bool
	cache bool
	ended bool
}

func (p *passTimer) Next() (*sparsevec.CSR, error) {
	b, err := p.BlockReader.Next()
	if err == io.EOF && p.first && !p.ended {
		p.ended = true
		in := p.in
		in.mu.Lock()
		in.stats.firstPass = time.Since(in.stats.passStart)
		if p.cache {
			in.cacheReady, in.stats.cacheBuilt = true, true
			in.stats.cacheWrite = in.cacheW.Seconds()
		}
		in.mu.Unlock()
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
	if isShardInput(path) {
		return nil, usagef("a shard set is read with --stream")
	}
	b, err := in.openPass(1)
	if err != nil {
		return nil, err
	}
	return reader.ReadAll(b)
}
