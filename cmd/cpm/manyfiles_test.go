package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// partsDir writes the rows of heart, in order, as a directory of parts in
// several formats (Parquet, LIBSVM, Arrow), with Hive-style partition
// directories and what Spark, Hadoop and Delta leave beside data:
// _SUCCESS, .crc files, _committed_ markers, a _delta_log directory (none
// of them LIBSVM, so reading one fails). The parts in the order of their
// paths hold rows 0..269 in order.
func partsDir(t *testing.T) string {
	t.Helper()
	all, err := reader.Load(heart)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "heart")
	for _, p := range []struct {
		rel    string
		lo, hi int
	}{
		{"part-0.parquet", 0, 50},
		{"part-1.libsvm", 50, 100},
		{"year=2024/month=01/part-0.arrow", 100, 180},
		{"year=2024/month=02/part-0.parquet", 180, 200},
		{"year=2025/part-0.libsvm", 200, 270},
	} {
		writePart(t, filepath.Join(dir, filepath.FromSlash(p.rel)), all, p.lo, p.hi)
	}
	for _, junk := range []string{"_SUCCESS", ".part-0.parquet.crc", "year=2024/_committed_42", "year=2024/month=01/.part-0.arrow.crc", "_delta_log/00000.json"} {
		p := filepath.Join(dir, filepath.FromSlash(junk))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{\"not\": \"LIBSVM\"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writePart writes rows [lo, hi) of all to path, in the format of its
// extension.
func writePart(t *testing.T, path string, all *sparsevec.CSR, lo, hi int) {
	t.Helper()
	part := &sparsevec.CSR{Ptr: []int{0}}
	for r := lo; r < hi; r++ {
		part.Append(all.Labels[r], all.Row(r))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var w reader.BlockWriter
	var err error
	if reader.FormatForOutput(path) == reader.Cache {
		w, err = rowcache.Create(path, "")
	} else {
		w, err = reader.CreateBlocks(path, reader.WithBatchRows(32))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(part); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A directory of parts, and a glob of them, train the model the single
// file trains, in memory and streamed, and say how many files they read
// in which order.
func TestTrainFromDirectoryAndGlob(t *testing.T) {
	dir := partsDir(t)
	out := t.TempDir()
	for _, mode := range [][]string{nil, {"--stream", "--buffer", "64", "--cache", "none"}} {
		train := func(data, name string) ([]byte, string) {
			p := filepath.Join(out, name)
			args := append([]string{"train", "-k", "3", "-i", "4000", "--seed", "5", "-t", data, "-o", p}, mode...)
			code, stdout, stderr := cpm(t, args...)
			if code != 0 {
				t.Fatalf("cpm %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
			}
			return readBytes(t, p), stderr
		}
		want, _ := train(heart, "file.model")
		got, stderr := train(dir, "dir.model")
		if !bytes.Equal(got, want) {
			t.Errorf("%v: the directory of parts trains another model than the file", mode)
		}
		if note := "cpm: -t " + dir + ": 5 files (sorted by path; _ and . names skipped)"; !strings.Contains(stderr, note) {
			t.Errorf("%v: stderr does not say %q:\n%s", mode, note, stderr)
		}
		if got, _ := train(filepath.Join(dir, "*"), "glob.model"); !bytes.Equal(got, want) {
			t.Errorf("%v: the glob DIR/* trains another model than the file", mode)
		}
	}
}

// Every command that reads data takes a directory: eval, predict, cv,
// tune, convert, and train's -c and --valid; an empty directory, or a
// glob matching nothing, is an error saying so.
func TestCommandsTakeDirectories(t *testing.T) {
	dir := partsDir(t)
	out := t.TempDir()
	m := filepath.Join(out, "m.model")
	fileTest := mustRun(t, "train", "-q", "-k", "2", "-i", "3000", "-t", heart, "-c", heart, "-o", m)
	dirTest := mustRun(t, "train", "-q", "-k", "2", "-i", "3000", "-t", heart, "-c", dir, "--valid", dir, "-o", filepath.Join(out, "m2.model"))
	if strings.Replace(fileTest, heart, dir, 1) != dirTest {
		t.Errorf("train -c DIR reports %q, -c FILE %q", dirTest, fileTest)
	}
	if got, want := mustRun(t, "eval", "-m", m, dir), mustRun(t, "eval", "-m", m, heart); got != want {
		t.Errorf("eval DIR:\n%s\neval FILE:\n%s", got, want)
	}
	if got := mustRun(t, "predict", "-m", m, "-c", dir); !strings.Contains(got, "(") || !strings.Contains(got, "/270)") {
		t.Errorf("predict -c DIR: %q; want the error over 270 rows", got)
	}
	if got, want := mustRun(t, "cv", "-q", "-k", "2", "-i", "2000", "-r", "1", "-f", "3", dir), mustRun(t, "cv", "-q", "-k", "2", "-i", "2000", "-r", "1", "-f", "3", heart); firstLine(got) != strings.Replace(firstLine(want), heart, dir, 1) {
		t.Errorf("cv DIR: %q; cv FILE: %q", firstLine(got), firstLine(want))
	}
	if got := mustRun(t, "tune", "-q", "--grid", "k=2,3", "-i", "1000", "-r", "1", "-f", "2", dir); !strings.Contains(got, "270 rows") {
		t.Errorf("tune DIR does not report the 270 rows:\n%s", got)
	}
	conv, fileConv := filepath.Join(out, "all.libsvm"), filepath.Join(out, "file.libsvm")
	mustRun(t, "convert", dir, "-o", conv)
	mustRun(t, "convert", heart, "-o", fileConv)
	if !bytes.Equal(readBytes(t, conv), readBytes(t, fileConv)) {
		t.Error("convert DIR -o FILE.libsvm does not give the rows of the file the parts were cut from")
	}
	empty := t.TempDir()
	for _, args := range [][]string{
		{"eval", "-m", m, empty},
		{"train", "-q", "-t", filepath.Join(empty, "*.parquet"), "-o", filepath.Join(out, "x.model")},
		{"convert", empty, "-o", filepath.Join(out, "x.libsvm")},
	} {
		code, _, stderr := cpm(t, args...)
		if code != exitIO || !strings.Contains(stderr, "no data file") {
			t.Errorf("cpm %s: exit %d %q; want %d saying no data file", strings.Join(args, " "), code, stderr, exitIO)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// train -o - writes the model's bytes to standard output, those of -o
// FILE; a report that would share standard output with data goes to
// standard error; two outputs cannot both be standard output, nor two
// inputs standard input.
func TestStdoutOutputs(t *testing.T) {
	out := t.TempDir()
	p := filepath.Join(out, "m.model")
	mustRun(t, "train", "-q", "-k", "3", "-i", "3000", "-t", heart, "-o", p)
	code, stdout, stderr := cpm(t, "train", "-q", "-k", "3", "-i", "3000", "-t", heart, "-c", heart, "-o", "-")
	if code != 0 {
		t.Fatalf("train -o -: exit %d: %s", code, stderr)
	}
	if stdout != string(readBytes(t, p)) {
		t.Error("train -o - wrote other bytes than train -o FILE")
	}
	if !strings.Contains(stderr, "test error") {
		t.Errorf("train -o - -c: the test error is not on stderr: %q", stderr)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was written")
	}
	code, stdout, stderr = cpm(t, "tune", "-q", "--grid", "k=2", "-i", "1000", "-r", "1", "-f", "2", heart, "-o", "-")
	if code != 0 || !strings.HasPrefix(stdout, string(readBytes(t, p)[:8])) || !strings.Contains(stderr, "chosen") {
		t.Errorf("tune -o -: exit %d, stdout starts %q, stderr %q; want the model on stdout and the table on stderr", code, stdout[:min(8, len(stdout))], stderr)
	}
	for _, args := range [][]string{
		{"train", "-q", "-t", heart, "-o", "-", "-c", heart, "-s", "-"},
		{"train", "-q", "-t", "-", "-c", "-", "-o", p},
	} {
		if code, _, stderr := cpm(t, args...); code != exitUsage || !strings.Contains(stderr, "only one") && !strings.Contains(stderr, "read once") {
			t.Errorf("cpm %s: exit %d %q; want a usage error", strings.Join(args, " "), code, stderr)
		}
	}
}

// Through real pipes: predict -s - prints the scores alone on standard
// output; a Parquet file piped to eval reads as the file; training
// streamed from a pipe gives the model of the file, keeping the rows in a
// spill file that is gone afterwards.
func TestPipes(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	out := t.TempDir()
	m := filepath.Join(out, "m.model")
	mustRun(t, "train", "-q", "-k", "2", "-i", "3000", "-t", heart, "-o", m)

	r := cpmProcess(t, nil, "predict", "-m", m, "-c", heart, "-s", "-")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 270 || strings.Contains(r.stdout, "error") || !strings.Contains(r.stderr, "test error") {
		t.Errorf("predict -s -: exit %d, %d lines on stdout (want 270 scores, no report), stderr %q", r.code, len(lines), r.stderr)
	}

	all, err := reader.Load(heart)
	if err != nil {
		t.Fatal(err)
	}
	pq := filepath.Join(out, "heart.parquet")
	writePart(t, pq, all, 0, all.Rows())
	want := mustRun(t, "eval", "-m", m, pq)
	r = cpmProcess(t, bytes.NewReader(readBytes(t, pq)), "eval", "-m", m, "-")
	if r.code != 0 || r.stdout != want {
		t.Errorf("cat x.parquet | cpm eval -m M -: exit %d, stdout %q, stderr %q; want %q", r.code, r.stdout, r.stderr, want)
	}

	for _, extra := range [][]string{nil, {"--double-sided"}} {
		args := append([]string{"train", "--stream", "--buffer", "64", "-k", "3", "-i", "4000", "--seed", "9"}, extra...)
		fileModel := filepath.Join(out, "file.model")
		mustRun(t, append(args, "-q", "--cache", "none", "-t", heart, "-o", fileModel)...)
		r = cpmProcess(t, bytes.NewReader(readBytes(t, heart)), append(args, "-t", "-", "-o", "-")...)
		if r.code != 0 {
			t.Fatalf("cat f | cpm train --stream -t - -o -: exit %d: %s", r.code, r.stderr)
		}
		if r.stdout != string(readBytes(t, fileModel)) {
			t.Errorf("%v: training streamed from a pipe gives another model than from the file", extra)
		}
		if !strings.Contains(r.stderr, "spill file "+tmp) {
			t.Errorf("%v: stderr does not name the spill file in TMPDIR:\n%s", extra, r.stderr)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%v: left in TMPDIR: %v", extra, left)
		}
	}
	r = cpmProcess(t, bytes.NewReader(readBytes(t, heart)), "train", "-q", "--stream", "-k", "2", "-t", "-", "--spill-limit", "1KiB", "-o", m)
	if r.code == 0 || !strings.Contains(r.stderr, "size limit") {
		t.Errorf("a spill beyond --spill-limit: exit %d %q; want an error saying so", r.code, r.stderr)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("a failed spill left %v in TMPDIR", left)
	}
}
