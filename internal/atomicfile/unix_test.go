//go:build unix

package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/polyhedral/cpm/internal/testfiles"
)

// TestStraightThrough checks that a FIFO and a character device are
// written in place: opened, written and closed, never renamed over, and
// still what they were afterwards. The device is a private node made in
// the test's directory with the numbers of /dev/null (1, 3 on Linux), so
// no device of the machine is touched; making it needs root.
func TestStraightThrough(t *testing.T) {
	data := bytes.Repeat([]byte("row\n"), 50000) // more than a pipe holds
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		read  bool // start a reader (FIFO) and compare what it reads
		isDev bool
	}{
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skip("mkfifo:", err)
			}
		}, true, false},
		{"character device", func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("making a device node needs root")
			}
			if err := syscall.Mknod(path, syscall.S_IFCHR|0o600, int(unix.Mkdev(1, 3))); err != nil {
				t.Skip("mknod:", err)
			}
		}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out")
			tt.make(t, path)
			before, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(path); err != nil { // must not block on the FIFO
				t.Fatalf("Check: %v", err)
			}
			got := make(chan []byte, 1)
			if tt.read {
				go func() {
					f, err := os.Open(path)
					if err != nil {
						got <- nil
						return
					}
					defer f.Close()
					b, _ := io.ReadAll(f)
					got <- b
				}()
			}
			if err := WriteFile(path, writeBytes(data)); err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			if tt.read {
				select {
				case b := <-got:
					if !bytes.Equal(b, data) {
						t.Errorf("reader got %d bytes, want %d", len(b), len(data))
					}
				case <-time.After(10 * time.Second):
					t.Fatal("reader got no end of file")
				}
			}
			after, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if after.Mode() != before.Mode() || !os.SameFile(before, after) {
				t.Errorf("%s was %v, is now %v (same file %v)", path, before.Mode(), after.Mode(), os.SameFile(before, after))
			}
			if names := testfiles.ListDir(t, dir); !slices.Equal(names, []string{"out"}) {
				t.Errorf("directory holds %v", names)
			}
		})
	}
}

// TestRefusedSpecial checks that a socket and a block device (a private
// node, root only, never opened) are refused.
func TestRefusedSpecial(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skip("unix socket:", err)
	}
	defer l.Close()
	paths := []string{sock}
	if os.Geteuid() == 0 {
		blk := filepath.Join(dir, "blk")
		if err := syscall.Mknod(blk, syscall.S_IFBLK|0o600, int(unix.Mkdev(7, 0))); err == nil {
			paths = append(paths, blk)
		}
	}
	for _, p := range paths {
		if err := Check(p); !errors.Is(err, ErrRefused) {
			t.Errorf("Check(%s) = %v, want ErrRefused", p, err)
		}
		if err := WriteFile(p, writeBytes([]byte("x"))); !errors.Is(err, ErrRefused) {
			t.Errorf("WriteFile(%s) = %v, want ErrRefused", p, err)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode().IsRegular() {
			t.Errorf("%s became a regular file (%v)", p, err)
		}
	}
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if alive(pid) {
		t.Skipf("pid %d already reused", pid)
	}
	return pid
}

// TestStaleTemporaries checks that a write removes the temporaries of dead
// processes for its destination and keeps the others: those of live
// processes, of other destinations and names not of the package's form.
func TestStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	dead := strconv.Itoa(deadPID(t))
	live := strconv.Itoa(os.Getppid())
	self := strconv.Itoa(os.Getpid())
	stale := []string{".out.tmp-" + dead + "-a1", ".out.tmp-" + dead + "-b2"}
	kept := []string{
		".out.tmp-" + live + "-c3",  // live process
		".out.tmp-" + self + "-d4",  // this process (perhaps a concurrent write)
		".other.tmp-" + dead + "-e", // another destination
		".out.tmp-123456",           // os.CreateTemp's pattern: owner unknown
		"out.tmp",                   // not hidden
	}
	for _, name := range append(slices.Clone(stale), kept...) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := Check(filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if n := len(testfiles.ListDir(t, dir)); n != len(stale)+len(kept) {
		t.Fatalf("Check removed files: %d left", n)
	}
	if err := WriteFile(filepath.Join(dir, "out"), writeBytes([]byte("new"))); err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(kept), "out")
	slices.Sort(want)
	if got := testfiles.ListDir(t, dir); !slices.Equal(got, want) {
		t.Errorf("directory holds %v, want %v", got, want)
	}
}

// TestCheckNotWritable checks that Check reports a directory the process
// may not write to, as an error wrapping fs.ErrPermission.
func TestCheckNotWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write any directory")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := Check(filepath.Join(ro, "out")); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Check = %v, want ErrPermission", err)
	}
}

// TestDescriptorPaths checks that /dev/fd/N and /proc/self/fd/N (and so
// /dev/stdout) write through the open descriptor: a pipe gets the bytes, a
// file opened for appending keeps its content and gets the bytes at its
// end, and nothing is created or renamed.
func TestDescriptorPaths(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "log")
	if err := os.WriteFile(logPath, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, prefix := range []string{"/proc/self/fd/", "/dev/fd/"} {
		p := prefix + strconv.Itoa(int(log.Fd()))
		if err := Check(p); err != nil {
			t.Fatalf("Check(%s): %v", p, err)
		}
		if err := WriteFile(p, writeBytes([]byte("appended\n"))); err != nil {
			t.Fatalf("WriteFile(%s): %v", p, err)
		}
	}
	if b, _ := os.ReadFile(logPath); string(b) != "old\nappended\nappended\n" {
		t.Errorf("log holds %q", b)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := WriteFile("/proc/self/fd/"+strconv.Itoa(int(w.Fd())), writeBytes([]byte("through the pipe"))); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, _ := io.ReadAll(r); string(b) != "through the pipe" {
		t.Errorf("pipe got %q", b)
	}
	dirHolds := testfiles.ListDir(t, dir)
	if !slices.Equal(dirHolds, []string{"log"}) {
		t.Errorf("directory holds %v", dirHolds)
	}
	for _, tt := range []struct {
		path string
		n    int
		ok   bool
	}{
		{"/dev/fd/1", 1, true},
		{"/proc/self/fd/12", 12, true},
		{"/proc/" + strconv.Itoa(os.Getpid()) + "/fd/3", 3, true},
		{"/proc/1/fd/3", 0, false}, // another process
		{"/dev/fd/01", 0, false},
		{"/dev/fd/x", 0, false},
		{"/dev/fd", 0, false},
		{"fd/1", 0, false},
	} {
		if n, ok := descriptor(tt.path); n != tt.n || ok != tt.ok {
			t.Errorf("descriptor(%q) = %d, %v; want %d, %v", tt.path, n, ok, tt.n, tt.ok)
		}
	}
}
