package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ionosphere = "../../testdata/uci/ionosphere.libsvm"

// Every learner is reachable from train, and predict and eval work on its
// model unchanged.
func TestTrainEveryLearner(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		learner string
		flags   []string
	}{
		{"cpm", []string{"-k", "3", "-i", "20000"}},
		{"perceptron", []string{"--epochs", "50", "--lift", "quadratic"}},
		{"kperceptron", []string{"--kernel", "rbf", "--sigma", "1", "--epochs", "50"}},
		{"polyceptron-online", []string{"-k", "2", "--epochs", "50"}},
		{"polyceptron-batch", []string{"-k", "2", "--gamma", "10", "--restarts", "2"}},
	} {
		t.Run(tc.learner, func(t *testing.T) {
			mp := filepath.Join(dir, tc.learner+".model")
			args := append([]string{"train", "-q", "--learner", tc.learner, "-t", ionosphere, "-c", ionosphere, "-o", mp, "--json", mp + ".json"}, tc.flags...)
			out := mustRun(t, args...)
			if !strings.Contains(out, "test error") {
				t.Fatalf("no test error line: %q", out)
			}
			var met map[string]any
			b, _ := os.ReadFile(mp + ".json")
			if err := json.Unmarshal(b, &met); err != nil {
				t.Fatal(err)
			}
			if met["learner"] != tc.learner || met["test_error"] == nil {
				t.Errorf("metrics: %v", met)
			}
			scores := filepath.Join(dir, tc.learner+".scores")
			mustRun(t, "predict", "-m", mp, "-c", ionosphere, "-s", scores)
			b, _ = os.ReadFile(scores)
			if n := bytes.Count(b, []byte("\n")); n != 351 {
				t.Errorf("predict wrote %d lines, want 351", n)
			}
			eval := mustRun(t, "eval", "-m", mp, ionosphere)
			if !strings.Contains(eval, "rows 351") {
				t.Errorf("eval output: %q", eval)
			}
		})
	}
}

func TestTrainLearnerErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--learner", "svm", "-t", iris, "-o", filepath.Join(dir, "m")}, 2, "unknown learner"},
		{[]string{"--learner", "polyceptron-batch", "-t", iris, "-o", filepath.Join(dir, "m")}, 1, "3 labels"},
		{[]string{"--learner", "perceptron", "--ovo", "-t", iris, "-o", filepath.Join(dir, "m")}, 2, "--ovo is for the cpm learner"},
		{[]string{"--learner", "kperceptron", "--kernel", "sigmoid", "-t", iris, "-o", filepath.Join(dir, "m")}, 2, "sigmoid"},
		{[]string{"--learner", "perceptron", "--lift", "cubic", "-t", iris, "-o", filepath.Join(dir, "m")}, 2, "cubic"},
		{[]string{"--learner", "perceptron", "--stream", "-t", iris, "-o", filepath.Join(dir, "m")}, 2, "--stream"},
	} {
		code, _, errs := cpm(t, append([]string{"train", "-q"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("train %v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "m")); err == nil {
		t.Error("a failed train left a model file behind")
	}
}

// The multiclass perceptrons train on 3-label data and eval prints a
// 3×3 confusion matrix.
func TestMulticlassPerceptronsEval(t *testing.T) {
	dir := t.TempDir()
	for _, l := range []string{"perceptron", "kperceptron"} {
		mp := filepath.Join(dir, l+".model")
		mustRun(t, "train", "-q", "--learner", l, "--kernel", "poly", "--degree", "2", "--epochs", "200", "--scale", "none", "-t", iris, "-o", mp)
		out := mustRun(t, "eval", "-m", mp, "--json", mp+".json", iris)
		var met struct {
			Labels    []float32 `json:"labels"`
			Confusion [][]int64 `json:"confusion"`
			Error     float64   `json:"error"`
		}
		b, _ := os.ReadFile(mp + ".json")
		if err := json.Unmarshal(b, &met); err != nil {
			t.Fatal(err)
		}
		if len(met.Labels) != 3 || len(met.Confusion) != 3 || met.Error > 0.1 {
			t.Errorf("%s eval: %s", l, out)
		}
	}
}

func TestCVCommand(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "cv.json")
	// Flags may follow the data file.
	out := mustRun(t, "cv", "--learner", "kperceptron", "--kernel", "rbf", "--sigma", "0.3", "--epochs", "100", iris, "-r", "2", "-f", "5", "--scale01", "-q", "--json", js)
	if !strings.Contains(out, "2 x 5-fold CV") {
		t.Errorf("cv output: %q", out)
	}
	var res map[string]any
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"accuracy_mean", "accuracy_std", "error_mean", "train_seconds_mean", "hyperplanes_mean", "learner", "scale01"} {
		if _, ok := res[k]; !ok {
			t.Errorf("cv JSON lacks %q: %s", k, b)
		}
	}
	if acc, _ := res["accuracy_mean"].(float64); acc < 90 {
		t.Errorf("RBF kernel perceptron on scaled iris: CV accuracy %v%%", acc)
	}
	if code, _, errs := cpm(t, "cv", "-f", "1", iris); code != 2 {
		t.Errorf("cv -f 1: exit %d (%s), want 2", code, errs)
	}
	if code, _, _ := cpm(t, "cv", "--learner", "polyceptron-batch", "-q", iris); code != 1 {
		t.Errorf("cv of a binary learner on 3 labels: exit %d, want 1", code)
	}
}

func TestGenIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.zst"), filepath.Join(dir, "b.zst"), filepath.Join(dir, "c.zst")
	mustRun(t, "gen", "polyceptron-d2", "--seed", "4", "--rows", "500", "-o", a)
	mustRun(t, "gen", "polyceptron-d2", "--seed", "4", "--rows", "500", "-o", b)
	mustRun(t, "gen", "polyceptron-d2", "--seed", "5", "--rows", "500", "-o", c)
	ba, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	bc, _ := os.ReadFile(c)
	if len(ba) == 0 || !bytes.Equal(ba, bb) || bytes.Equal(ba, bc) {
		t.Errorf("gen: same seed equal %v, different seed equal %v", bytes.Equal(ba, bb), bytes.Equal(ba, bc))
	}
	out := mustRun(t, "cv", "--learner", "polyceptron-online", "-k", "4", "--epochs", "50", a, "-r", "1", "-f", "3", "-q")
	if !strings.Contains(out, "(500 rows)") {
		t.Errorf("cv on generated data: %q", out)
	}
	if code, _, errs := cpm(t, "gen", "spirals", "-o", a); code != 2 || !strings.Contains(errs, "polyceptron-d1") {
		t.Errorf("gen of an unknown set: exit %d, stderr %q", code, errs)
	}
}

