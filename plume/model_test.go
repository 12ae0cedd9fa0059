package plume

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// roundTrip writes m's model file and reads it back through FromModel.
func roundTrip(t *testing.T, m *Model) *Model {
	t.Helper()
	var buf bytes.Buffer
	if err := model.Write(&buf, m.Model()); err != nil {
		t.Fatal(err)
	}
	mm, err := model.Read(&buf, "roundtrip")
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromModel(mm)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func TestModelRoundTrip(t *testing.T) {
	data := loadUCI(t, "ionosphere")
	minus := float32(-1)
	for _, cfg := range []Config{
		{MStep: BFGS, K: 3, Gamma: 0.7},
		{MStep: Newton, Hard: true},
		{MStep: GradientAscent, Lambda: 0.5, Bias: 2, Inside: &minus},
	} {
		m, _, err := Train(context.Background(), cfg, data)
		if err != nil {
			t.Fatal(err)
		}
		back := roundTrip(t, m)
		if back.Name() != m.Name() || back.K != m.K || back.Gamma != m.Gamma || back.Hard != m.Hard ||
			back.Bias != m.Bias || !slices.Equal(back.Classes, m.Classes) || !slices.Equal(back.W.Data, m.W.Data) ||
			back.MStep != m.MStep || back.Lambda != m.Lambda || back.Iterations != m.Iterations {
			t.Errorf("%s: round trip changed the model:\n%+v\n%+v", m.Name(), m, back)
		}
		p, q := m.NewPredictor(), back.NewPredictor()
		for r := range data.Rows() {
			x := data.Row(r)
			l1, s1, f1 := p.Predict(x)
			l2, s2, f2 := q.Predict(x)
			if l1 != l2 || math.Float32bits(s1) != math.Float32bits(s2) || f1 != f2 || p.Proba(x) != q.Proba(x) {
				t.Fatalf("%s row %d: predictions differ after the round trip: (%v %v %d) vs (%v %v %d)", m.Name(), r, l1, s1, f1, l2, s2, f2)
			}
		}
	}
}

// TestPredict checks the documented relations between Predict and Proba:
// label Classes[0] iff score > 0, score = Proba − 1/2, face the argmin
// score, and for SPLA1 the sign of min_k w̃_k·x̃ and σ of the gated face.
func TestPredict(t *testing.T) {
	data := loadUCI(t, "heart_scale")
	for _, hard := range []bool{false, true} {
		m, _, err := Train(context.Background(), Config{Hard: hard, K: 3}, data)
		if err != nil {
			t.Fatal(err)
		}
		p := m.NewPredictor()
		s := make([]float64, m.K)
		raw := make([]float32, m.W.Stride)
		for r := range data.Rows() {
			x := data.Row(r)
			label, score, face := p.Predict(x)
			proba := p.Proba(x)
			if (label == m.Classes[0]) != (score > 0) {
				t.Fatalf("row %d: label %v with score %v", r, label, score)
			}
			if math.Abs(float64(score)-(proba-0.5)) > 1e-6 {
				t.Fatalf("row %d: score %v, Proba − 1/2 = %v", r, score, proba-0.5)
			}
			scores(s, raw, m.W, m.Bias, x)
			if face != argmin(s) {
				t.Fatalf("row %d: face %d, argmin of %v", r, face, s)
			}
			if hard {
				if (label == m.Classes[0]) != (s[face] > 0) || proba != sigmoid(s[face]) {
					t.Fatalf("row %d: SPLA1 label %v, Proba %v for min score %v", r, label, proba, s[face])
				}
			}
		}
	}
	// Features unseen in training have no weight.
	m, _, err := Train(context.Background(), Config{MaxIter: 3}, data)
	if err != nil {
		t.Fatal(err)
	}
	p := m.NewPredictor()
	x := data.Row(0)
	l1, s1, f1 := p.Predict(x)
	l2, s2, f2 := p.Predict(sparsevec.Vector{Idx: append(slices.Clone(x.Idx), 500, 1<<30), Val: append(slices.Clone(x.Val), 9, 9)})
	if l1 != l2 || s1 != s2 || f1 != f2 {
		t.Errorf("unseen features changed the prediction")
	}
}

func TestFromModelRejects(t *testing.T) {
	data := loadUCI(t, "heart_scale")
	good, _, err := Train(context.Background(), Config{MaxIter: 3}, data)
	if err != nil {
		t.Fatal(err)
	}
	hard, _, err := Train(context.Background(), Config{MaxIter: 3, Hard: true}, data)
	if err != nil {
		t.Fatal(err)
	}
	fresh := func(m *Model) *model.Model {
		mm := m.Model()
		w := sparsevec.NewMatrix(m.W.D, m.W.K)
		copy(w.Data, m.W.Data)
		mm.Weights = []*sparsevec.Matrix{w}
		return mm
	}
	for _, tc := range []struct {
		name   string
		from   *Model
		mutate func(*model.Model)
	}{
		{"learner", good, func(m *model.Model) { m.Learner = "cpm" }},
		{"two sides", good, func(m *model.Model) { m.Sides = 2; m.Weights = append(m.Weights, m.Weights[0]) }},
		{"one-vs-one", good, func(m *model.Model) { m.OvO = true }},
		{"multiclass", good, func(m *model.Model) { m.Multiclass = true }},
		{"counts", good, func(m *model.Model) { m.Counts = [][]uint64{make([]uint64, m.K)} }},
		{"extra", good, func(m *model.Model) { m.Extra = []model.Blob{{Name: "x"}} }},
		{"entropy", good, func(m *model.Model) { m.Entropy = 1 }},
		{"negative lambda", good, func(m *model.Model) { m.Lambda = -1 }},
		{"Inf lambda", good, func(m *model.Model) { m.Lambda = math.Inf(1) }},
		{"bias not float32", good, func(m *model.Model) { m.Bias = 0.1 }},
		{"NaN bias", good, func(m *model.Model) { m.Bias = math.NaN() }},
		{"missing gamma", good, func(m *model.Model) { delete(m.Params, "gamma") }},
		{"gamma text", good, func(m *model.Model) { m.Params["gamma"] = "one" }},
		{"gamma zero", good, func(m *model.Model) { m.Params["gamma"] = "0" }},
		{"gamma NaN", good, func(m *model.Model) { m.Params["gamma"] = "NaN" }},
		{"plume gamma Inf", good, func(m *model.Model) { m.Params["gamma"] = "+Inf" }},
		{"spla1 finite gamma", hard, func(m *model.Model) { m.Params["gamma"] = "1" }},
		{"missing m_step", good, func(m *model.Model) { delete(m.Params, "m_step") }},
		{"bad m_step", good, func(m *model.Model) { m.Params["m_step"] = "sgd" }},
		{"unknown param", good, func(m *model.Model) { m.Params["lift"] = "none" }},
		{"NaN weight", good, func(m *model.Model) { m.Weights[0].Data[0] = float32(math.NaN()) }},
		{"wrong K", good, func(m *model.Model) { m.K = 3 }},
		{"wrong D", good, func(m *model.Model) { m.D++ }},
		{"nil matrix", good, func(m *model.Model) { m.Weights[0] = nil }},
		{"no matrix", good, func(m *model.Model) { m.Weights = nil }},
		{"padding", good, func(m *model.Model) { m.Weights[0].Data[m.K] = 1 }},
		{"one class", good, func(m *model.Model) { m.Classes = m.Classes[:1] }},
		{"equal classes", good, func(m *model.Model) { m.Classes[1] = m.Classes[0] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mm := fresh(tc.from)
			tc.mutate(mm)
			if _, err := FromModel(mm); !errors.Is(err, ErrModel) {
				t.Fatalf("err = %v, want ErrModel", err)
			}
		})
	}
	if _, err := FromModel(nil); !errors.Is(err, ErrModel) {
		t.Errorf("FromModel(nil): err = %v", err)
	}
	for _, m := range []*Model{good, hard} {
		if _, err := FromModel(fresh(m)); err != nil {
			t.Errorf("unmutated %s model refused: %v", m.Name(), err)
		}
	}
}

// FuzzFromModel feeds arbitrary bytes through model.Read and FromModel; a
// model that both accept must predict without panicking, and survive
// another round trip unchanged.
func FuzzFromModel(f *testing.F) {
	data := loadUCI(f, "heart_scale")
	for _, hard := range []bool{false, true} {
		m, _, err := Train(context.Background(), Config{Hard: hard, MaxIter: 3}, data)
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		if err := model.Write(&buf, m.Model()); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		mm, err := model.Read(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		m, err := FromModel(mm)
		if err != nil {
			return
		}
		p := m.NewPredictor()
		for r := range min(data.Rows(), 5) {
			p.Predict(data.Row(r))
			p.Proba(data.Row(r))
		}
		back := roundTrip(t, m)
		if !slices.Equal(back.W.Data, m.W.Data) || back.Gamma != m.Gamma {
			t.Fatalf("round trip changed an accepted model")
		}
	})
}
