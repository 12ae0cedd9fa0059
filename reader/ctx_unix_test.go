//go:build unix

package reader

import (
	"context"
	"errors"
	"github.com/polyhedral/cpm/sparsevec"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/polyhedral/cpm/reader/libsvm"
)

// fifoWithWriter makes a FIFO in a temporary directory, opens its writing
// end (so that opening it for reading does not wait) and writes data to it,
// which it keeps open until the test ends: a pipe that never ends.
func fifoWithWriter(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if _, err := w.WriteString(data); err != nil {
		t.Fatal(err)
	}
	return path
}

// A stream of a pipe that never ends stops with the context's error when
// the context is cancelled: while Open sniffs the first bytes, and while
// Next waits for rows (after at most the one block of rows read before the
// cancellation).
func TestWithContextEndsPipeReads(t *testing.T) {
	for _, data := range []string{"", "1 1:1\n-1 2:1\n"} {
		ctx, cancel := context.WithCancel(context.Background())
		path := fifoWithWriter(t, data)
		done := make(chan error, 1)
		go func() {
			s, err := libsvm.NewStream(path, 1000, WithContext(ctx))
			if err == nil {
				// The rows read before the cancellation may come first, in
				// at most one block; then the context's error.
				for range 2 {
					var b *sparsevec.CSR
					if b, err = s.Next(); err != nil {
						break
					}
					s.Release(b)
				}
				if cerr := s.Close(); cerr != nil {
					t.Errorf("Close: %v", cerr)
				}
			}
			done <- err
		}()
		select {
		case err := <-done:
			t.Fatalf("data %q: returned %v before the cancellation", data, err)
		case <-time.After(100 * time.Millisecond):
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("data %q: err = %v, want context.Canceled", data, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("data %q: still reading 10 s after the cancellation", data)
		}
	}
}
