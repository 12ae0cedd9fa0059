package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// cache is a worker's directory of data objects, each in a file named by
// its digest. A file is downloaded once however many tasks ask for it at
// the same time, written to a temporary file, verified against its digest
// and renamed into place. Files no task uses are evicted, least recently
// used first, to keep the directory within limit; files in use are never
// evicted, so the directory exceeds limit while the tasks running need
// more. One worker process owns a cache directory.
type cache struct {
	dir     string
	limit   int64 // bound on the size of the files
	maxData int64 // largest object fetched
	obs     jetstream.ObjectStore

	mu    sync.Mutex
	files map[string]*cacheFile
	size  int64 // bytes of the downloaded files
}

type cacheFile struct {
	digest string
	ready  chan struct{} // closed when the download ended; err is then set
	err    error
	size   int64
	used   time.Time
	refs   int // tasks using the file, and the download while it runs
}

const tmpPrefix = ".tmp-"

// openCache indexes the files of dir that are named by a digest, removes
// leftover temporary files, and evicts down to limit.
func openCache(dir string, limit, maxData int64, obs jetstream.ObjectStore) (*cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	c := &cache{dir: dir, limit: limit, maxData: maxData, obs: obs, files: make(map[string]*cacheFile)}
	closed := make(chan struct{})
	close(closed)
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, tmpPrefix) {
			_ = os.Remove(filepath.Join(dir, name))
			continue
		}
		if !ValidDigest(name) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		c.files[name] = &cacheFile{digest: name, ready: closed, size: fi.Size(), used: fi.ModTime()}
		c.size += fi.Size()
	}
	c.mu.Lock()
	c.evictLocked(0)
	c.mu.Unlock()
	return c, nil
}

func (c *cache) path(digest string) string { return filepath.Join(c.dir, digest) }

// acquire returns the path of the file of digest, downloading it if it is
// not in the cache, and holds it until release. The caller's ctx bounds
// the download when this call starts it.
func (c *cache) acquire(ctx context.Context, digest string) (*cacheFile, string, error) {
	if !ValidDigest(digest) {
		return nil, "", fmt.Errorf("data digest %q is not a SHA-256 hex digest", digest)
	}
	c.mu.Lock()
	f := c.files[digest]
	start := f == nil
	if start {
		f = &cacheFile{digest: digest, ready: make(chan struct{})}
		c.files[digest] = f
	}
	f.refs++
	c.mu.Unlock()
	if start {
		c.download(ctx, f)
	}
	select {
	case <-f.ready:
	case <-ctx.Done():
		c.release(f)
		return nil, "", ctx.Err()
	}
	if f.err != nil {
		c.release(f)
		return nil, "", f.err
	}
	now := time.Now()
	p := c.path(digest)
	_ = os.Chtimes(p, now, now)
	c.mu.Lock()
	f.used = now
	c.mu.Unlock()
	return f, p, nil
}

// release drops one use of f and evicts what the bound requires.
func (c *cache) release(f *cacheFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f.refs--
	c.evictLocked(0)
}

// download fetches f's object into the cache and closes f.ready. On
// failure f leaves the index, so the next request tries again.
func (c *cache) download(ctx context.Context, f *cacheFile) {
	err := c.fetch(ctx, f)
	c.mu.Lock()
	if err != nil {
		f.err = err
		delete(c.files, f.digest)
		c.size -= f.size
	}
	f.used = time.Now()
	close(f.ready)
	c.mu.Unlock()
}

