//go:build unix

package libsvm

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// A FIFO cannot be scanned ahead: auto reads it as 1-based without opening
// it twice (which would wait for the writer and then break its pipe), and
// yes reads its 0-based rows.
func TestZeroBasedFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	feed := func() chan error {
		done := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err == nil {
				_, err = f.WriteString("1 1:1\n2 0:1 3:2\n")
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			done <- err
		}()
		return done
	}
	done := feed()
	_, err := Load(p)
	wantParseError(t, err, 2, 3, core.ErrIndexZero)
	if !strings.Contains(err.Error(), "zero-based yes") {
		t.Errorf("error %q does not say to use zero-based yes", err)
	}
	if werr := <-done; werr != nil && !errors.Is(werr, syscall.EPIPE) {
		t.Fatalf("writer: %v", werr)
	}
	done = feed()
	m, err := Load(p, core.WithZeroBased(core.ZeroBasedYes))
	if err != nil || !slices.Equal(m.Idx, []uint32{2, 1, 4}) {
		t.Fatalf("yes: %v, %v", m, err)
	}
	if werr := <-done; werr != nil {
		t.Fatalf("writer: %v", werr)
	}
}
