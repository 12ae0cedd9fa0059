package main

import (
	"fmt"
	"io"
	"math"

	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// Thresholds of the hints train prints.
const (
	// hintSpread: feature ranges whose largest and smallest max|x| differ
	// by more than this factor call for scaling.
	hintSpread = 100
	// hintMajority: a training error within this many points of the
	// majority-class rate means the model learned little.
	hintMajority = 1.0
	// hintFewIterations: an iterative learner that stops after at most
	// this many iterations probably stopped on its tolerance too early.
	hintFewIterations = 3
)

// trainFacts are the figures of the training rows the hints read: the
// spread of the raw rows' features (featureSpread; read only for a model
// without scaling), the fraction of the most frequent label
// (majorityRate) and the fraction of the rows the model mislabels.
type trainFacts struct {
	spread   spread
	majority float64
	trainErr float64
}

// spread is the smallest and largest max|x_j| over the features with a
// nonzero value, and those features.
type spread struct {
	lo, hi   float64
	jlo, jhi int
}

// hints prints the hints (printHints) of a model m trained on data, the
// raw training data as a CSR.
func (o *trainOptions) hints(w io.Writer, data *sparsevec.CSR, m *model.Model, rep *learner.Report) error {
	if o.quiet || data.Rows() == 0 {
		return nil
	}
	f := &trainFacts{majority: majorityRate(data.Labels)}
	if m.Scale == nil {
		var fs featureMax
		fs.add(data)
		f.spread = fs.spread()
	}
	var err error
	if f.trainErr, err = modelError(m, data); err != nil {
		return err
	}
	printHints(w, f, m, rep)
	return nil
}

// packedFacts returns the hints' figures of a run of learner.TrainPacked
// on rows and the visit that completes them: the feature spread is taken
// here, from the raw rows; the visit sets the majority rate and the
// training error from the trained rows, which are scaled when the model
// has a scaling, with the model the visit gets, which then has none.
func packedFacts(rows *sparsevec.Packer) (*trainFacts, sgd.PackedVisit) {
	var fs featureMax
	for b := range rows.Blocks() {
		fs.add(b)
	}
	f := &trainFacts{spread: fs.spread()}
	return f, func(m *model.Model, p *sparsevec.Packed) error {
		f.majority = majorityRate(p.Labels())
		var err error
		f.trainErr, err = packedError(m, p)
		return err
	}
}

// printHints prints one line per sign that the run did not serve the data
// well, each naming what to try: unscaled features whose ranges span
// orders of magnitude (and go beyond [-1, 1]: data within it is taken as
// scaled by the user, as --scale auto takes it), a training error near
// the majority-class rate, and an iterative learner that stopped after a
// handful of iterations.
func printHints(w io.Writer, f *trainFacts, m *model.Model, rep *learner.Report) {
	if s := f.spread; m.Scale == nil && s.hi > 1 && s.hi > hintSpread*s.lo {
		fmt.Fprintf(w, "hint: the features are not scaled and their ranges span %.0f orders of magnitude (max |x| is %.3g at feature %d, %.3g at feature %d); try --scale standard (dense data) or --scale maxabs (sparse data)\n",
			math.Floor(math.Log10(s.hi/s.lo)), s.hi, s.jhi, s.lo, s.jlo)
	}
	if majority := 100 * f.majority; 100*f.trainErr >= 100-majority-hintMajority {
		fmt.Fprintf(w, "hint: the training error %.2f%% is near the %.2f%% of always predicting the most frequent label: the model learned little; try cpm tune over the learner's parameters%s\n",
			100*f.trainErr, 100-majority, map[bool]string{true: ", or --scale standard"}[m.Scale == nil])
	}
	if rep.Epochs > 0 && rep.Epochs <= hintFewIterations && (len(rep.LogLik) > 0 || len(rep.GradNorm) > 0) {
		tol := "--epsilon" // PLUME and SPLA1: the log-likelihood gain
		if len(rep.GradNorm) > 0 {
			tol = "--poly-gamma" // the batch Polyceptron: the gradient norm
		}
		fmt.Fprintf(w, "hint: %s stopped after %d iteration(s) on its tolerance; try a smaller %s or more --restarts (cpm tune can search them)\n",
			rep.Learner, rep.Epochs, tol)
	}
}

// featureMax accumulates max|x_j| per feature over the blocks of rows
// added to it.
type featureMax struct{ maxAbs []float64 }

// add takes the rows of b into the maxima.
func (fm *featureMax) add(b *sparsevec.CSR) {
	if len(fm.maxAbs) < b.Dim {
		fm.maxAbs = append(fm.maxAbs, make([]float64, b.Dim-len(fm.maxAbs))...)
	}
	val := b.Val[:len(b.Idx)]
	for i, j := range b.Idx {
		if int(j) >= len(fm.maxAbs) {
			fm.maxAbs = append(fm.maxAbs, make([]float64, int(j)+1-len(fm.maxAbs))...)
		}
		fm.maxAbs[j] = max(fm.maxAbs[j], math.Abs(float64(val[i])))
	}
}

// spread returns the smallest and largest maximum over the features with
// a nonzero one, and those features (ties to the lower feature); 1 and 1
// at feature 0 when every value was 0.
func (fm *featureMax) spread() spread {
	s := spread{lo: math.Inf(1)}
	for j, v := range fm.maxAbs {
		if v == 0 {
			continue
		}
		if v < s.lo {
			s.lo, s.jlo = v, j
		}
		if v > s.hi {
			s.hi, s.jhi = v, j
		}
	}
	if s.hi == 0 {
		return spread{lo: 1, hi: 1}
	}
	return s
}

// majorityRate returns the fraction of labels equal to the most frequent
// label.
func majorityRate(labels []float32) float64 {
	counts := map[float32]int{}
	best := 0
	for _, y := range labels {
		counts[y]++
		best = max(best, counts[y])
	}
	return float64(best) / float64(max(len(labels), 1))
}
