package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/internal/testfiles"
)

// streamRun trains with --stream on data and returns the model's bytes
// and stderr; the run must succeed.
func streamRun(t *testing.T, data, model string, extra ...string) ([]byte, string) {
	t.Helper()
	args := append([]string{"train", "--stream", "--seed", "3", "-k", "3", "-i", "20000", "-t", data, "-o", model}, extra...)
	code, out, errs := cpm(t, args...)
	if code != 0 {
		t.Fatalf("cpm %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	return b, errs
}

// A streamed file without a zero-based note, plain, gzip or zstd, gives
// the model of its --zero-based reading: 0-based through a restart said
// on stderr (not with -q), 1-based with no restart.
func TestStreamZeroBasedNoNote(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp) // the temporary caches
	one, err := os.ReadFile(heart)
	if err != nil {
		t.Fatal(err)
	}
	zero := writeZeroBased(t, heart, filepath.Join(dir, "zero.txt"))
	for _, ext := range []string{".libsvm", ".libsvm.gz", ".libsvm.zst"} {
		for _, c := range []struct {
			name, mode string
			text       []byte
		}{{"zero", "yes", zero}, {"one", "no", one}} {
			data := filepath.Join(dir, c.name+ext)
			testfiles.WriteNoNote(t, data, c.text)
			for _, cache := range []string{"none", "temp", ""} {
				extra := []string{"--cache", cache}
				if cache == "" {
					extra = nil // the default: data.cpmcache, kept once pass 2 starts
				}
				want, _ := streamRun(t, data, filepath.Join(dir, "want.model"), append(extra, "-q", "--zero-based", c.mode)...)
				os.Remove(data + ".cpmcache")
				got, errs := streamRun(t, data, filepath.Join(dir, "got.model"), extra...)
				if !bytes.Equal(got, want) {
					t.Errorf("%s%s --cache %q: model differs from --zero-based %s's", c.name, ext, cache, c.mode)
				}
				notice := "cpm: " + data + ": index 0 at line 1; reading as 0-based, restarting\n"
				if n := strings.Count(errs, notice); c.name == "zero" && n != 1 || c.name == "one" && strings.Contains(errs, "restarting") {
					t.Errorf("%s%s --cache %q: stderr says %q %d times:\n%s", c.name, ext, cache, notice, n, errs)
				}
				if _, errs := streamRun(t, data, filepath.Join(dir, "q.model"), append(extra, "-q")...); strings.Contains(errs, "restarting") {
					t.Errorf("%s%s -q: stderr says it restarts:\n%s", c.name, ext, errs)
				}
				os.Remove(data + ".cpmcache")
			}
		}
	}
	if left := testfiles.ListDir(t, tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// An index 0 late in the file (after the first blocks, with the cache
// being written and --metrics-log recording) restarts the run cleanly:
// the model, the cache and the log are those of --zero-based yes, and no
// temporary file is left. A run that ends within its first pass, before
// the index 0, is restarted too. Under --zero-based no the index 0 is an
// error naming its line, exit status 3, and leaves no cache.
func TestStreamZeroBasedLate(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	one, err := os.ReadFile(heart)
	if err != nil {
		t.Fatal(err)
	}
	text := bytes.Repeat(one, 40) // 10,800 rows: three blocks of 4096
	last := bytes.LastIndexByte(text[:len(text)-1], '\n') + 1
	label, rest, _ := bytes.Cut(text[last:], []byte(" "))
	text = slices.Concat(text[:last], label, []byte(" 0:1 "), rest)
	lines := bytes.Count(text, []byte("\n"))
	data := filepath.Join(dir, "late.libsvm.zst")
	testfiles.WriteNoNote(t, data, text)

	cache := filepath.Join(dir, "late.cpmcache")
	for _, extra := range [][]string{
		// A small buffer makes steps, and progress records, before the index 0.
		{"--cache", cache, "--buffer", "512", "--progress-every", "500"},
		{"--cache", "temp", "--buffer", "512", "--progress-every", "500"},
		{"--cache", "none", "--buffer", "64", "-i", "50", "--progress-every", "10"}, // ends within the first block
	} {
		logYes, logGot := filepath.Join(dir, "yes.jsonl"), filepath.Join(dir, "got.jsonl")
		want, _ := streamRun(t, data, filepath.Join(dir, "want.model"), append(extra, "-q", "--zero-based", "yes", "--metrics-log", logYes)...)
		os.Remove(cache)
		got, errs := streamRun(t, data, filepath.Join(dir, "got.model"), append(extra, "--metrics-log", logGot)...)
		if !bytes.Equal(got, want) {
			t.Errorf("%v: model differs from --zero-based yes's", extra)
		}
		notice := "cpm: " + data + ": index 0 at line " + strconv.Itoa(lines) + "; reading as 0-based, restarting\n"
		if slices.Contains(extra, "-i") {
			notice = "cpm: " + data + ": holds an index 0; reading as 0-based, restarting\n"
		}
		if strings.Count(errs, notice) != 1 {
			t.Errorf("%v: stderr does not say %q once:\n%s", extra, notice, errs)
		}
		if a, b := logRecords(t, logYes), logRecords(t, logGot); !reflect.DeepEqual(a, b) {
			t.Errorf("%v: --metrics-log holds %d records, --zero-based yes's %d", extra, len(b), len(a))
		}
		wantFiles := []string{"got.jsonl", "got.model", "late.libsvm.zst", "want.model", "yes.jsonl"}
		if extra[1] == cache {
			wantFiles = []string{"got.jsonl", "got.model", "late.cpmcache", "late.libsvm.zst", "want.model", "yes.jsonl"}
			// The cache the restarted run wrote serves the next run.
			again, errs := streamRun(t, data, filepath.Join(dir, "again.model"), extra...)
			if !bytes.Equal(again, want) || !strings.Contains(errs, "reading rows from cache") || strings.Contains(errs, "restarting") {
				t.Errorf("run from the cache: model equal %v, stderr:\n%s", bytes.Equal(again, want), errs)
			}
			os.Remove(filepath.Join(dir, "again.model"))
		}
		if files := testfiles.ListDir(t, dir); !slices.Equal(files, wantFiles) {
			t.Errorf("%v: directory holds %v, want %v", extra, files, wantFiles)
		}
		for _, f := range []string{logYes, logGot, cache} {
			os.Remove(f)
		}
	}

	args := []string{"train", "-q", "--stream", "--cache", cache, "-k", "2", "-i", "100", "-t", data, "-o", filepath.Join(dir, "no.model"), "--zero-based", "no"}
	code, _, errs := cpm(t, args...)
	wantFailure(t, args, code, errs, "late.libsvm.zst:"+strconv.Itoa(lines)+":", "feature index 0", "pass --zero-based yes or auto")
	if code != 3 || strings.Contains(errs, "restarting") {
		t.Errorf("--zero-based no: exit %d, want 3; stderr:\n%s", code, errs)
	}
	if files := testfiles.ListDir(t, dir); !slices.Equal(files, []string{"got.model", "late.libsvm.zst", "want.model"}) {
		t.Errorf("--zero-based no: directory holds %v", files)
	}
	if left := testfiles.ListDir(t, tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// logRecords reads the records of a --metrics-log, without their
// elapsed times.
func logRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	for line := range bytes.Lines(b) {
		var r map[string]any
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		delete(r, "elapsed_seconds")
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: no records", path)
	}
	return recs
}

// Standard input is read once: with --stream, auto reads it as 1-based
// and an index 0 is an error, with no restart.
func TestStreamZeroBasedStdin(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	zero := writeZeroBased(t, heart, filepath.Join(dir, "zero.libsvm"))
	r := cpmProcess(t, bytes.NewReader(zero), "train", "--stream", "-k", "2", "-i", "100", "-t", "-", "-o", filepath.Join(dir, "m.model"))
	wantFailure(t, []string{"train", "--stream", "-t", "-"}, r.code, r.stderr, "-:1:", "feature index 0", "pass --zero-based yes")
	if r.code != 3 || strings.Contains(r.stderr, "restarting") {
		t.Errorf("exit %d, want 3; stderr:\n%s", r.code, r.stderr)
	}
	if files := testfiles.ListDir(t, dir); !slices.Equal(files, []string{"zero.libsvm"}) {
		t.Errorf("left: %v", files)
	}
}

// Scoring a file without a zero-based note (predict, train -c) gives the
// scores of its --zero-based reading, whether the index 0 is on the first
// line or only on the last (the 1-based pass fails there and the file is
// read again), leaves no scores file from the pass given up, and reports
// a bad line with its line and column.
func TestScoreZeroBasedNoNote(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.model")
	if code, out, errs := cpm(t, "train", "-q", "--seed", "1", "-k", "2", "-i", "5000", "-t", heart, "-o", model); code != 0 {
		t.Fatalf("train: exit %d\n%s%s", code, out, errs)
	}
	one, err := os.ReadFile(heart)
	if err != nil {
		t.Fatal(err)
	}
	zero := writeZeroBased(t, heart, filepath.Join(dir, "zero.txt"))
	// The same rows with feature 0 dropped from all but the last row: an
	// index 0 only on the last line.
	lines := strings.SplitAfter(string(zero), "\n")
	var late []byte
	for i, l := range lines {
		if i < len(lines)-2 {
			l = strings.Replace(l, " 0:", " 999999:", 1)
			if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], "999999:") {
				l = strings.Join(append(f[:1], f[2:]...), " ") + "\n"
			}
		}
		late = append(late, l...)
	}
	bad := bytes.Replace(one, []byte("\n"), []byte("\n1 3:x\n"), 1)
	for _, ext := range []string{".libsvm", ".libsvm.gz", ".libsvm.zst"} {
		for _, c := range []struct {
			name, mode string
			text       []byte
		}{{"zero", "yes", zero}, {"late", "yes", late}, {"one", "no", one}} {
			data := filepath.Join(dir, c.name+ext)
			testfiles.WriteNoNote(t, data, c.text)
			want, got := filepath.Join(dir, c.name+".want"), filepath.Join(dir, c.name+".got")
			if code, out, errs := cpm(t, "predict", "-m", model, "-c", data, "-s", want, "--zero-based", c.mode); code != 0 {
				t.Fatalf("%s: predict --zero-based %s: exit %d\n%s%s", data, c.mode, code, out, errs)
			}
			code, out, errs := cpm(t, "predict", "-m", model, "-c", data, "-s", got)
			if code != 0 {
				t.Fatalf("%s: predict: exit %d\n%s%s", data, code, out, errs)
			}
			if c.mode == "yes" && !strings.Contains(errs, "0-based") {
				t.Errorf("%s: auto read it as 0-based without saying so:\n%s", data, errs)
			}
			w, _ := os.ReadFile(want)
			g, _ := os.ReadFile(got)
			if !bytes.Equal(w, g) || len(g) == 0 {
				t.Errorf("%s: auto's scores differ from --zero-based %s's", data, c.mode)
			}
		}
		data := filepath.Join(dir, "bad"+ext)
		testfiles.WriteNoNote(t, data, bad)
		scores := filepath.Join(dir, "bad.scores")
		code, _, errs := cpm(t, "predict", "-m", model, "-c", data, "-s", scores)
		if code != 3 || !strings.Contains(errs, "bad"+ext+":2:") {
			t.Errorf("%s: exit %d, want 3 and the line:\n%s", data, code, errs)
		}
		if _, err := os.Stat(scores); !os.IsNotExist(err) {
			t.Errorf("%s: a scores file was left: %v", data, err)
		}
	}
	if left := testfiles.ListDir(t, dir); slices.ContainsFunc(left, func(n string) bool { return strings.Contains(n, ".tmp") || strings.HasPrefix(n, ".") }) {
		t.Errorf("temporary files left: %v", left)
	}
}
