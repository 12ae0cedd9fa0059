package input

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/shard"
	"github.com/polyhedral/cpm/sparsevec"
)

// Kind says what a data path names (see Resolve).
type Kind int

// The kinds of data path.
const (
	// OneFile is one file in any format reader.OpenBlocks reads.
	OneFile Kind = iota
	// Stdin is "-": standard input, in any of those formats.
	Stdin
	// ShardSet is a directory holding a shard manifest (shard.ManifestName),
	// as shard.Split writes it: its shards, checked against the manifest.
	ShardSet
	// ManyFiles is a directory without a manifest, or a glob: its data
	// files, read one after the other in the order of Resolve.
	ManyFiles
)

// ErrNoFiles is wrapped by the error of Resolve for a directory or glob
// that names no data file. It matches shard.ErrNoMatch too: to a caller,
// as a glob of shards that matches nothing, it is a missing file.
var ErrNoFiles error = noFiles{}

type noFiles struct{}

func (noFiles) Error() string        { return "no data file" }
func (noFiles) Is(target error) bool { return target == shard.ErrNoMatch }

// OrderRule is how Resolve orders the files of a directory or glob, as the
// progress lines of cpm say it.
const OrderRule = "sorted by path; _ and . names skipped"

// Source is a data path resolved to the files it names (see Resolve).
type Source struct {
	Path  string
	Kind  Kind
	Files []string // the files in reading order; nil for Stdin
	// Manifest is the shard set's manifest (ShardSet only).
	Manifest *shard.Manifest
}

// Resolve resolves a data path to its files. It is the one place where a
// data path is interpreted:
//
//   - "-" is standard input (Stdin), in any format (reader.OpenStdin);
//   - a directory holding a shard manifest (shard.ManifestName) is a shard
//     set: its files are the shards the manifest lists, which must exist
//     with their recorded sizes (shard.Check);
//   - any other directory is walked recursively, through subdirectories
//     such as Hive-style partitions (year=2024/part-0.parquet; the values
//     in such names are not read as features). The files are sorted
//     bytewise by their slash-separated path relative to the directory;
//   - a path that does not exist and holds a glob metacharacter (*?[) is a
//     filepath.Glob pattern: its matches, a directory among them replaced
//     by its files as above, sorted bytewise by path (the order of Glob
//     itself when the matches lie in one directory);
//   - anything else is one file.
//
// In a directory or glob, names that start with "." or "_" are skipped,
// files and directories alike (what Spark, Hadoop, DuckDB and polars leave
// beside data: _SUCCESS, _committed_*, .crc files, _delta_log), except a
// glob match whose last pattern element itself starts with that
// character; so are files named shard.ManifestName (in a subdirectory)
// and a row cache named after another file of the set plus ".cpmcache"
// (what --cache auto writes beside its source), which holds that file's
// rows again. A file named as shard.Split names its shards
// (part-00000-of-00004...) in a directory without a manifest is an error
// wrapping shard.ErrIncomplete: the manifest is written last, so such a
// directory is a shard set still being written or whose writing failed. Every other entry must be a regular file (or a symbolic
// link to one). A directory or glob with no data file left is an error
// wrapping ErrNoFiles (which matches shard.ErrNoMatch). Each file's format is detected on its own
// when it is read, so formats may be mixed.
func Resolve(p string) (*Source, error) {
	switch {
	case p == "":
		return nil, errors.New("input: no data path")
	case p == "-":
		return &Source{Path: p, Kind: Stdin}, nil
	}
	fi, err := os.Stat(p)
	switch {
	case err == nil && fi.IsDir():
		return resolveDir(p)
	case err == nil:
		return &Source{Path: p, Kind: OneFile, Files: []string{p}}, nil
	case strings.ContainsAny(p, "*?[") && errors.Is(err, fs.ErrNotExist):
		return resolveGlob(p)
	}
	return nil, err
}

// resolveDir resolves a directory: a shard set, or the files under it.
func resolveDir(dir string) (*Source, error) {
	if _, err := os.Lstat(filepath.Join(dir, shard.ManifestName)); err == nil {
		m, err := shard.Check(dir)
		if err != nil {
			return nil, err
		}
		s := &Source{Path: dir, Kind: ShardSet, Manifest: m}
		for _, sh := range m.Shards {
			s.Files = append(s.Files, filepath.Join(dir, sh.Name))
		}
		return s, nil
	}
	files, err := walkData(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("input: directory %s: %w (names starting with . or _ are skipped)", dir, ErrNoFiles)
	}
	return &Source{Path: dir, Kind: ManyFiles, Files: dropCaches(files)}, nil
}

// walkData returns the data files under dir, sorted by their
// slash-separated path relative to dir.
func walkData(dir string) ([]string, error) {
	type entry struct{ rel, path string }
	var found []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		name := d.Name()
		if skipName(name, "") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || name == shard.ManifestName {
			return nil
		}
		if shard.IsShardName(name) && !exists(filepath.Join(filepath.Dir(p), shard.ManifestName)) {
			return fmt.Errorf("%s: named as a shard of cpm shard, but %s has no %s manifest (a shard set still being written, or whose writing failed): %w", p, filepath.Dir(p), shard.ManifestName, shard.ErrIncomplete)
		}
		if err := checkRegular(p, d); err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		found = append(found, entry{filepath.ToSlash(rel), p})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	slices.SortFunc(found, func(a, b entry) int { return strings.Compare(a.rel, b.rel) })
	files := make([]string, len(found))
	for i, e := range found {
		files[i] = e.path
	}
	return files, nil
}

