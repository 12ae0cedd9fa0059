package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// copyFile copies src to dir/name and returns the new path, so that tests
// that must leave an input untouched never risk the repository's files.
func copyFile(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// longTrain is a training command line that runs for many seconds: a
// check that comes only after training shows as a slow failure.
func longTrain(train string) []string {
	return []string{"train", "-t", train, "-k", "3", "-i", "200000000"}
}

// wantFastFailure runs args in-process under a 60-second deadline and
// checks that the command fails with status code within 5 seconds, that
// stderr names want and that no data was loaded and no training progress
// printed.
func wantFastFailure(t *testing.T, args []string, code int, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	start := time.Now()
	got := run(ctx, args, &out, &errb)
	elapsed := time.Since(start)
	stderr := errb.String()
	if got != code || !strings.Contains(stderr, want) {
		t.Errorf("cpm %s: exit %d, stderr %q; want exit %d naming %q", strings.Join(args, " "), got, stderr, code, want)
	}
	if elapsed > 5*time.Second {
		t.Errorf("cpm %s: failed after %v, want before any work", strings.Join(args, " "), elapsed)
	}
	for _, s := range []string{"loaded ", " step ", "trained ", "test error"} {
		if strings.Contains(stderr+out.String(), s) {
			t.Errorf("cpm %s: printed %q before failing:\n%s", strings.Join(args, " "), s, stderr)
		}
	}
}

// dirHolds fails the test unless dir holds exactly names (sorted).
func dirHolds(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

// TestTrainOutputsCheckedFirst checks that every output of train, and its
// -c file, are checked before the data is loaded: a missing directory
// (exit 4), a directory as the output (exit 2), a missing -c file (exit 4).
func TestTrainOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	train := copyFile(t, heart, dir, "train.libsvm")
	isDir := filepath.Join(dir, "adir")
	if err := os.Mkdir(isDir, 0o755); err != nil {
		t.Fatal(err)
	}
	noDir := filepath.Join(dir, "no", "such", "file")
	model := filepath.Join(dir, "m.model")
	for _, flag := range []string{"-o", "-s", "--json", "--metrics-log", "--checkpoint", "--cpuprofile", "--cache"} {
		for _, tc := range []struct {
			name, path string
			code       int
		}{
			{"missing dir", noDir, exitIO},
			{"directory", isDir, exitUsage},
		} {
			t.Run(flag+" "+tc.name, func(t *testing.T) {
				args := longTrain(train)
				if flag != "-o" {
					args = append(args, "-o", model)
				}
				if flag == "-s" {
					args = append(args, "-c", train)
				}
				wantFastFailure(t, append(args, flag, tc.path), tc.code, flag)
			})
		}
	}
	t.Run("missing -c", func(t *testing.T) {
		wantFastFailure(t, append(longTrain(train), "-o", model, "-c", filepath.Join(dir, "missing.libsvm")), exitIO, "missing.libsvm")
	})
	t.Run("missing --valid", func(t *testing.T) {
		wantFastFailure(t, append(longTrain(train), "-o", model, "--valid", filepath.Join(dir, "missing.libsvm")), exitIO, "missing.libsvm")
	})
	t.Run("output is the training file", func(t *testing.T) {
		wantFastFailure(t, append(longTrain(train), "-o", train), exitUsage, "it is the input")
	})
	t.Run("output is the test file", func(t *testing.T) {
		test := copyFile(t, heart, dir, "test.libsvm")
		wantFastFailure(t, append(longTrain(train), "-c", test, "--json", test), exitUsage, "it is the input")
	})
	t.Run("two outputs, one file", func(t *testing.T) {
		wantFastFailure(t, append(longTrain(train), "-o", model, "--metrics-log", filepath.Join(dir, ".", "m.model")), exitUsage, "the same file")
	})
	if _, err := os.Stat(model); err == nil {
		t.Error("a failed run wrote the model")
	}
	if b, err := os.ReadFile(train); err != nil || !bytes.Equal(b, mustRead(t, heart)) {
		t.Error("the training file changed")
	}
	dirHolds(t, dir, "adir", "test.libsvm", "train.libsvm")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCacheRefusesNonCache checks that --cache refuses, before any work
// and with exit status 2, to write over the training file itself, a model,
// or any file that is not a cpm cache, and leaves the file as it was; a
// real cache at the path is read and gives the model of the same run
// without a cache.
func TestCacheRefusesNonCache(t *testing.T) {
	dir := t.TempDir()
	train := copyFile(t, heart, dir, "train.libsvm")
	model := filepath.Join(dir, "m.model")
	mustRun(t, "train", "-q", "-k", "2", "-i", "2000", "-t", train, "-o", model)
	modelBytes := mustRead(t, model)
	text := filepath.Join(dir, "notes.cpmcache")
	if err := os.WriteFile(text, []byte("my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cache, want string
	}{
		{"training file", train, "it is the input"},
		{"model", model, "not a cpm cache"},
		{"other file", text, "not a cpm cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := mustRead(t, tc.cache)
			for _, stream := range [][]string{nil, {"--stream"}} {
				args := append(longTrain(train), "-o", filepath.Join(dir, "out.model"), "--cache", tc.cache)
				wantFastFailure(t, append(args, stream...), exitUsage, tc.want)
				if !bytes.Equal(mustRead(t, tc.cache), before) {
					t.Fatalf("%s changed", tc.cache)
				}
			}
		})
	}
	if !bytes.Equal(mustRead(t, model), modelBytes) {
		t.Error("the model changed")
	}
	cache := filepath.Join(dir, "c.cpmcache")
	for range 2 { // written, then read
		mustRun(t, "train", "-q", "-k", "2", "-i", "2000", "-t", train, "-o", filepath.Join(dir, "out.model"), "--cache", cache)
	}
	if !bytes.Equal(mustRead(t, filepath.Join(dir, "out.model")), modelBytes) {
		t.Error("training through the cache wrote another model")
	}
}

// TestTrainOutputSymlink checks that -o through a symbolic link replaces
// the link's target, keeps the link, and writes the same bytes as -o to a
// plain path.
func TestTrainOutputSymlink(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.model")
	args := []string{"train", "-q", "-k", "2", "-i", "2000", "-t", heart}
	mustRun(t, append(args, "-o", plain)...)
	if err := os.Mkdir(filepath.Join(dir, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "models", "v1.model")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "current.model")
	if err := os.Symlink(filepath.Join("models", "v1.model"), link); err != nil {
		t.Skip("no symlinks:", err)
	}
	mustRun(t, append(args, "-o", link, "--json", filepath.Join(dir, "m.json"))...)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink (%v)", link, err)
	}
	if !bytes.Equal(mustRead(t, target), mustRead(t, plain)) {
		t.Error("the link's target does not hold the model")
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("target mode %v (%v), want 0600 kept", fi.Mode(), err)
	}
	dirHolds(t, filepath.Join(dir, "models"), "v1.model")
}

// TestOtherCommandsCheckOutputs checks that every command refuses an
// output path that is a directory (exit 2) or lies in a missing directory
// (exit 4) before it reads its input.
func TestOtherCommandsCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.model")
	mustRun(t, "train", "-q", "-k", "2", "-i", "2000", "-t", heart, "-o", model)
	isDir := filepath.Join(dir, "adir")
	if err := os.Mkdir(isDir, 0o755); err != nil {
		t.Fatal(err)
	}
	noDir := filepath.Join(dir, "no", "out")
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args func(out string) []string
	}{
		{"predict -s", func(o string) []string { return []string{"predict", "-m", model, "-c", heart, "-s", o} }},
		{"train -m -s", func(o string) []string { return []string{"train", "-m", model, "-c", heart, "-s", o} }},
		{"eval --json", func(o string) []string { return []string{"eval", "-m", model, "--json", o, heart} }},
		{"inspect --json", func(o string) []string { return []string{"inspect", "--json", o, model} }},
		{"cv --json", func(o string) []string { return []string{"cv", "-q", "-i", "200000000", "--json", o, heart} }},
		{"export -o", func(o string) []string { return []string{"export", "-m", model, "-o", o} }},
		{"convert -o", func(o string) []string { return []string{"convert", heart, "-o", o} }},
		{"gen -o", func(o string) []string { return []string{"gen", "url", "-o", o} }},
		{"plot regions -o", func(o string) []string {
			return []string{"plot", "regions", "--model", model, "--data", heart, "-o", o}
		}},
		{"plot curve -o", func(o string) []string { return []string{"plot", "curve", "--log", heart, "-o", o} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantFastFailure(t, tc.args(isDir), exitUsage, isDir)
			wantFastFailure(t, tc.args(noDir), exitIO, noDir)
		})
	}
	t.Run("shard OUTDIR", func(t *testing.T) {
		wantFastFailure(t, []string{"shard", "-n", "2", heart, notDir}, exitUsage, "not a directory")
	})
	t.Run("export -o the model", func(t *testing.T) {
		before := mustRead(t, model)
		wantFastFailure(t, []string{"export", "-m", model, "-o", model}, exitUsage, "it is the input")
		if !bytes.Equal(mustRead(t, model), before) {
			t.Error("the model changed")
		}
	})
	dirHolds(t, dir, "adir", "file", "m.model")
}

