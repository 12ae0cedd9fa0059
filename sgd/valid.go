package sgd

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/polyhedral/cpm/sparsevec"
)

// Validation configures held-out evaluation during training and early
// stopping; the zero value evaluates nothing.
//
// Every Every steps (and after the last step) each polytope is scored on
// the validation rows of its own binary problem: for a binary machine the
// rows labelled outer are positives and every other row a negative; for the
// pair (a, b) of a one-vs-one machine only the rows labelled a or b count.
// The polytope predicts positive when f(x) = max_k W_k·x > 0 (Kantchelian
// et al., NIPS 2014, section 2), and its validation error is the fraction
// of those rows it gets wrong. Each polytope of a double-sided or
// one-vs-one model is judged and stopped on its own problem, as each
// binary classifier of a one-vs-rest model is in scikit-learn's
// SGDClassifier: the polytopes train independently and in parallel, so a
// model-level error would need them to wait for one another.
type Validation struct {
	// Data holds the validation rows (labels as in the training data). Nil
	// disables validation; the other fields then must be zero.
	Data *sparsevec.CSR
	// Every is the number of SGD steps between evaluations. If 0, it is
	// Config.ProgressEvery.
	Every int64
	// Patience, if > 0, stops a polytope after Patience evaluations in a row
	// without a strictly lower validation error, and every polytope keeps
	// the weights of its evaluation with the lowest error (the earliest of
	// equals). With 0 training runs its full Iterations and keeps the last
	// weights: the errors are only reported.
	Patience int
}

// validSet is one task's validation problem.
type validSet struct {
	data  *sparsevec.CSR
	rows  []int32 // the rows of the problem; nil: every row
	outer float32
}

// newValidSet returns the validation problem of a task whose positives are
// labelled outer; with pair set only rows labelled pair[0] or pair[1] take
// part. It returns nil without validation data.
func newValidSet(data *sparsevec.CSR, outer float32, pair *[2]float32) *validSet {
	if data == nil {
		return nil
	}
	v := &validSet{data: data, outer: outer}
	if pair != nil {
		v.rows = []int32{}
		for r, y := range data.Labels {
			if y == pair[0] || y == pair[1] {
				v.rows = append(v.rows, int32(r))
			}
		}
	}
	return v
}

// swapped returns the problem of the other side of the same rows: the
// rows labelled outer are its positives. The row list is shared.
func (v *validSet) swapped(outer float32) *validSet {
	if v == nil {
		return nil
	}
	w := *v
	w.outer = outer
	return &w
}

// checkValidLabels returns an error naming the first validation row (if
// any) whose label is not one of the training classes.
func checkValidLabels(data *sparsevec.CSR, classes []float32) error {
	if data == nil {
		return nil
	}
	for r, y := range data.Labels {
		if !slices.Contains(classes, y) {
			return fmt.Errorf("sgd: validation row %d has label %v, which the training labels %v do not include", r+1, y, classes)
		}
	}
	return nil
}

// len returns the number of rows of the problem.
func (v *validSet) len() int {
	if v.rows != nil {
		return len(v.rows)
	}
	return v.data.Rows()
}

// errorOf returns the fraction of the problem's rows that p misclassifies,
// or NaN for a problem without rows. Features beyond p's weight rows have
// zero weight. It does not allocate.
func (v *validSet) errorOf(p *polytope) float64 {
	n := v.len()
	if n == 0 {
		return math.NaN()
	}
	wrong := 0
	for i := range n {
		r := i
		if v.rows != nil {
			r = int(v.rows[i])
		}
		x := v.data.Row(r)
		if k := len(x.Idx); k > 0 && int(x.Idx[k-1]) >= p.W.D {
			cut := sort.Search(k, func(j int) bool { return int(x.Idx[j]) >= p.W.D })
			x = sparsevec.Vector{Idx: x.Idx[:cut], Val: x.Val[:cut]}
		}
		best := p.scores(&x)
		if (p.score[best] > 0) != (v.data.Labels[r] == v.outer) {
			wrong++
		}
	}
	return float64(wrong) / float64(n)
}

