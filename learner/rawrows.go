package learner

import (
	"fmt"

	"github.com/polyhedral/cpm/featurehash"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sparsevec"
)

// rawRows maps a raw row to the row a learner's predictor scores: the
// model's feature hashing (h), then its scaling (sc), then, for a compact
// model whose learner does not take compact models itself, each feature
// to its stored row (rm, model.RowMap.AppendRow); a nil part is skipped.
// Its buffers hold the last row mapped.
type rawRows struct {
	h   *featurehash.Hasher
	hr  featurehash.Row
	sc  *scale.Scaler
	sr  scale.Row
	rm  *model.RowMap
	idx []uint32
	val []float32
}

// apply returns x mapped, in r's buffers (x itself when r maps nothing):
// valid until the next call. It allocates only when a buffer must grow.
func (r *rawRows) apply(x sparsevec.Vector) sparsevec.Vector {
	if r.h != nil {
		x = r.hr.Hash(r.h, x)
	}
	if r.sc != nil {
		x = r.sr.Scale(r.sc, x)
	}
	if r.rm != nil {
		r.idx, r.val = r.rm.AppendRow(r.idx[:0], r.val[:0], x)
		x = sparsevec.Vector{Idx: r.idx, Val: r.val}
	}
	return x
}

// rawPredictor is a learner's predictor p of mapped rows as a predictor
// of raw rows.
type rawPredictor struct {
	p    Predictor
	rows rawRows
}

func (p *rawPredictor) Predict(x sparsevec.Vector) (float32, float32, int) {
	return p.p.Predict(p.rows.apply(x))
}

func (p *rawPredictor) inner() Predictor { return p.p }

// rawProbabilist is a rawPredictor whose learner gives probabilities.
type rawProbabilist struct {
	rawPredictor
	pr Probabilist
}

func (p *rawProbabilist) Proba(x sparsevec.Vector) float64 { return p.pr.Proba(p.rows.apply(x)) }

// predictorParts is what the predictors of one model share, built once:
// the learner, the model its predictor takes (for a compact model whose
// learner does not take compact models, a view over the scoring matrices,
// model.Model.ScoringWeights, with D = len(Rows) + 1, and its row map),
// the scaling and the hashing (nil: none).
type predictorParts struct {
	l    *registration
	m    *model.Model
	view *model.Model
	rm   *model.RowMap
	sc   *scale.Scaler
	h    *featurehash.Hasher
}

func newPredictorParts(m *model.Model) (*predictorParts, error) {
	l, ok := lookup(m.Learner)
	if !ok {
		return nil, fmt.Errorf("learner: model of unknown learner %q (this build knows %v)", m.Learner, Names())
	}
	pp := &predictorParts{l: l, m: m, view: m}
	if m.Rows != nil && !l.compactRows {
		// The view's matrices see the entries a dense model's see, in the
		// same order, with the same weights: every score is the same bit
		// for bit.
		if err := m.Validate(); err != nil {
			return nil, err
		}
		view := *m
		view.D, view.Rows, view.Weights = len(m.Rows)+1, nil, m.ScoringWeights()
		pp.view, pp.rm = &view, m.RowMap()
	}
	var err error
	if pp.sc, err = scale.FromModel(m.Scale); err != nil {
		return nil, err
	}
	if pp.h, err = hasherOf(m.Hash); err != nil {
		return nil, err
	}
	return pp, nil
}

// predictor returns a new predictor of raw rows. With prev, a learner
// predictor of the same parts, a learner with a clone function copies it
// instead of building one from the model.
func (pp *predictorParts) predictor(prev Predictor) (own, p Predictor, err error) {
	if prev != nil && pp.l.clone != nil {
		own = pp.l.clone(prev)
	} else if own, err = pp.l.newPredictor(pp.view); err != nil {
		return nil, nil, err
	}
	p = own
	if pp.h != nil || pp.sc != nil || pp.rm != nil {
		rp := rawPredictor{p: own, rows: rawRows{h: pp.h, sc: pp.sc, rm: pp.rm}}
		if pr, ok := own.(Probabilist); ok {
			p = &rawProbabilist{rp, pr}
		} else {
			p = &rp
		}
	}
	p, err = withOutputs(p, pp.m)
	return own, p, err
}

// Predictors makes predictors of one model for goroutines that predict
// at once: each New is what NewPredictor returns, and they share the
// model's weights and what is built from it once (a compact model's row
// map and scoring matrices, the scaling's lookup table, the hashing);
// each holds scratch space of its own. New is for one goroutine.
type Predictors struct {
	pp  *predictorParts
	own Predictor // the learner predictor of the last New
}

// NewPredictors returns the predictor maker of m. A model that is not
// valid is an error of NewPredictors or of the first New.
func NewPredictors(m *model.Model) (*Predictors, error) {
	pp, err := newPredictorParts(m)
	if err != nil {
		return nil, err
	}
	return &Predictors{pp: pp}, nil
}

// New returns a new predictor of the model.
func (s *Predictors) New() (Predictor, error) {
	own, p, err := s.pp.predictor(s.own)
	if err != nil {
		return nil, err
	}
	s.own = own
	return p, nil
}
