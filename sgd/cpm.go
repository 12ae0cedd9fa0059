package sgd

import (
	"fmt"
	"slices"

	"github.com/polyhedral/cpm/assign"
	"github.com/polyhedral/cpm/sparsevec"
)

// foldBelow is the lazy scale below which s is folded into the stored
// weights (2^-20). See the package comment.
const foldBelow = 1.0 / (1 << 20)

// polytope is the SGD state of one convex polytope: Algorithm 1 of
// Kantchelian et al. (NIPS 2014) with lazy L2 scaling. The true weights are
// scale·W; row 0 of W is the bias row.
type polytope struct {
	W *sparsevec.Matrix

	scale     float64 // s: true weights are s·W
	t         int64   // steps taken
	lambda    float64
	costRatio float64
	bias      float32
	asg       *assign.Assigner

	score []float32 // Stride: true scores s·(W·x + b·W_0)
	coef  []float32 // Stride: AddOuter coefficients

	stats stepStats

	// kept, if set, replaces the assigner's counts and entropy in reports
	// and the model: the polytope was rolled back to its best validation
	// evaluation (early stopping), whose assignment statistics these are.
	kept *keptStats
}

// counts returns the per-face assignment counts to report.
func (p *polytope) counts() []int64 {
	if p.kept != nil {
		return p.kept.Counts
	}
	return p.asg.Counts()
}

// entropy returns the assignment entropy to report.
func (p *polytope) entropy() float64 {
	if p.kept != nil {
		return p.kept.Entropy
	}
	return p.asg.Entropy()
}

// newPolytope returns a zero polytope with k faces over d feature rows
// (row 0 is the bias; d grows on demand as Step sees larger indices).
// cfg must have been completed by withDefaults.
func newPolytope(cfg Config, d int) (*polytope, error) {
	a, err := assign.New(cfg.K, cfg.Entropy)
	if err != nil {
		return nil, err
	}
	if d < 1 {
		d = 1
	}
	w := sparsevec.NewMatrix(d, cfg.K)
	return &polytope{
		W:         w,
		scale:     1,
		lambda:    cfg.Lambda,
		costRatio: cfg.CostRatio,
		bias:      float32(cfg.Bias),
		asg:       a,
		score:     make([]float32, w.Stride),
		coef:      make([]float32, w.Stride),
	}, nil
}

// warm makes p continue from weights w (true weights: scale 1) after t
// steps: a warm start. w must have p's K; rows beyond w.D stay zero.
func (p *polytope) warm(w *sparsevec.Matrix, t int64) {
	p.W.Grow(w.D)
	copy(p.W.Data, w.Data[:w.D*w.Stride])
	p.scale, p.t = 1, t
}

// restore sets p to the snapshot st: raw weights and lazy scale as they
// were (not folded), step counter, statistics and ASSIGN state. The
// snapshot is copied, not referenced.
func (p *polytope) restore(st *taskState) error {
	if st.W.K != p.W.K || st.W.Stride != p.W.Stride {
		return fmt.Errorf("sgd: snapshot has K = %d, the polytope %d", st.W.K, p.W.K)
	}
	b, err := st.Asg.MarshalBinary()
	if err != nil {
		return err
	}
	a := new(assign.Assigner)
	if err := a.UnmarshalBinary(b); err != nil {
		return err
	}
	p.W = &sparsevec.Matrix{D: st.W.D, K: st.W.K, Stride: st.W.Stride, Data: slices.Clone(st.W.Data)}
	p.scale, p.t, p.stats, p.asg = st.Scale, st.T, st.Stats, a
	return nil
}

// scores fills p.score with the true scores s·(W·x + b·W_0) of x and
// returns the face with the highest score (lowest index on ties).
func (p *polytope) scores(x *sparsevec.Vector) int {
	return p.W.ScoresArgmax(p.score, x, float32(p.scale), p.bias)
}

// Step performs one SGD step of Algorithm 1 on row x. positive says whether
// x carries the outer label (lives outside the polytope); id identifies the
// row for ASSIGN's dictionary (stable across epochs). It does not allocate
// unless x has a feature index beyond W's rows or id is beyond the reserved
// dictionary.
func (p *polytope) Step(x sparsevec.Vector, positive bool, id int) { p.step(&x, positive, id) }

// step is Step with the row by pointer, as the step loops call it: a
// Vector is six words, and passed by value down the step's calls it would
// be copied through memory at each (see sparsevec.Matrix.ScoresArgmax).
func (p *polytope) step(x *sparsevec.Vector, positive bool, id int) {
	if n := len(x.Idx); n > 0 && int(x.Idx[n-1]) >= p.W.D {
		p.W.Grow(int(x.Idx[n-1]) + 1)
	}
	face, a := p.update(p.scores(x), positive, id)
	switch face {
	case noUpdate:
		return
	case outerUpdate:
		p.W.AddOuter(p.coef, x)
	default:
		p.W.AddToFace(face, a, *x)
	}
	p.updateBias(positive, face, a)
}

