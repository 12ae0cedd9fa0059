package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// dataRoot is a worker's directory of input files (WorkerOptions.DataRoot):
// tasks with a Path read their training rows from a file inside it, after
// the worker has checked that the path stays inside and that the file's
// bytes have the task's digest. Digests are remembered per file (path,
// size, modification time and identity), so the next task on an unchanged
// file does not hash it again.
type dataRoot struct {
	dir     string   // absolute, symbolic links resolved
	root    *os.Root // dir: files are opened through it, so never outside
	maxData int64

	mu       sync.Mutex
	verified map[fileKey]*hashCall
}

// fileKey identifies a version of a file for the digests of dataRoot.
type fileKey struct {
	path  string // resolved, absolute
	size  int64
	mtime int64 // Unix nanoseconds
}

// hashCall is the hashing of one version of a file, shared by the tasks
// that ask for it while it runs.
type hashCall struct {
	ready  chan struct{} // closed when digest or err is set
	fi     os.FileInfo   // the file hashed (os.SameFile tells a replacement)
	digest string
	err    error
}

// maxVerified bounds the digests a dataRoot remembers.
const maxVerified = 4096

// filesHashed counts the files hashed by every dataRoot (for tests).
var filesHashed atomic.Int64

// openDataRoot resolves dir (which must be an existing directory) once,
// for the worker's lifetime.
func openDataRoot(dir string, maxData int64) (*dataRoot, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("data root %s: %w", dir, err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("data root: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("data root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("data root %s is not a directory", dir)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("data root: %w", err)
	}
	return &dataRoot{dir: abs, root: root, maxData: maxData, verified: make(map[fileKey]*hashCall)}, nil
}

func (d *dataRoot) close() error { return d.root.Close() }

// errNoDataRoot is the failure of a task with a Path on a worker without a
// data root.
func errNoDataRoot(path string) error {
	return fmt.Errorf("data file %q: this worker has no --data-root; start it with --data-root DIR or submit without --data-root", path)
}

// file returns the resolved path of the file rel names inside the root,
// with its FileInfo, after checking that it is a regular file inside the
// root (symbolic links followed) whose bytes have the SHA-256 digest
// want. A file that does not exist is an error wrapping ErrDataNotFound;
// one that leaves the root, is not a regular file or has another digest
// is an error that fails the task; one that could not be read or changed
// while it was hashed is an error wrapping ErrDataUnavailable.
func (d *dataRoot) file(ctx context.Context, rel, want string) (string, os.FileInfo, error) {
	p, fi, err := d.resolve(rel)
	if err != nil {
		return "", nil, err
	}
	digest, err := d.digest(ctx, p, fi)
	if err != nil {
		return "", nil, fmt.Errorf("data file %s: %w", rel, err)
	}
	if digest != want {
		return "", nil, fmt.Errorf("data file %s changed: digest %s, want %s", rel, digest, want)
	}
	return p, fi, nil
}

// resolve returns the absolute path, free of symbolic links, of the
// regular file rel names inside the root.
func (d *dataRoot) resolve(rel string) (string, os.FileInfo, error) {
	if !ValidPath(rel) { // Validate refused it already; kept next to the join
		return "", nil, fmt.Errorf("data file %q: not a local slash-separated path", clip(rel, 120))
	}
	p, err := filepath.EvalSymlinks(filepath.Join(d.dir, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("data file %s: %w under the data root %s", rel, ErrDataNotFound, d.dir)
	}
	if err != nil {
		return "", nil, fmt.Errorf("data file %s: %w", rel, err)
	}
	in, err := filepath.Rel(d.dir, p)
	if err != nil || !filepath.IsLocal(in) {
		return "", nil, fmt.Errorf("data file %s: a symbolic link leads outside the data root %s", rel, d.dir)
	}
	fi, err := d.root.Stat(in)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("data file %s: %w under the data root %s", rel, ErrDataNotFound, d.dir)
	}
	if err != nil {
		return "", nil, fmt.Errorf("data file %s: %w", rel, err)
	}
	if fi.IsDir() {
		return "", nil, fmt.Errorf("data file %s: not a regular file but a directory", rel)
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("data file %s: not a regular file (mode %v)", rel, fi.Mode())
	}
	return p, fi, nil
}

// digest returns the SHA-256 of the file at p (fi), hashing it unless an
// unchanged version was hashed before or is being hashed now.
func (d *dataRoot) digest(ctx context.Context, p string, fi os.FileInfo) (string, error) {
	key := fileKey{path: p, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	d.mu.Lock()
	c := d.verified[key]
	start := c == nil || (isClosed(c.ready) && !os.SameFile(c.fi, fi))
	if start {
		if len(d.verified) >= maxVerified {
			for k, v := range d.verified {
				if isClosed(v.ready) {
					delete(d.verified, k)
				}
			}
		}
		c = &hashCall{ready: make(chan struct{}), fi: fi}
		d.verified[key] = c
	}
	d.mu.Unlock()
	if start {
		digest, err := d.hash(ctx, p, fi)
		d.mu.Lock()
		c.digest, c.err = digest, err
		if err != nil && d.verified[key] == c {
			delete(d.verified, key) // the next task tries again
		}
		close(c.ready)
		d.mu.Unlock()
	}
	select {
	case <-c.ready:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if c.err == nil && !os.SameFile(c.fi, fi) { // replaced while another task hashed it
		return "", fmt.Errorf("%w: replaced while it was hashed", ErrDataUnavailable)
	}
	return c.digest, c.err
}

// hash returns the SHA-256 of the bytes of the file at p, which must be
// the file fi describes and must not change while it is read.
func (d *dataRoot) hash(ctx context.Context, p string, fi os.FileInfo) (string, error) {
	filesHashed.Add(1)
	if fi.Size() > d.maxData {
		return "", fmt.Errorf("%w: %d bytes, this worker reads at most %d", ErrDataUnavailable, fi.Size(), d.maxData)
	}
	in, err := filepath.Rel(d.dir, p)
	if err != nil {
		return "", err
	}
	f, err := d.root.Open(in)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrDataUnavailable, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(st, fi) {
		return "", fmt.Errorf("%w: replaced while it was opened", ErrDataUnavailable)
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(h, ctxReader{ctx, f}, make([]byte, 1<<20)); err != nil {
		return "", fmt.Errorf("%w: %w", ErrDataUnavailable, err)
	}
	if st, err := f.Stat(); err != nil || changed(st, fi) {
		return "", fmt.Errorf("%w: changed while it was hashed", ErrDataUnavailable)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// changed reports whether b is not the version of the file a describes.
func changed(a, b os.FileInfo) bool {
	return !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime())
}

// ctxReader reads r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
