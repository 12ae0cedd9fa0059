package learner

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/featurehash"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/plume"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

func encode(t *testing.T, m *model.Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := model.Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHashBits checks, for every learner, that Train with HashBits trains
// the model that training on rows hashed beforehand gives, stores the
// hashing, and that its predictor, given raw rows (also through the model
// file), predicts as that model's predictor given hashed rows; with a
// scaling too, fitted on the hashed rows.
func TestHashBits(t *testing.T) {
	const bits = 6
	raw := spread(load(t, "ionosphere.libsvm"), 100_003) // indices to 3.4 million
	h, err := featurehash.New(bits, 0)
	if err != nil {
		t.Fatal(err)
	}
	hashed := h.Apply(raw)
	cases := specs()
	cases["plume-maxabs"] = Spec{Name: PLUME, Config: &plume.Config{K: 2, MStep: plume.BFGS}, Scale: scale.MaxAbs}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			s = s.WithSeed(4)
			plain, _, err := Train(context.Background(), s, hashed)
			if err != nil {
				t.Fatal(err)
			}
			s.HashBits = bits
			m, _, err := Train(context.Background(), s, raw)
			if err != nil {
				t.Fatal(err)
			}
			if m.Hash == nil || *m.Hash != (model.Hashing{Bits: bits}) || m.D > 1<<bits+2 {
				t.Fatalf("hashing %+v, D = %d", m.Hash, m.D)
			}
			plain.Hash = m.Hash
			b := encode(t, m)
			if !bytes.Equal(b, encode(t, plain)) {
				t.Fatal("hashing in Train trains another model than training on hashed rows")
			}
			read, err := model.Read(bytes.NewReader(b), "test")
			if err != nil {
				t.Fatal(err)
			}
			plain.Hash = nil
			want, err := NewPredictor(plain)
			if err != nil {
				t.Fatal(err)
			}
			for _, mm := range []*model.Model{m, read} {
				got, err := NewPredictor(mm)
				if err != nil {
					t.Fatal(err)
				}
				for r := range raw.Rows() {
					y1, s1, f1 := want.Predict(hashed.Row(r))
					y2, s2, f2 := got.Predict(raw.Row(r))
					if y1 != y2 || math.Float32bits(s1) != math.Float32bits(s2) || f1 != f2 {
						t.Fatalf("row %d: hashed rows (%v %v %d), raw rows through the hashing (%v %v %d)", r, y1, s1, f1, y2, s2, f2)
					}
				}
			}
		})
	}
}

// TestHashValidationRows: the CPM's validation rows are hashed as the
// training rows are, so the run equals one on rows hashed beforehand.
func TestHashValidationRows(t *testing.T) {
	raw := spread(load(t, "ionosphere.libsvm"), 100_003)
	h, _ := featurehash.New(8, 0)
	cfg := func(valid *sparsevec.CSR) *CPMConfig {
		return &CPMConfig{Config: sgd.Config{K: 3, Iterations: 20000, Seed: 2, Valid: sgd.Validation{Data: valid, Every: 1000, Patience: 3}}}
	}
	m, rep, err := Train(context.Background(), Spec{Name: CPM, HashBits: 8, Config: cfg(raw)}, raw)
	if err != nil {
		t.Fatal(err)
	}
	plain, prep, err := Train(context.Background(), Spec{Name: CPM, Config: cfg(h.Apply(raw))}, h.Apply(raw))
	if err != nil {
		t.Fatal(err)
	}
	plain.Hash = m.Hash
	if !bytes.Equal(encode(t, m), encode(t, plain)) || rep.CPM.Polytopes[0].ValidError != prep.CPM.Polytopes[0].ValidError {
		t.Fatal("validation rows are not hashed as the training rows")
	}
}

