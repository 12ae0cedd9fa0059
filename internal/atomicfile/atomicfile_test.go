package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/polyhedral/cpm/internal/testfiles"
)

// noTemps fails the test if dir holds a temporary file of this package.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	for _, name := range testfiles.ListDir(t, dir) {
		if _, _, ok := TempOwner(name); ok {
			t.Errorf("temporary file %s left in %s", name, dir)
		}
	}
}

func writeBytes(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

// TestWriteFile checks the kinds of destination that are written: each
// setup makes the destination (and returns the file whose content must
// become the new data, and the mode it must have); check verifies what
// else must hold.
func TestWriteFile(t *testing.T) {
	data := []byte("new content\n")
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) (dst, written string, mode fs.FileMode)
		check func(t *testing.T, dir, dst string)
	}{
		{"new file", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			p := filepath.Join(dir, "out")
			return p, p, 0o644
		}, nil},
		{"replace keeps mode", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			p := filepath.Join(dir, "out")
			if err := os.WriteFile(p, []byte("old, longer than the new content\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o640); err != nil {
				t.Fatal(err)
			}
			return p, p, 0o640
		}, nil},
		{"symlink followed", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(dir, "sub", "real")
			if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, "link")
			if err := os.Symlink(filepath.Join("sub", "real"), link); err != nil {
				t.Skip("no symlinks:", err)
			}
			return link, target, 0o600
		}, func(t *testing.T, dir, dst string) {
			if fi, err := os.Lstat(dst); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("%s is no longer a symlink (%v)", dst, err)
			}
			noTemps(t, filepath.Join(dir, "sub"))
		}},
		{"symlink with .. through a linked directory", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			// lnk/.. is real (the parent of real/sub), not dir.
			if err := os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join("real", "sub"), filepath.Join(dir, "lnk")); err != nil {
				t.Skip("no symlinks:", err)
			}
			out := filepath.Join(dir, "out")
			if err := os.Symlink("lnk/../target", out); err != nil {
				t.Fatal(err)
			}
			return out, filepath.Join(dir, "real", "target"), 0o644
		}, func(t *testing.T, dir, dst string) {
			if _, err := os.Lstat(filepath.Join(dir, "target")); err == nil {
				t.Error("the link was resolved lexically: dir/target written")
			}
		}},
		{"chain of symlinks, dangling", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			if err := os.Symlink("b", a); err != nil {
				t.Skip("no symlinks:", err)
			}
			if err := os.Symlink("c", b); err != nil {
				t.Fatal(err)
			}
			return a, filepath.Join(dir, "c"), 0o644
		}, func(t *testing.T, dir, dst string) {
			if fi, err := os.Lstat(filepath.Join(dir, "b")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("b is no longer a symlink (%v)", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dst, written, mode := tt.setup(t, dir)
			if err := Check(dst); err != nil {
				t.Fatalf("Check: %v", err)
			}
			if err := WriteFile(dst, writeBytes(data)); err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			got, err := os.ReadFile(written)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s holds %q (%v), want %q", written, got, err, data)
			}
			if fi, err := os.Stat(written); err != nil || fi.Mode().Perm() != mode {
				t.Errorf("mode of %s = %v (%v), want %v", written, fi.Mode().Perm(), err, mode)
			}
			noTemps(t, dir)
			if tt.check != nil {
				tt.check(t, dir, dst)
			}
		})
	}
}

