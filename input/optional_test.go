package input

import (
	"os"
	"path/filepath"
	"testing"
)

// copyHeart copies heart into a new directory and returns its path there.
func copyHeart(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "h.libsvm")
	if err := os.WriteFile(p, readFile(t, heart), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An optional cache is put in place only when the second pass opens: a
// run that reads one pass leaves none, a run of two passes leaves the
// cache, which the second pass reads.
func TestOptionalCacheCommitsOnSecondPass(t *testing.T) {
	src := copyHeart(t)
	cache := src + ".cpmcache"
	for _, passes := range []int{1, 2} {
		in, err := Open(src, Config{Cache: "auto", Optional: true})
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= passes; k++ {
			if pos, err := readPass(t, in, k); err != nil || pos != 120 {
				t.Fatalf("pass %d: %d positive rows, %v", k, pos, err)
			}
		}
		_, statErr := os.Stat(cache)
		if s := in.Stats(); (statErr == nil) != (passes == 2) || s.CacheBuilt != (passes == 2) {
			t.Fatalf("%d passes: cache file: %v, built %v", passes, statErr, s.CacheBuilt)
		}
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		if names := dirEntries(t, filepath.Dir(src)); names != passes {
			t.Fatalf("%d passes: %d entries beside the source", passes, names)
		}
	}
	in, err := Open(src, Config{Cache: "auto", Optional: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.Cache().Use != CacheHit {
		t.Fatalf("the next run: %v, want the cache read", in.Cache().Use)
	}
}

// An optional cache whose writing fails is dropped: the passes go on
// reading the source and Stats says why.
func TestOptionalCacheDropped(t *testing.T) {
	src := copyHeart(t)
	in, err := Open(src, Config{Cache: "auto", Optional: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	// The directory goes away under the writer: putting the cache in
	// place (its rename) fails.
	dir := filepath.Dir(src)
	if _, err := readPass(t, in, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if pos, err := readPass(t, in, 2); err != nil || pos != 120 {
		t.Fatalf("pass 2: %d positive rows, %v", pos, err)
	}
	if s := in.Stats(); s.CacheDropped == nil || s.CacheBuilt {
		t.Fatalf("stats %+v, want the cache dropped", s)
	}
}

// A TempCache lives in a new directory in SpillDir for the run and is
// removed by Close, for a file and for a directory of files.
func TestTempCache(t *testing.T) {
	src := copyHeart(t)
	for _, path := range []string{src, filepath.Dir(src)} {
		spill := t.TempDir()
		in, err := Open(path, Config{Cache: TempCache, SpillDir: spill})
		if err != nil {
			t.Fatal(err)
		}
		if c := in.Cache(); c.Use != CacheTemp || filepath.Dir(filepath.Dir(c.Path)) != spill {
			t.Fatalf("%s: cache %+v, want a temporary one in %s", path, c, spill)
		}
		for k := 1; k <= 2; k++ {
			if pos, err := readPass(t, in, k); err != nil || pos != 120 {
				t.Fatalf("%s: pass %d: %d positive rows, %v", path, k, pos, err)
			}
		}
		if s := in.Stats(); !s.CacheBuilt {
			t.Fatalf("%s: the temporary cache was not built", path)
		}
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		if n := dirEntries(t, spill); n != 0 {
			t.Fatalf("%s: %d entries left in %s", path, n, spill)
		}
	}
}