// TestHashWarmStart: a warm start continues in the initial model's hashed
// space and refuses another number of bits.
func TestHashWarmStart(t *testing.T) {
	raw := spread(load(t, "ionosphere.libsvm"), 100_003)
	spec := Spec{Name: CPM, HashBits: 7, Config: &CPMConfig{Config: sgd.Config{K: 3, Iterations: 20000, Seed: 2}}}
	m, _, err := Train(context.Background(), spec, raw)
	if err != nil {
		t.Fatal(err)
	}
	warm := Spec{Name: CPM, Config: &CPMConfig{Config: sgd.Config{K: 3, Iterations: 20000, Seed: 2, Lambda: m.Lambda, Init: m.Compact()}}}
	m2, _, err := Train(context.Background(), warm, raw)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Hash == nil || *m2.Hash != *m.Hash {
		t.Errorf("warm start hashing %+v, want the initial model's %+v", m2.Hash, m.Hash)
	}
	warm.HashBits = 9
	if _, _, err := Train(context.Background(), warm, raw); err == nil || !strings.Contains(err.Error(), "--hash-bits 9") {
		t.Errorf("warm start with another --hash-bits: %v", err)
	}
	plain := Spec{Name: CPM, Config: &CPMConfig{Config: sgd.Config{K: 3, Iterations: 20000, Seed: 2}}}
	p, _, err := Train(context.Background(), plain, raw)
	if err != nil {
		t.Fatal(err)
	}
	warm.HashBits, warm.CPM().Init = 7, p
	if _, _, err := Train(context.Background(), warm, raw); err == nil || !strings.Contains(err.Error(), "--hash-bits 0") {
		t.Errorf("hashing a warm start from an unhashed model: %v", err)
	}
}

// TestHashFlag: --hash-bits reaches the spec and is checked.
func TestHashFlag(t *testing.T) {
	s, err := Build(Perceptron, parseFlags(t, "--hash-bits", "12"))
	if err != nil || s.HashBits != 12 {
		t.Fatalf("--hash-bits 12: %+v, %v", s, err)
	}
	if s, err := Build(CPM, parseFlags(t)); err != nil || s.HashBits != 0 {
		t.Fatalf("default: %+v, %v", s, err)
	}
	for _, v := range []string{"32", "-1"} {
		if _, err := Build(CPM, parseFlags(t, "--hash-bits", v)); err == nil || !strings.Contains(err.Error(), "--hash-bits "+v) {
			t.Errorf("--hash-bits %s: %v", v, err)
		}
	}
}

// TestPredictAllocs pins the per-row path of a predictor of a hashed,
// scaled, compact model: no allocation once its buffers have grown.
func TestPredictAllocs(t *testing.T) {
	raw := spread(load(t, "ionosphere.libsvm"), 1000)
	for _, s := range []Spec{
		{Name: CPM, HashBits: 16, Scale: scale.MaxAbs, Config: &CPMConfig{Config: sgd.Config{K: 3, Iterations: 5000, Seed: 2}}},
		{Name: PLUME, Scale: scale.MaxAbs, Config: &plume.Config{K: 2, MStep: plume.GradientAscent}},
	} {
		m, _, err := Train(context.Background(), s, raw)
		if err != nil {
			t.Fatal(err)
		}
		m = m.Compact()
		if m.Rows == nil {
			t.Fatalf("%s: not compact", s.Name)
		}
		p, err := NewPredictor(m)
		if err != nil {
			t.Fatal(err)
		}
		x := raw.Row(3)
		p.Predict(x)
		if a := testing.AllocsPerRun(100, func() { p.Predict(x) }); a != 0 {
			t.Errorf("%s: %v allocations per row", s.Name, a)
		}
		if pr, ok := p.(Probabilist); ok {
			if a := testing.AllocsPerRun(100, func() { pr.Proba(x) }); a != 0 {
				t.Errorf("%s: Proba: %v allocations per row", s.Name, a)
			}
		}
	}
}

// TestHashCV: cross-validation hashes each fold's rows through Train and
// the predictor, so it gives the result of cross-validating the rows
// hashed beforehand.
func TestHashCV(t *testing.T) {
	raw := spread(load(t, "heart_scale.libsvm"), 100_003)
	h, _ := featurehash.New(8, 0)
	cfg := cv.Config{Reps: 1, Folds: 3, Seed: 5}
	s := specs()[CPM]
	plain, err := cv.Run(context.Background(), cfg, h.Apply(raw), s.Fit())
	if err != nil {
		t.Fatal(err)
	}
	s.HashBits = 8
	hashed, err := cv.Run(context.Background(), cfg, raw, s.Fit())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("accuracy %.2f%% both ways", hashed.AccuracyMean)
	if plain.AccuracyMean != hashed.AccuracyMean || plain.TrainErrorMean != hashed.TrainErrorMean {
		t.Errorf("cv with --hash-bits: accuracy %v, on rows hashed beforehand %v", hashed.AccuracyMean, plain.AccuracyMean)
	}
}
