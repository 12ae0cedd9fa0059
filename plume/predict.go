package plume

import (
	"github.com/polyhedral/cpm/sparsevec"
)

// Predictor labels rows with a Model. It holds scratch space, so it is not
// safe for concurrent use: make one per goroutine (they share the model's
// weights read-only). Its methods do not allocate. Features at or beyond
// the model's D (unseen in training) have no weight. Like the sparsevec
// kernels, Predict and Proba panic on a malformed vector (fewer values
// than indices, or indices not ascending); rows from a reader or a CSR are
// well formed.
type Predictor struct {
	m   *Model
	raw []float32
	s   []float64
	lg  []float64
	g   []float64
}

// NewPredictor returns a predictor for m. It panics if m.W is nil or its K
// is not m.K (a Model from Train or FromModel is always consistent).
func (m *Model) NewPredictor() *Predictor {
	if m.W == nil || m.W.K != m.K {
		panic("plume: NewPredictor on a model whose W does not have K faces")
	}
	return &Predictor{m: m, raw: make([]float32, m.W.Stride), s: make([]float64, m.K), lg: make([]float64, m.K), g: make([]float64, m.K)}
}

// eval scores x (features at or beyond the model's D have no weight) and
// sets the log gates; it returns the gated face argmin_k w̃_k·x̃.
func (p *Predictor) eval(x sparsevec.Vector) int {
	x = x.Below(p.m.W.D)
	scores(p.s, p.raw, p.m.W, p.m.Bias, x)
	return logGate(p.lg, p.g, p.s, p.m.Gamma)
}

// Predict returns the label of x, the score p(y = +1 | x) − 1/2 and the
// face r = argmin_k w̃_k·x̃ (the gate's argmax; ties to the lowest k). The
// label is Classes[0] (inside) exactly when the score is > 0; for SPLA1
// that is when min_k w̃_k·x̃ > 0.
func (p *Predictor) Predict(x sparsevec.Vector) (label float32, score float32, face int) {
	face = p.eval(x)
	score = float32(posterior(p.g, p.s))
	if score > 0 {
		return p.m.Classes[0], score, face
	}
	return p.m.Classes[1], score, face
}

// Proba returns p(y = +1 | x), the probability of Classes[0]: for SPLA1,
// σ(w̃_r·x̃) of the gated expert r.
func (p *Predictor) Proba(x sparsevec.Vector) float64 {
	p.eval(x)
	var s float64
	for k, g := range p.g {
		if g != 0 {
			s += g * sigmoid(p.s[k])
		}
	}
	return s
}
