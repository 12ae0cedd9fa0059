package learner

import (
	"bytes"
	"context"
	"math"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/perceptron"
	"github.com/polyhedral/cpm/plume"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// spread returns data with feature j moved to j·gap, so that a dense model
// of it has about gap times as many rows as features with weight.
func spread(data *sparsevec.CSR, gap uint32) *sparsevec.CSR {
	out := &sparsevec.CSR{}
	for r := range data.Rows() {
		x := data.Row(r)
		y := sparsevec.Vector{Val: x.Val}
		for _, j := range x.Idx {
			y.Idx = append(y.Idx, j*gap)
		}
		out.Append(data.Labels[r], y)
	}
	out.Dim = (data.Dim-1)*int(gap) + 1
	return out
}

// probeRows returns the rows of data, and each again with a feature added
// in a gap of the spread indices (a feature no model stores) and one far
// beyond every model's D.
func probeRows(data *sparsevec.CSR, gap uint32) []sparsevec.Vector {
	var out []sparsevec.Vector
	for r := range data.Rows() {
		x := data.Row(r)
		out = append(out, x)
		var y sparsevec.Vector
		added := false
		for i, j := range x.Idx {
			if !added && j > gap+7 {
				y.Idx, y.Val = append(y.Idx, gap+7), append(y.Val, 0.75)
				added = true
			}
			y.Idx, y.Val = append(y.Idx, j), append(y.Val, x.Val[i])
		}
		y.Idx, y.Val = append(y.Idx, 1<<30), append(y.Val, -2)
		out = append(out, y)
	}
	return out
}

// TestCompactPredictsAsDense checks, for every learner and form, that a
// compact model (Model.Compact, and the model read back from its file,
// which Read keeps compact) predicts every row, with features that no
// model stores or beyond D, exactly as the dense model: the same labels,
// faces and score bits, and the same probabilities.
func TestCompactPredictsAsDense(t *testing.T) {
	const gap = 1000
	bin := spread(load(t, "ionosphere.libsvm"), gap)
	multi := spread(load(t, "iris.libsvm"), gap)
	cases := map[string]struct {
		s    Spec
		data *sparsevec.CSR
	}{}
	for name, s := range specs() {
		cases[name] = struct {
			s    Spec
			data *sparsevec.CSR
		}{s, bin}
	}
	add := func(name string, s Spec, data *sparsevec.CSR) {
		cases[name] = struct {
			s    Spec
			data *sparsevec.CSR
		}{s, data}
	}
	add("perceptron-lift", Spec{Name: Perceptron, Config: &perceptron.Config{Epochs: 5, Lift: linear.LiftQuadratic}}, bin)
	add("perceptron-multiclass", specs()[Perceptron], multi)
	add("cpm-double", Spec{Name: CPM, Config: &CPMConfig{Config: sgd.Config{K: 3, Iterations: 20000, DoubleSided: true}}}, bin)
	add("cpm-ovo", Spec{Name: CPM, Config: &CPMConfig{Config: sgd.Config{K: 2, Iterations: 5000}, OvO: true}}, multi)
	// BFGS refuses 34,001 rows; gradient ascent takes them.
	add(PLUME, Spec{Name: PLUME, Config: &plume.Config{K: 2, MStep: plume.GradientAscent}}, bin)
	add("plume-maxabs", Spec{Name: PLUME, Config: &plume.Config{K: 2, MStep: plume.GradientAscent}, Scale: scale.MaxAbs}, bin)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			m, _, err := Train(context.Background(), c.s.WithSeed(5), c.data)
			if err != nil {
				t.Fatal(err)
			}
			if m.Rows != nil {
				t.Fatal("Train returned a compact model")
			}
			if name == PolyceptronOnline || name == PolyceptronBatch {
				// The Polyceptron starts every row at a Gaussian draw, so
				// no row of its models is zero: zero the rows of the
				// features no training row stores, and compare that
				// model's dense and compact forms.
				m = zeroUnseen(m, c.data)
			}
			var buf bytes.Buffer
			if err := model.Write(&buf, m); err != nil {
				t.Fatal(err)
			}
			read, err := model.Read(&buf, "test")
			if err != nil {
				t.Fatal(err)
			}
			compact := m.Compact()
			if m.D > 1 && (compact.Rows == nil || read.Rows == nil || len(compact.Rows) > m.D/100) {
				t.Fatalf("D = %d: compact form with %d rows, read back with %d", m.D, len(compact.Rows), len(read.Rows))
			}
			want, err := NewPredictor(m)
			if err != nil {
				t.Fatal(err)
			}
			for form, cm := range map[string]*model.Model{"Compact": compact, "read": read} {
				got, err := NewPredictor(cm)
				if err != nil {
					t.Fatalf("%s: %v", form, err)
				}
				for r, x := range probeRows(c.data, gap) {
					y1, s1, f1 := want.Predict(x)
					y2, s2, f2 := got.Predict(x)
					if y1 != y2 || math.Float32bits(s1) != math.Float32bits(s2) || f1 != f2 {
						t.Fatalf("%s: row %d: dense (%v %v %d), compact (%v %v %d)", form, r, y1, s1, f1, y2, s2, f2)
					}
					if pw, ok := want.(Probabilist); ok {
						pg, ok := got.(Probabilist)
						if !ok {
							t.Fatalf("%s: the compact predictor gives no probabilities", form)
						}
						if a, b := pw.Proba(x), pg.Proba(x); math.Float64bits(a) != math.Float64bits(b) {
							t.Fatalf("%s: row %d: probability %v dense, %v compact", form, r, a, b)
						}
					}
				}
			}
		})
	}
}

// zeroUnseen returns a copy of m, a dense model, with the weight rows of
// the features no row of data stores set to 0.
func zeroUnseen(m *model.Model, data *sparsevec.CSR) *model.Model {
	seen := make([]bool, m.D)
	seen[0] = true
	for _, j := range data.Idx {
		seen[j] = true
	}
	out := *m
	out.Weights = nil
	for _, w := range m.Weights {
		c := &sparsevec.Matrix{D: w.D, K: w.K, Stride: w.Stride, Data: slices.Clone(w.Data)}
		for j, ok := range seen {
			if !ok {
				clear(c.Row(j))
			}
		}
		out.Weights = append(out.Weights, c)
	}
	return &out
}

// TestFoldCompact: folding the scaling into a compact model gives the
// compact form of the folded dense model.
func TestFoldCompact(t *testing.T) {
	raw := spread(load(t, "ionosphere.libsvm"), 1000)
	spec := specs()[CPM].WithSeed(5)
	spec.Scale = scale.MaxAbs
	m, _, err := Train(context.Background(), spec, raw)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := Fold(m)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := Fold(m.Compact())
	if err != nil {
		t.Fatal(err)
	}
	if fc.Rows == nil || fc.Scale != nil {
		t.Fatalf("folded compact model: rows %v, scaling %v", fc.Rows, fc.Scale)
	}
	if !bytes.Equal(encode(t, fc), encode(t, fd)) {
		t.Fatal("Fold of the compact model differs from Fold of the dense one")
	}
}
