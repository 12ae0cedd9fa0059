package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const pima = "../../testdata/uci/pima.libsvm"

// A model trained with --scale takes raw rows: predict and eval apply the
// stored scaling, inspect says the weights are in the scaled space, and
// export --raw-space folds it into them.
func TestScaleCommands(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "p.model")
	_, _, errs := cpm(t, "train", "-t", pima, "-i", "200000", "--scale", "standard", "-o", m)
	if !strings.Contains(errs, "scaled features: standard on 8 features") {
		t.Errorf("train does not report the scaling:\n%s", errs)
	}
	eval := mustRun(t, "eval", "-m", m, pima)
	if !strings.Contains(eval, "rows 768") {
		t.Fatalf("eval: %s", eval)
	}
	if in := mustRun(t, "inspect", m); !strings.Contains(in, "scaling   standard on 8 features") {
		t.Errorf("inspect does not name the scaling:\n%s", in)
	}
	if ex := mustRun(t, "export", "-m", m); !strings.Contains(ex, "scale: standard\n") {
		t.Errorf("export has no scale line")
	}
	if ex := mustRun(t, "export", "--raw-space", "-m", m); strings.Contains(ex, "scale:") {
		t.Errorf("export --raw-space still lists a scaling")
	}
	scores := filepath.Join(dir, "s.txt")
	mustRun(t, "predict", "-m", m, "-c", pima, "-s", scores)
	if b, err := os.ReadFile(scores); err != nil || strings.Count(string(b), "\n") < 768 {
		t.Errorf("predict wrote %d lines (%v)", strings.Count(string(b), "\n"), err)
	}
}

// The default (auto) standardises a dense table; without scaling, train
// prints hints naming --scale; --stream refuses a scaling it cannot fit.
func TestScaleDefaultsAndHints(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "p.model")
	_, _, errs := cpm(t, "train", "-t", pima, "-i", "200000", "-o", m)
	if !strings.Contains(errs, "scaled features: standard") || strings.Contains(errs, "hint:") {
		t.Errorf("default run on pima:\n%s", errs)
	}
	_, _, errs = cpm(t, "train", "-t", pima, "-i", "200000", "--scale", "none", "-C", "1", "-o", m)
	if !strings.Contains(errs, "hint: the features are not scaled and their ranges span 2 orders of magnitude") {
		t.Errorf("no range hint:\n%s", errs)
	}
	if !strings.Contains(errs, "hint: the training error") {
		t.Errorf("no majority-rate hint:\n%s", errs)
	}
	code, _, errs := cpm(t, "train", "--stream", "--scale", "maxabs", "-t", pima, "-o", m)
	if code != 2 || !strings.Contains(errs, "--stream trains on rows as they are") {
		t.Errorf("--stream --scale maxabs: exit %d\n%s", code, errs)
	}
	code, _, errs = cpm(t, "cv", "--scale", "zscore", pima)
	if code != 2 || !strings.Contains(errs, "--scale zscore: want one of none, maxabs, minmax, standard, auto") {
		t.Errorf("--scale zscore: exit %d\n%s", code, errs)
	}
}

// Sparse data within [0, 1] (pixel intensities) trains unscaled by default;
// sparse data with larger values gets maxabs.
func TestScaleAutoSparse(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		top   float64
		scale string
	}{{1, ""}, {1000, "maxabs"}} {
		var b strings.Builder
		for r := range 200 {
			b.WriteString([]string{"-1", "+1"}[r%2])
			for j := 1 + r%10; j <= 100; j += 10 {
				fmt.Fprintf(&b, " %d:%g", j, c.top*float64((r*j)%255+1)/256)
			}
			b.WriteByte('\n')
		}
		data := filepath.Join(dir, "pixels.libsvm")
		if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := cpm(t, "train", "-t", data, "-i", "1000", "-o", filepath.Join(dir, "m.model"))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		got := ""
		if i := strings.Index(errs, "scaled features: "); i >= 0 {
			got = strings.Fields(errs[i+len("scaled features: "):])[0]
		}
		if got != c.scale {
			t.Errorf("values up to %v: scaling %q, want %q\n%s", c.top, got, c.scale, errs)
		}
	}
}

// --scale is a grid axis of tune, for every learner.
func TestTuneScaleAxis(t *testing.T) {
	out := mustRun(t, "tune", "-q", "--learner", "plume", "-r", "1", "-f", "3", "--grid", "scale=none,standard", pima)
	if !strings.Contains(out, "standard") || !strings.Contains(out, "chosen: point") {
		t.Errorf("tune over scale:\n%s", out)
	}
}

// A batch Polyceptron that stops after a handful of iterations gets a hint
// naming its tolerance flag.
func TestHintFewIterations(t *testing.T) {
	m := filepath.Join(t.TempDir(), "p.model")
	_, _, errs := cpm(t, "train", "--learner", "polyceptron-batch", "-t", "../../testdata/uci/breast-cancer.libsvm", "-o", m)
	if !strings.Contains(errs, "hint: polyceptron-batch stopped after 1 iteration(s) on its tolerance; try a smaller --poly-gamma") {
		t.Errorf("no iterations hint:\n%s", errs)
	}
}
