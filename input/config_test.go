package input

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/shard"
)

func TestCachePath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "d.libsvm")
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(set, shard.ManifestName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, cache, want string
		refused                 string // a word of the error, or "" for none
	}{
		{"no cache", file, "", "", ""},
		{"named", file, "c.cpmcache", "c.cpmcache", ""},
		{"auto", file, "auto", file + ".cpmcache", ""},
		{"standard input", "-", "c.cpmcache", "", "standard input"},
		{"auto for a shard directory", set, "auto", "", "auto"},
		{"named for a shard directory", set, "s.cpmcache", "s.cpmcache", ""},
		{"auto for a directory", dir, "auto", "", "auto"},
		{"named for a directory without manifest", dir, "s.cpmcache", "", "manifest"},
		{"glob", filepath.Join(dir, "part-*"), "g.cpmcache", "", "glob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CachePath(tc.path, tc.cache)
			switch {
			case tc.refused == "" && (err != nil || got != tc.want):
				t.Errorf("CachePath(%q, %q) = %q, %v; want %q", tc.path, tc.cache, got, err, tc.want)
			case tc.refused != "" && (!errors.Is(err, ErrNoCache) || !strings.Contains(err.Error(), tc.refused)):
				t.Errorf("CachePath(%q, %q): %v; want ErrNoCache naming %q", tc.path, tc.cache, err, tc.refused)
			}
		})
	}
}

func TestOpenRefusesNegativeConfig(t *testing.T) {
	for _, cfg := range []Config{{Readers: -1}, {BlockRows: -1}} {
		if in, err := Open(heart, cfg); err == nil {
			in.Close()
			t.Errorf("Open with %+v: no error", cfg)
		}
	}
}

func TestCacheUseString(t *testing.T) {
	for u, want := range map[CacheUse]string{CacheNone: "none", CacheHit: "hit", CacheNew: "new", CacheStale: "stale", CacheUse(9): "CacheUse(?)"} {
		if got := u.String(); got != want {
			t.Errorf("CacheUse(%d).String() = %q, want %q", int(u), got, want)
		}
	}
}

// A cache is new on the first run, complete after its first pass, read
// by the next run, and rebuilt once the source changes.
func TestCacheStatus(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "h.libsvm")
	text := readFile(t, heart)
	if err := os.WriteFile(src, text, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Cache: "auto"}
	run := func(want CacheUse) Stats {
		t.Helper()
		in, err := Open(src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if c := in.Cache(); c.Use != want || c.Path != src+".cpmcache" || (want == CacheStale) != (c.Reason != nil) {
			t.Fatalf("cache %+v, want %v at %s", c, want, src+".cpmcache")
		}
		for k := 1; k <= 2; k++ {
			if n, err := readPass(t, in, k); err != nil || n != 120 {
				t.Fatalf("pass %d: %d positive rows, %v", k, n, err)
			}
		}
		return in.Stats()
	}
	if s := run(CacheNew); !s.CacheBuilt || s.CacheReused || s.FirstPass <= 0 {
		t.Errorf("first run: %+v; want the cache built by the first pass", s)
	}
	if s := run(CacheHit); s.CacheBuilt || !s.CacheReused {
		t.Errorf("second run: %+v; want the cache reused", s)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(src, later, later); err != nil {
		t.Fatal(err)
	}
	if s := run(CacheStale); !s.CacheBuilt {
		t.Errorf("after the source changed: %+v; want the cache rebuilt", s)
	}
}

// A shard directory loads into memory as one pass with the rows of the
// file it was split from, in shard.Reader's order, through a cache too.
func TestLoadShardSet(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	if _, err := shard.Split(context.Background(), heart, set, shard.Config{Shards: 3, Ext: ".libsvm"}); err != nil {
		t.Fatal(err)
	}
	want, _, err := Load(heart, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{{}, {Cache: filepath.Join(dir, "s.cpmcache")}} {
		got, status, err := Load(set, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got.Rows() != want.Rows() || got.NNZ() != want.NNZ() {
			t.Errorf("%+v: %d rows, %d nonzeros; want %d, %d", cfg, got.Rows(), got.NNZ(), want.Rows(), want.NNZ())
		}
		if (cfg.Cache != "") != (status.Use == CacheNew) {
			t.Errorf("%+v: cache %v", cfg, status.Use)
		}
	}
}

// Passes counts each polytope's wait, and no pass opens after Close.
func TestPassesAndClose(t *testing.T) {
	in, err := Open(heart, Config{BlockRows: 50})
	if err != nil {
		t.Fatal(err)
	}
	p := in.Passes(context.Background(), 2)
	for i := range 2 {
		b, err := p.Open(i)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
	}
	if s := in.Stats(); len(s.Wait) != 2 {
		t.Errorf("%d wait figures, want one per polytope", len(s.Wait))
	}
	p.Leave(0)
	p.Leave(1)
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := in.OpenPass(1); !errors.Is(err, ErrClosed) {
		t.Errorf("OpenPass after Close: %v, want ErrClosed", err)
	}
}
