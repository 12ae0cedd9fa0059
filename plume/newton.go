package plume

import (
	"gonum.org/v1/gonum/mat"
)

// newtonSolver computes the Newton direction d = (−H + δI)⁻¹·g of eq. 9
// with gonum's Cholesky factorisation. −H is only positive semidefinite:
// a feature column that is zero on every training row (Ionosphere's second
// feature, or a feature absent from a cross-validation fold) gives a zero
// row and column, and the gate alone is invariant under adding the same
// vector to every w̃_k. The ridge δ starts at 1e-8 times the largest
// diagonal entry (at least 1e-12) and grows 100-fold until the
// factorisation succeeds.
type newtonSolver struct {
	p    int
	h    []float64 // P×P, upper triangle of −H filled by objective.pass
	sym  *mat.SymDense
	chol mat.Cholesky
	dvec *mat.VecDense
	gvec *mat.VecDense
	diag []float64
}

func newNewtonSolver(p int, dir, grad []float64) *newtonSolver {
	h := make([]float64, p*p)
	return &newtonSolver{
		p: p, h: h,
		sym:  mat.NewSymDense(p, h),
		dvec: mat.NewVecDense(p, dir),
		gvec: mat.NewVecDense(p, grad),
		diag: make([]float64, p),
	}
}

// direction solves (−H + δI)·dir = grad for the −H in s.h, writing into
// the dir slice given to newNewtonSolver. It reports false when no ridge
// up to 1e4 times the largest diagonal entry makes the matrix positive
// definite (then dir is unchanged).
func (s *newtonSolver) direction() bool {
	p := s.p
	top := 0.0
	for i := range p {
		s.diag[i] = s.h[i*p+i]
		top = max(top, s.diag[i])
	}
	ok := false
	for delta := max(1e-8*top, 1e-12); delta <= 1e4*max(top, 1e-12); delta *= 100 {
		for i := range p {
			s.h[i*p+i] = s.diag[i] + delta
		}
		if s.chol.Factorize(s.sym) {
			ok = true
			break
		}
	}
	for i := range p {
		s.h[i*p+i] = s.diag[i]
	}
	if !ok {
		return false
	}
	// A Condition error only warns that the solution may be inaccurate;
	// the line search judges the direction.
	_ = s.chol.SolveVecTo(s.dvec, s.gvec)
	return true
}
