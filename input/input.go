package input

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// DefaultBlockRows is the block size of the passes unless
// Config.BlockRows says otherwise.
const DefaultBlockRows = 4096

// TempCache is the Config.Cache of a cache in a temporary file: written
// by the first pass in a new temporary directory in Config.SpillDir, read
// by the later passes, and removed with its directory by Close, so that a
// run leaves nothing behind. It records no source and so serves no other
// run. Any input may have one; for standard input it is the spill.
const TempCache = "temp"

// ErrNoCache is wrapped by the error of Open, Load or CachePath asking a
// cache of an input that cannot have one.
var ErrNoCache = errors.New("no cache for this input")

// Config says how an Input reads its path. The zero value reads the path
// with no cache, in blocks of DefaultBlockRows rows.
type Config struct {
	// Cache is the row cache file: written by the first pass, read by
	// later passes and later runs while it matches the source. "auto"
	// is the path with ".cpmcache" appended (a file input only);
	// TempCache a temporary file removed by Close; "" means no cache.
	Cache string
	// Optional makes the cache one the run can do without: an error
	// writing it drops the cache (Stats.CacheDropped says why) and the
	// passes go on reading the source; and the cache the first pass
	// writes is put in place only when a second pass opens, so a run that
	// ends within its first pass leaves no cache file.
	Optional bool
	// Readers is the number of shard files of a shard set read in
	// parallel. If 0, it defaults to shard.ReadConfig's default (2).
	Readers int
	// BlockRows is the number of rows of the blocks of a pass. If 0, it
	// defaults to DefaultBlockRows.
	BlockRows int
	// SpillDir is the directory of the spill file that keeps the rows of
	// standard input for the passes after the first; "" is os.TempDir().
	SpillDir string
	// SpillLimit is the most bytes the spill file may take; 0 is no limit
	// but the disk's.
	SpillLimit int64
}

// Input is the training input named by one path (see the package
// comment). Its methods are safe for concurrent use.
type Input struct {
	path      string
	src       *Source         // what path names, resolved when Open ran
	cache     string          // cache file (for standard input, the spill), or "" for none
	readers   int             // parallel readers of a shard set
	blockRows int             // rows per block
	opts      []reader.Option // the caller's options and the opener of kept files, for every reader and the cache
	spillDir  string          // standard input or TempCache: the temporary directory of the cache, removed by Close
	optional  bool            // Config.Optional
	spillMax  int64           // standard input: SpillLimit
	stdinRead bool            // standard input: pass 1 was opened
	pre       *presumption    // Run: the passes read the source as 1-based without auto's scan

	pinMu  sync.Mutex
	pins   map[string]*pin // kept files by path: the source's; the cache's once it is complete
	closed bool

	mu         sync.Mutex
	status     CacheStatus
	cacheReady bool // the cache is complete and matches the source
	cacheW     *rowcache.Writer
	teeErr     func() error // Optional: the error that dropped the cache the first pass wrote, once it ended
	pending    bool         // Optional: the first pass completed the cache, not yet put in place
	dropped    error        // Optional: why the cache was dropped
	passStart  time.Time
	firstPass  time.Duration // wall time of pass 1 (read, parse, cache write)
	cacheWrite time.Duration // time spent encoding and writing the cache
	cacheBuilt bool
	waits      []atomic.Int64 // per polytope of Passes: nanoseconds blocked waiting for rows
}

