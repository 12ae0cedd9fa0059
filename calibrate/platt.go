package calibrate

import (
	"errors"
	"fmt"
	"math"

	"github.com/polyhedral/cpm/model"
)

// Method is the Calibration.Method of Platt's sigmoid.
const Method = "platt"

// ErrNoRows is returned when there are no held-out rows to fit on.
var ErrNoRows = errors.New("calibrate: no held-out rows")

// Constants of the Newton method of Lin, Lin and Weng (2007), Algorithm 1.
const (
	maxIter   = 100   // Newton iterations
	minStep   = 1e-10 // smallest backtracking step
	hessRidge = 1e-12 // σ added to the Hessian's diagonal
	gradTol   = 1e-5  // stop when both gradient entries are smaller
	armijo    = 1e-4  // sufficient-decrease factor of the line search
)

// Sigmoid is Platt's P(y = +1 | f) = 1 / (1 + exp(A·f + B)).
type Sigmoid struct{ A, B float64 }

// Prob returns 1 / (1 + exp(A·f + B)), computed without overflow.
func (s Sigmoid) Prob(f float64) float64 {
	return sigmoidOf(s.A*f + s.B)
}

// sigmoidOf returns 1 / (1 + exp(z)) without overflow.
func sigmoidOf(z float64) float64 {
	if z >= 0 {
		e := math.Exp(-z)
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(z))
}

// FitReport says how a fit ended.
type FitReport struct {
	Iterations int  // Newton iterations taken
	Converged  bool // the gradient fell below the tolerance
}

// FitSigmoid fits Platt's sigmoid to decision values dec and labels pos
// (true: y = +1) by the Newton method with backtracking of Lin, Lin and
// Weng (see the package documentation). A fit that stops at the iteration
// limit or on a failed line search returns its last iterate, which has
// the lowest objective seen, with Converged false. dec must be finite.
func FitSigmoid(dec []float64, pos []bool) (Sigmoid, FitReport, error) {
	if len(dec) != len(pos) {
		return Sigmoid{}, FitReport{}, fmt.Errorf("calibrate: %d decision values and %d labels", len(dec), len(pos))
	}
	if len(dec) == 0 {
		return Sigmoid{}, FitReport{}, ErrNoRows
	}
	var np, nn float64
	for i, f := range dec {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return Sigmoid{}, FitReport{}, fmt.Errorf("calibrate: decision value %d is %v", i, f)
		}
		if pos[i] {
			np++
		} else {
			nn++
		}
	}
	hi, lo := (np+1)/(np+2), 1/(nn+2)
	target := func(i int) float64 {
		if pos[i] {
			return hi
		}
		return lo
	}
	objective := func(a, b float64) float64 {
		var f float64
		for i, d := range dec {
			z := d*a + b
			if z >= 0 {
				f += target(i)*z + math.Log1p(math.Exp(-z))
			} else {
				f += (target(i)-1)*z + math.Log1p(math.Exp(z))
			}
		}
		return f
	}
	a, b := 0.0, math.Log((nn+1)/(np+1))
	fval := objective(a, b)
	var rep FitReport
	for rep.Iterations = 0; rep.Iterations < maxIter; rep.Iterations++ {
		h11, h22, h21, g1, g2 := hessRidge, hessRidge, 0.0, 0.0, 0.0
		for i, d := range dec {
			p := sigmoidOf(d*a + b)
			pq := p * (1 - p)
			h11 += d * d * pq
			h22 += pq
			h21 += d * pq
			r := target(i) - p
			g1 += d * r
			g2 += r
		}
		if math.Abs(g1) < gradTol && math.Abs(g2) < gradTol {
			rep.Converged = true
			break
		}
		det := h11*h22 - h21*h21
		da := -(h22*g1 - h21*g2) / det
		db := -(-h21*g1 + h11*g2) / det
		gd := g1*da + g2*db
		step := 1.0
		for ; step >= minStep; step /= 2 {
			na, nb := a+step*da, b+step*db
			if nf := objective(na, nb); nf < fval+armijo*step*gd {
				a, b, fval = na, nb, nf
				break
			}
		}
		if step < minStep {
			break // no step decreases F: (a, b) is as good as it gets
		}
	}
	return Sigmoid{a, b}, rep, nil
}

