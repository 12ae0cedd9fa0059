package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/polyhedral/cpm/calibrate"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// Formats of the per-row output of predict -s (and train -c -s).
const (
	formatLIBSVM = "libsvm"
	formatCSV    = "csv"
	formatJSONL  = "jsonl"
)

// scoreOpts says what each line of the scores file holds and how.
type scoreOpts struct {
	format string // formatLIBSVM ("" too), formatCSV or formatJSONL
	proba  bool   // append the class probabilities
	face   bool   // append the face index

	metrics bool // gather eval's quality figures: binary decision values (AUC), probabilities when the model has them (log-loss)
	workers int  // goroutines scoring blocks; 0: GOMAXPROCS
}

func (so scoreOpts) check() error {
	switch so.format {
	case "", formatLIBSVM, formatCSV, formatJSONL:
		return nil
	}
	return usagef("--format %s: want libsvm, csv or jsonl", so.format)
}

// errNoProba is the error of --proba on a model without probabilities.
const errNoProba = "model has no probabilities: retrain with --calibrate (a %s model gives none of its own; plume and spla1 do)"

// rowOutputs predicts rows with a model and keeps, for the last row, its
// decision values (scores) and, when asked, its class probabilities
// (probs). It does not allocate per row.
type rowOutputs struct {
	p      learner.Predictor
	cs     learner.ClassScorer // multiclass models
	pr     learner.Probabilist // binary models with probabilities of their own
	cal    *model.Calibration
	scores []float32 // learner.NumScores values
	probs  []float64 // one per class in Classes order; nil: not computed

	// noClassScores skips the per-class decision values of a multiclass
	// model (scores then holds its one Predict score) when nothing reads
	// them.
	noClassScores bool
}

// rowOutputsMaker makes the rowOutputs of one model, one per goroutine,
// sharing the model's read-only state (learner.Predictors).
type rowOutputsMaker struct {
	m         *model.Model
	ps        *learner.Predictors
	wantProba bool
	first     *rowOutputs // made by newRowOutputsMaker, handed out first
}

// newRowOutputsMaker returns the maker of m's row outputs. With wantProba
// the probabilities are computed when m has them (a Calibration, or a
// learner's own), and an error when it has not and needProba.
func newRowOutputsMaker(m *model.Model, wantProba, needProba bool) (*rowOutputsMaker, error) {
	ps, err := learner.NewPredictors(m)
	if err != nil {
		return nil, err
	}
	mk := &rowOutputsMaker{m: m, ps: ps, wantProba: wantProba}
	o, err := mk.new()
	if err != nil {
		return nil, err
	}
	if needProba && o.cal == nil && o.pr == nil {
		return nil, usagef(errNoProba, m.Learner)
	}
	mk.first = o
	return mk, nil
}

// new returns new row outputs of the model.
func (mk *rowOutputsMaker) new() (*rowOutputs, error) {
	if o := mk.first; o != nil {
		mk.first = nil
		return o, nil
	}
	m := mk.m
	p, err := mk.ps.New()
	if err != nil {
		return nil, err
	}
	o := &rowOutputs{p: p, cal: m.Calibration, scores: make([]float32, learner.NumScores(m))}
	if learner.IsMulticlass(m) {
		if o.cs, _ = p.(learner.ClassScorer); o.cs == nil {
			return nil, fmt.Errorf("a multiclass %s model gives no per-class scores", m.Learner)
		}
	}
	has := o.cal != nil
	if !has && !learner.IsMulticlass(m) {
		o.pr, has = p.(learner.Probabilist)
	}
	if mk.wantProba && has {
		o.probs = make([]float64, max(len(m.Classes), 2))
	}
	return o, nil
}

// predict predicts x and sets o.scores and, if computed, o.probs.
func (o *rowOutputs) predict(x sparsevec.Vector) (label float32, face int) {
	var score float32
	if o.cs == nil || o.noClassScores {
		label, score, face = o.p.Predict(x)
		o.scores[0] = score
	} else {
		label, _, face = o.cs.PredictScores(x, o.scores)
	}
	switch {
	case o.probs == nil:
	case o.cal != nil:
		calibrate.Probabilities(o.cal, o.scores, o.probs)
	default:
		o.probs[0] = o.pr.Proba(x)
		o.probs[1] = 1 - o.probs[0]
	}
	return label, face
}

// appendHeader appends the scores file's first line, if its format has
// one: LIBSVM with probabilities, "labels" and the classes in the order
// of the probability columns (as LIBLINEAR's predict -b 1); CSV, the
// column names label, score (binary) or score_<class> (one per class),
// face, p_<class>. JSON Lines has none.
func appendHeader(b []byte, so scoreOpts, classes []float32, nScores int) []byte {
	switch so.format {
	case formatCSV:
		b = append(b, "label"...)
		if nScores == 1 {
			b = append(b, ",score"...)
		} else {
			for _, c := range classes {
				b = strconv.AppendFloat(append(b, ",score_"...), float64(c), 'g', -1, 32)
			}
		}
		if so.face {
			b = append(b, ",face"...)
		}
		if so.proba {
			for _, c := range classes {
				b = strconv.AppendFloat(append(b, ",p_"...), float64(c), 'g', -1, 32)
			}
		}
		return append(b, '\n')
	case formatJSONL:
		return b
	}
	if !so.proba {
		return b
	}
	b = append(b, "labels"...)
	for _, c := range classes {
		b = strconv.AppendFloat(append(b, ' '), float64(c), 'g', -1, 32)
	}
	return append(b, '\n')
}

// appendRow appends one row's line: the label, the decision values, the
// face (so.face) and the probabilities (so.proba), every number the
// shortest decimal that reads back as the same float32 (strconv 'g', -1,
// 32; a probability is rounded to float32 first). LIBSVM separates them
// with spaces, CSV with commas; JSON Lines writes
// {"label":…,"scores":[…],"face":…,"proba":[…]}, with null for a
// non-finite number.
func appendRow(b []byte, so scoreOpts, label float32, scores []float32, face int, probs []float64) []byte {
	return appendRowAfterLabel(appendLabel(b, so, label), so, scores, face, probs)
}

// appendRowAfterLabel appends the rest of appendRow's line after its
// label (appendLabel).
func appendRowAfterLabel(b []byte, so scoreOpts, scores []float32, face int, probs []float64) []byte {
	if so.format == formatJSONL {
		b = append(b, `,"scores":[`...)
		for i, s := range scores {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONNum(b, s)
		}
		b = append(b, ']')
		if so.face {
			b = strconv.AppendInt(append(b, `,"face":`...), int64(face), 10)
		}
		if so.proba {
			b = append(b, `,"proba":[`...)
			for i, p := range probs {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONNum(b, float32(p))
			}
			b = append(b, ']')
		}
		return append(b, "}\n"...)
	}
	sep := byte(' ')
	if so.format == formatCSV {
		sep = ','
	}
	for _, s := range scores {
		b = strconv.AppendFloat(append(b, sep), float64(s), 'g', -1, 32)
	}
	if so.face {
		b = strconv.AppendInt(append(b, sep), int64(face), 10)
	}
	if so.proba {
		for _, p := range probs {
			b = strconv.AppendFloat(append(b, sep), float64(float32(p)), 'g', -1, 32)
		}
	}
	return append(b, '\n')
}

// appendJSONNum appends v as a JSON number, or null when it is not finite.
func appendJSONNum(b []byte, v float32) []byte {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, float64(v), 'g', -1, 32)
}