// TestExportAtomic checks that export -o replaces an existing file with
// the whole text (the same as standard output) and leaves no temporary.
func TestExportAtomic(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.model")
	mustRun(t, "train", "-q", "-k", "2", "-i", "2000", "-t", heart, "-o", model)
	text := filepath.Join(dir, "m.txt")
	if err := os.WriteFile(text, []byte("old text"), 0o640); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "export", "-m", model, "-o", text)
	if got, want := string(mustRead(t, text)), mustRun(t, "export", "-m", model); got != want {
		t.Errorf("export -o wrote %d bytes, standard output %d", len(got), len(want))
	}
	if fi, err := os.Stat(text); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v (%v), want 0640 kept", fi.Mode(), err)
	}
	if got, want := mustRun(t, "export", "-m", model, "-o", "-"), mustRun(t, "export", "-m", model); got != want {
		t.Error("export -o - differs from standard output")
	}
	dirHolds(t, dir, "m.model", "m.txt")
}

// TestCPUProfileOutput checks that --cpuprofile puts a whole profile in
// place when training ends and leaves no temporary.
func TestCPUProfileOutput(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.prof")
	code, _, stderr := cpm(t, "train", "-q", "-k", "2", "-i", "2000", "-t", heart, "-o", filepath.Join(dir, "m.model"), "--cpuprofile", prof)
	if strings.Contains(stderr, "already in use") {
		t.Skip("the test binary is profiling:", stderr)
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("profile: %v, %v", fi, err)
	}
	dirHolds(t, dir, "cpu.prof", "m.model")
}
