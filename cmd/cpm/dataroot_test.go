package main

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// dataRoot makes a data root holding heart_scale as sets/heart.svm and,
// gzip-compressed, sets/heart.svm.gz; it returns the root and the two
// paths.
func dataRoot(t *testing.T) (root, plain, gz string) {
	t.Helper()
	root = t.TempDir()
	b, err := os.ReadFile(heart)
	if err != nil {
		t.Fatal(err)
	}
	plain, gz = filepath.Join(root, "sets", "heart.svm"), filepath.Join(root, "sets", "heart.svm.gz")
	if err := os.MkdirAll(filepath.Dir(plain), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(gz)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return root, plain, gz
}

// train --nats --data-root has the workers read -t in place (no upload)
// and writes the model a local run writes, for a plain and a compressed
// file, named directly or through a symbolic link inside the root.
func TestTrainDataRootMatchesLocal(t *testing.T) {
	root, plain, gz := dataRoot(t)
	if err := os.Symlink("sets/heart.svm", filepath.Join(root, "link.svm")); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, tc := range []struct{ name, file, args string }{
		{"plain", plain, "-k 4 -i 20000 --seed 2"},
		{"ovo-gz", gz, "-k 2 -i 3000 --ovo --double-sided --seed 3"},
		{"link", filepath.Join(root, "link.svm"), "-k 3 -i 5000 --seed 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, remote := filepath.Join(out, tc.name+".local"), filepath.Join(out, tc.name+".nats")
			args := append([]string{"train", "-t", tc.file}, strings.Fields(tc.args)...)
			mustRun(t, append(args, "-q", "-o", local)...)
			code, _, stderr := cpm(t, append(args, "-o", remote, "--nats", "embedded", "--embedded-workers", "2", "--data-root", root)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, "read in place by the workers") || strings.Contains(stderr, "stored training rows") {
				t.Errorf("the rows were not read in place:\n%s", stderr)
			}
			sameFile(t, local, remote)
		})
	}
}

// cv --nats --data-root gives cpm cv's figures, fold for fold.
func TestCVDataRootMatchesLocal(t *testing.T) {
	root, plain, _ := dataRoot(t)
	dir := t.TempDir()
	lj, nj := filepath.Join(dir, "local.json"), filepath.Join(dir, "nats.json")
	args := []string{"cv", "-q", "-i", "3000", "-k", "3", "--seed", "4", "-r", "2", "-f", "3", plain}
	mustRun(t, append(args, "--json", lj)...)
	mustRun(t, append(args, "--json", nj, "--nats", "embedded", "--data-root", root)...)
	if l, n := readJSON(t, lj), readJSON(t, nj); !reflect.DeepEqual(l, n) {
		t.Fatalf("cv --data-root:\n%v\nlocal:\n%v", n, l)
	}
}

// tune --nats --data-root scored on --valid: DATA is read in place, the
// validation rows are uploaded.
func TestTuneDataRootValidMatchesLocal(t *testing.T) {
	root, plain, _ := dataRoot(t)
	dir := t.TempDir()
	lj, nj := filepath.Join(dir, "local.json"), filepath.Join(dir, "nats.json")
	args := []string{"tune", "-q", "-i", "2000", "-k", "3", "--seed", "5", "--valid", heart, "--seeds", "2", "--grid", "C=1,0.01", plain}
	mustRun(t, append(args, "--json", lj)...)
	mustRun(t, append(args, "--json", nj, "--nats", "embedded", "--data-root", root)...)
	if l, n := readJSON(t, lj), readJSON(t, nj); !reflect.DeepEqual(l, n) {
		t.Fatalf("tune --data-root:\n%v\nlocal:\n%v", n, l)
	}
}

// What --data-root cannot serve is a usage error before any work.
func TestDataRootUsageErrors(t *testing.T) {
	root, plain, _ := dataRoot(t)
	outside := filepath.Join(t.TempDir(), "out.svm")
	if err := os.Link(plain, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape.svm")); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(t.TempDir(), "m")
	nats := []string{"--nats", "embedded", "--data-root", root}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"train", "-t", heart, "-o", m}, nats...), "not inside"},
		{append([]string{"train", "-t", outside, "-o", m}, nats...), "not inside"},
		{append([]string{"train", "-t", filepath.Join(root, "escape.svm"), "-o", m}, nats...), "not inside"},
		{append([]string{"train", "-t", filepath.Join(root, "sets"), "-o", m}, nats...), "shard set"},
		{append([]string{"train", "-t", filepath.Join(root, "sets", "*.svm"), "-o", m}, nats...), "shard set"},
		{append([]string{"train", "-t", "-", "-o", m}, nats...), "standard input"},
		{[]string{"train", "-t", plain, "-o", m, "--data-root", root}, "needs --nats"},
		{[]string{"train", "-t", plain, "-o", m, "--nats", "embedded", "--data-root", plain}, "not a directory"},
		{append([]string{"tune", "--holdout", "0.2", "--grid", "C=1,0.1", plain}, nats...), "--holdout splits DATA"},
		{append([]string{"train", "-t", plain, "-o", m, "--zero-based", "yes"}, nats...), "--zero-based yes changes what it holds"},
		{append([]string{"cv", "--label-column", "y", plain}, nats...), "--label-column changes what it holds"},
		{append([]string{"cv", heart}, nats...), "not inside"},
		{append([]string{"tune", "--grid", "C=1,0.1", heart}, nats...), "not inside"},
	} {
		code, _, stderr := cpm(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 saying %q; stderr %q", tc.args, code, tc.want, stderr)
		}
	}
}
