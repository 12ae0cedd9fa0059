//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// TestMaxMemory checks the memory budgets of the command line: a 4-line
// file whose one row has feature index 2^24-1 (within the default
// --max-features) is refused by train and cv before the weights are
// allocated, in memory and streamed, single- and double-sided and one-vs-
// one, and for the perceptron and PLUME; a model beyond --max-memory is refused by predict, eval, inspect and
// export; a --resume file and a shard manifest that are /dev/zero, or
// larger than their cap, are refused at once. Every refusal is bad input
// (exit status 3) and names the flag or the file; a bad --max-memory is a
// usage error.
func TestMaxMemory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wide2 := write("wide2.libsvm", "1 1:1\n-1 2:1\n1 3:1\n-1 16777215:1\n")
	wide3 := write("wide3.libsvm", "1 1:1\n2 2:1\n3 3:1\n1 16777215:1\n")
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	shards := filepath.Join(dir, "shards")
	if err := os.Mkdir(shards, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(shards, "SHARDS")); err != nil {
		t.Fatal(err)
	}
	// A double-sided model of 2^17 feature rows, every weight nonzero (so
	// the file stores them all): 8 MiB of weights in memory.
	mid := write("mid.libsvm", "1 1:1\n-1 2:1\n1 3:1\n-1 131071:1\n")
	midModel := filepath.Join(dir, "mid.model")
	mm := &model.Model{Learner: "cpm", Sides: 2, K: 2, D: 1 << 17, Lambda: 1e-4, Bias: 1, Iterations: 100, Classes: []float32{1, -1}}
	for range 2 {
		w := sparsevec.NewMatrix(1<<17, 2)
		for j := range 1 << 17 {
			w.Set(j, 0, 0.5)
		}
		mm.Weights = append(mm.Weights, w)
	}
	if err := model.Save(midModel, mm); err != nil {
		t.Fatal(err)
	}
	// A checkpoint-looking file of 2 MiB.
	bigCk := write("big.ck", "CPMCHKPT"+strings.Repeat("\x00", 2<<20))
	out := filepath.Join(dir, "m.model")

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"single-sided", []string{"train", "-q", "-k", "2", "-i", "100", "--single-sided", "--max-memory", "256MiB", "-t", wide2, "-o", out}, exitBadInput, "536870912 bytes of weights"},
		{"double-sided", []string{"train", "-q", "-k", "2", "-i", "100", "--double-sided", "--max-memory", "1073741823", "-t", wide2, "-o", out}, exitBadInput, "1073741824 bytes of weights"},
		{"one-vs-one", []string{"train", "-q", "-k", "2", "-i", "100", "--double-sided", "--ovo", "--max-memory", "3221225471", "-t", wide3, "-o", out}, exitBadInput, "3221225472 bytes of weights"},
		{"streamed", []string{"train", "-q", "-k", "2", "-i", "100", "--double-sided", "--stream", "--max-memory", "256MiB", "-t", wide2, "-o", out}, exitBadInput, "feature index 16777215"},
		{"cv", []string{"cv", "-q", "-k", "2", "-i", "100", "-r", "1", "-f", "2", "--max-memory", "256MiB", wide2}, exitBadInput, "--max-memory"},
		{"perceptron", []string{"train", "-q", "--learner", "perceptron", "--max-memory", "64MiB", "-t", wide2, "-o", out}, exitBadInput, "--max-memory"},
		{"plume cv", []string{"cv", "-q", "--learner", "plume", "-r", "1", "-f", "2", "--max-memory", "64MiB", wide2}, exitBadInput, "--max-memory"},
		{"predict", []string{"predict", "--max-memory", "1MiB", "-m", midModel, "-c", mid}, exitBadInput, "too large for memory"},
		{"eval", []string{"eval", "--max-memory", "1MiB", "-m", midModel, mid}, exitBadInput, "too large for memory"},
		{"inspect", []string{"inspect", "--max-memory", "1MiB", midModel}, exitBadInput, "too large for memory"},
		{"export", []string{"export", "--max-memory", "1MiB", "-m", midModel}, exitBadInput, "too large for memory"},
		{"train -m", []string{"train", "--max-memory", "1MiB", "-m", midModel, "-c", mid}, exitBadInput, "too large for memory"},
		{"init", []string{"train", "-q", "-k", "2", "-i", "100", "--max-memory", "1MiB", "--init", midModel, "-t", mid, "-o", out}, exitBadInput, "too large for memory"},
		{"resume /dev/zero", []string{"train", "-q", "-k", "2", "-i", "100", "--resume", zero, "-t", mid, "-o", out}, exitBadInput, "not a cpm checkpoint"},
		{"resume beyond the cap", []string{"train", "-q", "-k", "2", "-i", "100", "--max-memory", "1MiB", "--resume", bigCk, "-t", mid, "-o", out}, exitBadInput, "--max-memory"},
		{"manifest /dev/zero", []string{"train", "-q", "--stream", "-t", shards, "-o", out}, exitBadInput, "manifest larger than"},
		{"bad --max-memory", []string{"train", "--max-memory", "lots", "-t", mid, "-o", out}, exitUsage, "max-memory"},
		{"--max-memory below 1 MiB", []string{"train", "--max-memory", "4KiB", "-t", mid, "-o", out}, exitUsage, "max-memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, _, errs := cpm(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Errorf("cpm %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, errs, tc.code, tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v: the refusal should come before any work", d)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run wrote its model")
	}
	_, help, _ := cpm(t, "help")
	if !strings.Contains(help, "--max-memory") || !strings.Contains(help, "half of the machine's memory, here") {
		t.Errorf("cpm help does not state --max-memory and its default:\n%s", help)
	}
}
