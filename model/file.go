package model

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Save writes m to path atomically: it writes a temporary file in the same
// directory, syncs it to disk, renames it over path and syncs the
// directory. On error the temporary file is removed and any previous file
// at path is left untouched, except that if only the final directory sync
// fails the new file is already in place. The new file keeps the permission bits of the
// file it replaces, or gets 0644.
func Save(path string, m *Model) error {
	return save(path, func(w io.Writer) error { return Write(w, m) })
}

// WriteFileAtomic writes the file at path with write, atomically, as Save
// writes a model (temporary file in the same directory, fsync, rename,
// directory fsync; see Save): other files of the tool, such as training
// checkpoints, use it so that a crash leaves either the old file or the
// new one. Errors name the path.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	return writeAtomic(path, "write", write)
}

// save is Save with the encoder injected, so tests can make it fail midway.
func save(path string, write func(io.Writer) error) error {
	return writeAtomic(path, "save model", write)
}

// writeAtomic implements Save and WriteFileAtomic; what starts error
// messages.
func writeAtomic(path, what string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		perm = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
			err = fmt.Errorf("%s %s: %w", what, path, err)
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	closed = true
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
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