// checkRegular refuses a directory entry that is neither a regular file
// nor a symbolic link to one.
func checkRegular(p string, d fs.DirEntry) error {
	if d.Type().IsRegular() {
		return nil
	}
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s: a symbolic link to a directory; name the directory itself", p)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s)", p, fi.Mode().Type())
	}
	return nil
}

// skipName reports whether a file or directory called name is skipped in
// a directory or glob: it starts with "." or "_", unless the glob pattern
// element that matched it (keep; "" for a directory walk) starts with the
// same character.
func skipName(name, keep string) bool {
	if name == "" || name[0] != '.' && name[0] != '_' {
		return false
	}
	return keep == "" || keep[0] != name[0]
}

// resolveGlob resolves a glob pattern.
func resolveGlob(pattern string) (*Source, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("input: pattern %q: %w", pattern, err)
	}
	last := filepath.Base(pattern)
	var files []string
	for _, m := range matches {
		if skipName(filepath.Base(m), last) || filepath.Base(m) == shard.ManifestName {
			continue
		}
		fi, err := os.Stat(m)
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		if !fi.IsDir() {
			if !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("input: %s: not a regular file (%s)", m, fi.Mode().Type())
			}
			files = append(files, m)
			continue
		}
		sub, err := walkData(m)
		if err != nil {
			return nil, err
		}
		files = append(files, sub...)
	}
	slices.Sort(files)
	files = slices.Compact(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("input: pattern %q matches %w (names starting with . or _ are skipped)", pattern, ErrNoFiles)
	}
	return &Source{Path: pattern, Kind: ManyFiles, Files: dropCaches(files)}, nil
}

// dropCaches removes from files every "X.cpmcache" whose X is in files.
func dropCaches(files []string) []string {
	in := make(map[string]bool, len(files))
	for _, f := range files {
		in[f] = true
	}
	return slices.DeleteFunc(files, func(f string) bool {
		src, ok := strings.CutSuffix(f, ".cpmcache")
		return ok && in[src]
	})
}

// Describe is the progress line of a source of several files (a shard set,
// a directory or a glob): the path, the number of files and their order;
// "" for one file or standard input.
func (s *Source) Describe() string {
	switch s.Kind {
	case ShardSet:
		return fmt.Sprintf("%s: shard set of %d files (manifest order, read round-robin)", s.Path, len(s.Files))
	case ManyFiles:
		return fmt.Sprintf("%s: %d files (%s)", s.Path, len(s.Files), OrderRule)
	}
	return ""
}

// Name is the source's name in messages: the path, or "standard input".
func (s *Source) Name() string {
	if s.Kind == Stdin {
		return "standard input"
	}
	return s.Path
}

// OpenBlocks opens one pass over the source: one file or standard input
// with reader.OpenBlocks, a shard set with shard.OpenFiles (readers
// parallel readers, 0 for the default) checked against its manifest,
// several files one after the other in the order of Resolve.
func (s *Source) OpenBlocks(blockRows, readers int, opts ...reader.Option) (reader.BlockReader, error) {
	switch s.Kind {
	case OneFile, Stdin:
		return reader.OpenBlocks(s.Path, blockRows, opts...)
	case ShardSet:
		r, err := shard.OpenFiles(s.Files, shard.ReadConfig{Readers: readers, BlockRows: blockRows}, opts...)
		if err != nil {
			return nil, err
		}
		r.ExpectCounts(s.Manifest.Shards)
		return r, nil
	}
	return newConcat(s.Files, func(f string) (reader.BlockReader, error) {
		return reader.OpenBlocks(f, blockRows, opts...)
	}), nil
}

// Load reads the whole source into memory: one file or standard input
// with reader.Load, several files each with reader.Load, appended in the
// order of Resolve, a shard set as one pass of OpenBlocks.
func (s *Source) Load(opts ...reader.Option) (*sparsevec.CSR, error) {
	switch s.Kind {
	case OneFile, Stdin:
		return reader.Load(s.Path, opts...)
	case ShardSet:
		b, err := s.OpenBlocks(DefaultBlockRows, 0, opts...)
		if err != nil {
			return nil, err
		}
		return reader.ReadAll(b)
	}
	var all *sparsevec.CSR
	for i, f := range s.Files {
		m, err := reader.Load(f, opts...)
		if err != nil {
			return nil, fileErr(i, len(s.Files), f, err)
		}
		if all == nil {
			all = m
		} else {
			all.AppendCSR(m)
		}
	}
	return all, nil
}

// fileErr names file i of n, and its path unless err does already.
func fileErr(i, n int, p string, err error) error {
	if strings.Contains(err.Error(), p) {
		return fmt.Errorf("file %d of %d: %w", i+1, n, err)
	}
	return fmt.Errorf("file %d of %d: %s: %w", i+1, n, p, err)
}
