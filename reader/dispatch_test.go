package reader

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
)

func TestOpenBlocksErrors(t *testing.T) {
	if _, err := OpenBlocks(filepath.Join(t.TempDir(), "none.arrow"), 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// An Arrow file magic followed by nothing.
	path := writeTempFile(t, "x.arrow", []byte("ARROW1\x00\x00"))
	_, err := OpenBlocks(path, 1)
	if !errors.Is(err, core.ErrCorrupt) || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("bare magic: %v, want ErrCorrupt naming the path", err)
	}
}

// TestArrowLoad checks Load on a columnar file and that its result does
// not alias the file's batches.
func TestArrowLoad(t *testing.T) {
	m := sampleCSR(testRand(), 33)
	path := filepath.Join(t.TempDir(), "x.arrows")
	writeAll(t, path, m, 33, core.WithBatchRows(8), core.WithCompression("none"))
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !equalCSR(got, m) {
		t.Error("rows differ")
	}
}
