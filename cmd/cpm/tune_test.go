package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readJSON decodes the JSON file path into a generic value with every
// key naming a time ("seconds") removed.
func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return dropTimes(v)
}

func dropTimes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if strings.Contains(k, "seconds") {
				delete(x, k)
			} else {
				x[k] = dropTimes(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = dropTimes(e)
		}
	}
	return v
}

// tune's cross-validation of a point is cpm cv's with the same flags, -r,
// -f and --seed, figure for figure.
func TestTuneMatchesCV(t *testing.T) {
	dir := t.TempDir()
	tj, cj := filepath.Join(dir, "tune.json"), filepath.Join(dir, "cv.json")
	mustRun(t, "tune", "-q", "-i", "3000", "-k", "3", "--seed", "4", "-r", "2", "-f", "3",
		"--grid", "C=1,0.1", "--json", tj, heart)
	mustRun(t, "cv", "-q", "-i", "3000", "-k", "3", "--seed", "4", "-r", "2", "-f", "3", "-C", "0.1", "--json", cj, heart)
	tv := readJSON(t, tj).(map[string]any)
	cvRes := readJSON(t, cj).(map[string]any)
	for _, k := range []string{"command", "learner", "data", "scale01", "scale", "seed"} {
		delete(cvRes, k)
	}
	got := tv["points"].([]any)[1].(map[string]any)["cv"]
	if !reflect.DeepEqual(got, cvRes) {
		t.Errorf("tune's point C=0.1:\n%v\ncpm cv -C 0.1:\n%v", got, cvRes)
	}
}

// The table and the choice do not depend on --workers.
func TestTuneDeterministic(t *testing.T) {
	dir := t.TempDir()
	var first any
	for _, w := range []string{"1", "3"} {
		for _, mode := range [][]string{{"-f", "3"}, {"--holdout", "0.3", "--seeds", "2"}} {
			j := filepath.Join(dir, w+mode[0]+".json")
			args := append([]string{"tune", "-q", "-i", "2000", "--workers", w, "--grid", "k=3,4 entropy=0,ln(K/2)", "--json", j}, mode...)
			mustRun(t, append(args, heart)...)
			got := readJSON(t, j)
			if mode[0] == "-f" {
				if first == nil {
					first = got
				} else if !reflect.DeepEqual(got, first) {
					t.Errorf("--workers %s: JSON differs from --workers 1", w)
				}
			}
		}
	}
	a := readJSON(t, filepath.Join(dir, "1--holdout.json"))
	b := readJSON(t, filepath.Join(dir, "3--holdout.json"))
	if !reflect.DeepEqual(a, b) {
		t.Error("--holdout: JSON differs between --workers 1 and 3")
	}
	if runs := a.(map[string]any)["points"].([]any)[0].(map[string]any)["runs"].([]any); len(runs) != 2 {
		t.Errorf("--seeds 2: %d runs", len(runs))
	}
}

// -o writes the model cpm train writes with the chosen point's flags.
func TestTuneModelIsTrains(t *testing.T) {
	dir := t.TempDir()
	tm, trm := filepath.Join(dir, "tune.model"), filepath.Join(dir, "train.model")
	out := mustRun(t, "tune", "-q", "-i", "3000", "--double-sided", "--seed", "3", "-f", "3",
		"--grid", "C=1,0.01 k=2,3", "-o", tm, heart)
	_, after, ok := strings.Cut(out, "chosen: point ")
	if !ok {
		t.Fatalf("no chosen line in\n%s", out)
	}
	_, flags, _ := strings.Cut(after, ", ")
	flags, _, _ = strings.Cut(flags, " (")
	args := append([]string{"train", "-q", "-i", "3000", "--double-sided", "--seed", "3", "-t", heart, "-o", trm}, strings.Fields(flags)...)
	mustRun(t, args...)
	a, _ := os.ReadFile(tm)
	b, _ := os.ReadFile(trm)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("tune -o (%d bytes) differs from cpm train %s (%d bytes)", len(a), flags, len(b))
	}
}

func TestTuneTableAndCSV(t *testing.T) {
	dir := t.TempDir()
	c := filepath.Join(dir, "t.csv")
	code, out, errs := cpm(t, "tune", "--valid", iris, "--rule", "1se", "--learner", "perceptron",
		"--grid", "epochs=1..3 lift=none,quadratic", "--csv", c, iris)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"perceptron on", "validation file", "6 points", "chosen: point", "rule: the simplest point"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(errs, "tune "); n != 6 {
		t.Errorf("%d progress lines, want 6:\n%s", n, errs)
	}
	f, err := os.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 7 || strings.Join(recs[0][:3], ",") != "point,epochs,lift" || recs[2][1] != "1" || recs[2][2] != "quadratic" {
		t.Errorf("csv %v", recs)
	}
	chosen := 0
	for _, r := range recs[1:] {
		if r[len(r)-1] == "true" {
			chosen++
		}
	}
	if chosen != 1 {
		t.Errorf("%d chosen rows", chosen)
	}
}

func TestTuneProtocolPaper(t *testing.T) {
	out := mustRun(t, "tune", "-q", "-i", "500", "-k", "20", "-f", "2", "--protocol", "paper", heart)
	if !strings.Contains(out, "14 points") || !strings.Contains(out, "section 5.1") {
		t.Errorf("paper protocol output:\n%s", out)
	}
}

// Bad command lines are usage errors (exit 2) before any data is read; a
// list given to a flag of train or cv points to tune.
func TestTuneUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tune", heart}, "give one of --grid"},
		{[]string{"tune", "--grid", "C=1", "--protocol", "paper", heart}, "give one of --grid"},
		{[]string{"tune", "--grid", "gamma=1", heart}, "its flags that take a number: hash-bits, k, iterations, C"},
		{[]string{"tune", "--grid", "C=1", "--rule", "worst", heart}, "unknown rule"},
		{[]string{"tune", "--grid", "C=1", "--holdout", "0.2", "--valid", iris, heart}, "not both"},
		{[]string{"tune", "--grid", "C=1", "--holdout", "1.5", heart}, "want a fraction"},
		{[]string{"tune", "--grid", "C=1", "-k", "2,3", heart}, "--grid 'k=2,3'"},
		{[]string{"tune", "--grid", "C=1..10x3", "--max-points", "2", heart}, "more than the limit of 2"},
		{[]string{"tune", "--learner", "perceptron", "--protocol", "paper", heart}, "CPM paper's search"},
		{[]string{"tune", "--grid", "C=-1", heart}, "--C -1: want a finite value >= 0"},
		{[]string{"train", "-t", heart, "-o", "x", "--lambda", "1e-6,1e-5"}, "cpm tune --grid 'lambda=1e-6,1e-5'"},
		{[]string{"cv", "-C", "1,10", heart}, "cpm tune --grid 'C=1,10'"},
		{[]string{"cv", "-i", "1,10", heart}, "cpm tune --grid 'iterations=1,10'"},
		{[]string{"cv", "-f", "2,3", heart}, "-f takes one number, not a list"},
	} {
		code, _, errs := cpm(t, tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("cpm %s: exit %d, stderr\n%s\nwant exit 2 and %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
	}
}
