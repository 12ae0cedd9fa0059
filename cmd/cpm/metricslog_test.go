package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readLog returns the records of a metrics log as generic maps, failing
// the test on a line that is not one JSON object.
func readLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("metrics log line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestMetricsLogCPM(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "m.jsonl")
	// Not quiet: the log and the progress lines both get every report.
	_, errs := mustRunErr(t, "train", "-k", "3", "-i", "20000", "--double-sided", "--progress-every", "5000", "-t", heart, "-o", filepath.Join(dir, "m.model"), "--metrics-log", log)
	if n := strings.Count(errs, " step "); n != 8 {
		t.Errorf("%d progress lines, want 8:\n%s", n, errs)
	}
	recs := readLog(t, log)
	if len(recs) != 8 {
		t.Fatalf("%d records, want 4 per polytope", len(recs))
	}
	last := map[string]float64{}
	for _, r := range recs {
		for _, k := range []string{"learner", "task", "step", "of", "epoch", "neg_loss", "pos_loss", "violation", "entropy", "elapsed_seconds"} {
			if _, ok := r[k]; !ok {
				t.Errorf("record lacks %q: %v", k, r)
			}
		}
		task := r["task"].(string)
		if r["learner"] != "cpm" || (task != "outer" && task != "inner") || r["of"] != 20000.0 {
			t.Errorf("record %v", r)
		}
		if step := r["step"].(float64); step != last[task]+5000 {
			t.Errorf("%s: step %v after %v, want steps of 5000 in order", task, step, last[task])
		}
		last[task] = r["step"].(float64)
	}
	if last["outer"] != 20000 || last["inner"] != 20000 {
		t.Errorf("last steps %v, want 20000 for both polytopes", last)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, ".m.jsonl.tmp*")); len(names) > 0 {
		t.Errorf("temporary files left: %v", names)
	}

	// Choosing K by cross-validation logs only the final training.
	mustRun(t, "train", "-q", "-k", "2,3", "-C", "1", "--select-folds", "2", "-i", "8000", "--progress-every", "4000", "-t", heart, "-o", filepath.Join(dir, "k.model"), "--metrics-log", log)
	if recs := readLog(t, log); len(recs) != 2 {
		t.Errorf("with -k 2,3: %d records, want the final training's 2", len(recs))
	}
}

func TestMetricsLogOtherLearners(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		learner string
		flags   []string
		field   string
		first   int // step of the first record: 0 for the initial weights
	}{
		{"perceptron", []string{"--epochs", "7"}, "mistakes", 1},
		{"kperceptron", []string{"--epochs", "3"}, "mistakes", 1},
		{"polyceptron-online", []string{"-k", "2", "--epochs", "4"}, "violation", 1},
		{"polyceptron-batch", []string{"-k", "2", "--max-iter", "6"}, "grad_norm", 0},
		{"plume", []string{"-k", "2", "--max-iter", "4"}, "log_lik", 0},
	} {
		t.Run(tc.learner, func(t *testing.T) {
			log := filepath.Join(dir, tc.learner+".jsonl")
			js := filepath.Join(dir, tc.learner+".json")
			mustRun(t, append([]string{"train", "-q", "--learner", tc.learner, "-t", heart, "-o", filepath.Join(dir, "m"), "--json", js, "--metrics-log", log}, tc.flags...)...)
			var met struct {
				Epochs    int  `json:"epochs"`
				Converged bool `json:"converged"`
			}
			b, _ := os.ReadFile(js)
			if err := json.Unmarshal(b, &met); err != nil {
				t.Fatal(err)
			}
			recs := readLog(t, log)
			want := met.Epochs
			switch {
			case tc.learner == "plume":
				want++ // the initial weights' log-likelihood
			case tc.first == 0 && met.Converged:
				want++ // the weights that passed the stopping test
			}
			if len(recs) != want || want == 0 {
				t.Fatalf("%d records for %d epochs (converged %v), want %d", len(recs), met.Epochs, met.Converged, want)
			}
			for i, r := range recs {
				if r["learner"] != tc.learner || r["task"] != tc.learner || r["step"] != float64(i+tc.first) || r[tc.field] == nil {
					t.Errorf("record %d: %v", i, r)
				}
			}
		})
	}
}

// A failed or interrupted run leaves no log, not even half of one.
func TestMetricsLogOnFailure(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.libsvm")
	os.WriteFile(bad, []byte("1 1:1\n-1 2:x\n"), 0o644)
	log := filepath.Join(dir, "m.jsonl")
	if code, _, _ := cpm(t, "train", "-q", "-t", bad, "-o", filepath.Join(dir, "m"), "--metrics-log", log); code != exitBadInput {
		t.Errorf("bad data: exit %d, want 3", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"train", "-q", "-t", heart, "-i", "100000", "--progress-every", "10", "-o", filepath.Join(dir, "m"), "--metrics-log", log}, &out, &errb); code != exitInterrupted {
		t.Errorf("interrupted: exit %d, want 130", code)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("failed runs left files: %v", names)
	}
	if code, _, _ := cpm(t, "train", "-q", "-t", heart, "-i", "1000", "-o", filepath.Join(dir, "m"), "--metrics-log", filepath.Join(dir, "no", "m.jsonl")); code != exitIO {
		t.Errorf("log in a missing directory: exit %d, want 4", code)
	}
	if code, _, _ := cpm(t, "train", "-q", "-t", heart, "--progress-every", "-1", "-o", filepath.Join(dir, "m")); code != exitUsage {
		t.Errorf("--progress-every -1: exit %d, want 2", code)
	}
}

func mustRunErr(t *testing.T, args ...string) (string, string) {
	t.Helper()
	code, out, errs := cpm(t, args...)
	if code != 0 {
		t.Fatalf("cpm %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out, errs
}
