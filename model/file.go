package model

import (
	"fmt"
	"io"
	"os"

	"github.com/polyhedral/cpm/internal/atomicfile"
)

// Save writes m to path by the rules of package internal/atomicfile: a
// regular file (or the target of a symbolic link) is replaced atomically
// (temporary file in the same directory, fsync, rename, directory fsync),
// keeping the permission bits of the file it replaces or getting 0644; on
// error the temporary file is removed and any previous file at path is
// left untouched, except that if only the final directory sync fails the
// new file is already in place. A character device or FIFO is written
// straight through; a directory, block device or socket is refused.
// Errors name the path.
func Save(path string, m *Model) error {
	return save(path, func(w io.Writer) error { return Write(w, m) })
}

// save is Save with the encoder injected, so tests can make it fail midway.
func save(path string, write func(io.Writer) error) error {
	if err := atomicfile.WriteFile(path, write); err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	return nil
}

// Load reads the model file at path. Declared sizes are checked against the
// file's length before anything is allocated for them. Errors name the
// file; a malformed file gives a *FormatError (see the package
// documentation).
func Load(path string) (*Model, error) {
	return LoadLimit(path, 0)
}

// LoadLimit is Load with the memory limit of ReadLimit: a model whose
// weight matrices, counts and steps would take more than limit bytes is
// refused before they are allocated. A limit <= 0 sets none.
func LoadLimit(path string, limit int64) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return read(f, path, size, limit)
}
