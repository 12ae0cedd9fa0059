package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
)

// predictRow is one row of predict -s, whatever its format.
type predictRow struct {
	Label  float64   `json:"label"`
	Scores []float64 `json:"scores"`
	Face   *int      `json:"face"`
	Proba  []float64 `json:"proba"`
}

// readPredictions parses the scores file of predict -s in format with
// nScores decision values, the face and nProba probabilities per row.
func readPredictions(t *testing.T, path, format string, classes []float32, nScores int, face bool, nProba int) []predictRow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []predictRow
	switch format {
	case formatJSONL:
		for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			var r predictRow
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("jsonl line %d %q: %v", i+1, l, err)
			}
			if len(r.Scores) != nScores || (r.Face != nil) != face || len(r.Proba) != nProba {
				t.Fatalf("jsonl line %d %q: want %d scores, face %v, %d probabilities", i+1, l, nScores, face, nProba)
			}
			rows = append(rows, r)
		}
		return rows
	case formatCSV:
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"label"}
		if nScores == 1 {
			want = append(want, "score")
		} else {
			for _, c := range classes {
				want = append(want, "score_"+strconv.FormatFloat(float64(c), 'g', -1, 32))
			}
		}
		if face {
			want = append(want, "face")
		}
		for _, c := range classes[:nProba] {
			want = append(want, "p_"+strconv.FormatFloat(float64(c), 'g', -1, 32))
		}
		if strings.Join(recs[0], ",") != strings.Join(want, ",") {
			t.Fatalf("csv header %q, want %q", recs[0], want)
		}
		for _, rec := range recs[1:] {
			rows = append(rows, parseFields(t, rec, nScores, face, nProba))
		}
		return rows
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if nProba > 0 {
		want := "labels"
		for _, c := range classes {
			want += " " + strconv.FormatFloat(float64(c), 'g', -1, 32)
		}
		if lines[0] != want {
			t.Fatalf("libsvm header %q, want %q", lines[0], want)
		}
		lines = lines[1:]
	}
	for _, l := range lines {
		rows = append(rows, parseFields(t, strings.Split(l, " "), nScores, face, nProba))
	}
	return rows
}

func parseFields(t *testing.T, f []string, nScores int, face bool, nProba int) predictRow {
	t.Helper()
	n := 1 + nScores + nProba
	if face {
		n++
	}
	if len(f) != n {
		t.Fatalf("line %q: %d fields, want %d", f, len(f), n)
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			t.Fatalf("line %q: %v", f, err)
		}
		return v
	}
	r := predictRow{Label: num(f[0])}
	for _, s := range f[1 : 1+nScores] {
		r.Scores = append(r.Scores, num(s))
	}
	f = f[1+nScores:]
	if face {
		v, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("face %q: %v", f[0], err)
		}
		r.Face, f = &v, f[1:]
	}
	for _, s := range f {
		r.Proba = append(r.Proba, num(s))
	}
	return r
}

