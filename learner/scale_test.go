package learner

import (
	"bytes"
	"context"
	"math"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// distorted returns data with feature j mapped to a_j·x_j + b_j, a_j from
// 10^-2 to 10^4 and offsets of a few a_j: raw-valued data.
func distorted(data *sparsevec.CSR) *sparsevec.CSR {
	out := &sparsevec.CSR{Dim: data.Dim}
	for r := range data.Rows() {
		x := data.Row(r)
		var y sparsevec.Vector
		i := 0
		for j := 1; j < data.Dim; j++ {
			v := float32(0)
			if i < len(x.Idx) && int(x.Idx[i]) == j {
				v, i = x.Val[i], i+1
			}
			a := math.Pow(10, -2+6*float64(j%7)/6)
			y.Idx = append(y.Idx, uint32(j))
			y.Val = append(y.Val, float32(a*float64(v)+3*a*float64(j%3)))
		}
		out.Append(data.Labels[r], y)
	}
	return out
}

// TestScaleRoundTrip: for every learner and every mode, the model trained
// with --scale on raw rows has the weights of the unscaled model trained on
// the rows scaled beforehand, survives the model file, and predicts the
// raw rows exactly as the unscaled model predicts the scaled rows.
func TestScaleRoundTrip(t *testing.T) {
	raw := distorted(load(t, "ionosphere.libsvm"))
	for _, name := range Names() {
		for _, mode := range []scale.Mode{scale.MaxAbs, scale.MinMax, scale.Standard} {
			t.Run(name+"/"+string(mode), func(t *testing.T) {
				spec := specs()[name].WithSeed(5)
				sc, err := scale.Fit(mode, raw)
				if err != nil {
					t.Fatal(err)
				}
				pre := sc.Apply(raw)
				plain, _, err := Train(context.Background(), spec, pre)
				if err != nil {
					t.Fatal(err)
				}
				spec.Scale = mode
				m, rep, err := Train(context.Background(), spec, raw)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Scale != mode || m.Scale == nil || m.Scale.Mode != string(mode) {
					t.Fatalf("report scale %q, model scaling %+v", rep.Scale, m.Scale)
				}
				var buf bytes.Buffer
				if err := model.Write(&buf, m); err != nil {
					t.Fatal(err)
				}
				back, err := model.Read(&buf, "scaled")
				if err != nil {
					t.Fatal(err)
				}
				for i := range plain.Weights {
					if !slices.Equal(plain.Weights[i].Data, back.Weights[i].Data) {
						t.Fatalf("weight matrix %d differs from the model trained on pre-scaled rows", i)
					}
				}
				p1, err := NewPredictor(plain)
				if err != nil {
					t.Fatal(err)
				}
				p2, err := NewPredictor(back)
				if err != nil {
					t.Fatal(err)
				}
				for r := range raw.Rows() {
					y1, s1, f1 := p1.Predict(pre.Row(r))
					y2, s2, f2 := p2.Predict(raw.Row(r))
					if y1 != y2 || s1 != s2 || f1 != f2 {
						t.Fatalf("row %d: (%v %v %d) on pre-scaled rows, (%v %v %d) on raw rows", r, y1, s1, f1, y2, s2, f2)
					}
				}
			})
		}
	}
}

// TestFold: the folded weights score raw rows as the scaled model does, up
// to float32 rounding.
func TestFold(t *testing.T) {
	raw := distorted(load(t, "ionosphere.libsvm"))
	for _, mode := range []scale.Mode{scale.MaxAbs, scale.MinMax, scale.Standard} {
		spec := specs()[CPM].WithSeed(5)
		spec.Scale = mode
		m, _, err := Train(context.Background(), spec, raw)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Fold(m)
		if err != nil {
			t.Fatal(err)
		}
		if f.Scale != nil || m.Scale == nil {
			t.Fatal("Fold kept the scaling or changed its input")
		}
		ps, _ := NewPredictor(m)
		pf, _ := NewPredictor(f)
		for r := range raw.Rows() {
			_, s1, _ := ps.Predict(raw.Row(r))
			_, s2, _ := pf.Predict(raw.Row(r))
			if d := math.Abs(float64(s1 - s2)); d > 1e-3*max(1, math.Abs(float64(s1))) {
				t.Fatalf("%s: row %d scores %v scaled, %v folded", mode, r, s1, s2)
			}
		}
	}
	kp := specs()[KernelPerceptron]
	kp.Scale = scale.Standard
	m, _, err := Train(context.Background(), kp, raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fold(m); err == nil {
		t.Error("Fold of a kernel perceptron model: no error")
	}
}

// TestScaleValidationRows: a CPM trained with validation rows scales them
// with the training rows' scaling: the validation error it reports is the
// stored model's error on the raw validation rows.
func TestScaleValidationRows(t *testing.T) {
	raw := distorted(load(t, "ionosphere.libsvm"))
	spec := Spec{Name: CPM, Scale: scale.Standard, Config: &CPMConfig{Config: sgd.Config{K: 3, Iterations: 20000, Seed: 2,
		Valid: sgd.Validation{Data: raw}}}}
	m, rep, err := Train(context.Background(), spec, raw)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := NewPredictor(m)
	wrong := 0
	for r := range raw.Rows() {
		if y, _, _ := p.Predict(raw.Row(r)); y != raw.Labels[r] {
			wrong++
		}
	}
	got := rep.CPM.Polytopes[0].ValidError
	if want := float64(wrong) / float64(raw.Rows()); math.Abs(got-want) > 1e-12 {
		t.Errorf("validation error %v, model's error on the raw rows %v", got, want)
	}
}

// TestWarmStartKeepsScaling: --init continues in the initial model's
// scaled space and refuses another mode.
func TestWarmStartKeepsScaling(t *testing.T) {
	raw := distorted(load(t, "ionosphere.libsvm"))
	spec := Spec{Name: CPM, Scale: scale.Standard, Config: &CPMConfig{Config: sgd.Config{K: 3, Iterations: 20000, Seed: 2}}}
	m, _, err := Train(context.Background(), spec, raw)
	if err != nil {
		t.Fatal(err)
	}
	warm := Spec{Name: CPM, Scale: scale.Auto, Config: &CPMConfig{Config: sgd.Config{K: 3, Iterations: 20000, Seed: 2, Lambda: m.Lambda, Init: m}}}
	m2, _, err := Train(context.Background(), warm, raw)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Scale == nil || !slices.Equal(m2.Scale.Shift, m.Scale.Shift) || !slices.Equal(m2.Scale.Div, m.Scale.Div) {
		t.Errorf("warm start scaling %+v, want the initial model's", m2.Scale)
	}
	warm.Scale = scale.MaxAbs
	if _, _, err := Train(context.Background(), warm, raw); err == nil {
		t.Error("warm start with another --scale: no error")
	}
}
