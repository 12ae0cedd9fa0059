package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ErrRefused is wrapped by the errors of Check and Create for a
// destination this output may not write: a directory, a block device, a
// socket, a file that is one of the inputs (NotSameAs), or a file the
// output kind may not replace (ReplaceOnly). The message says which.
var ErrRefused = errors.New("refusing to write")

// maxLinks bounds the chain of symbolic links Create follows.
const maxLinks = 40

// Option configures Check, Create and WriteFile.
type Option func(*options)

type options struct {
	stdout  io.Writer
	replace func(path string) error
	inputs  []string
}

// Stdout makes the path "-" mean w (standard output, for commands that
// support it), written straight through; Close does not close w. Without
// it "-" is an ordinary file name.
func Stdout(w io.Writer) Option {
	return func(o *options) { o.stdout = w }
}

// ReplaceOnly makes an existing regular file at the destination (the
// target of its links) replaceable only if check, given that file's path,
// returns nil; otherwise the write is refused with an error wrapping
// ErrRefused and check's error, which should say what the file is. A
// destination that does not exist is not checked.
func ReplaceOnly(check func(path string) error) Option {
	return func(o *options) { o.replace = check }
}

// NotSameAs refuses a destination that is the same file (device and inode,
// os.SameFile) as one of paths, the inputs of the command. Paths that are
// "", "-" or do not exist are ignored.
func NotSameAs(paths ...string) Option {
	return func(o *options) { o.inputs = append(o.inputs, paths...) }
}

// target is what a destination resolves to.
type target struct {
	path   string      // the file to write: the destination or the final target of its links
	direct bool        // a character device or FIFO: written straight through
	fd     int         // with direct: a descriptor of this process (/dev/fd/N), or -1
	stdout bool        // "-" with the Stdout option
	perm   fs.FileMode // the permission bits of the new file
}

// resolve applies the rules of the package documentation to path and says
// how to write it.
func resolve(path string, o *options) (target, error) {
	if path == "" {
		return target{}, fmt.Errorf("%w an output with an empty name", ErrRefused)
	}
	if path == "-" && o.stdout != nil {
		return target{stdout: true}, nil
	}
	t := target{path: path, perm: 0o644, fd: -1}
	for links := 0; ; links++ {
		if n, ok := descriptor(t.path); ok {
			t.direct, t.fd = true, n
			return t, nil
		}
		fi, err := os.Lstat(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return target{}, fmt.Errorf("%s: %w", path, err)
		}
		mode := fi.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			if links == maxLinks {
				return target{}, fmt.Errorf("%s: %w", path, &fs.PathError{Op: "follow", Path: path, Err: syscall.ELOOP})
			}
			link, err := os.Readlink(t.path)
			if err != nil {
				return target{}, fmt.Errorf("%s: %w", path, err)
			}
			if !filepath.IsAbs(link) {
				link = dirOf(t.path) + link
			}
			t.path = link
			continue
		case mode.IsRegular():
			t.perm = mode.Perm()
			if err := sameAsInput(path, fi, o.inputs); err != nil {
				return target{}, err
			}
			if o.replace != nil {
				if err := o.replace(t.path); err != nil {
					return target{}, fmt.Errorf("%s: %w: %w", path, ErrRefused, err)
				}
			}
		case mode&fs.ModeCharDevice != 0, mode&fs.ModeNamedPipe != 0:
			t.direct = true
		default:
			return target{}, fmt.Errorf("%s: %w: %s", path, ErrRefused, describe(t.path, mode))
		}
		break
	}
	if !t.direct {
		dir := dirOf(t.path)
		fi, err := os.Stat(dir)
		if err != nil {
			return target{}, fmt.Errorf("%s: output directory: %w", path, err)
		}
		if !fi.IsDir() {
			return target{}, fmt.Errorf("%s: %w: %s is not a directory", path, ErrRefused, dir)
		}
	}
	return t, nil
}

// descriptor reports whether path names an open descriptor n of this
// process, "/dev/fd/N", "/proc/self/fd/N" or "/proc/PID/fd/N" (where
// /dev/stdout and /dev/stderr lead).
func descriptor(path string) (n int, ok bool) {
	path = filepath.Clean(path)
	dir, file := filepath.Split(path)
	switch dir {
	case "/dev/fd/", "/proc/self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/":
	default:
		return 0, false
	}
	n, err := strconv.Atoi(file)
	if err != nil || n < 0 || strconv.Itoa(n) != file {
		return 0, false
	}
	return n, true
}