// LogLoss returns −log p, p clipped to [1e-15, 1 − 1e-15].
func LogLoss(p float64) float64 {
	const eps = 1e-15
	return -math.Log(min(max(p, eps), 1-eps))
}

// Fit fits a Platt calibration to the decision values of held-out rows.
// scores holds n rows of nScores values each, row-major: nScores = 1 for
// a binary model (the score whose positive side is class 0), else one
// value per class. truth[r] is row r's class index in [0, C), C = 2 for a
// binary model (index 0: the class of positive scores) and nScores
// otherwise; a negative index marks a row whose label the model does not
// know, which counts as a negative for every class and is left out of the
// log-loss. The result's LogLoss is the mean log-loss of the calibrated
// probabilities on the rows with a known label.
func Fit(scores []float32, nScores int, truth []int) (*model.Calibration, error) {
	n := len(truth)
	if nScores < 1 || len(scores) != n*nScores {
		return nil, fmt.Errorf("calibrate: %d scores for %d rows of %d", len(scores), n, nScores)
	}
	if n == 0 {
		return nil, ErrNoRows
	}
	c := &model.Calibration{Method: Method, A: make([]float64, nScores), B: make([]float64, nScores), Rows: int64(n)}
	dec, pos := make([]float64, n), make([]bool, n)
	for k := range nScores {
		for r := range n {
			dec[r], pos[r] = float64(scores[r*nScores+k]), truth[r] == k
		}
		s, _, err := FitSigmoid(dec, pos)
		if err != nil {
			return nil, fmt.Errorf("calibrate: score %d: %w", k, err)
		}
		c.A[k], c.B[k] = s.A, s.B
	}
	classes := max(nScores, 2)
	prob := make([]float64, classes)
	var loss float64
	var known int
	for r, t := range truth {
		if t < 0 || t >= classes {
			continue
		}
		Probabilities(c, scores[r*nScores:(r+1)*nScores], prob)
		loss += LogLoss(prob[t])
		known++
	}
	if known > 0 {
		c.LogLoss = loss / float64(known)
	}
	return c, nil
}

// Probabilities writes the class probabilities that calibration c gives
// decision values scores into dst: for a binary calibration (one pair)
// dst[0] = P(scores[0]) and dst[1] = 1 − dst[0]; for C pairs, dst[k] =
// P_k(scores[k]) / Σ_j P_j(scores[j]) (1/C each when the sum is 0). dst
// must have max(len(c.A), 2) entries and scores len(c.A). It does not
// allocate.
func Probabilities(c *model.Calibration, scores []float32, dst []float64) {
	if len(c.A) == 1 {
		dst[0] = Sigmoid{c.A[0], c.B[0]}.Prob(float64(scores[0]))
		dst[1] = 1 - dst[0]
		return
	}
	var sum float64
	for k := range c.A {
		dst[k] = Sigmoid{c.A[k], c.B[k]}.Prob(float64(scores[k]))
		sum += dst[k]
	}
	for k := range c.A {
		if sum > 0 {
			dst[k] /= sum
		} else {
			dst[k] = 1 / float64(len(c.A))
		}
	}
}

// Check reports whether c is a calibration this package can apply to a
// model with classes labels: method "platt", 1 pair (binary) or classes
// pairs (classes > 2), every A and B finite.
func Check(c *model.Calibration, classes int) error {
	switch {
	case c.Method != Method:
		return fmt.Errorf("calibrate: unknown calibration method %q (want %q)", c.Method, Method)
	case len(c.A) != len(c.B):
		return fmt.Errorf("calibrate: %d slopes A and %d offsets B", len(c.A), len(c.B))
	case classes <= 2 && len(c.A) != 1, classes > 2 && len(c.A) != classes:
		return fmt.Errorf("calibrate: %d sigmoids for a model of %d classes (want 1 for 2 classes, else one per class)", len(c.A), classes)
	}
	for i := range c.A {
		if math.IsNaN(c.A[i]) || math.IsInf(c.A[i], 0) || math.IsNaN(c.B[i]) || math.IsInf(c.B[i], 0) {
			return fmt.Errorf("calibrate: sigmoid %d has A = %v, B = %v; want finite values", i, c.A[i], c.B[i])
		}
	}
	return nil
}