// Every learner's predictions start with the label, then its decision
// values (one, or one per class in the model's class order), in every
// format; the formats agree with each other and with the labels' rule
// (binary: Classes[0] for a positive score; multiclass: the argmax), and
// a second run writes the same bytes.
func TestPredictLabelFirstEveryLearner(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		learner, data string
		flags         []string
	}{
		{"cpm", ionosphere, []string{"-k", "3", "-i", "20000"}},
		{"cpm", iris, []string{"-k", "2", "-i", "20000", "--ovo"}},
		{"perceptron", ionosphere, []string{"--epochs", "20"}},
		{"perceptron", iris, []string{"--epochs", "20"}},
		{"kperceptron", ionosphere, []string{"--sigma", "1", "--epochs", "10"}},
		{"kperceptron", iris, []string{"--sigma", "1", "--epochs", "10"}},
		{"polyceptron-online", ionosphere, []string{"-k", "2", "--epochs", "20"}},
		{"polyceptron-batch", ionosphere, []string{"-k", "2", "--gamma", "10"}},
		{"plume", heart, []string{"-k", "2"}},
		{"spla1", heart, []string{"-k", "2"}},
	} {
		name := tc.learner + "-" + strings.TrimSuffix(filepath.Base(tc.data), ".libsvm")
		t.Run(name, func(t *testing.T) {
			mp := filepath.Join(dir, name+".model")
			mustRun(t, append([]string{"train", "-q", "--learner", tc.learner, "-t", tc.data, "-o", mp, "--seed", "1"}, tc.flags...)...)
			m, err := model.Load(mp)
			if err != nil {
				t.Fatal(err)
			}
			data, err := reader.Load(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			nScores, nProba := 1, 0
			if len(m.Classes) > 2 {
				nScores = len(m.Classes)
			}
			if tc.learner == "plume" || tc.learner == "spla1" {
				nProba = 2
			}
			var ref []predictRow
			for _, format := range []string{formatLIBSVM, formatCSV, formatJSONL} {
				out := filepath.Join(dir, name+"."+format)
				args := []string{"predict", "-m", mp, "-c", tc.data, "-s", out, "--format", format, "--face"}
				if nProba > 0 {
					args = append(args, "--proba")
				}
				mustRun(t, args...)
				first, _ := os.ReadFile(out)
				mustRun(t, args...)
				if again, _ := os.ReadFile(out); !bytes.Equal(first, again) {
					t.Fatalf("%s: two runs wrote different bytes", format)
				}
				rows := readPredictions(t, out, format, m.Classes, nScores, true, nProba)
				if len(rows) != data.Rows() {
					t.Fatalf("%s: %d rows, want %d", format, len(rows), data.Rows())
				}
				for i, r := range rows {
					checkPredictRow(t, format, i, m, r)
				}
				if ref == nil {
					ref = rows
					continue
				}
				for i := range rows {
					a, b := ref[i], rows[i]
					if a.Label != b.Label || *a.Face != *b.Face || !equalFloats(a.Scores, b.Scores) || !equalFloats(a.Proba, b.Proba) {
						t.Fatalf("row %d: libsvm %+v, %s %+v", i, a, format, b)
					}
				}
			}
		})
	}
}

// equalFloats reports whether a and b hold the same float32 values.
func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if float32(a[i]) != float32(b[i]) {
			return false
		}
	}
	return true
}

// checkPredictRow checks that a row's label follows from its scores and
// probabilities by m's rule.
func checkPredictRow(t *testing.T, format string, i int, m *model.Model, r predictRow) {
	t.Helper()
	if len(r.Scores) == 1 {
		want := m.Classes[1]
		if r.Scores[0] > 0 {
			want = m.Classes[0]
		}
		if float32(r.Label) != want {
			t.Fatalf("%s row %d: label %v for score %v (classes %v)", format, i, r.Label, r.Scores[0], m.Classes)
		}
	} else {
		best := 0
		for k, s := range r.Scores {
			if s > r.Scores[best] {
				best = k
			}
		}
		if float32(r.Label) != m.Classes[best] {
			t.Fatalf("%s row %d: label %v, class scores %v", format, i, r.Label, r.Scores)
		}
	}
	if len(r.Proba) > 0 {
		if math.Abs(r.Proba[0]+r.Proba[1]-1) > 1e-6 || (r.Proba[0] > 0.5) != (float32(r.Label) == m.Classes[0]) {
			t.Fatalf("%s row %d: probabilities %v, label %v", format, i, r.Proba, r.Label)
		}
	}
}