// stopper tracks a task's validation errors and, with patience, the best
// weights seen.
type stopper struct {
	v        *validSet
	every    int64
	patience int

	last     float64 // the latest error
	best     float64 // the lowest error (+Inf before the first evaluation)
	bestDone int64   // steps done at the best evaluation
	since    int     // evaluations since the best

	// The polytope at the best evaluation (with patience only).
	w     []float32 // W.Data[:d·Stride]
	d     int
	k     int // W.K and W.Stride
	st    int
	scale float64
	t     int64
	kept  keptStats
}

func newStopper(v *validSet, cfg Config) *stopper {
	if v == nil {
		return nil
	}
	return &stopper{v: v, every: cfg.Valid.Every, patience: cfg.Valid.Patience, last: math.NaN(), best: math.Inf(1)}
}

// limit caps a chunk of n steps starting after done steps so that it ends
// at the next evaluation.
func (s *stopper) limit(done, n int64) int64 {
	return min(n, s.every-done%s.every)
}

// due reports whether an evaluation is due after done of total steps.
func (s *stopper) due(done, total int64) bool {
	return done%s.every == 0 || done == total
}

// eval scores p after done steps, keeps a copy of it if it is the best so
// far and patience is set, and reports whether training should stop.
// A problem without rows (NaN error) never improves and never stops.
func (s *stopper) eval(p *polytope, done int64) (stop bool) {
	e := s.v.errorOf(p)
	s.last = e
	if math.IsNaN(e) {
		return false
	}
	if e < s.best {
		s.best, s.bestDone, s.since = e, done, 0
		if s.patience > 0 {
			n := p.W.D * p.W.Stride
			s.w = append(s.w[:0], p.W.Data[:n]...)
			s.d, s.k, s.st, s.scale, s.t = p.W.D, p.W.K, p.W.Stride, p.scale, p.t
			s.kept.Counts = append(s.kept.Counts[:0], p.asg.Counts()...)
			s.kept.Entropy = p.asg.Entropy()
		}
		return false
	}
	s.since++
	return s.patience > 0 && s.since >= s.patience
}

// keepBest puts the best polytope seen back into p (with patience and at
// least one evaluation), and reports whether it did.
func (s *stopper) keepBest(p *polytope) bool {
	if s.patience == 0 || s.w == nil || s.t == p.t {
		return false
	}
	p.W = &sparsevec.Matrix{D: s.d, K: p.W.K, Stride: p.W.Stride, Data: s.w}
	p.scale, p.t = s.scale, s.t
	p.kept = &s.kept
	s.w = nil
	return true
}

// stopped reports whether early stopping has ended training.
func (s *stopper) stopped() bool {
	return s != nil && s.patience > 0 && s.since >= s.patience
}

// state returns s's snapshot, or nil without early stopping.
func (s *stopper) state() *stopState {
	if s == nil || s.patience == 0 {
		return nil
	}
	st := &stopState{Best: s.best, BestDone: s.bestDone, Since: uint32(s.since), Last: s.last}
	if s.w != nil {
		st.W = &sparsevec.Matrix{D: s.d, K: s.k, Stride: s.st, Data: s.w}
		st.Scale, st.T, st.Kept = s.scale, s.t, s.kept
	}
	return st
}

// restore sets s to the snapshot st (copied).
func (s *stopper) restore(st *stopState) {
	s.best, s.bestDone, s.since, s.last = st.Best, st.BestDone, int(st.Since), st.Last
	if st.W != nil {
		s.w = slices.Clone(st.W.Data)
		s.d, s.k, s.st = st.W.D, st.W.K, st.W.Stride
		s.scale, s.t = st.Scale, st.T
		s.kept = keptStats{Counts: slices.Clone(st.Kept.Counts), Entropy: st.Kept.Entropy}
	}
}