// stepCoded is Step on a compact row, read without decoding it: the same
// operations in the same order, so the same weights bit for bit.
func (p *polytope) stepCoded(x *sparsevec.CodedRow, positive bool, id int) {
	if n := len(x.Idx); n > 0 && int(x.Idx[n-1]) >= p.W.D {
		p.W.Grow(int(x.Idx[n-1]) + 1)
	}
	z := p.W.ScoresArgmaxCoded(p.score, x, float32(p.scale), p.bias)
	face, a := p.update(z, positive, id)
	switch face {
	case noUpdate:
		return
	case outerUpdate:
		p.W.AddOuterCoded(p.coef, x)
	default:
		p.W.AddToFaceCoded(face, a, x)
	}
	p.updateBias(positive, face, a)
}

// The updates of W by x that update returns besides a face.
const (
	noUpdate    = -1 // W is not changed by x
	outerUpdate = -2 // W += x·coef (AddOuter)
)

// update is the part of a step that does not read x: given z, the argmax
// of the scores of x in p.score, it advances the step counter and the lazy
// scale, gathers the loss statistics and returns the update of W by x:
// noUpdate, outerUpdate (coefficients in p.coef), or a face that gets a·x.
// The caller applies it and then updateBias.
func (p *polytope) update(z int, positive bool, id int) (face int, a float32) {
	p.t++
	// W_{t+1} = (1 - η_t λ) W_t + η_t g_t, with 1 - η_t λ = 1 - 1/t;
	// η_t (eta) is computed only on the steps that update.
	if p.t == 1 {
		p.W.Zero()
		p.scale = 1
	} else {
		p.scale *= 1 - 1/float64(p.t)
		if p.scale < foldBelow {
			p.fold()
		}
	}
	k := p.W.K
	sc := p.score[:k]
	st := &p.stats
	if !positive {
		st.Neg++
		if sc[z] <= -1 {
			// sc[z] is the highest score that is not NaN (see
			// ScoresArgmax): no face has a positive hinge loss.
			return noUpdate, 0
		}
		a := float32(-p.costRatio * p.eta() / p.scale)
		c := p.coef[:k]
		n, last := 0, 0
		for j, v := range sc {
			if v > -1 {
				st.NegLoss += float64(1 + v)
				c[j] = a
				n++
				last = j
			} else {
				c[j] = 0
			}
		}
		switch n {
		case 0:
			return noUpdate, 0
		case 1:
			return last, a
		}
		return outerUpdate, a
	}
	st.Pos++
	if sc[z] >= 1 {
		return noUpdate, 0
	}
	z = p.asg.Assign(p.score, id)
	st.PosLoss += float64(1 - sc[z])
	return z, float32(p.eta() / p.scale)
}

// updateBias applies the bias part of update's update (face, a), after
// the part that reads x: the bias row W_0 gets the same coefficients times
// the bias value, p.coef for a negative row (every face, also for a single
// face), a on the assigned face for a positive one.
func (p *polytope) updateBias(positive bool, face int, a float32) {
	if !positive {
		row0 := p.W.Row(0)[:p.W.K]
		for j, c := range p.coef[:p.W.K] {
			row0[j] += c * p.bias
		}
	} else {
		p.W.Row(0)[face] += a * p.bias
	}
	p.stats.Updates++
}

// eta returns the step size η_t = 1/(λt) of step t.
func (p *polytope) eta() float64 { return 1 / (p.lambda * float64(p.t)) }

// fold multiplies the lazy scale into the stored weights.
func (p *polytope) fold() {
	if p.scale != 1 {
		p.W.Scale(float32(p.scale))
		p.scale = 1
	}
}

// Weights folds the lazy scale and returns the true weight matrix (owned by
// p; it stays valid until the next Step).
func (p *polytope) Weights() *sparsevec.Matrix {
	p.fold()
	return p.W
}

// Steps returns the number of SGD steps taken.
func (p *polytope) Steps() int64 { return p.t }

// Assigner returns the polytope's ASSIGN state.
func (p *polytope) Assigner() *assign.Assigner { return p.asg }

// Score returns f(x) = max_k W_k x of the current weights.
func (p *polytope) Score(x sparsevec.Vector) float32 {
	if n := len(x.Idx); n > 0 && int(x.Idx[n-1]) >= p.W.D {
		x = x.Below(p.W.D)
	}
	z := p.scores(&x)
	return p.score[z]
}

// takeStats returns and resets the loss statistics.
func (p *polytope) takeStats() stepStats {
	s := p.stats
	p.stats = stepStats{}
	return s
}
