//go:build unix

package sgd

import (
	"errors"
	"github.com/polyhedral/cpm/sgd/internal/checkpoint"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestLoadCheckpointCapped checks that LoadCheckpointLimit never reads a
// file whole before its checks: /dev/zero is refused after the magic, a
// file with a wrong version after its first 16 bytes, a
// regular file beyond the cap from its size, and an endless stream that
// starts like a checkpoint after limit+1 bytes, each without buffering
// more than the cap.
func TestLoadCheckpointCapped(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpointLimit(zero, 1<<40); !errors.Is(err, ErrNotCheckpoint) {
		t.Errorf("/dev/zero: got %v, want ErrNotCheckpoint", err)
	}
	if _, err := LoadCheckpoint(zero); !errors.Is(err, ErrNotCheckpoint) {
		t.Errorf("/dev/zero with the default cap: got %v, want ErrNotCheckpoint", err)
	}

	badVersion := filepath.Join(dir, "version")
	if err := os.WriteFile(badVersion, append([]byte(checkpoint.Magic+"\x07\x00\x00\x00"), make([]byte, 4<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := LoadCheckpointLimit(badVersion, 1<<40)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCheckpointVersion) {
		t.Errorf("version 7: got %v, want ErrCheckpointVersion", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("version 7: %d bytes allocated, want the file's 4 MiB left unread", n)
	}

	const limit = 1 << 20
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, append([]byte(checkpoint.Magic+"\x02\x00\x00\x00"), make([]byte, limit)...), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *CheckpointError
	if _, err := LoadCheckpointLimit(big, limit); !errors.Is(err, ErrCheckpointTooLarge) || !errors.As(err, &ce) || ce.Name != big {
		t.Errorf("regular file beyond the cap: got %v, want a *CheckpointError naming it, wrapping ErrCheckpointTooLarge", err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.Write([]byte(checkpoint.Magic + "\x02\x00\x00\x00"))
		buf := make([]byte, 64<<10)
		for {
			if _, err := f.Write(buf); err != nil {
				return // the reader stopped: EPIPE
			}
		}
	}()
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = LoadCheckpointLimit(fifo, limit)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCheckpointTooLarge) {
		t.Errorf("endless stream with the magic: got %v, want ErrCheckpointTooLarge", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8*limit {
		t.Errorf("endless stream: %d bytes allocated reading it, want at most %d (8× the cap)", got, 8*limit)
	}
}
