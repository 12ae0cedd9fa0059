package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Streamed training gives the same model whether the rows come from the
// text, from a cache the first pass writes, or from that cache on a later
// run; and double-sided training (whose two polytopes share each pass)
// matches too.
func TestStreamCacheGivesSameModel(t *testing.T) {
	dir := t.TempDir()
	for _, sides := range [][]string{nil, {"--double-sided"}} {
		name := "single"
		if sides != nil {
			name = "double"
		}
		t.Run(name, func(t *testing.T) {
			train := func(extra ...string) []byte {
				p := filepath.Join(dir, name+".model")
				args := append([]string{"train", "-q", "--stream", "--buffer", "50", "-t", heart, "-k", "3", "-i", "3000", "--seed", "3", "-o", p}, sides...)
				mustRun(t, append(args, extra...)...)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			cache := filepath.Join(dir, name+".cpmcache")
			plain := train("--cache", "none")
			built := train("--cache", cache)
			if _, err := os.Stat(cache); err != nil {
				t.Fatalf("no cache after training: %v", err)
			}
			reused := train("--cache", cache, "--json", filepath.Join(dir, name+".json"))
			if !bytes.Equal(plain, built) || !bytes.Equal(plain, reused) {
				t.Fatal("the model depends on whether rows came through the cache")
			}
			var met trainMetrics
			b, err := os.ReadFile(filepath.Join(dir, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &met); err != nil {
				t.Fatal(err)
			}
			if met.Input == nil || !met.Input.CacheReused || met.Input.CacheBuilt {
				t.Fatalf("metrics do not say the cache was reused: %+v", met.Input)
			}
			if want := 1 + len(sides); len(met.Input.WaitSeconds) != want {
				t.Fatalf("%d wait figures, want one per polytope (%d)", len(met.Input.WaitSeconds), want)
			}
		})
	}
}

// A cache whose source changed is rebuilt, not trusted.
func TestStaleCacheIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "d.libsvm")
	data, err := os.ReadFile(heart)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"train", "--stream", "-t", src, "-k", "2", "-i", "1000", "--cache", "auto", "-o", filepath.Join(dir, "m")}
	_, _, errs := cpm(t, args...)
	if !strings.Contains(errs, "writes cache") {
		t.Fatalf("first run: %q, want a note that the cache is being written", errs)
	}
	// Flip the label of the first row: same size, new content.
	flipped := bytes.Replace(data, []byte("+1"), []byte("-1"), 1)
	if err := os.WriteFile(src, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, errs = cpm(t, args...)
	if !strings.Contains(errs, "rebuilding cache") {
		t.Fatalf("after the source changed: %q, want the cache rebuilt", errs)
	}
	_, _, errs = cpm(t, args...)
	if !strings.Contains(errs, "reading rows from cache") {
		t.Fatalf("third run: %q, want the rebuilt cache used", errs)
	}
}

// In-memory training through a cache loads the same rows.
func TestLoadThroughCache(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "h.cpmcache")
	var models [3][]byte
	for i := range models {
		p := filepath.Join(dir, "m")
		args := []string{"train", "-q", "-t", heart, "-k", "3", "-i", "5000", "-o", p}
		if i > 0 {
			args = append(args, "--cache", cache)
		}
		mustRun(t, args...)
		models[i], _ = os.ReadFile(p)
	}
	if !bytes.Equal(models[0], models[1]) || !bytes.Equal(models[0], models[2]) {
		t.Fatal("the model depends on whether the data came through the cache")
	}
}

// Training from a shard directory with --stream works and, with a cache,
// identifies the set by its manifest.
func TestStreamFromShards(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "shards")
	mustRun(t, "shard", "-n", "3", "--shuffle", "--seed", "5", heart, shards)
	out := mustRun(t, "train", "-q", "--stream", "--double-sided", "-t", shards, "-k", "3", "-i", "3000", "--cache", filepath.Join(dir, "s.cpmcache"), "-c", heart)
	if !strings.Contains(out, "test error") {
		t.Fatalf("no test error line: %q", out)
	}
	code, _, errs := cpm(t, "train", "--stream", "-t", filepath.Join(shards, "part-*"), "-k", "2", "-i", "100", "--cache", filepath.Join(dir, "g.cpmcache"), "-o", filepath.Join(dir, "m"))
	if code != 2 || !strings.Contains(errs, "glob") {
		t.Fatalf("cache with a glob: exit %d, %q; want a usage error", code, errs)
	}
}

// editedShardSet shards heart_scale into dir/set, two plain-text shards,
// and turns 13 lines of the second into comments of the same length (so
// its size still matches the manifest). It returns the set and the shard.
func editedShardSet(t *testing.T, dir string) (string, string) {
	t.Helper()
	set := filepath.Join(dir, "set")
	mustRun(t, "shard", "-n", "2", "--shuffle", "--seed", "5", "--ext", ".libsvm", heart, set)
	p := filepath.Join(set, "part-00001-of-00002.libsvm")
	lines := bytes.SplitAfter(readFile(t, p), []byte("\n"))
	for i := range 13 {
		lines[i] = append(append([]byte("#"), bytes.Repeat([]byte("x"), len(lines[i])-2)...), '\n')
	}
	if err := os.WriteFile(p, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	return set, p
}

// Streamed training from a shard directory refuses a shard that gives
// other rows than its manifest records: bad input, naming the shard.
func TestStreamShardCountsChecked(t *testing.T) {
	dir := t.TempDir()
	set, p := editedShardSet(t, dir)
	code, _, errs := cpm(t, "train", "-q", "--stream", "-t", set, "-k", "2", "-i", "2000", "-o", filepath.Join(dir, "m"))
	if code != exitBadInput || !strings.Contains(errs, p) || !strings.Contains(errs, "read 142 rows and 1780 nonzeros, the manifest records 155 rows and 1941 nonzeros") {
		t.Errorf("exit %d, stderr %q; want %d naming %s and the counts", code, errs, exitBadInput, p)
	}
}

// The reproduction end to end: a training file replaced with mv while
// cpm train --stream runs changes nothing: the run keeps reading the file
// it opened, and its model is the one trained without the replacement.
func TestStreamFileReplacedMidRun(t *testing.T) {
	dir := t.TempDir()
	p, q := filepath.Join(dir, "train.libsvm"), filepath.Join(dir, "other.libsvm")
	text := readFile(t, heart)
	if err := os.WriteFile(p, text, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(q, bytes.ReplaceAll(text, []byte("\n+1 "), []byte("\n-1 ")), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"train", "--stream", "-k", "3", "-i", "500000", "--progress-every", "20000", "-t", p}
	want := filepath.Join(dir, "want.model")
	mustRun(t, append(args, "-q", "-o", want)...)

	errb := newSyncBuffer("step")
	got := filepath.Join(dir, "got.model")
	cmd := startCPM(t, errb, append(args, "-o", got)...)
	exited := waitFor(t, cmd, "a progress line", errb.marked, errb)
	if err := os.Rename(q, p); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(120 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("still training after 120 s; stderr:\n%s", errb)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errb)
	}
	if !strings.Contains(errb.String(), "step   0.50M/0.50M") {
		t.Fatalf("the file was replaced after training ended; stderr:\n%s", errb)
	}
	if !bytes.Equal(readFile(t, got), readFile(t, want)) {
		t.Error("the model differs from the one trained without the replacement")
	}
}