// dirOf returns the directory part of path as written, with its trailing
// separator, or "." for a bare name. Unlike filepath.Dir it does not clean
// the path: "link/../x" must go through the link, as the system resolves
// it.
func dirOf(path string) string {
	dir, _ := filepath.Split(path)
	if dir == "" {
		return "."
	}
	return dir
}

// describe says what kind of file a refused destination is.
func describe(path string, mode fs.FileMode) string {
	what := "not a regular file, character device or FIFO"
	switch {
	case mode.IsDir():
		what = "a directory"
	case mode&fs.ModeDevice != 0:
		what = "a block device"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	}
	return path + " is " + what
}

// sameAsInput refuses the existing file fi at path if it is one of inputs.
func sameAsInput(path string, fi fs.FileInfo, inputs []string) error {
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		ifi, err := os.Stat(in)
		if err != nil {
			continue
		}
		if os.SameFile(fi, ifi) {
			return fmt.Errorf("%s: %w: it is the input %s", path, ErrRefused, in)
		}
	}
	return nil
}

// Check applies the rules of Create to path without writing anything: it
// returns the error Create would return for a destination of the wrong
// kind, and also an error when the directory that would hold the file is
// not writable (a character device or FIFO must be writable). It does not
// open a FIFO, which would block until a reader came.
func Check(path string, opts ...Option) error {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	t, err := resolve(path, &o)
	if err != nil || t.stdout {
		return err
	}
	if t.direct && t.fd >= 0 {
		return nil
	}
	if t.direct {
		if err := writable(t.path, false); err != nil {
			return fmt.Errorf("%s: not writable: %w", path, err)
		}
		return nil
	}
	dir := dirOf(t.path)
	if err := writable(dir, true); err != nil {
		return fmt.Errorf("%s: output directory %s is not writable: %w", path, dir, err)
	}
	return nil
}

// File is an output being written, made by Create. Close puts it in place;
// Abort discards it. Abort after Close is a no-op, so the usual pattern is
//
//	f, err := atomicfile.Create(path)
//	if err != nil { ... }
//	defer f.Abort()
//	... write to f ...
//	return f.Close()
//
// A File is not safe for concurrent use.
type File struct {
	path   string    // destination as given
	w      io.Writer // where Write goes
	f      *os.File  // temporary file, or the device or FIFO; nil for Stdout
	dst    string    // with a temporary file: the file it is renamed to
	perm   fs.FileMode
	closed bool
}

