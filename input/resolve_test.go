package input

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/shard"
	"github.com/polyhedral/cpm/sparsevec"
)

// rowsOf returns rows [lo, hi) of m.
func rowsOf(m *sparsevec.CSR, lo, hi int) *sparsevec.CSR {
	out := &sparsevec.CSR{Ptr: []int{0}}
	for r := lo; r < hi; r++ {
		out.Append(m.Labels[r], m.Row(r))
	}
	return out
}

// writeRows writes m to path in the format its extension names (a row
// cache for .cpmcache).
func writeRows(t *testing.T, path string, m *sparsevec.CSR) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var w reader.BlockWriter
	var err error
	if reader.FormatForOutput(path) == reader.Cache {
		w, err = rowcache.Create(path, "")
	} else {
		w, err = reader.CreateBlocks(path, reader.WithBatchRows(16))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(m); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameRows reports whether a and b hold the same rows.
func sameRows(a, b *sparsevec.CSR) bool {
	return slices.Equal(a.Labels, b.Labels) && slices.Equal(a.Ptr, b.Ptr) &&
		slices.Equal(a.Idx, b.Idx) && slices.Equal(a.Val, b.Val) && a.Dim == b.Dim
}

// dataDir writes the rows of heart, in order, as a directory of parts of
// mixed formats, with Hive-style partition directories and the files that
// Spark, Hadoop and Delta leave beside data (which hold no rows of heart,
// and fail to parse if read), and returns the directory and the parts in
// the order Resolve must give. The bytewise order of the relative paths
// ("a-b.parquet" before "a/x.libsvm") is not the order of a recursive
// walk, which enters "a" first.
func dataDir(t *testing.T) (string, []string, *sparsevec.CSR) {
	t.Helper()
	all, err := reader.Load(heart)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	parts := []struct {
		rel    string
		lo, hi int
	}{
		{"a-b.parquet", 0, 60},
		{"a/x.libsvm", 60, 130},
		{"year=2024/part-0.arrow", 130, 200},
		{"year=2025/part-0.libsvm", 200, 270},
	}
	var files []string
	for _, p := range parts {
		path := filepath.Join(dir, filepath.FromSlash(p.rel))
		writeRows(t, path, rowsOf(all, p.lo, p.hi))
		files = append(files, path)
	}
	// Beside the data: none of these may be read.
	for _, junk := range []string{"_SUCCESS", ".a-b.parquet.crc", "year=2024/_committed_123", "year=2024/.part-0.arrow.crc", "_delta_log/00000.json", ".hidden/x.libsvm"} {
		writeText(t, filepath.Join(dir, filepath.FromSlash(junk)), "not LIBSVM data\n")
	}
	// The cache --cache auto writes beside a part: the same rows again.
	writeRows(t, filepath.Join(dir, "a-b.parquet.cpmcache"), rowsOf(all, 0, 60))
	return dir, files, all
}

// A directory without a manifest is its data files, in the bytewise order
// of their relative paths, skipping . and _ names; loaded in memory or
// read in passes (every file pinned), it gives the rows of the file it was
// cut from, in order.
func TestDirectoryOfFiles(t *testing.T) {
	dir, files, all := dataDir(t)
	src, err := Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind != ManyFiles || !slices.Equal(src.Files, files) {
		t.Fatalf("Resolve: kind %v files %q; want ManyFiles %q", src.Kind, src.Files, files)
	}
	if d := src.Describe(); !strings.Contains(d, "4 files") || !strings.Contains(d, OrderRule) {
		t.Errorf("Describe: %q", d)
	}
	got, _, err := Load(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !sameRows(got, all) {
		t.Error("Load of the directory: rows differ from the file they were cut from")
	}
	in, err := Open(dir, Config{BlockRows: 25})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if len(in.pins) != len(files) {
		t.Errorf("%d files pinned, want %d", len(in.pins), len(files))
	}
	for k := 1; k <= 2; k++ {
		b, err := in.OpenPass(k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := reader.ReadAll(b)
		if err != nil {
			t.Fatal(err)
		}
		if !sameRows(got, all) {
			t.Errorf("pass %d: rows differ from the file they were cut from", k)
		}
	}
	// A part rewritten in place fails the next pass, naming it.
	writeText(t, files[2], "1 1:1\n")
	if _, err := in.OpenPass(3); !errors.Is(err, ErrInputChanged) || !strings.Contains(err.Error(), files[2]) {
		t.Errorf("pass 3 after a part changed: %v; want ErrInputChanged naming %s", err, files[2])
	}
}

// A glob is its matches in sorted order, a directory among them replaced
// by its files; a cache beside its source in a glob is skipped too.
func TestGlob(t *testing.T) {
	dir, files, all := dataDir(t)
	src, err := Resolve(filepath.Join(dir, "year=*"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(src.Files, files[2:]) {
		t.Fatalf("glob year=*: %q; want %q", src.Files, files[2:])
	}
	got, _, err := Load(filepath.Join(dir, "year=*"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !sameRows(got, rowsOf(all, 130, 270)) {
		t.Error("Load of the glob: rows differ")
	}
	// Directories among the matches are replaced by their files, and the
	// whole is in the order of the directory itself.
	src, err = Resolve(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(src.Files, files) {
		t.Fatalf("glob *: %q; want %q", src.Files, files)
	}
	src, err = Resolve(filepath.Join(dir, "a-b.*"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(src.Files, files[:1]) {
		t.Errorf("glob a-b.*: %q; want %q (the cache beside it skipped)", src.Files, files[:1])
	}
	// A pattern naming hidden files asks for them.
	src, err = Resolve(filepath.Join(dir, ".a-b*"))
	if err != nil || len(src.Files) != 1 {
		t.Errorf("glob .a-b*: %v %v; want the .crc file", src, err)
	}
}

// An empty directory, one with nothing but skipped names, and a glob
// matching nothing are errors saying so; a bad row names its file and
// line.
func TestNoFilesAndBadFile(t *testing.T) {
	empty := t.TempDir()
	junk := t.TempDir()
	writeText(t, filepath.Join(junk, "_SUCCESS"), "")
	for _, p := range []string{empty, junk, filepath.Join(empty, "*.parquet")} {
		_, err := Resolve(p)
		if !errors.Is(err, shard.ErrNoMatch) || !strings.Contains(err.Error(), "skipped") {
			t.Errorf("Resolve(%s): %v; want ErrNoMatch saying what is skipped", p, err)
		}
	}
	dir, _, _ := dataDir(t)
	bad := filepath.Join(dir, "b.libsvm")
	writeText(t, bad, "1 1:1\n-1 2:1\n1 3:1 2:3\n")
	for _, stream := range []bool{false, true} {
		var err error
		if stream {
			var in *Input
			if in, err = Open(dir, Config{}); err == nil {
				_, err = readPass(t, in, 1)
				in.Close()
			}
		} else {
			_, _, err = Load(dir, Config{})
		}
		if !errors.Is(err, reader.ErrUnsorted) || !strings.Contains(err.Error(), bad+":3:") {
			t.Errorf("stream %v: %v; want ErrUnsorted at %s:3", stream, err, bad)
		}
	}
	if _, err := CachePath(dir, "c.cpmcache"); !errors.Is(err, ErrNoCache) {
		t.Errorf("a cache for a directory without manifest: %v; want ErrNoCache", err)
	}
}

// Files named as cpm shard names its shards, in a directory without the
// manifest that completes a shard set, are a set still being written (or
// whose writing failed), not data to read.
func TestShardsWithoutManifest(t *testing.T) {
	dir := t.TempDir()
	writeText(t, filepath.Join(dir, shard.ShardName(0, 2, ".libsvm")), "1 1:1\n")
	if _, err := Resolve(dir); !errors.Is(err, shard.ErrIncomplete) || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("shards without a manifest: %v; want ErrIncomplete", err)
	}
}

// A directory with a manifest stays a shard set, read round-robin and
// checked against the manifest.
func TestShardSetStaysShardSet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "set")
	if _, err := shard.Split(context.Background(), heart, dir, shard.Config{Shards: 3, BlockRows: 40}); err != nil {
		t.Fatal(err)
	}
	src, err := Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind != ShardSet || len(src.Files) != 3 || src.Manifest == nil {
		t.Fatalf("Resolve of a shard directory: %+v", src)
	}
	got, _, err := Load(dir, Config{BlockRows: 40})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := reader.Load(heart)
	if !sameRows(got, all) {
		t.Error("an unshuffled shard set read round-robin is not the input in order")
	}
}

// withStdin runs f with os.Stdin reading the file at path.
func withStdin(t *testing.T, path string, f func()) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	old := os.Stdin
	os.Stdin = fh
	defer func() { os.Stdin = old }()
	f()
}

// Standard input read in passes keeps the first pass in a spill file, read
// by the later passes and removed by Close; a spill beyond its limit, or a
// second pass before the first completed, is an error.
func TestStdinSpill(t *testing.T) {
	all, err := reader.Load(heart)
	if err != nil {
		t.Fatal(err)
	}
	pq := filepath.Join(t.TempDir(), "heart.parquet")
	writeRows(t, pq, all)
	spillDir := t.TempDir()
	withStdin(t, pq, func() {
		if _, err := Open("-", Config{Cache: "c.cpmcache"}); !errors.Is(err, ErrNoCache) {
			t.Errorf("a named cache for standard input: %v; want ErrNoCache", err)
		}
		in, err := Open("-", Config{SpillDir: spillDir})
		if err != nil {
			t.Fatal(err)
		}
		if c := in.Cache(); c.Use != CacheSpill || filepath.Dir(filepath.Dir(c.Path)) != spillDir {
			t.Errorf("cache status %+v; want a spill in %s", c, spillDir)
		}
		for k := 1; k <= 3; k++ {
			b, err := in.OpenPass(k)
			if err != nil {
				t.Fatal(err)
			}
			got, err := reader.ReadAll(b)
			if err != nil {
				t.Fatal(err)
			}
			if !sameRows(got, all) {
				t.Errorf("pass %d of standard input: rows differ", k)
			}
		}
		if in.Close(); dirEntries(t, spillDir) != 0 {
			t.Error("Close left the spill behind")
		}
	})
	withStdin(t, heart, func() {
		in, err := Open("-", Config{SpillDir: spillDir, SpillLimit: 1000, BlockRows: 16})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if _, err := readPass(t, in, 1); !errors.Is(err, ErrSpillLimit) {
			t.Errorf("a spill beyond its limit: %v; want ErrSpillLimit", err)
		}
		if _, err := in.OpenPass(2); !errors.Is(err, ErrStdinOnce) {
			t.Errorf("pass 2 after an incomplete pass 1: %v; want ErrStdinOnce", err)
		}
	})
	if dirEntries(t, spillDir) != 0 {
		t.Error("the spill of a failed pass was left behind")
	}
}

func dirEntries(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
