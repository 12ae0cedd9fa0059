package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/internal/testfiles"
)

// copyHeart copies heart_scale into dir/name and returns its path.
func copyHeart(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, readBytes(t, heart), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// With --stream and no --cache, a run of several passes over a file
// leaves TRAIN.cpmcache beside it, which the next run reads; the model is
// the one trained with no cache (--cache none, which writes none).
func TestStreamDefaultCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	src := copyHeart(t, dir, "d.libsvm")
	m := filepath.Join(dir, "m")
	args := []string{"train", "--stream", "-t", src, "-k", "3", "-i", "3000", "--seed", "3", "-o", m}
	_, _, errs := cpm(t, args...)
	if !strings.Contains(errs, "writes cache "+src+".cpmcache") {
		t.Fatalf("first run: %q, want a note that the cache is written", errs)
	}
	built := readBytes(t, m)
	if got, want := testfiles.ListDir(t, dir), []string{"d.libsvm", "d.libsvm.cpmcache", "m"}; !slices.Equal(got, want) {
		t.Fatalf("after the first run %s holds %q, want %q", dir, got, want)
	}
	_, _, errs = cpm(t, args...)
	if !strings.Contains(errs, "reading rows from cache") {
		t.Fatalf("second run: %q, want the cache read", errs)
	}
	reused := readBytes(t, m)
	if err := os.Remove(src + ".cpmcache"); err != nil {
		t.Fatal(err)
	}
	_, _, errs = cpm(t, append(args, "--cache", "none")...)
	if strings.Contains(errs, "cache") {
		t.Fatalf("--cache none: %q, want no cache", errs)
	}
	if got, want := testfiles.ListDir(t, dir), []string{"d.libsvm", "m"}; !slices.Equal(got, want) {
		t.Fatalf("after --cache none %s holds %q, want %q", dir, got, want)
	}
	if plain := readBytes(t, m); !bytes.Equal(plain, built) || !bytes.Equal(plain, reused) {
		t.Fatal("the model depends on the default cache")
	}
	if names := testfiles.ListDir(t, os.Getenv("TMPDIR")); len(names) > 0 {
		t.Fatalf("temporary files left: %q", names)
	}
}

// A streamed run that ends within its first pass leaves no cache, and
// neither does in-memory training, nor a streamed run from a cache.
func TestDefaultCacheNotForOnePass(t *testing.T) {
	dir := t.TempDir()
	src := copyHeart(t, dir, "d.libsvm")
	m := filepath.Join(dir, "m")
	for _, args := range [][]string{
		{"--stream", "-i", "100"}, // 270 rows: one pass
		{"-i", "3000"},            // in memory
	} {
		mustRun(t, append([]string{"train", "-q", "-t", src, "-k", "3", "-o", m}, args...)...)
		if got, want := testfiles.ListDir(t, dir), []string{"d.libsvm", "m"}; !slices.Equal(got, want) {
			t.Fatalf("train %q: %s holds %q, want %q", args, dir, got, want)
		}
	}
	cache := filepath.Join(dir, "c.cpmcache")
	mustRun(t, "convert", src, "-o", cache)
	mustRun(t, "train", "-q", "--stream", "-t", cache, "-k", "3", "-i", "3000", "-o", m)
	if got, want := testfiles.ListDir(t, dir), []string{"c.cpmcache", "d.libsvm", "m"}; !slices.Equal(got, want) {
		t.Fatalf("streamed from a cache: %s holds %q, want %q", dir, got, want)
	}
}

// Where TRAIN.cpmcache would replace a file that is not a cache, or TRAIN
// names a directory of files, the default cache is a temporary file,
// removed at exit; the file is left as it was.
func TestDefaultCacheFallsBackToTemp(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	src := copyHeart(t, dir, "d.libsvm")
	notCache := []byte("notes, not a cache\n")
	if err := os.WriteFile(src+".cpmcache", notCache, 0o644); err != nil {
		t.Fatal(err)
	}
	parts := filepath.Join(t.TempDir(), "parts")
	if err := os.Mkdir(parts, 0o755); err != nil {
		t.Fatal(err)
	}
	copyHeart(t, parts, "a.libsvm")
	copyHeart(t, parts, "b.libsvm")
	for _, train := range []string{src, parts} {
		m := filepath.Join(t.TempDir(), "m")
		_, _, errs := cpm(t, "train", "--stream", "-t", train, "-k", "3", "-i", "3000", "-o", m)
		if !strings.Contains(errs, "temporary cache "+tmp) || !strings.Contains(errs, "removed at exit") {
			t.Fatalf("-t %s: %q, want a note on the temporary cache", train, errs)
		}
		if !strings.Contains(errs, "from the cache") && !strings.Contains(errs, "cache writing") {
			t.Fatalf("-t %s: %q, want the cache built", train, errs)
		}
		if names := testfiles.ListDir(t, tmp); len(names) > 0 {
			t.Fatalf("-t %s: temporary files left: %q", train, names)
		}
	}
	if b := readBytes(t, src+".cpmcache"); !bytes.Equal(b, notCache) {
		t.Fatal("the default cache replaced a file that is not a cache")
	}
	if got, want := testfiles.ListDir(t, dir), []string{"d.libsvm", "d.libsvm.cpmcache"}; !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", dir, got, want)
	}
	if got, want := testfiles.ListDir(t, parts), []string{"a.libsvm", "b.libsvm"}; !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", parts, got, want)
	}
}

// Standard input keeps its rows in the spill file, removed at exit; no
// cache appears anywhere.
func TestDefaultCacheStdin(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	m := filepath.Join(dir, "m")
	r := cpmProcess(t, bytes.NewReader(readBytes(t, heart)), "train", "--stream", "-k", "3", "-i", "3000", "-t", "-", "-o", m)
	if r.code != 0 || !strings.Contains(r.stderr, "spill file") {
		t.Fatalf("exit %d, %q; want a run through the spill file", r.code, r.stderr)
	}
	if names := testfiles.ListDir(t, tmp); len(names) > 0 {
		t.Fatalf("temporary files left: %q", names)
	}
	if got, want := testfiles.ListDir(t, dir), []string{"m"}; !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", dir, got, want)
	}
}