// Create starts writing path by the rules of the package documentation.
// Before creating a temporary file it removes the stale temporaries of
// dead processes for the same destination. Opening a FIFO blocks until it
// has a reader. Errors name path.
func Create(path string, opts ...Option) (*File, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	t, err := resolve(path, &o)
	if err != nil {
		return nil, err
	}
	switch {
	case t.stdout:
		return &File{path: path, w: o.stdout}, nil
	case t.direct && t.fd >= 0:
		f, err := dupFD(t.fd, t.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &File{path: path, w: f, f: f}, nil
	case t.direct:
		f, err := os.OpenFile(t.path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &File{path: path, w: f, f: f}, nil
	}
	dir, base := dirOf(t.path), filepath.Base(t.path)
	removeStale(dir, base)
	f, err := createTemp(dir, base)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &File{path: path, w: f, f: f, dst: t.path, perm: t.perm}, nil
}

// tempPrefix is the start of the names of the temporary files for the
// destination named base.
func tempPrefix(base string) string { return "." + base + ".tmp-" }

// TempOwner reports whether name is the name of a temporary file this
// package makes, and if so for which destination base name and by which
// process.
func TempOwner(name string) (base string, pid int, ok bool) {
	if !strings.HasPrefix(name, ".") {
		return "", 0, false
	}
	i := strings.LastIndex(name, ".tmp-")
	if i < 1 {
		return "", 0, false
	}
	p, r, found := strings.Cut(name[i+len(".tmp-"):], "-")
	if !found || r == "" || strings.ContainsRune(r, '-') {
		return "", 0, false
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || strconv.Itoa(n) != p {
		return "", 0, false
	}
	return name[1:i], n, true
}

// createTemp creates a new temporary file for base in dir, readable and
// writable by the owner only until Close sets its mode.
func createTemp(dir, base string) (*os.File, error) {
	prefix := filepath.Join(dir, tempPrefix(base)+strconv.Itoa(os.Getpid())+"-")
	for range 1000 {
		name := prefix + strconv.FormatUint(rand.Uint64()&(1<<40-1), 36)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &fs.PathError{Op: "createtemp", Path: prefix + "*", Err: fs.ErrExist}
}

// staleTemps holds, per directory (absolute path), the temporaries of
// dead processes found there, by destination base name. A directory is
// listed once per process, at the first write into it, so that writing
// many files into one directory (the shards of a large set) does not list
// it once per file.
var staleTemps struct {
	sync.Mutex
	dirs map[string]map[string][]string
}

// removeStale removes the temporary files for base in dir whose process
// was not alive when this process first wrote into dir. Errors are
// ignored: a temporary that cannot be listed or removed is left for a
// later run.
func removeStale(dir, base string) {
	key, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	staleTemps.Lock()
	defer staleTemps.Unlock()
	byBase, ok := staleTemps.dirs[key]
	if !ok {
		byBase = listStale(dir)
		if staleTemps.dirs == nil {
			staleTemps.dirs = map[string]map[string][]string{}
		}
		staleTemps.dirs[key] = byBase
	}
	for _, name := range byBase[base] {
		os.Remove(filepath.Join(dir, name))
	}
	delete(byBase, base)
}

// listStale lists the temporaries in dir of processes other than this one
// that are not alive, by destination base name.
func listStale(dir string) map[string][]string {
	byBase := map[string][]string{}
	d, err := os.Open(dir)
	if err != nil {
		return byBase
	}
	defer d.Close()
	self := os.Getpid()
	dead := map[int]bool{}
	for {
		names, err := d.Readdirnames(1024)
		for _, name := range names {
			b, pid, ok := TempOwner(name)
			if !ok || pid == self {
				continue
			}
			isDead, seen := dead[pid]
			if !seen {
				isDead = !alive(pid)
				dead[pid] = isDead
			}
			if isDead {
				byBase[b] = append(byBase[b], name)
			}
		}
		if err != nil {
			return byBase
		}
	}
}

// Name returns the destination path as given to Create.
func (f *File) Name() string { return f.path }

// Write writes p to the temporary file, or straight to a device, FIFO or
// standard output.
func (f *File) Write(p []byte) (int, error) {
	if f.closed {
		return 0, fmt.Errorf("%s: write after Close or Abort: %w", f.path, os.ErrClosed)
	}
	return f.w.Write(p)
}

// Close finishes the output. A temporary file gets its mode, is synced,
// closed and renamed over the destination, and the directory is synced;
// if a step before the rename fails the temporary file is removed and the
// destination is left as it was (if only the directory sync fails, the new
// file is in place). A device or FIFO is closed; standard output is left
// open. Calling Close more than once, or after Abort, returns an error
// wrapping os.ErrClosed. Errors name the destination.
func (f *File) Close() error {
	if f.closed {
		return fmt.Errorf("%s: %w", f.path, os.ErrClosed)
	}
	f.closed = true
	if f.f == nil {
		return nil
	}
	if f.dst == "" {
		if err := f.f.Close(); err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		return nil
	}
	tmp := f.f.Name()
	err := f.f.Chmod(f.perm)
	if err == nil {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, f.dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", f.path, err)
	}
	if err := syncDir(dirOf(f.dst)); err != nil {
		return fmt.Errorf("%s: syncing directory: %w", f.path, err)
	}
	return nil
}

// Abort discards the output: it closes and removes the temporary file,
// leaving the destination as it was, or closes a device or FIFO (what was
// written there cannot be taken back). It is a no-op after Close or a
// previous Abort.
func (f *File) Abort() {
	if f.closed {
		return
	}
	f.closed = true
	if f.f == nil {
		return
	}
	f.f.Close()
	if f.dst != "" {
		os.Remove(f.f.Name())
	}
}

// WriteFile writes path with write through a File (see Create): the
// output is put in place only if write and Close succeed, and is
// discarded otherwise, also when write panics. Errors name path.
func WriteFile(path string, write func(io.Writer) error, opts ...Option) error {
	f, err := Create(path, opts...)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