// fetch checks the object's size, reserves room for it (f.size, counted
// in c.size) and downloads it to its file.
func (c *cache) fetch(ctx context.Context, f *cacheFile) error {
	digest := f.digest
	info, err := c.obs.GetInfo(ctx, digest)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("data %s: %w in %s", digest, ErrDataNotFound, DataBucket)
	}
	if err != nil {
		return fmt.Errorf("data %s: %w: %w", digest, ErrDataUnavailable, err)
	}
	size := int64(info.Size)
	if size > c.maxData || size < 0 {
		return fmt.Errorf("data %s: %w: %d bytes, this worker fetches at most %d", digest, ErrDataUnavailable, info.Size, c.maxData)
	}
	if size > c.limit {
		return fmt.Errorf("data %s: %w: %d bytes, more than this worker's cache (%d)", digest, ErrDataUnavailable, size, c.limit)
	}
	c.mu.Lock()
	c.evictLocked(size)
	c.size += size
	f.size = size
	c.mu.Unlock()

	tmp, err := os.CreateTemp(c.dir, tmpPrefix+digest[:16]+"-*")
	if err != nil {
		return fmt.Errorf("data %s: %w: %w", digest, ErrDataUnavailable, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	obj, err := c.obs.Get(ctx, digest)
	if err != nil {
		return fmt.Errorf("data %s: %w: %w", digest, ErrDataUnavailable, err)
	}
	defer obj.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(obj, size+1))
	if err != nil {
		return fmt.Errorf("data %s: %w: %w", digest, ErrDataUnavailable, err)
	}
	if n != size || hex.EncodeToString(h.Sum(nil)) != digest {
		return fmt.Errorf("data %s: %w: the %d bytes fetched do not have this digest", digest, ErrDataUnavailable, n)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("data %s: %w: %w", digest, ErrDataUnavailable, err)
	}
	if err := os.Rename(tmp.Name(), c.path(digest)); err != nil {
		return fmt.Errorf("data %s: %w: %w", digest, ErrDataUnavailable, err)
	}
	ok = true
	return nil
}

// evictLocked removes unused files, least recently used first, until the
// downloaded files and need more bytes fit in the limit, or no unused file
// is left.
func (c *cache) evictLocked(need int64) {
	for c.size+need > c.limit {
		var lru *cacheFile
		for _, f := range c.files {
			if f.refs > 0 || f.err != nil || !isClosed(f.ready) {
				continue
			}
			if lru == nil || f.used.Before(lru.used) {
				lru = f
			}
		}
		if lru == nil {
			return
		}
		_ = os.Remove(c.path(lru.digest))
		delete(c.files, lru.digest)
		c.size -= lru.size
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// dataSession is the data function of one task: it holds every file the
// task asked for until the task ends. The task's training rows come from
// the worker's data root when the task has a Path, from the cache
// otherwise.
type dataSession struct {
	c     *cache
	root  *dataRoot // nil: the worker has none
	task  *Task
	mu    sync.Mutex
	held  []*cacheFile
	local []localFile // files of the data root handed out
	ended bool
}

// localFile is a file of the data root as it was verified.
type localFile struct {
	rel, path string
	fi        os.FileInfo
}

func (s *dataSession) get(ctx context.Context, digest string) (string, error) {
	if s.task != nil && s.task.Path != "" && digest == s.task.Data {
		return s.getLocal(ctx, digest)
	}
	f, p, err := s.c.acquire(ctx, digest)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended { // called after the task returned
		s.c.release(f)
		return "", fmt.Errorf("data %s: requested after the task ended", digest)
	}
	s.held = append(s.held, f)
	return p, nil
}

func (s *dataSession) end() {
	s.mu.Lock()
	held := s.held
	s.held, s.ended = nil, true
	s.mu.Unlock()
	for _, f := range held {
		s.c.release(f)
	}
}

// getLocal returns the path of the task's file in the data root once it
// is verified.
func (s *dataSession) getLocal(ctx context.Context, digest string) (string, error) {
	rel := s.task.Path
	if s.root == nil {
		return "", errNoDataRoot(rel)
	}
	p, fi, err := s.root.file(ctx, rel, digest)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return "", fmt.Errorf("data file %s: requested after the task ended", rel)
	}
	s.local = append(s.local, localFile{rel: rel, path: p, fi: fi})
	return p, nil
}

// recheck returns an error if a file of the data root handed out to the
// task is no longer the version that was verified: the task may have read
// other bytes than the digest says.
func (s *dataSession) recheck() error {
	s.mu.Lock()
	local := s.local
	s.mu.Unlock()
	for _, f := range local {
		if st, err := os.Stat(f.path); err != nil || changed(f.fi, st) {
			return fmt.Errorf("data file %s changed while the task ran", f.rel)
		}
	}
	return nil
}
