package learner

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/kperceptron"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/perceptron"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sgd"
)

// multiSpecs returns a quick configuration of every learner with a
// multiclass form.
func multiSpecs() map[string]Spec {
	return map[string]Spec{
		CPM:              {Name: CPM, Config: &CPMConfig{Config: sgd.Config{K: 2, Iterations: 20000}, OvO: true}},
		Perceptron:       {Name: Perceptron, Config: &perceptron.Config{Epochs: 20}},
		KernelPerceptron: {Name: KernelPerceptron, Config: &kperceptron.Config{Kernel: kperceptron.Kernel{Kind: kperceptron.RBFKernel, Sigma: 1}, Epochs: 20}},
	}
}

// Every multiclass predictor gives one score per class whose argmax is its
// label, with and without scaling, without allocating.
func TestClassScoresArgmaxIsTheLabel(t *testing.T) {
	data := load(t, "iris.libsvm")
	for name, s := range multiSpecs() {
		for _, sc := range []scale.Mode{scale.None, scale.Standard} {
			t.Run(name+"/"+string(sc), func(t *testing.T) {
				s.Scale = sc
				m, _, err := Train(context.Background(), s.WithSeed(1), data)
				if err != nil {
					t.Fatal(err)
				}
				p, err := NewPredictor(m)
				if err != nil {
					t.Fatal(err)
				}
				cs, ok := p.(ClassScorer)
				if !ok || NumScores(m) != 3 {
					t.Fatalf("multiclass %s predictor %T gives no class scores (NumScores %d)", name, p, NumScores(m))
				}
				dst := make([]float32, 3)
				for r := range data.Rows() {
					y, score, _ := p.Predict(data.Row(r))
					cs.ClassScores(data.Row(r), dst)
					best := 0
					for k := range dst {
						if dst[k] > dst[best] {
							best = k
						}
					}
					if m.Classes[best] != y {
						t.Fatalf("row %d: label %v, class scores %v", r, y, dst)
					}
					if !m.OvO && dst[best] != score {
						t.Fatalf("row %d: score %v, class scores %v", r, score, dst)
					}
					if m.OvO && float32(math.Floor(float64(dst[best])+0.5)) != score {
						t.Fatalf("row %d: votes %v, class scores %v", r, score, dst)
					}
				}
				row := data.Row(0)
				if a := testing.AllocsPerRun(50, func() { cs.ClassScores(row, dst) }); a != 0 {
					t.Errorf("ClassScores allocates %v times a row", a)
				}
			})
		}
	}
}

// A calibrated model of every learner without probabilities of its own
// answers Proba and ClassProba with probabilities that agree with its
// labels' sides and sum to 1; PLUME and SPLA1 are refused.
func TestTrainCalibratedEveryLearner(t *testing.T) {
	data := load(t, "ionosphere.libsvm")
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			s := specs()[name].WithSeed(2)
			m, _, err := TrainCalibrated(context.Background(), s, data, 0.2, 7)
			if s.NativeProbabilities() {
				if err == nil || !strings.Contains(err.Error(), "probabilities of its own") {
					t.Fatalf("%s calibrated: %v", name, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := m.Calibration
			if c == nil || c.Method != "platt" || len(c.A) != 1 || c.Rows != 70 || !(c.LogLoss > 0) {
				t.Fatalf("calibration %+v (351 rows, 20%% held out: want 70 rows)", c)
			}
			p, err := NewPredictor(m)
			if err != nil {
				t.Fatal(err)
			}
			pr, ok1 := p.(Probabilist)
			cp, ok2 := p.(ClassProbabilist)
			if !ok1 || !ok2 {
				t.Fatalf("calibrated predictor %T", p)
			}
			probs := make([]float64, 2)
			var loss float64
			for r := range data.Rows() {
				_, score, _ := p.Predict(data.Row(r))
				q := pr.Proba(data.Row(r))
				cp.ClassProba(data.Row(r), probs)
				if q != probs[0] || probs[0]+probs[1] != 1 || q < 0 || q > 1 {
					t.Fatalf("row %d: Proba %v, ClassProba %v", r, q, probs)
				}
				if want := 1 / (1 + math.Exp(c.A[0]*float64(score)+c.B[0])); math.Abs(q-want) > 1e-12 {
					t.Fatalf("row %d: Proba %v, sigmoid of the score %v", r, q, want)
				}
				loss -= math.Log(probs[ClassIndex(m, data.Labels[r])])
			}
			if c.A[0] >= 0 {
				t.Errorf("A = %v: a larger score should mean Classes[0] more likely", c.A[0])
			}
			if loss /= float64(data.Rows()); loss > math.Log(2) {
				t.Errorf("calibrated log-loss %v on the data, no better than a coin", loss)
			}
			row := data.Row(0)
			if a := testing.AllocsPerRun(50, func() { cp.ClassProba(row, probs) }); a != 0 {
				t.Errorf("ClassProba allocates %v times a row", a)
			}
		})
	}
}

// A calibrated multiclass model gives one sigmoid per class and
// probabilities normalised to 1.
func TestTrainCalibratedMulticlass(t *testing.T) {
	data := load(t, "iris.libsvm")
	for name, s := range multiSpecs() {
		t.Run(name, func(t *testing.T) {
			s.Scale = scale.Standard
			m, _, err := TrainCalibrated(context.Background(), s.WithSeed(1), data, 0.3, 1)
			if err != nil {
				t.Fatal(err)
			}
			if c := m.Calibration; c == nil || len(c.A) != 3 || c.Rows != 45 {
				t.Fatalf("calibration %+v", c)
			}
			p, _ := NewPredictor(m)
			cp := p.(ClassProbabilist)
			probs := make([]float64, 3)
			right := 0
			for r := range data.Rows() {
				cp.ClassProba(data.Row(r), probs)
				if s := probs[0] + probs[1] + probs[2]; math.Abs(s-1) > 1e-12 {
					t.Fatalf("row %d: %v sums to %v", r, probs, s)
				}
				if probs[ClassIndex(m, data.Labels[r])] > 0.5 {
					right++
				}
			}
			if right < 100 {
				t.Errorf("the true class has p > 1/2 on %d of 150 rows", right)
			}
		})
	}
}

func TestCalibrateErrors(t *testing.T) {
	data := load(t, "ionosphere.libsvm")
	s := specs()[Perceptron]
	if _, _, err := TrainCalibrated(context.Background(), s, data, 1.5, 1); err == nil {
		t.Error("fraction 1.5 accepted")
	}
	m, _, err := Train(context.Background(), s, data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Calibrate(m, nil); err == nil {
		t.Error("calibration on no rows accepted")
	}
	m.Calibration, _ = Calibrate(m, data)
	m.Calibration.A, m.Calibration.B = append(m.Calibration.A, 1), append(m.Calibration.B, 0)
	if _, err := NewPredictor(m); !errors.Is(err, model.ErrInvalid) {
		t.Errorf("predictor of a model with a broken calibration: %v", err)
	}
}