// --proba needs probabilities, --format a known name, and both -s.
func TestPredictFlagErrors(t *testing.T) {
	dir := t.TempDir()
	mp := filepath.Join(dir, "m")
	mustRun(t, "train", "-q", "-t", heart, "-i", "20000", "-o", mp)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-s", filepath.Join(dir, "s"), "--proba"}, "model has no probabilities: retrain with --calibrate"},
		{[]string{"-s", filepath.Join(dir, "s"), "--format", "tsv"}, "--format tsv"},
		{[]string{"--format", "csv"}, "need -s"},
		{[]string{"--face"}, "need -s"},
	} {
		code, _, errs := cpm(t, append([]string{"predict", "-m", mp, "-c", heart}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("predict %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "s")); err == nil {
		t.Error("a refused predict left a scores file")
	}
}

// The row path of predict does not allocate.
func TestPredictRowAllocs(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--learner", "plume", "-k", "2", "-t", heart},
		{"-k", "2", "-i", "20000", "--ovo", "-t", iris},
	} {
		mp := filepath.Join(dir, "m")
		mustRun(t, append([]string{"train", "-q", "-o", mp}, args...)...)
		m, _ := model.Load(mp)
		mk, err := newRowOutputsMaker(m, true, false)
		if err != nil {
			t.Fatal(err)
		}
		o, err := mk.new()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := reader.Load(args[len(args)-1])
		so := scoreOpts{format: formatJSONL, proba: true, face: true}
		line := make([]byte, 0, 256)
		x := data.Row(0)
		if a := testing.AllocsPerRun(100, func() {
			y, f := o.predict(x)
			line = appendRow(line[:0], so, y, o.scores, f, o.probs)
		}); a != 0 {
			t.Errorf("%v: %v allocations a row", args, a)
		}
	}
}

// rocAUC equals the fraction of (positive, negative) pairs the scores
// order rightly, a tie counting 1/2.
func TestROCAUCAgainstPairCounting(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 50 {
		n := 1 + r.IntN(60)
		rows := make([]rankedScore, n)
		for i := range rows {
			rows[i] = rankedScore{float32(r.IntN(7)) / 2, r.IntN(3) == 0}
		}
		var pairs, right float64
		for _, p := range rows {
			for _, q := range rows {
				if !p.pos || q.pos {
					continue
				}
				pairs++
				switch {
				case p.score > q.score:
					right++
				case p.score == q.score:
					right += 0.5
				}
			}
		}
		auc, ok := rocAUC(rows)
		if ok != (pairs > 0) || ok && math.Abs(auc-right/pairs) > 1e-12 {
			t.Fatalf("trial %d: rocAUC %v %v, pair counting %v/%v", trial, auc, ok, right, pairs)
		}
	}
}

// eval --json: precision, recall and F1 follow from the confusion matrix,
// the ROC AUC from predict's scores by pair counting, the log-loss from
// predict --proba's probabilities.
func TestEvalJSONMetrics(t *testing.T) {
	dir := t.TempDir()
	mp := filepath.Join(dir, "plume")
	mustRun(t, "train", "-q", "--learner", "plume", "-k", "2", "--seed", "1", "-t", heart, "-o", mp)
	ej, sp := filepath.Join(dir, "eval.json"), filepath.Join(dir, "s")
	mustRun(t, "eval", "-m", mp, "--json", ej, heart)
	mustRun(t, "predict", "-m", mp, "-c", heart, "-s", sp, "--format", "jsonl", "--proba")
	var em struct {
		Rows      int       `json:"rows"`
		Error     float64   `json:"error"`
		Accuracy  float64   `json:"accuracy"`
		Labels    []float32 `json:"labels"`
		Confusion [][]int64 `json:"confusion"`
		Positive  *float32  `json:"positive_label"`
		Precision float64   `json:"precision"`
		Recall    float64   `json:"recall"`
		F1        float64   `json:"f1"`
		PerClass  []struct {
			Label                 float32
			Precision, Recall, F1 float64
			Support               int64
		} `json:"per_class"`
		AUC     *float64 `json:"roc_auc"`
		LogLoss *float64 `json:"log_loss"`
	}
	b, _ := os.ReadFile(ej)
	if err := json.Unmarshal(b, &em); err != nil {
		t.Fatal(err)
	}
	if em.Positive == nil || *em.Positive != 1 || em.AUC == nil || em.LogLoss == nil || len(em.PerClass) != 2 {
		t.Fatalf("eval json lacks fields: %s", b)
	}
	if em.Accuracy != 1-em.Error {
		t.Errorf("accuracy %v, error %v", em.Accuracy, em.Error)
	}
	pi := 1 // labels ascending: -1, 1
	tp := float64(em.Confusion[pi][pi])
	prec := tp / float64(em.Confusion[0][pi]+em.Confusion[1][pi])
	rec := tp / float64(em.Confusion[pi][0]+em.Confusion[pi][1])
	if math.Abs(em.Precision-prec) > 1e-12 || math.Abs(em.Recall-rec) > 1e-12 || math.Abs(em.F1-2*prec*rec/(prec+rec)) > 1e-12 {
		t.Errorf("precision %v recall %v f1 %v; from the confusion matrix %v %v", em.Precision, em.Recall, em.F1, prec, rec)
	}
	if c := em.PerClass[pi]; c.Label != 1 || c.Precision != em.Precision || c.Support != 120 {
		t.Errorf("per_class %+v", em.PerClass)
	}
	data, _ := reader.Load(heart)
	m, _ := model.Load(mp)
	rows := readPredictions(t, sp, formatJSONL, m.Classes, 1, false, 2)
	var pairs, right, loss float64
	for i, p := range rows {
		for j, q := range rows {
			if data.Labels[i] != 1 || data.Labels[j] != -1 {
				continue
			}
			pairs++
			if p.Scores[0] > q.Scores[0] {
				right++
			} else if p.Scores[0] == q.Scores[0] {
				right += 0.5
			}
		}
		k := 0
		if data.Labels[i] != m.Classes[0] {
			k = 1
		}
		loss -= math.Log(p.Proba[k])
	}
	if math.Abs(*em.AUC-right/pairs) > 1e-12 {
		t.Errorf("roc_auc %v, pair counting %v", *em.AUC, right/pairs)
	}
	// The scores file rounds probabilities to float32.
	if math.Abs(*em.LogLoss-loss/float64(len(rows))) > 1e-5 {
		t.Errorf("log_loss %v, from predict --proba %v", *em.LogLoss, loss/float64(len(rows)))
	}

	// Multiclass: macro averages, no AUC, no log-loss without probabilities.
	mp = filepath.Join(dir, "ovo")
	mustRun(t, "train", "-q", "-k", "2", "-i", "20000", "--ovo", "-t", iris, "-o", mp)
	mustRun(t, "eval", "-m", mp, "--json", ej, iris)
	b, _ = os.ReadFile(ej)
	em.AUC, em.LogLoss, em.Positive = nil, nil, nil
	if err := json.Unmarshal(b, &em); err != nil {
		t.Fatal(err)
	}
	var macro float64
	for _, c := range em.PerClass {
		macro += c.F1 / 3
	}
	if em.AUC != nil || em.LogLoss != nil || em.Positive != nil || len(em.PerClass) != 3 || math.Abs(em.F1-macro) > 1e-12 {
		t.Errorf("multiclass eval json: %s", b)
	}
}

// train --calibrate holds out rows, fits the calibration and reports its
// held-out log-loss and, with -c, the test log-loss; learners with
// probabilities of their own and bad fractions are refused.
func TestTrainCalibrate(t *testing.T) {
	dir := t.TempDir()
	jp := filepath.Join(dir, "train.json")
	_, out, errs := cpm(t, "train", "-t", ionosphere, "-c", ionosphere, "-k", "3", "-i", "20000", "--calibrate", "--calibrate-fraction", "0.2", "--json", jp)
	if !strings.Contains(errs, "calibration: holding out 70 of 351 rows, training on 281") || !strings.Contains(errs, "held-out log-loss") {
		t.Errorf("train --calibrate stderr:\n%s", errs)
	}
	if !strings.Contains(out, "test log-loss") {
		t.Errorf("train --calibrate -c stdout:\n%s", out)
	}
	var met struct {
		Calibration *struct {
			Method  string    `json:"method"`
			Rows    int64     `json:"rows"`
			Source  string    `json:"source"`
			LogLoss float64   `json:"held_out_log_loss"`
			A       []float64 `json:"a"`
		} `json:"calibration"`
		TestLogLoss *float64 `json:"test_log_loss"`
	}
	b, _ := os.ReadFile(jp)
	if err := json.Unmarshal(b, &met); err != nil {
		t.Fatal(err)
	}
	c := met.Calibration
	if c == nil || c.Method != "platt" || c.Rows != 70 || c.Source != "holdout" || !(c.LogLoss > 0 && c.LogLoss < math.Log(2)) || len(c.A) != 1 ||
		met.TestLogLoss == nil || !(*met.TestLogLoss > 0) {
		t.Errorf("train --json: %s", b)
	}
	// --calibrate-on: every training row trains, the file's rows calibrate.
	_, _, errs = cpm(t, "train", "-t", ionosphere, "-k", "3", "-i", "20000", "--calibrate-on", heart, "-o", filepath.Join(dir, "m"))
	if !strings.Contains(errs, "fitted on 270 rows ("+heart+")") {
		t.Errorf("--calibrate-on stderr:\n%s", errs)
	}
	// --stream trains on the rows as they pass; --calibrate-on still applies.
	_, out, errs = cpm(t, "train", "--stream", "--cache", "none", "-t", ionosphere, "-k", "3", "-i", "20000", "--calibrate-on", ionosphere, "-c", ionosphere)
	if !strings.Contains(errs, "fitted on 351 rows") || !strings.Contains(out, "test log-loss") {
		t.Errorf("--stream --calibrate-on:\n%s\n%s", errs, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--learner", "plume", "--calibrate"}, "gives probabilities of its own"},
		{[]string{"--calibrate", "--calibrate-fraction", "1"}, "--calibrate-fraction 1"},
		{[]string{"--calibrate", "--stream"}, "--calibrate-on FILE"},
		{[]string{"--calibrate-on", filepath.Join(dir, "absent")}, "--calibrate-on"},
	} {
		code, _, errs := cpm(t, append([]string{"train", "-q", "-t", heart, "-o", filepath.Join(dir, "x")}, tc.args...)...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("train %v: exit %d, stderr %q, want %q", tc.args, code, errs, tc.want)
		}
	}
}

// cv --json gives each rate as a fraction beside its percentage.
func TestCVJSONFractions(t *testing.T) {
	jp := filepath.Join(t.TempDir(), "cv.json")
	mustRun(t, "cv", "-q", "--learner", "perceptron", "-r", "2", "-f", "3", "--json", jp, ionosphere)
	var m map[string]any
	b, _ := os.ReadFile(jp)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"accuracy_mean", "accuracy_std", "error_mean", "error_std", "fold_error_std", "train_error_mean", "train_error_std", "fold_train_error_std"} {
		pct, ok1 := m[k].(float64)
		frac, ok2 := m[k+"_fraction"].(float64)
		if !ok1 || !ok2 || math.Abs(frac-pct/100) > 1e-15 || frac < 0 || frac > 1 {
			t.Errorf("%s %v, %s_fraction %v", k, m[k], k, m[k+"_fraction"])
		}
	}
	pr, _ := m["per_rep"].([]any)
	if len(pr) != 2 {
		t.Fatalf("per_rep %v", m["per_rep"])
	}
	for i := range pr {
		r := pr[i].(map[string]any)
		for _, k := range []string{"accuracy", "train_error"} {
			if p, f := r[k].(float64), r[k+"_fraction"].(float64); math.Abs(f-p/100) > 1e-15 {
				t.Errorf("rep %d: %s %v, fraction %v", i, k, p, f)
			}
		}
	}
}

// predict and eval write a CPU profile with --cpuprofile, and refuse a
// directory for it before reading anything (exit 2).
func TestPredictEvalCPUProfile(t *testing.T) {
	dir := t.TempDir()
	mp := filepath.Join(dir, "m")
	mustRun(t, "train", "-q", "-k", "2", "-i", "2000", "-t", heart, "-o", mp)
	for _, args := range [][]string{{"predict", "-m", mp, "-c", heart}, {"eval", "-m", mp, heart}} {
		prof := filepath.Join(dir, args[0]+".prof")
		mustRun(t, append([]string{args[0], "--cpuprofile", prof}, args[1:]...)...)
		if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
			t.Errorf("%s --cpuprofile: %v", args[0], err)
		}
		if code, _, _ := cpm(t, append([]string{args[0], "--cpuprofile", dir}, args[1:]...)...); code != 2 {
			t.Errorf("%s --cpuprofile DIR: exit %d, want 2", args[0], code)
		}
	}
}
