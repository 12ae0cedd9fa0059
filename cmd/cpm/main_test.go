package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	heart = "../../testdata/uci/heart_scale.libsvm"
	iris  = "../../testdata/uci/iris.libsvm"
)

// cpm runs one command in-process and returns its exit status and output.
func cpm(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := cpm(t, args...)
	if code != 0 {
		t.Fatalf("cpm %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// Same data, flags and seed give a byte-identical model: single-sided,
// double-sided and one-vs-one (the last two train polytopes concurrently).
func TestTrainIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
	}{
		{"single", []string{"-t", heart, "-k", "4", "-i", "20000"}},
		{"double", []string{"-t", heart, "-k", "4", "-i", "20000", "--double-sided", "--entropy", "0.5"}},
		{"ovo", []string{"-t", iris, "-k", "3", "-i", "5000", "--ovo", "--double-sided", "--reshuffle"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var files [][]byte
			for i := 0; i < 2; i++ {
				p := filepath.Join(dir, c.name+string(rune('a'+i))+".model")
				mustRun(t, append([]string{"train", "-q", "--seed", "7", "-o", p}, c.args...)...)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, b)
			}
			if !bytes.Equal(files[0], files[1]) {
				t.Fatal("two runs with the same seed wrote different model files")
			}
			p := filepath.Join(dir, c.name+"c.model")
			mustRun(t, append([]string{"train", "-q", "--seed", "8", "-o", p}, c.args...)...)
			if b, _ := os.ReadFile(p); bytes.Equal(b, files[0]) {
				t.Fatal("a different seed wrote the same model: the seed is not used")
			}
		})
	}
}

func TestTrainPredictEvalExport(t *testing.T) {
	dir := t.TempDir()
	mp := filepath.Join(dir, "heart.model")
	metrics := filepath.Join(dir, "train.json")
	out := mustRun(t, "train", "-q", "-k", "5", "-i", "50000", "-C", "0.01", "--double-sided", "-t", heart, "-c", heart, "-o", mp, "--json", metrics)
	if !strings.Contains(out, "test error") {
		t.Fatalf("train -c printed no test error: %q", out)
	}
	var tm map[string]any
	b, _ := os.ReadFile(metrics)
	if err := json.Unmarshal(b, &tm); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"load_seconds", "train_seconds", "steps_per_second", "test_error", "polytopes"} {
		if _, ok := tm[k]; !ok {
			t.Errorf("train --json lacks %q: %s", k, b)
		}
	}
	if e := tm["test_error"].(float64); e > 0.2 {
		t.Errorf("training-set error %v on heart_scale: the model learned nothing", e)
	}

	scores := filepath.Join(dir, "scores.txt")
	mustRun(t, "predict", "-m", mp, "-c", heart, "-s", scores)
	sb, _ := os.ReadFile(scores)
	lines := strings.Split(strings.TrimSpace(string(sb)), "\n")
	if f := strings.Fields(lines[0]); len(lines) != 270 || len(f) != 2 || (f[0] != "1" && f[0] != "-1") {
		t.Fatalf("scores file: %d lines, first %q; want 270 lines of 'label score'", len(lines), lines[0])
	}

	ej := filepath.Join(dir, "eval.json")
	out = mustRun(t, "eval", "-m", mp, "--json", ej, heart)
	if !strings.Contains(out, "confusion") || !strings.Contains(out, "face assignment") {
		t.Fatalf("eval output lacks confusion or face counts:\n%s", out)
	}
	var em struct {
		Error     float64   `json:"error"`
		Rows      int       `json:"rows"`
		Confusion [][]int64 `json:"confusion"`
	}
	b, _ = os.ReadFile(ej)
	if err := json.Unmarshal(b, &em); err != nil {
		t.Fatal(err)
	}
	if em.Rows != 270 || len(em.Confusion) != 2 || em.Error != tm["test_error"].(float64) {
		t.Fatalf("eval json %s disagrees with train -c (%v)", b, tm["test_error"])
	}

	// The authors' tool tests a saved model with train -m MODEL -c TEST.
	if out := mustRun(t, "train", "-m", mp, "-c", heart); !strings.Contains(out, "test error") {
		t.Fatalf("train -m -c printed %q", out)
	}

	out = mustRun(t, "export", "-m", mp)
	if !strings.Contains(out, "cpm") || len(strings.Split(out, "\n")) < 20 {
		t.Fatalf("export output too small:\n%s", out)
	}
}

func TestOvOPredictsLabels(t *testing.T) {
	dir := t.TempDir()
	mp := filepath.Join(dir, "iris.model")
	mustRun(t, "train", "-q", "-k", "2", "-i", "20000", "--ovo", "-t", iris, "-o", mp)
	scores := filepath.Join(dir, "s.txt")
	out := mustRun(t, "predict", "-m", mp, "-c", iris, "-s", scores)
	sb, _ := os.ReadFile(scores)
	for _, l := range strings.Split(strings.TrimSpace(string(sb)), "\n") {
		if f := strings.Fields(l); len(f) != 4 || (f[0] != "1" && f[0] != "2" && f[0] != "3") {
			t.Fatalf("OvO score line %q is not a label and 3 class scores", l)
		}
	}
	if !strings.Contains(out, "error") {
		t.Fatalf("predict printed %q", out)
	}
}

func TestErrorsAndExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.libsvm")
	os.WriteFile(bad, []byte("1 1:0.5 2:1\n-1 3:1 2:4\n"), 0o644)
	code, _, errs := cpm(t, "train", "-t", bad, "-o", filepath.Join(dir, "m"))
	if code != exitBadInput || !strings.Contains(errs, bad+":2:") {
		t.Fatalf("unsorted indices: exit %d, stderr %q; want 3 and file:line", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "m")); err == nil {
		t.Fatal("a failed train left a model file")
	}
	if code, _, _ := cpm(t, "train", "-o", "x"); code != 2 {
		t.Fatalf("missing -t: exit %d, want 2", code)
	}
	if code, _, _ := cpm(t, "frobnicate"); code != 2 {
		t.Fatalf("unknown command: exit %d, want 2", code)
	}
	if code, _, _ := cpm(t, "train", "-k", "x"); code != 2 {
		t.Fatalf("bad flag value: exit %d, want 2", code)
	}
	code, _, errs = cpm(t, "train", "-t", iris, "-o", filepath.Join(dir, "m"), "-q")
	if code != 1 || !strings.Contains(errs, "one-vs-one") {
		t.Fatalf("3-label data without --ovo: exit %d, stderr %q", code, errs)
	}
	notModel := filepath.Join(dir, "not.model")
	os.WriteFile(notModel, []byte("hello, this is not a model file at all"), 0o644)
	code, _, errs = cpm(t, "eval", "-m", notModel, heart)
	if code != exitBadInput || !strings.Contains(errs, notModel) {
		t.Fatalf("foreign model: exit %d, stderr %q", code, errs)
	}
}