// TestRefused checks the destinations that are refused before anything is
// written, by Check and Create alike, and that they are left as they were.
func TestRefused(t *testing.T) {
	notCache := errors.New("not a cache")
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		opts  func(dir string) []Option
		want  error // besides the path in the message
	}{
		{"directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "d")
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}, nil, ErrRefused},
		{"symlink to a directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "l")
			if err := os.Symlink(".", p); err != nil {
				t.Skip("no symlinks:", err)
			}
			return p
		}, nil, ErrRefused},
		{"missing directory", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "no", "such", "out")
		}, nil, fs.ErrNotExist},
		{"parent is a file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "f")
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(p, "out")
		}, nil, nil},
		{"same as an input", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "in")
			if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, func(dir string) []Option {
			return []Option{NotSameAs("", "-", filepath.Join(dir, "missing"), filepath.Join(dir, ".", "in"))}
		}, ErrRefused},
		{"input through a symlink", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "in")
			if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
			l := filepath.Join(dir, "l")
			if err := os.Symlink("in", l); err != nil {
				t.Skip("no symlinks:", err)
			}
			return l
		}, func(dir string) []Option { return []Option{NotSameAs(filepath.Join(dir, "in"))} }, ErrRefused},
		{"not replaceable", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "x.cache")
			if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, func(string) []Option { return []Option{ReplaceOnly(func(string) error { return notCache })} }, notCache},
		{"empty name", func(*testing.T, string) string { return "" }, nil, ErrRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dst := tt.setup(t, dir)
			var opts []Option
			if tt.opts != nil {
				opts = tt.opts(dir)
			}
			before := testfiles.ListDir(t, dir)
			for _, f := range []struct {
				name string
				call func() error
			}{
				{"Check", func() error { return Check(dst, opts...) }},
				{"Create", func() error {
					f, err := Create(dst, opts...)
					if err == nil {
						f.Abort()
					}
					return err
				}},
				{"WriteFile", func() error { return WriteFile(dst, writeBytes([]byte("x")), opts...) }},
			} {
				err := f.call()
				if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), dst) {
					t.Errorf("%s(%q) = %v, want an error naming the path wrapping %v", f.name, dst, err, tt.want)
				}
			}
			if after := testfiles.ListDir(t, dir); !slices.Equal(before, after) {
				t.Errorf("directory changed from %v to %v", before, after)
			}
		})
	}
}

// TestNotSameAsOtherFile checks that NotSameAs lets through a file that
// is not an input, and ReplaceOnly a file its check accepts.
func TestNotSameAsOtherFile(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	for _, p := range []string{in, out} {
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var checked string
	err := WriteFile(out, writeBytes([]byte("new")), NotSameAs(in), ReplaceOnly(func(p string) error { checked = p; return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if checked != out {
		t.Errorf("ReplaceOnly checked %q, want %q", checked, out)
	}
	if b, _ := os.ReadFile(out); string(b) != "new" {
		t.Errorf("out holds %q", b)
	}
}

// TestWriteFailure checks that an output whose writing fails, by an error
// midway (a full disk), a panic or an Abort, leaves the old content and
// no temporary file.
func TestWriteFailure(t *testing.T) {
	diskFull := errors.New("no space left on device")
	tests := []struct {
		name  string
		write func(t *testing.T, path string) error
	}{
		{"write error", func(t *testing.T, path string) error {
			return WriteFile(path, func(w io.Writer) error {
				if _, err := w.Write(bytes.Repeat([]byte("partial "), 1000)); err != nil {
					return err
				}
				return diskFull
			})
		}},
		{"panic", func(t *testing.T, path string) (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return WriteFile(path, func(w io.Writer) error {
				w.Write([]byte("partial"))
				panic("encoder bug")
			})
		}},
		{"abort", func(t *testing.T, path string) error {
			f, err := Create(path)
			if err != nil {
				return err
			}
			f.Write([]byte("partial"))
			f.Abort()
			f.Abort() // a no-op
			if err := f.Close(); !errors.Is(err, os.ErrClosed) {
				t.Errorf("Close after Abort = %v, want os.ErrClosed", err)
			}
			if _, err := f.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
				t.Errorf("Write after Abort = %v, want os.ErrClosed", err)
			}
			return errors.New("aborted")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := tt.write(t, path)
			if err == nil {
				t.Fatal("no error")
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != "old" {
				t.Errorf("old content became %q (%v)", b, err)
			}
			if names := testfiles.ListDir(t, dir); !slices.Equal(names, []string{"out"}) {
				t.Errorf("directory holds %v, want [out]", names)
			}
		})
	}
	t.Run("error names path", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "out")
		if err := WriteFile(path, func(io.Writer) error { return diskFull }); !errors.Is(err, diskFull) || !strings.Contains(err.Error(), path) {
			t.Errorf("WriteFile = %v, want %v naming %s", err, diskFull, path)
		}
	})
}

// TestStdout checks that "-" is standard output only with the Stdout
// option.
func TestStdout(t *testing.T) {
	var buf bytes.Buffer
	dir := t.TempDir()
	t.Chdir(dir)
	if err := WriteFile("-", writeBytes([]byte("to stdout")), Stdout(&buf)); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "to stdout" {
		t.Errorf("stdout got %q", buf.String())
	}
	if names := testfiles.ListDir(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v", names)
	}
	if err := WriteFile("-", writeBytes([]byte("a file"))); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "-")); err != nil || string(b) != "a file" {
		t.Errorf("file - holds %q (%v)", b, err)
	}
}

