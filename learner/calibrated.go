package learner

import (
	"context"
	"fmt"

	"github.com/polyhedral/cpm/calibrate"
	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// ClassScorer is implemented by the predictors NewPredictor returns for
// multiclass models (CPM one-vs-one, the perceptron's and the kernel
// perceptron's multiclass forms) and for calibrated models. ClassScores
// writes a row's decision values into dst: one per class in the order of
// the model's Classes for a multiclass model (NumScores(m) values), the
// one binary score (Predict's) for a binary model. PredictScores is
// Predict that also writes them, in one evaluation of the model. What a
// per-class value is depends on the learner: the perceptrons' class score
// f_k(x), one-vs-one CPM's vote count plus a margin tie-break in
// (−1/3, 1/3) (sgd.Classifier.LastScores).
type ClassScorer interface {
	ClassScores(x sparsevec.Vector, dst []float32)
	PredictScores(x sparsevec.Vector, dst []float32) (label, score float32, face int)
}

// lastScorer is implemented by the learners' predictors with per-class
// scores: LastScores writes the decision values of the row their Predict
// saw last. Reading them after Predict lets the wrappers that transform
// raw rows (scaling and the others NewPredictor applies) stay unaware of
// class scores.
type lastScorer interface {
	LastScores(dst []float32)
}

// ClassProbabilist is implemented by the predictors of calibrated models:
// ClassProba writes p(y = Classes[k] | x) into dst[k] for every class
// (len(Classes) values, summing to 1).
type ClassProbabilist interface {
	ClassProba(x sparsevec.Vector, dst []float64)
}

// NumScores returns the number of decision values a prediction of m has:
// len(Classes) for a multiclass model, else 1.
func NumScores(m *model.Model) int {
	if IsMulticlass(m) {
		return len(m.Classes)
	}
	return 1
}

// NativeProbabilities reports whether the learner s names gives
// probabilities of its own (PLUME, SPLA1: their predictors are
// Probabilist), so that a calibration does not apply to it.
func (s Spec) NativeProbabilities() bool {
	l, ok := lookup(s.name())
	return ok && l.probabilities
}

// calibrationStream separates the seed of TrainCalibrated's holdout from
// the seed the same run gives cv.Holdout for validation rows.
const calibrationStream = 0x63616c6962726174 // "calibrat"

// TrainCalibrated trains s on the rows of data outside a stratified,
// seeded holdout of about fraction of them (CalibrationSplit) and fits a Platt calibration (package calibrate)
// on the model's decision values for the held-out rows, stored as the
// model's Calibration. A learner with probabilities of its own (PLUME,
// SPLA1) is refused.
func TrainCalibrated(ctx context.Context, s Spec, data *sparsevec.CSR, fraction float64, seed uint64) (*model.Model, *Report, error) {
	if s.NativeProbabilities() {
		return nil, nil, fmt.Errorf("learner: %s gives probabilities of its own; a calibration does not apply", s.name())
	}
	train, held, err := CalibrationSplit(data, fraction, seed)
	if err != nil {
		return nil, nil, err
	}
	m, rep, err := Train(ctx, s, train)
	if err != nil {
		return nil, nil, err
	}
	if m.Calibration, err = Calibrate(m, held); err != nil {
		return nil, nil, err
	}
	return m, rep, nil
}

// CalibrationSplit is TrainCalibrated's split of data: the rows to train
// on and about fraction of them, stratified by label, held out to fit the
// calibration on (cv.Holdout with seed XOR 0x63616c6962726174).
func CalibrationSplit(data *sparsevec.CSR, fraction float64, seed uint64) (train, held *sparsevec.CSR, err error) {
	train, held, err = cv.Holdout(data, fraction, seed^calibrationStream)
	if err != nil {
		return nil, nil, fmt.Errorf("learner: calibration holdout: %w", err)
	}
	return train, held, nil
}

// Calibrate fits a Platt calibration of m (package calibrate) on the
// decision values m gives rows (raw rows: m's scaling applies), one
// sigmoid for a binary model, one per class for a multiclass model; m's
// own Calibration, if any, is ignored. Rows whose label m does not know
// count as negatives of every class and are left out of the log-loss.
func Calibrate(m *model.Model, rows *sparsevec.CSR) (*model.Calibration, error) {
	if rows == nil || rows.Rows() == 0 {
		return nil, fmt.Errorf("learner: calibrating: %w", calibrate.ErrNoRows)
	}
	plain := *m
	plain.Calibration = nil
	p, err := NewPredictor(&plain)
	if err != nil {
		return nil, err
	}
	ns := NumScores(m)
	cs, _ := p.(ClassScorer)
	if ns > 1 && cs == nil {
		return nil, fmt.Errorf("learner: a multiclass %s model gives no per-class scores to calibrate", m.Learner)
	}
	scores := make([]float32, rows.Rows()*ns)
	truth := make([]int, rows.Rows())
	for r := range rows.Rows() {
		truth[r] = ClassIndex(m, rows.Labels[r])
		if ns == 1 {
			_, scores[r], _ = p.Predict(rows.Row(r))
		} else {
			cs.ClassScores(rows.Row(r), scores[r*ns:(r+1)*ns])
		}
	}
	c, err := calibrate.Fit(scores, ns, truth)
	if err != nil {
		return nil, fmt.Errorf("learner: calibrating: %w", err)
	}
	return c, nil
}

// ClassIndex returns the index of label y in m.Classes, or -1 when m does
// not know y.
func ClassIndex(m *model.Model, y float32) int {
	for i, c := range m.Classes {
		if c == y {
			return i
		}
	}
	return -1
}

// wrapper is implemented by the predictors NewPredictor puts around a
// learner's predictor to transform raw rows (rawPredictor): inner
// returns the predictor it hands the transformed rows to.
type wrapper interface {
	inner() Predictor
}

// learnerPredictor returns the learner's own predictor inside p's
// wrappers.
func learnerPredictor(p Predictor) Predictor {
	for {
		w, ok := p.(wrapper)
		if !ok {
			return p
		}
		p = w.inner()
	}
}

// withOutputs wraps p, m's predictor of raw rows, so that it gives what
// m's predictions have beyond a label and a score: per-class decision
// values (ClassScorer) for a multiclass model, read from the learner's
// own predictor inside p's wrappers after each prediction; and, when m
// has a Calibration, probabilities (Probabilist, ClassProbabilist,
// replacing a learner's own). A binary model without a calibration gets p
// itself.
func withOutputs(p Predictor, m *model.Model) (Predictor, error) {
	multi := IsMulticlass(m)
	if !multi && m.Calibration == nil {
		return p, nil
	}
	o := &scorer{Predictor: p}
	if multi {
		ls, ok := learnerPredictor(p).(lastScorer)
		if !ok {
			return nil, fmt.Errorf("learner: a multiclass %s model gives no per-class scores", m.Learner)
		}
		o.last = ls
	}
	if m.Calibration == nil {
		return o, nil
	}
	if err := calibrate.Check(m.Calibration, len(m.Classes)); err != nil {
		return nil, fmt.Errorf("%w: %w", model.ErrInvalid, err)
	}
	return &calibrated{scorer: o, cal: m.Calibration,
		scores: make([]float32, NumScores(m)), probs: make([]float64, max(len(m.Classes), 2))}, nil
}

// scorer adds ClassScores to a predictor: a binary model's score from
// Predict, a multiclass model's from the learner's predictor after
// Predict.
type scorer struct {
	Predictor            // labels and scores of raw rows
	last      lastScorer // the learner's predictor; nil for a binary model
}

func (p *scorer) PredictScores(x sparsevec.Vector, dst []float32) (float32, float32, int) {
	y, s, f := p.Predict(x)
	if p.last == nil {
		dst[0] = s
	} else {
		p.last.LastScores(dst)
	}
	return y, s, f
}

func (p *scorer) ClassScores(x sparsevec.Vector, dst []float32) { p.PredictScores(x, dst) }

// calibrated gives the probabilities of a model's Calibration.
type calibrated struct {
	*scorer
	cal    *model.Calibration
	scores []float32
	probs  []float64
}

// ClassProba writes the calibrated p(y = Classes[k] | x) into dst[k];
// dst must have len(Classes) entries. It does not allocate.
func (p *calibrated) ClassProba(x sparsevec.Vector, dst []float64) {
	p.ClassScores(x, p.scores)
	calibrate.Probabilities(p.cal, p.scores, dst)
}

// Proba returns the calibrated p(y = Classes[0] | x).
func (p *calibrated) Proba(x sparsevec.Vector) float64 {
	p.ClassProba(x, p.probs)
	return p.probs[0]
}
