package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/polyhedral/cpm/model"
)

// A model trained with --calibrate answers predict --proba and eval's
// log-loss after the trip through the model file, binary and multiclass,
// and the log-loss eval reports is the one train -c reported.
func TestCalibratedModelFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		data  string
		flags []string
	}{
		{ionosphere, []string{"-k", "3", "-i", "20000"}},
		{iris, []string{"--learner", "perceptron", "--epochs", "20"}},
		{iris, []string{"-k", "2", "-i", "20000", "--ovo"}},
	} {
		mp, jp := filepath.Join(dir, "m"), filepath.Join(dir, "train.json")
		mustRun(t, append([]string{"train", "-q", "-t", tc.data, "-c", tc.data, "--calibrate", "--calibrate-fraction", "0.3", "-o", mp, "--json", jp}, tc.flags...)...)
		m, err := model.Load(mp)
		if err != nil {
			t.Fatal(err)
		}
		if m.Calibration == nil {
			t.Fatalf("%v: the saved model has no calibration", tc.flags)
		}
		sp := filepath.Join(dir, "s.csv")
		mustRun(t, "predict", "-m", mp, "-c", tc.data, "-s", sp, "--format", "csv", "--proba")
		nScores := 1
		if len(m.Classes) > 2 {
			nScores = len(m.Classes)
		}
		rows := readPredictions(t, sp, formatCSV, m.Classes, nScores, false, len(m.Classes))
		for i, r := range rows {
			var sum float64
			for _, p := range r.Proba {
				sum += p
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Fatalf("%v row %d: probabilities %v", tc.flags, i, r.Proba)
			}
		}
		ej := filepath.Join(dir, "eval.json")
		mustRun(t, "eval", "-m", mp, "--json", ej, tc.data)
		var tm struct {
			TestLogLoss *float64 `json:"test_log_loss"`
		}
		var em struct {
			LogLoss *float64 `json:"log_loss"`
		}
		b1, _ := os.ReadFile(jp)
		b2, _ := os.ReadFile(ej)
		if json.Unmarshal(b1, &tm) != nil || json.Unmarshal(b2, &em) != nil || tm.TestLogLoss == nil || em.LogLoss == nil || *tm.TestLogLoss != *em.LogLoss {
			t.Errorf("%v: train test_log_loss %v, eval log_loss %v", tc.flags, tm.TestLogLoss, em.LogLoss)
		}
	}
}