// TestTempOwner checks the parsing of temporary names, including the names
// of other tools and of older versions, which must not match.
func TestTempOwner(t *testing.T) {
	tests := []struct {
		name string
		base string
		pid  int
		ok   bool
	}{
		{".m.model.tmp-123-abc", "m.model", 123, true},
		{".a.tmp-b.tmp-7-x", "a.tmp-b", 7, true},
		{".m.model.tmp-123", "", 0, false},    // CreateTemp's random digits
		{".m.model.tmp123456", "", 0, false},  // older CreateTemp pattern
		{".m.model.tmp-0123-x", "", 0, false}, // not a canonical pid
		{".m.model.tmp--1-x", "", 0, false},   // negative
		{".m.model.tmp-12-x-y", "", 0, false}, // extra dash
		{"m.model.tmp-12-x", "", 0, false},    // not hidden
		{".m.model.tmp-12-", "", 0, false},    // no random part
		{"..tmp-12-x", "", 12, true},          // destination named ""? parsed, never a real base
		{".part-00001-of-00002.libsvm.zst.tmp-99-z1", "part-00001-of-00002.libsvm.zst", 99, true},
	}
	for _, tt := range tests {
		base, pid, ok := TempOwner(tt.name)
		if ok != tt.ok || (ok && (base != tt.base || pid != tt.pid)) {
			t.Errorf("TempOwner(%q) = %q, %d, %v; want %q, %d, %v", tt.name, base, pid, ok, tt.base, tt.pid, tt.ok)
		}
	}
}

// TestConcurrentWriters checks that writers racing to the same
// destination each leave a whole file: the result is one of the contents
// written, never a mix, and no temporary file remains.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	const writers = 8
	contents := make([][]byte, writers)
	for i := range contents {
		contents[i] = bytes.Repeat([]byte(strconv.Itoa(i)), 1<<16+i)
	}
	var wg sync.WaitGroup
	for round := range 5 {
		for i := range writers {
			wg.Go(func() {
				if err := WriteFile(path, func(w io.Writer) error {
					c := contents[i]
					for len(c) > 0 {
						n := min(len(c), 4096)
						if _, err := w.Write(c[:n]); err != nil {
							return err
						}
						c = c[n:]
					}
					return nil
				}); err != nil {
					t.Errorf("round %d writer %d: %v", round, i, err)
				}
			})
		}
		wg.Wait()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(contents, func(c []byte) bool { return bytes.Equal(c, got) }) {
			t.Fatalf("round %d: %d bytes that no writer wrote", round, len(got))
		}
		if names := testfiles.ListDir(t, dir); !slices.Equal(names, []string{"out"}) {
			t.Fatalf("round %d: directory holds %v", round, names)
		}
	}
}
