package sgd

import (
	"math"

	"github.com/polyhedral/cpm/sparsevec"
)

// ClassScores writes x's decision values into dst; see LastScores.
func (c *Classifier) ClassScores(x sparsevec.Vector, dst []float32) {
	c.Predict(x)
	c.LastScores(dst)
}

// LastScores writes the decision values of the row last given to Predict
// into dst. For a binary model dst[0] is Predict's score. For a
// one-vs-one model dst[k], for class Classes[k], is
//
//	v_k + m_k / (3·(|m_k| + 1))
//
// with v_k the pairwise votes for class k and m_k the sum of the pairwise
// margins in its favour (s for the pair (k, j), −s for (i, k), s the pair's
// score, positive for the first class): the vote count with a tie-break
// in (−1/3, 1/3) that never overturns a one-vote difference, the
// one-vs-rest decision function scikit-learn derives from one-vs-one
// votes (sklearn/utils/multiclass.py, _ovr_decision_function). Its argmax
// is Predict's label but for a tie in both votes and margins, which
// Predict breaks to the smaller label. dst must have len(Classes) entries
// (1 for a binary model). LastScores does not allocate.
func (c *Classifier) LastScores(dst []float32) {
	if !c.m.OvO {
		dst[0] = c.last
		return
	}
	for k, v := range c.votes {
		m := c.sums[k]
		dst[k] = float32(float64(v) + m/(3*(math.Abs(m)+1)))
	}
}