// Open opens the input at path (resolved by Resolve): it keeps the
// source's files open (the file, the shards a shard directory's manifest
// lists, or the files of a directory or glob as they are now) and, with
// cfg.Cache, decides whether an existing cache is read or the first pass
// writes one. Standard input is read once: its first pass writes the rows
// to a spill file (a row cache in a new temporary directory in
// cfg.SpillDir, at most cfg.SpillLimit bytes) that the later passes read;
// CacheStatus says so (CacheSpill). opts apply to every pass and to the
// cache (limits such as reader.WithMaxIndex, reader.WithContext). Close
// releases the kept files and removes the spill.
func Open(path string, cfg Config, opts ...reader.Option) (*Input, error) {
	if cfg.Readers < 0 || cfg.BlockRows < 0 || cfg.SpillLimit < 0 {
		return nil, fmt.Errorf("input: negative Config %+v", cfg)
	}
	if cfg.Cache != "" && cfg.Cache != TempCache && path == "-" {
		_, err := CachePath(path, cfg.Cache)
		return nil, err
	}
	src, err := Resolve(path)
	if err != nil {
		return nil, err
	}
	cache, err := cachePath(src, cfg.Cache)
	if err != nil {
		return nil, err
	}
	in := &Input{path: path, src: src, cache: cache, readers: cfg.Readers, blockRows: cmp.Or(cfg.BlockRows, DefaultBlockRows), pins: map[string]*pin{}}
	in.optional = cfg.Optional && src.Kind != Stdin
	in.opts = append(slices.Clip(opts), reader.WithOpener(in.open))
	if src.Kind == Stdin {
		if err := in.makeSpill(cfg); err != nil {
			return nil, err
		}
		return in, nil
	}
	if err := in.pinSource(); err != nil {
		in.Close()
		return nil, err
	}
	if in.cache == TempCache {
		if err := in.makeTemp(cfg); err != nil {
			in.Close()
			return nil, err
		}
		return in, nil
	}
	if in.cache == "" {
		return in, nil
	}
	if err := in.checkCache(); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

// CachePath returns the cache file that Config.Cache names for the input
// at path ("" for none), or an error wrapping ErrNoCache when the input
// cannot have one: standard input (read once, with no identity to check a
// cache against; Open keeps its rows in a spill file instead), "auto" for
// a shard set (which has no file to put the cache beside), or a directory
// without a manifest or a glob (which have no manifest to identify their
// files by). A path that does not resolve is taken for a file: opening it
// reports the error.
func CachePath(path, cache string) (string, error) {
	switch {
	case cache == "" || cache == TempCache:
		return cache, nil
	case path == "-":
		return "", fmt.Errorf("%w: standard input is read once and cannot be checked against a cache; a cache needs a file", ErrNoCache)
	}
	src, err := Resolve(path)
	if err != nil {
		src = &Source{Path: path, Kind: guessKind(path)}
	}
	return cachePath(src, cache)
}

// guessKind is the kind of a path that does not resolve (yet), told from
// its name: a directory with or without a manifest, a glob, or a file.
func guessKind(path string) Kind {
	switch {
	case isDir(path) && exists(shardIdentity(path)):
		return ShardSet
	case isDir(path) || strings.ContainsAny(path, "*?["):
		return ManyFiles
	}
	return OneFile
}

// cachePath is CachePath of a resolved source.
func cachePath(src *Source, cache string) (string, error) {
	switch {
	case cache == "" || cache == TempCache:
		return cache, nil
	case src.Kind == Stdin:
		return CachePath("-", cache)
	case cache == "auto" && src.Kind == ShardSet:
		return "", fmt.Errorf("%w: auto needs a file input; name the cache of shard set %s", ErrNoCache, src.Path)
	case cache == "auto" && src.Kind == ManyFiles:
		return "", fmt.Errorf("%w: auto needs a file input, and %s names several files", ErrNoCache, src.Path)
	case src.Kind == ManyFiles:
		return "", fmt.Errorf("%w: %s: a directory without a shard manifest, or a glob, has no manifest to identify its files by; write them to one file, or to a shard set (cpm shard), to cache them", ErrNoCache, src.Path)
	case cache == "auto":
		return src.Path + ".cpmcache", nil
	}
	return cache, nil
}

// checkCache decides whether the existing cache file is used (and then
// keeps it open) or the first pass rebuilds it.
func (in *Input) checkCache() error {
	in.status = CacheStatus{Path: in.cache}
	err := rowcache.Check(in.cache, in.identity(), in.opts...)
	if err == nil {
		err = in.pinFile(in.cache)
	}
	switch {
	case err == nil:
		in.cacheReady, in.status.Use = true, CacheHit
	case errors.Is(err, fs.ErrNotExist):
		if _, serr := reader.DetectFormat(in.identity()); serr != nil {
			return serr
		}
		in.status.Use = CacheNew
	case errors.Is(err, rowcache.ErrStale), errors.Is(err, reader.ErrCorrupt):
		in.status.Use, in.status.Reason = CacheStale, err
	default:
		return err
	}
	return nil
}

// identity is the file whose size, time and head identify the source for
// the cache: the input file, or a shard directory's manifest; "" for a
// temporary cache (or the spill), which serves no other run.
func (in *Input) identity() string {
	if in.spillDir != "" {
		return ""
	}
	if in.src.Kind == ShardSet {
		return shardIdentity(in.path)
	}
	return in.path
}

// pinSource keeps every file of the source open: the input file, the
// shards a shard directory's manifest lists (whose counts every pass
// checks), or the files of a directory or glob as Resolve found them.
func (in *Input) pinSource() error {
	for _, f := range in.src.Files {
		if err := in.pinFile(f); err != nil {
			return err
		}
	}
	return nil
}

// pinFile opens path and keeps it.
func (in *Input) pinFile(path string) error {
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

// open is the reader.WithOpener function of the readers: a new descriptor
// of the kept file at path, or of path itself if it is not kept (the cache
// while the first pass writes it).
func (in *Input) open(path string) (*os.File, error) {
	in.pinMu.Lock()
	p := in.pins[path]
	in.pinMu.Unlock()
	if p == nil {
		return os.Open(path)
	}
	return p.open()
}

// checkPins checks that no kept file was changed, and that the input is
// not closed.
func (in *Input) checkPins() error {
	in.pinMu.Lock()
	defer in.pinMu.Unlock()
	if in.closed {
		return ErrClosed
	}
	for _, p := range in.pins {
		if err := p.check(); err != nil {
			return err
		}
	}
	return nil
}

// ErrClosed is returned by OpenPass after Close.
var ErrClosed = errors.New("input: closed")

// Close closes the kept files, discards an optional cache not yet put in
// place and removes a temporary cache. A pass opened before goes on
// reading its own descriptors; OpenPass returns ErrClosed afterwards.
func (in *Input) Close() error {
	in.mu.Lock()
	if in.pending {
		in.cacheW.Abort()
		in.pending = false
	}
	in.mu.Unlock()
	in.pinMu.Lock()
	defer in.pinMu.Unlock()
	in.closed = true
	var err error
	for path, p := range in.pins {
		err = cmp.Or(err, p.close())
		delete(in.pins, path)
	}
	if in.spillDir != "" {
		err = cmp.Or(err, os.RemoveAll(in.spillDir))
		in.spillDir = ""
	}
	return err
}

// openSource opens one pass over the source itself. Standard input is
// opened once.
func (in *Input) openSource(k int) (reader.BlockReader, error) {
	if in.src.Kind == Stdin {
		if k > 1 || in.stdinRead {
			return nil, fmt.Errorf("%w: pass %d needs the spill file of pass 1, which pass 1 did not complete", ErrStdinOnce, k)
		}
		in.stdinRead = true
	}
	return in.src.OpenBlocks(in.blockRows, in.readers, in.sourceOpts()...)
}

// OpenPass opens pass k (1-based): from the cache when it is complete,
// otherwise from the source, writing the cache on the way when k is 1. It
// first checks that the input files are the ones Open kept, and the
// returned reader checks again when it reaches the end of the pass; either
// check fails with an error wrapping ErrInputChanged.
func (in *Input) OpenPass(k int) (reader.BlockReader, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if k == 1 {
		in.passStart = time.Now()
	}
	if err := in.checkPins(); err != nil {
		return nil, err
	}
	if in.pending {
		in.commitCache()
	}
	if in.cacheReady {
		r, err := rowcache.Open(in.cache, in.blockRows, in.opts...)
		if err != nil {
			return nil, err
		}
		return &passEnd{BlockReader: r, in: in, first: k == 1}, nil
	}
	src, err := in.openSource(k)
	if err != nil {
		return nil, err
	}
	if in.cache == "" || k > 1 {
		return &passEnd{BlockReader: src, in: in, first: k == 1, pre: in.pre}, nil
	}
	w, err := rowcache.Create(in.cache, in.identity(), in.opts...)
	if err != nil {
		src.Close()
		return nil, err
	}
	in.cacheW = w
	var tee reader.BlockReader
	if in.optional {
		tee, in.teeErr = rowcache.TeeOptional(src, w)
	} else {
		tee = rowcache.Tee(src, w)
	}
	if in.src.Kind == Stdin {
		tee = &spillCheck{BlockReader: tee, w: w, file: in.cache, limit: in.spillMax}
	}
	return &passEnd{BlockReader: tee, in: in, first: true, cache: true, pre: in.pre}, nil
}

// passEnd checks at the end of every pass that the input files are still
// the ones Open kept, and notes when the first pass ends and whether it
// completed the cache (which it then keeps).
type passEnd struct {
	reader.BlockReader
	in    *Input
	first bool
	cache bool
	ended bool
	err   error        // sticky: an input file changed during the pass
	pre   *presumption // a pass over the source that Run reads as 1-based, or nil
}

func (p *passEnd) Next() (*sparsevec.CSR, error) {
	if p.err != nil {
		return nil, p.err
	}
	b, err := p.BlockReader.Next()
	if p.pre != nil && err != nil {
		p.pre.note(err)
	}
	if err != io.EOF || p.ended {
		return b, err
	}
	p.ended = true
	if p.err = p.in.endPass(p.first, p.cache); p.err != nil {
		return nil, p.err
	}
	return b, err
}

// endPass checks the kept files at the end of a pass and records the end
// of the first pass and the cache it completed.
func (in *Input) endPass(first, cache bool) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := in.checkPins(); err != nil {
		return err
	}
	if !first {
		return nil
	}
	in.firstPass = time.Since(in.passStart)
	if !cache {
		return nil
	}
	in.cacheWrite = time.Duration(in.cacheW.Seconds() * float64(time.Second))
	if in.optional {
		if err := in.teeErr(); err != nil {
			in.dropCache(err)
		} else {
			in.pending = true // put in place by the second pass
		}
		return nil
	}
	if err := in.pinFile(in.cache); err != nil {
		return err
	}
	in.cacheReady, in.cacheBuilt = true, true
	return nil
}

// commitCache puts in place the optional cache the first pass completed,
// as the second pass opens, and keeps it; if that fails the cache is
// dropped and the passes go on reading the source. The caller holds
// in.mu.
func (in *Input) commitCache() {
	in.pending = false
	err := in.cacheW.Close()
	if err == nil {
		err = in.pinFile(in.cache)
	}
	if err != nil {
		in.dropCache(err)
		return
	}
	in.cacheReady, in.cacheBuilt = true, true
}

// dropCache gives up the optional cache for the reason err. The caller
// holds in.mu.
func (in *Input) dropCache(err error) {
	in.cacheW.Abort()
	in.cache, in.dropped = "", fmt.Errorf("cache %s dropped, reading the source on every pass: %w", in.status.Path, err)
}

// Load reads the whole input into memory: from the cache when it matches
// the source, otherwise from the source, writing the cache on the way
// when one is named. A shard set is read as one pass, in the order of
// shard.Reader. Without a cache, a file, or each file of a directory or
// glob, is read with reader.Load (Source.Load).
func (in *Input) Load() (*sparsevec.CSR, error) {
	if in.cache == "" && in.src.Kind != ShardSet {
		return in.src.Load(in.opts...)
	}
	b, err := in.OpenPass(1)
	if err != nil {
		return nil, err
	}
	return reader.ReadAll(b)
}

// Load reads the input at path into memory, through the cache that
// cfg.Cache names: it is Open, Input.Load and Close, with the cache status.
// Without a cache, anything but a shard set is read by Source.Load, which
// keeps no file open and so also reads pipes and standard input (with no
// spill: one pass).
func Load(path string, cfg Config, opts ...reader.Option) (*sparsevec.CSR, CacheStatus, error) {
	if cfg.Cache == "" {
		src, err := Resolve(path)
		if err != nil {
			return nil, CacheStatus{}, err
		}
		if src.Kind != ShardSet {
			m, err := src.Load(opts...)
			return m, CacheStatus{}, err
		}
	}
	in, err := Open(path, cfg, opts...)
	if err != nil {
		return nil, CacheStatus{}, err
	}
	defer in.Close()
	m, err := in.Load()
	return m, in.Cache(), err
}
