package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/input"
)

// rootedFile is the data file of a --data-root run.
type rootedFile struct {
	rel  string      // slash-separated, relative to the data root: Task.Path
	path string      // absolute, symbolic links resolved
	fi   os.FileInfo // taken before the rows are loaded; digest checks the file against it
}

// checkData checks, with --data-root, that the data file (flag path) is a
// regular file inside the data root once both have their symbolic links
// resolved, and notes it for the tasks: a worker reads only files inside
// its own --data-root. The workers read the file with the readers'
// defaults, so reader flags that change what a file holds (--zero-based
// yes or no, the column flags) are refused with it. Call it before the
// rows are loaded.
func (n *natsFlags) checkData(flag, path string, lim *inputLimits) error {
	if n.dataRoot == "" {
		return nil
	}
	if f := lim.changed(); f != "" {
		return usagef("--data-root: the workers read %s with the readers' defaults; %s changes what it holds: convert the file first (cpm convert), or drop --data-root", flag, f)
	}
	switch {
	case path == "-":
		return usagef("--data-root: the workers read a file inside %s; %s - (standard input) is none: give the file, or drop --data-root", n.dataRoot, flag)
	case input.IsShardSet(path):
		return usagef("--data-root: %s %s names several files (a shard set, a directory or a glob); give one file inside %s, or drop --data-root", flag, path, n.dataRoot)
	}
	root, err := resolvePath(n.dataRoot)
	if err != nil {
		return usagef("--data-root: %v", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return usagef("--data-root %s is not a directory", n.dataRoot)
	}
	p, err := resolvePath(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || !filepath.IsLocal(rel) {
		return usagef("--data-root: %s %s is not inside %s (symbolic links resolved); the workers read only files inside their --data-root", flag, path, n.dataRoot)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if !fi.Mode().IsRegular() {
		return usagef("--data-root: %s %s is not a regular file", flag, path)
	}
	rel = filepath.ToSlash(rel)
	if !cluster.ValidPath(rel) {
		return usagef("--data-root: %s %s: its path in %s, %q, is not one a task carries (at most %d bytes, no control characters or backslashes)", flag, path, n.dataRoot, rel, cluster.MaxPathBytes)
	}
	n.data = &rootedFile{rel: rel, path: p, fi: fi}
	return nil
}

// resolvePath returns path made absolute with its symbolic links resolved.
func resolvePath(path string) (string, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}

// digest returns the SHA-256 of the file's bytes, and an error if the
// file is not the version checkData saw (the rows loaded may be another
// version's).
func (f *rootedFile) digest() (string, error) {
	r, err := os.Open(f.path)
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, r, make([]byte, 1<<20)); err != nil {
		return "", err
	}
	if st, err := r.Stat(); err != nil || !os.SameFile(st, f.fi) || st.Size() != f.fi.Size() || !st.ModTime().Equal(f.fi.ModTime()) {
		return "", fmt.Errorf("%s changed while it was read; run again once it is complete", f.path)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
