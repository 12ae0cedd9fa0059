package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --holdout with --early-stop: the progress table shows the validation
// error, the metrics log and --json carry it, the run is deterministic,
// and a polytope that stops early says so.
func TestTrainHoldoutEarlyStop(t *testing.T) {
	dir := t.TempDir()
	var models [][]byte
	for i := range 2 {
		mp := filepath.Join(dir, "m"+string(rune('a'+i)))
		lp, jp := mp+".jsonl", mp+".json"
		code, _, errs := cpm(t, "train", "-t", heart, "-o", mp, "-k", "4", "-i", "200000", "-C", "1000", "--seed", "3",
			"--double-sided", "--holdout", "0.3", "--valid-every", "2000", "--early-stop", "3",
			"--progress-every", "1000000", "--metrics-log", lp, "--json", jp)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for _, want := range []string{"held out 81 of 270 rows for validation", "val-err", "early stop", "stopped early; kept the weights after step", "validation error of the model"} {
			if !strings.Contains(errs, want) {
				t.Fatalf("stderr lacks %q:\n%s", want, errs)
			}
		}
		b, err := os.ReadFile(mp)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, b)

		var met struct {
			ValidError *float64 `json:"validation_error"`
			Polytopes  []struct {
				Task       string   `json:"task"`
				ValidError *float64 `json:"validation_error"`
				Stopped    bool     `json:"early_stopped"`
			} `json:"polytopes"`
		}
		jb, err := os.ReadFile(jp)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(jb, &met); err != nil {
			t.Fatal(err)
		}
		if met.ValidError == nil || len(met.Polytopes) != 2 || met.Polytopes[0].ValidError == nil {
			t.Fatalf("--json lacks validation errors: %s", jb)
		}
		f, err := os.Open(lp)
		if err != nil {
			t.Fatal(err)
		}
		n, stopped := 0, 0
		for sc := bufio.NewScanner(f); sc.Scan(); {
			var r struct {
				ValError *float64 `json:"validation_error"`
				Best     *float64 `json:"best_validation_error"`
				Stopped  bool     `json:"stopped"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if r.ValError != nil {
				n++
				if r.Best == nil || *r.Best > *r.ValError {
					t.Fatalf("record %s: best error above the current one", sc.Bytes())
				}
			}
			if r.Stopped {
				stopped++
			}
		}
		f.Close()
		if n < 8 || stopped == 0 {
			t.Fatalf("metrics log: %d records with a validation error, %d stopped", n, stopped)
		}
	}
	if !bytes.Equal(models[0], models[1]) {
		t.Fatal("two runs with the same seed wrote different models")
	}
}

func TestTrainValidFileAndUsageErrors(t *testing.T) {
	dir := t.TempDir()
	mp := filepath.Join(dir, "m")
	code, _, errs := cpm(t, "train", "-t", heart, "-o", mp, "-k", "3", "-i", "20000", "--valid", heart, "--valid-every", "5000")
	if code != 0 || !strings.Contains(errs, "loaded "+heart+": 270 validation rows") || !strings.Contains(errs, "outer: validation error") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	bad := filepath.Join(dir, "bad.libsvm")
	if err := os.WriteFile(bad, []byte("1 1:0.5\n1 2:x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--holdout", "0.2", "--valid", heart}, 2, "give one source"},
		{[]string{"--holdout", "1.5"}, 2, "want a fraction"},
		{[]string{"--early-stop", "3"}, 2, "need validation rows"},
		{[]string{"--holdout", "0.2", "--learner", "perceptron"}, 2, "cpm only"},
		{[]string{"--holdout", "0.2", "--stream"}, 2, "separate --valid FILE"},
		{[]string{"--valid", bad}, 3, bad + ":2"},
		{[]string{"--valid", iris}, 1, "validation row 51 has label 2"},
	} {
		args := append([]string{"train", "-q", "-t", heart, "-o", mp, "-i", "1000"}, c.args...)
		code, _, errs := cpm(t, args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}
