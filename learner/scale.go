package learner

import (
	"fmt"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sparsevec"
)

// scaleFlag is --scale, read by every learner: the scaling fitted on the
// training rows and stored in the model (package scale).
var scaleFlag = flagDef{Name: "scale", Kind: stringFlag, Default: string(scale.None),
	Usage: "feature scaling fitted on the training rows and stored in the model: none, maxabs (x/max|x|, keeps zeros zero), minmax (to [0,1]), standard ((x-mean)/std), or auto (standard for dense data, none for sparse data within [-1,1], else maxabs)",
	Check: func(f *Flags) error {
		_, err := scale.ParseMode(f.String("scale"))
		if err != nil {
			return fmt.Errorf("--scale %s: want one of none, maxabs, minmax, standard, auto", f.String("scale"))
		}
		return nil
	}}

// fitScale fits s.Scale on data and returns the scaler (nil for none) and
// the rows to train on: data itself without scaling, else a scaled copy.
func fitScale(s Spec, data *sparsevec.CSR) (*scale.Scaler, *sparsevec.CSR, error) {
	sc, err := scale.Fit(s.Scale, data)
	if err != nil || sc == nil {
		return nil, data, err
	}
	return sc, sc.Apply(data), nil
}

// scaledPredictor applies a model's scaling to each row before its
// learner's predictor sees it.
type scaledPredictor struct {
	p   Predictor
	s   *scale.Scaler
	row scale.Row
}

func (p *scaledPredictor) Predict(x sparsevec.Vector) (float32, float32, int) {
	return p.p.Predict(p.row.Scale(p.s, x))
}

// scaledProbabilist is a scaledPredictor whose learner gives probabilities.
type scaledProbabilist struct {
	scaledPredictor
	pr Probabilist
}

func (p *scaledProbabilist) Proba(x sparsevec.Vector) float64 {
	return p.pr.Proba(p.row.Scale(p.s, x))
}

// withScaling wraps p in m's scaling, if m has one.
func withScaling(p Predictor, m *model.Model) (Predictor, error) {
	sc, err := scale.FromModel(m.Scale)
	if err != nil || sc == nil {
		return p, err
	}
	if pr, ok := p.(Probabilist); ok {
		return &scaledProbabilist{scaledPredictor{p: p, s: sc}, pr}, nil
	}
	return &scaledPredictor{p: p, s: sc}, nil
}

// scaler returns the scaler of a run of learner l on data and the rows to
// train on. A warm start keeps its initial model's scaling, so that the
// weights it continues stay in their space; a --scale naming another mode
// is an error.
func (s Spec) scaler(l *registration, data *sparsevec.CSR) (*scale.Scaler, *sparsevec.CSR, error) {
	var init *model.Model
	if l.initModel != nil {
		init = l.initModel(s.Config)
	}
	if init == nil {
		return fitScale(s, data)
	}
	have := scale.None
	if init.Scale != nil {
		have = scale.Mode(init.Scale.Mode)
	}
	if s.Scale != "" && s.Scale != scale.Auto && s.Scale != have {
		return nil, nil, fmt.Errorf("learner: --scale %s: the initial model was trained with --scale %s, and a warm start keeps its scaling", s.Scale, have)
	}
	sc, err := scale.FromModel(init.Scale)
	if err != nil || sc == nil {
		return nil, data, err
	}
	return sc, sc.Apply(data), nil
}