func TestBenchSeedsSmall(t *testing.T) {
	out := mustRun(t, "bench", "seeds", "--data", "../../testdata/uci", "--only", "Iris", "-r", "1", "-f", "3", "-q")
	for _, want := range []string{"Kernel perceptron poly p=2", "4.67 ± 4.23", "Multiclass linear perceptron"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench seeds output lacks %q:\n%s", want, out)
		}
	}
	if code, _, errs := cpm(t, "bench", "seeds", "--data", t.TempDir(), "--only", "Ionosphere", "-q"); code != exitIO || !strings.Contains(errs, "--data") {
		t.Errorf("bench with a data dir lacking the files: exit %d, %q", code, errs)
	}
}

func TestTrainChoosesKFromList(t *testing.T) {
	dir := t.TempDir()
	mp, js := filepath.Join(dir, "m"), filepath.Join(dir, "m.json")
	mustRun(t, "train", "-q", "--learner", "polyceptron-online", "-k", "1,3", "--epochs", "30", "--select-folds", "3", "-t", ionosphere, "-o", mp, "--json", js)
	var met struct {
		K          int `json:"k"`
		KSelection []struct {
			K   int     `json:"k"`
			Acc float64 `json:"cv_accuracy_mean"`
		} `json:"k_selection"`
	}
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &met); err != nil {
		t.Fatal(err)
	}
	if len(met.KSelection) != 2 {
		t.Fatalf("k_selection: %s", b)
	}
	best := met.KSelection[0]
	if met.KSelection[1].Acc > best.Acc {
		best = met.KSelection[1]
	}
	if met.K != best.K {
		t.Errorf("trained K=%d, but K=%d had the best CV accuracy (%s)", met.K, best.K, b)
	}
	for _, bad := range []string{"0", "2,2", "3,x"} {
		if code, _, _ := cpm(t, "train", "-q", "-k", bad, "-t", ionosphere, "-o", mp); code != 2 {
			t.Errorf("-k %s: exit %d, want 2", bad, code)
		}
	}
	if code, _, _ := cpm(t, "cv", "-k", "2,3", "-q", ionosphere); code != 2 {
		t.Errorf("cv -k 2,3: exit %d, want 2", code)
	}
}

func TestPLUMEProbaAndRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ learner, mstep string }{{"plume", "ga"}, {"plume", "newton"}, {"plume", "bfgs"}, {"spla1", "bfgs"}} {
		mp := filepath.Join(dir, tc.learner+tc.mstep)
		mustRun(t, "train", "-q", "--learner", tc.learner, "--m-step", tc.mstep, "-k", "2", "-t", heart, "-o", mp)
		sp := mp + ".scores"
		mustRun(t, "predict", "-m", mp, "-c", heart, "-s", sp, "--proba")
		b, _ := os.ReadFile(sp)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 271 || lines[0] != "labels 1 -1" {
			t.Fatalf("%s/%s: %d score lines, first %q; want the header \"labels 1 -1\" and 270 rows", tc.learner, tc.mstep, len(lines), lines[0])
		}
		for i, l := range lines[1:] {
			f := strings.Fields(l)
			var label, score, p, q float64
			if len(f) != 4 || json.Unmarshal([]byte(f[0]), &label) != nil || json.Unmarshal([]byte(f[1]), &score) != nil ||
				json.Unmarshal([]byte(f[2]), &p) != nil || json.Unmarshal([]byte(f[3]), &q) != nil {
				t.Fatalf("line %d %q: want label, score, p(1), p(-1)", i, l)
			}
			if p < 0 || p > 1 || (p > 0.5) != (score > 0) || (label == 1) != (score > 0) || math.Abs(p+q-1) > 1e-6 {
				t.Fatalf("line %d %q: label, probabilities and score disagree", i, l)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--learner", "spla1", "--gamma", "3"}, "does not apply"},
		{[]string{"--learner", "plume", "--m-step", "lbfgs"}, "lbfgs"},
		{[]string{"--learner", "plume", "--m-step", "newton", "-k", "300"}, "bfgs"},
	} {
		code, _, errs := cpm(t, append([]string{"train", "-q", "-t", heart, "-o", filepath.Join(dir, "x")}, tc.args...)...)
		if code == 0 || !strings.Contains(strings.ToLower(errs), tc.want) {
			t.Errorf("train %v: exit %d, stderr %q, want an error mentioning %q", tc.args, code, errs, tc.want)
		}
	}
	if code, _, errs := cpm(t, "predict", "-m", filepath.Join(dir, "plumega"), "-c", heart, "--proba"); code != 2 || !strings.Contains(errs, "-s") {
		t.Errorf("--proba without -s: exit %d, %q", code, errs)
	}
}
