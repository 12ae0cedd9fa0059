package main

import (
	"fmt"
	"io"
	"math"

	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
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

// hints prints one line per sign that the run did not serve the data well,
// each naming what to try: unscaled features whose ranges span orders of
// magnitude (and go beyond [-1, 1]: data within it is taken as scaled by
// the user, as --scale auto takes it), a training error near the majority-class rate, and an
// iterative learner that stopped after a handful of iterations. data is
// the raw training data.
func (o *trainOptions) hints(w io.Writer, data *sparsevec.CSR, m *model.Model, rep *learner.Report) error {
	if o.quiet || data.Rows() == 0 {
		return nil
	}
	if m.Scale == nil {
		if lo, hi, jlo, jhi := featureSpread(data); hi > 1 && hi > hintSpread*lo {
			fmt.Fprintf(w, "hint: the features are not scaled and their ranges span %.0f orders of magnitude (max |x| is %.3g at feature %d, %.3g at feature %d); try --scale standard (dense data) or --scale maxabs (sparse data)\n",
				math.Floor(math.Log10(hi/lo)), hi, jhi, lo, jlo)
		}
	}
	trainErr, err := modelError(m, data)
	if err != nil {
		return err
	}
	if majority := 100 * majorityRate(data.Labels); 100*trainErr >= 100-majority-hintMajority {
		fmt.Fprintf(w, "hint: the training error %.2f%% is near the %.2f%% of always predicting the most frequent label: the model learned little; try cpm tune over the learner's parameters%s\n",
			100*trainErr, 100-majority, map[bool]string{true: ", or --scale standard"}[m.Scale == nil])
	}
	if rep.Epochs > 0 && rep.Epochs <= hintFewIterations && (len(rep.LogLik) > 0 || len(rep.GradNorm) > 0) {
		tol := "--epsilon" // PLUME and SPLA1: the log-likelihood gain
		if len(rep.GradNorm) > 0 {
			tol = "--poly-gamma" // the batch Polyceptron: the gradient norm
		}
		fmt.Fprintf(w, "hint: %s stopped after %d iteration(s) on its tolerance; try a smaller %s or more --restarts (cpm tune can search them)\n",
			rep.Learner, rep.Epochs, tol)
	}
	return nil
}

// featureSpread returns the smallest and largest max|x_j| over the features
// data stores with a nonzero value, and those features.
func featureSpread(data *sparsevec.CSR) (lo, hi float64, jlo, jhi int) {
	maxAbs := make([]float64, max(data.Dim, 1))
	val := data.Val[:len(data.Idx)]
	for i, j := range data.Idx {
		if int(j) >= len(maxAbs) {
			maxAbs = append(maxAbs, make([]float64, int(j)+1-len(maxAbs))...)
		}
		maxAbs[j] = max(maxAbs[j], math.Abs(float64(val[i])))
	}
	lo, hi = math.Inf(1), 0
	for j, v := range maxAbs {
		if v == 0 {
			continue
		}
		if v < lo {
			lo, jlo = v, j
		}
		if v > hi {
			hi, jhi = v, j
		}
	}
	if hi == 0 {
		return 1, 1, 0, 0
	}
	return lo, hi, jlo, jhi
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
