package learner

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/kperceptron"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/perceptron"
	"github.com/polyhedral/cpm/plume"
	"github.com/polyhedral/cpm/polyceptron"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

func load(t *testing.T, name string) *sparsevec.CSR {
	t.Helper()
	data, err := reader.Load("../testdata/uci/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// specs returns a quick configuration of every learner.
func specs() map[string]Spec {
	return map[string]Spec{
		CPM:               {Name: CPM, Config: &CPMConfig{Config: sgd.Config{K: 3, Iterations: 20000}}},
		Perceptron:        {Name: Perceptron, Config: &perceptron.Config{Epochs: 20}},
		KernelPerceptron:  {Name: KernelPerceptron, Config: &kperceptron.Config{Kernel: kperceptron.Kernel{Kind: kperceptron.RBFKernel, Sigma: 1}, Epochs: 20}},
		PolyceptronOnline: {Name: PolyceptronOnline, Config: &polyceptron.Config{K: 2, Epochs: 20}},
		PolyceptronBatch:  {Name: PolyceptronBatch, Config: &polyceptron.Config{K: 2, Gamma: 10}},
		PLUME:             {Name: PLUME, Config: &plume.Config{K: 2, MStep: plume.BFGS}},
		SPLA1:             {Name: SPLA1, Config: &plume.Config{K: 2}},
	}
}

// Every learner trains, survives a trip through the model file and
// predicts the same labels afterwards, in the data's own label set.
func TestEveryLearnerRoundTrips(t *testing.T) {
	data := load(t, "ionosphere.libsvm")
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			if _, ok := specs()[name]; !ok {
				t.Fatalf("no test spec for learner %q", name)
			}
			m, rep, err := Train(context.Background(), specs()[name].WithSeed(3), data)
			if err != nil {
				t.Fatal(err)
			}
			if m.Learner != name || rep.Learner != name {
				t.Fatalf("model learner %q, report %q, want %q", m.Learner, rep.Learner, name)
			}
			var buf bytes.Buffer
			if err := model.Write(&buf, m); err != nil {
				t.Fatal(err)
			}
			m2, err := model.Read(&buf, "test")
			if err != nil {
				t.Fatal(err)
			}
			p1, err := NewPredictor(m)
			if err != nil {
				t.Fatal(err)
			}
			p2, err := NewPredictor(m2)
			if err != nil {
				t.Fatal(err)
			}
			wrong := 0
			for r := range data.Rows() {
				y1, s1, f1 := p1.Predict(data.Row(r))
				y2, s2, f2 := p2.Predict(data.Row(r))
				if y1 != y2 || s1 != s2 || f1 != f2 {
					t.Fatalf("row %d: (%v %v %d) before saving, (%v %v %d) after", r, y1, s1, f1, y2, s2, f2)
				}
				if y1 != 1 && y1 != -1 {
					t.Fatalf("row %d: predicted label %v is not one of the data's", r, y1)
				}
				if y1 != data.Labels[r] {
					wrong++
				}
			}
			if frac := float64(wrong) / float64(data.Rows()); frac > 0.2 {
				t.Errorf("training error %.3f; every learner should fit Ionosphere better than 20%%", frac)
			}
		})
	}
}

func TestMulticlassDataTrainsMulticlassFormOrRefuses(t *testing.T) {
	data := load(t, "iris.libsvm")
	for _, name := range Names() {
		m, _, err := Train(context.Background(), specs()[name], data)
		switch name {
		case Perceptron, KernelPerceptron:
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if !m.Multiclass || len(m.Classes) != 3 {
				t.Errorf("%s: multiclass %v with classes %v, want the 3-class form", name, m.Multiclass, m.Classes)
			}
		default:
			if err == nil || !strings.Contains(err.Error(), "3") {
				t.Errorf("%s on 3 labels: err = %v, want a refusal naming the label count", name, err)
			}
		}
	}
	s := specs()[CPM]
	s.Config = &CPMConfig{Config: s.CPM().Config, OvO: true}
	if m, _, err := Train(context.Background(), s, data); err != nil || !m.OvO {
		t.Errorf("cpm --ovo on iris: err %v", err)
	}
}

func TestLabelPicksDistinguishedClass(t *testing.T) {
	data := load(t, "heart_scale.libsvm")
	minus := float32(-1)
	for _, name := range []string{CPM, Perceptron, PolyceptronOnline, PolyceptronBatch, PLUME, SPLA1} {
		s := specs()[name]
		s.Label = &minus
		m, _, err := Train(context.Background(), s, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Classes[0] != -1 {
			t.Errorf("%s with label -1: classes %v, want -1 first", name, m.Classes)
		}
	}
	s := specs()[KernelPerceptron]
	s.Label = &minus
	if _, _, err := Train(context.Background(), s, data); err == nil {
		t.Error("kperceptron accepted a positive label it cannot honour")
	}
}

func TestUnknownLearner(t *testing.T) {
	data := load(t, "heart_scale.libsvm")
	if _, _, err := Train(context.Background(), Spec{Name: "svm"}, data); err == nil || !strings.Contains(err.Error(), "unknown learner") {
		t.Errorf("err = %v", err)
	}
	m, _, err := Train(context.Background(), specs()[Perceptron], data)
	if err != nil {
		t.Fatal(err)
	}
	m.Learner = "plume-from-the-future"
	if _, err := NewPredictor(m); err == nil || !strings.Contains(err.Error(), "unknown learner") {
		t.Errorf("err = %v", err)
	}
}

// Fit plugs every learner into cross-validation with per-fold seeds: the
// same seed gives the same figures.
func TestFitWithCV(t *testing.T) {
	data := load(t, "heart_scale.libsvm")
	for _, name := range Names() {
		run := func() *cv.Result {
			res, err := cv.Run(context.Background(), cv.Config{Reps: 2, Folds: 3, Seed: 5}, data, specs()[name].Fit())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res
		}
		a, b := run(), run()
		if a.AccuracyMean != b.AccuracyMean || a.TrainErrorMean != b.TrainErrorMean {
			t.Errorf("%s: two runs gave accuracy %v and %v", name, a.AccuracyMean, b.AccuracyMean)
		}
		if a.AccuracyMean < 60 {
			t.Errorf("%s: CV accuracy %.1f%% on heart", name, a.AccuracyMean)
		}
		if name != KernelPerceptron && a.HyperplanesMean < 1 {
			t.Errorf("%s: %v hyperplanes", name, a.HyperplanesMean)
		}
	}
}

func TestSelectK(t *testing.T) {
	data := load(t, "ionosphere.libsvm")
	s := specs()[PolyceptronOnline]
	k, res, err := SelectK(context.Background(), s, data, []int{1, 2, 3}, cv.Config{Reps: 1, Folds: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results for 3 candidates", len(res))
	}
	for _, c := range res {
		if c.Result.HyperplanesMean != float64(c.K) {
			t.Errorf("K=%d trained models with %v hyperplanes", c.K, c.Result.HyperplanesMean)
		}
		if c.Result.AccuracyMean > res[indexOf(res, k)].Result.AccuracyMean {
			t.Errorf("K=%d (%.2f%%) beats the chosen K=%d", c.K, c.Result.AccuracyMean, k)
		}
	}
	if _, _, err := SelectK(context.Background(), s, data, nil, cv.Config{}); err == nil {
		t.Error("no candidates: no error")
	}
}

func indexOf(res []KChoice, k int) int {
	for i, c := range res {
		if c.K == k {
			return i
		}
	}
	return -1
}
