package plume

import "math"

// bfgsState is the BFGS estimate B of (−∇²)⁻¹ of eq. 10, dense P×P.
//
// Eq. 10 prints the textbook inverse-Hessian update for minimisation,
//
//	B⁺ = B + (1 + yᵀBy/yᵀs)·ssᵀ/yᵀs − (B y sᵀ + s yᵀB)/yᵀs,
//
// with s = ΔΘ and y = Δg (and "Θᶜ Δgᶜᵀ Bᶜᵀ" for "ΔΘᶜ Δgᶜᵀ Bᶜᵀ" in the
// last term). For our ascent the function minimised is −Q, so y must be the
// change of its gradient, y = −Δg: with y = Δg the first term changes sign,
// B⁺y = s no longer holds and B loses positive definiteness. With y = −Δg,
// yᵀs > 0 for a concave function, and B stays positive definite, so B·g is
// an ascent direction. Pairs with yᵀs <= 1e-10·‖y‖‖s‖ are skipped. Before
// the first update B = I is rescaled to (yᵀs/yᵀy)·I (Nocedal & Wright,
// "Numerical Optimization", eq. 6.20); the paper does not say how it
// starts.
//
// As in the paper, B is carried across EM iterations (its index c is the EM
// iteration's). g is always the gradient of the current Q(·, Θᶜ); at the
// start of an M-step it equals ∇L(Θᶜ), so with one ascent step per M-step
// the pairs are those of BFGS on the log-likelihood itself.
type bfgsState struct {
	p       int
	b       []float64 // P×P, symmetric, stored in full
	by      []float64 // scratch B·y
	theta   []float64 // parameters at the last observed gradient
	grad    []float64 // that gradient
	have    bool      // theta and grad hold a point
	updated bool      // B has been rescaled and updated at least once
}

func newBFGS(p int) *bfgsState {
	s := &bfgsState{p: p, b: make([]float64, p*p), by: make([]float64, p), theta: make([]float64, p), grad: make([]float64, p)}
	s.reset()
	return s
}

// reset sets B = I and forgets the last point.
func (s *bfgsState) reset() {
	clear(s.b)
	for i := range s.p {
		s.b[i*s.p+i] = 1
	}
	s.have, s.updated = false, false
}

// observe records the gradient grad at parameters theta, first updating B
// with the pair from the previously observed point.
func (s *bfgsState) observe(theta, grad []float64) {
	if s.have {
		s.update(theta, grad)
	}
	copy(s.theta, theta)
	copy(s.grad, grad)
	s.have = true
}

func (s *bfgsState) update(theta, grad []float64) {
	p := s.p
	// s.theta ← step s, s.grad ← y = −(g⁺ − g), in place.
	var ys, yy, ss float64
	for i := range p {
		si := theta[i] - s.theta[i]
		yi := s.grad[i] - grad[i]
		s.theta[i], s.grad[i] = si, yi
		ys += yi * si
		yy += yi * yi
		ss += si * si
	}
	if !(ys > 1e-10*math.Sqrt(yy*ss)) {
		return // no curvature information; keep B
	}
	if !s.updated {
		scale := ys / yy
		for i := range s.b {
			s.b[i] *= scale
		}
		s.updated = true
	}
	st, y := s.theta, s.grad
	var yby float64
	for i := range p {
		row := s.b[i*p : (i+1)*p]
		var v float64
		for j, b := range row {
			v += b * y[j]
		}
		s.by[i] = v
		yby += y[i] * v
	}
	c1 := (ys + yby) / (ys * ys)
	for i := range p {
		row := s.b[i*p : (i+1)*p]
		si, bi := st[i], s.by[i]
		for j := range row {
			row[j] += c1*si*st[j] - (bi*st[j]+si*s.by[j])/ys
		}
	}
}

// direction sets dir = B·grad.
func (s *bfgsState) direction(dir, grad []float64) {
	p := s.p
	for i := range p {
		row := s.b[i*p : (i+1)*p]
		var v float64
		for j, b := range row {
			v += b * grad[j]
		}
		dir[i] = v
	}
}
