package learner

import (
	"fmt"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sparsevec"
)

// scaleFlag is --scale, read by every learner: the scaling fitted on the
// training rows and stored in the model (package scale).
var scaleFlag = flagDef{Name: "scale", Kind: stringFlag, Default: string(scale.Auto),
	Usage: "feature scaling fitted on the training rows and stored in the model: none, maxabs (x/max|x|, keeps zeros zero), minmax (to [0,1]), standard ((x-mean)/std), or auto (standard for dense data, none for sparse data within [-1,1], else maxabs)",
	Check: func(f *Flags) error {
		_, err := scale.ParseMode(f.String("scale"))
		if err != nil {
			return fmt.Errorf("--scale %s: want one of none, maxabs, minmax, standard, auto", f.String("scale"))
		}
		return nil
	}}

// scaler returns the scaler of a run of learner l on data (nil: none;
// see scaling) and the rows to train on: data itself without scaling,
// else a scaled copy.
func (s Spec) scaler(l *registration, data *sparsevec.CSR) (*scale.Scaler, *sparsevec.CSR, error) {
	sc, err := s.scaling(l, func(mode scale.Mode) (*scale.Scaler, error) { return scale.Fit(mode, data) })
	if err != nil || sc == nil {
		return nil, data, err
	}
	return sc, sc.Apply(data), nil
}

// scaling returns the scaler of a run of learner l (nil: none): s.Scale
// fitted on the training rows by fit, or for a warm start the initial
// model's scaling, so that the weights it continues stay in their space;
// a --scale naming another mode is then an error.
func (s Spec) scaling(l *registration, fit func(scale.Mode) (*scale.Scaler, error)) (*scale.Scaler, error) {
	var init *model.Model
	if l.initModel != nil {
		init = l.initModel(s.Config)
	}
	if init == nil {
		return fit(s.Scale)
	}
	have := scale.None
	if init.Scale != nil {
		have = scale.Mode(init.Scale.Mode)
	}
	if s.Scale != "" && s.Scale != scale.Auto && s.Scale != have {
		return nil, fmt.Errorf("learner: --scale %s: the initial model was trained with --scale %s, and a warm start keeps its scaling", s.Scale, have)
	}
	return scale.FromModel(init.Scale)
}

// Fold returns a copy of m, a model with a scaling, whose weights take raw
// rows: for every face w of every weight matrix,
//
//	w·x' + b·w_0 = Σ_j (w_j/div_j)·x_j + b·(w_0 - Σ_j w_j·shift_j/(div_j·b))
//
// with x'_j = (x_j - shift_j)/div_j, b the bias value and the sums over the
// kept features; dropped features get weight 0. The copy has no scaling;
// a compact model's copy is compact.
// The arithmetic is float64, rounded to float32 once per weight, so the
// folded model's scores equal the scaled model's up to float32 rounding.
// Fold returns m itself when m has no scaling, and an error for a model
// whose faces are not linear in x (a kernel perceptron, a lifted feature)
// or that has no bias row to absorb a nonzero shift.
func Fold(m *model.Model) (*model.Model, error) {
	if m.Scale == nil {
		return m, nil
	}
	d, err := Describe(m)
	if err != nil {
		return nil, err
	}
	switch {
	case d.NoHyperplanes != "":
		return nil, fmt.Errorf("learner: cannot fold the scaling into a %s model: %s", m.Learner, d.NoHyperplanes)
	case d.LiftIndex > 0:
		return nil, fmt.Errorf("learner: cannot fold the scaling into a %s model with the %s lift: the lifted feature is not linear in x", m.Learner, d.Lift)
	}
	s := m.Scale
	shifted := false
	for _, v := range s.Shift {
		shifted = shifted || v != 0
	}
	if shifted && m.Bias == 0 {
		return nil, fmt.Errorf("learner: cannot fold a centring scaling (%s) into a model without a bias row", s.Mode)
	}
	out := *m
	out.Scale = nil
	out.Weights = make([]*sparsevec.Matrix, len(m.Weights))
	row := func(j uint32) (int, bool) { return int(j), int64(j) < int64(m.D) }
	if rm := m.RowMap(); rm != nil { // a compact model: its stored rows
		row = rm.Row
	}
	for i, w := range m.Weights {
		out.Weights[i] = foldMatrix(w, s, m.Bias, row)
	}
	if m.Rows != nil {
		return out.Compact(), nil // rows the folding zeroed are not stored
	}
	return &out, nil
}

// foldMatrix returns w folded with s; see Fold. row gives the row of w
// that holds a feature, false when w holds none (the weight is 0).
func foldMatrix(w *sparsevec.Matrix, s *model.Scaling, bias float64, row func(uint32) (int, bool)) *sparsevec.Matrix {
	f := &sparsevec.Matrix{D: w.D, K: w.K, Stride: w.Stride, Data: make([]float32, len(w.Data))}
	b0 := make([]float64, w.K) // the bias row's new weights times the bias
	for k := range w.K {
		b0[k] = bias * float64(w.Data[k])
	}
	for i, j := range s.Index {
		r, ok := row(j)
		if j == 0 || !ok {
			continue
		}
		row := w.Data[r*w.Stride : r*w.Stride+w.K]
		out := f.Data[r*w.Stride : r*w.Stride+w.K]
		for k, v := range row {
			out[k] = float32(float64(v) / s.Div[i])
			b0[k] -= float64(v) * s.Shift[i] / s.Div[i]
		}
	}
	for k := range w.K {
		f.Data[k] = w.Data[k] // without a bias, row 0 scores nothing
		if bias != 0 {
			f.Data[k] = float32(b0[k] / bias)
		}
	}
	return f
}
