package plume

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/polyhedral/cpm/sparsevec"
)

// Report summarises a Train run.
type Report struct {
	// Iterations is the number of EM iterations (M-steps) of the kept
	// restart.
	Iterations int
	// LogLik holds the log-likelihood L = Σ_n log p(y_n | x_n) of the kept
	// restart (minus the penalty when Lambda > 0): LogLik[0] at the initial
	// weights, LogLik[i] after i EM iterations. It never decreases by more
	// than rounding.
	LogLik []float64
	// Converged reports that EM stopped on the Epsilon test rather than
	// at MaxIter.
	Converged bool
	// Restart is the index of the kept restart; Finals holds the final
	// log-likelihood of every restart.
	Restart int
	Finals  []float64
	// Seconds is the wall time of Train.
	Seconds float64
	// TrainError is the fraction of training rows the returned model
	// mislabels.
	TrainError float64
}

// Stream of the initial-weight PCG, so that other uses of Seed in the
// project do not draw the same numbers.
const initStream = 0x706c756d65 // "plume"

// Train fits PLUME (or SPLA1 with cfg.Hard) to data by EM (Algorithm 1);
// see the package documentation. The data must have exactly two labels;
// rows' feature indices are 1-based (row 0 of the weights is the bias).
// Train is deterministic: the same data, config and seed give the same
// weights. It returns an error wrapping ErrConfig, ErrData, ErrTooLarge,
// ErrDiverged or ctx's error.
func Train(ctx context.Context, cfg Config, data *sparsevec.CSR) (*Model, *Report, error) {
	start := time.Now()
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, fmt.Errorf("plume: %w", err)
	}
	classes, err := checkData(data, cfg.Inside)
	if err != nil {
		return nil, nil, fmt.Errorf("plume: %w", err)
	}
	d := max(data.Dim, 1)
	if int64(d)*int64(sparsevec.StrideFor(cfg.K)) > MaxWeights {
		return nil, nil, fmt.Errorf("plume: %w: %d features × %d experts exceeds %d weights", ErrTooLarge, d, cfg.K, MaxWeights)
	}
	p := d * cfg.K
	switch {
	case cfg.MStep == Newton && p > cfg.MaxNewtonParams:
		return nil, nil, fmt.Errorf("plume: %w: the Newton M-step needs a dense %d×%d Hessian (dK = %d features incl. bias × %d experts), more than MaxNewtonParams = %d; use MStep BFGS (up to %d) or GradientAscent",
			ErrTooLarge, p, p, d, cfg.K, cfg.MaxNewtonParams, MaxBFGSParams)
	case cfg.MStep == BFGS && p > MaxBFGSParams:
		return nil, nil, fmt.Errorf("plume: %w: the BFGS M-step needs a dense %d×%d inverse-Hessian estimate (dK = %d features incl. bias × %d experts), more than %d; use MStep GradientAscent",
			ErrTooLarge, p, p, d, cfg.K, MaxBFGSParams)
	}
	cfg.Epsilon = cmp.Or(cfg.Epsilon, defaultEpsilonPerRow*float64(data.Rows()))

	ys := signs(data, classes)
	obj := newObjective(data, ys, d, cfg.K, float32(cfg.Bias), cfg.Gamma, cfg.Hard, cfg.Lambda, cfg.MStep == Newton)
	rng := rand.New(rand.NewPCG(cfg.Seed, initStream))
	f := newFitter(obj, cfg)
	scratchC, scratchU := make([]float64, d), make([]float64, d)
	var (
		best    *sparsevec.Matrix
		bestRep *Report
		finals  []float64
	)
	for r := range cfg.Restarts {
		w := sparsevec.NewMatrix(d, cfg.K)
		initWeights(w, rng, data, ys, float32(cfg.Bias), scratchC, scratchU)
		rep, err := f.run(ctx, w)
		if err != nil {
			return nil, nil, fmt.Errorf("plume: %w", err)
		}
		final := rep.LogLik[len(rep.LogLik)-1]
		finals = append(finals, final)
		if best == nil || final > bestRep.LogLik[len(bestRep.LogLik)-1] {
			best, bestRep = w, rep
			bestRep.Restart = r
		}
	}
	bestRep.Finals = finals
	gamma := cfg.Gamma
	if cfg.Hard {
		gamma = math.Inf(1)
	}
	m := &Model{
		K: cfg.K, Gamma: gamma, Hard: cfg.Hard, Bias: float32(cfg.Bias),
		Classes: classes, W: best,
		MStep: cfg.MStep, Lambda: cfg.Lambda, Iterations: bestRep.Iterations,
	}
	pr := m.NewPredictor()
	wrong := 0
	for r, y := range data.Labels {
		if l, _, _ := pr.Predict(data.Row(r)); l != y {
			wrong++
		}
	}
	bestRep.TrainError = float64(wrong) / float64(data.Rows())
	bestRep.Seconds = time.Since(start).Seconds()
	return m, bestRep, nil
}

// defaultEpsilonPerRow is the default Epsilon per training row.
const defaultEpsilonPerRow = 5e-4

// initWeights seeds each face k between the mean c of the inside rows and
// an outside row x⁻ drawn uniformly with rng: the face is the
// perpendicular bisector of c and x⁻, with the inside on its positive side,
//
//	s_k(x) = (m_k − u_k·(x − c)) / σ_k,   u_k = (x⁻ − c)/‖x⁻ − c‖,
//
// m_k = ‖x⁻ − c‖/2 and σ_k the standard deviation of u_k·x over all rows,
// so scores start of order 1. Every face starts as the argmin for the rows
// beyond its outside row, facing actual data, which avoids most starts in
// which a face is argmin for no row (a dead face: the gate's weight and
// gradient for it vanish and EM cannot revive it). If x⁻ = c the direction
// is drawn uniformly on the sphere instead, with m_k = σ_k. Without a bias
// feature (b = 0) the offset is dropped. c and u are D-long scratch.
func initWeights(w *sparsevec.Matrix, rng *rand.Rand, data *sparsevec.CSR, ys []float64, bias float32, c, u []float64) {
	n := data.Rows()
	clear(c)
	var outside []int32
	for r := range n {
		if ys[r] < 0 {
			outside = append(outside, int32(r))
			continue
		}
		x := data.Row(r)
		for i, j := range x.Idx {
			c[j] += float64(x.Val[i])
		}
	}
	for j := range c {
		c[j] /= float64(n - len(outside))
	}
	for k := range w.K {
		copy(u, c)
		for j := range u {
			u[j] = -u[j]
		}
		x := data.Row(int(outside[rng.IntN(len(outside))]))
		for i, j := range x.Idx {
			u[j] += float64(x.Val[i])
		}
		u[0] = 0
		nu := math.Sqrt(dot(u, u))
		margin := nu / 2
		if !(nu > 1e-12) {
			for j := 1; j < len(u); j++ {
				u[j] = rng.NormFloat64()
			}
			nu, margin = math.Sqrt(dot(u, u)), -1
		}
		if !(nu > 0) {
			nu = 1 // D = 1: no features, bias only
		}
		for j := range u {
			u[j] /= nu
		}
		var mean, sq float64
		for r := range n {
			t := sparsevec.DotDense(data.Row(r), u)
			mean += t
			sq += t * t
		}
		mean /= float64(n)
		sd := math.Sqrt(max(sq/float64(n)-mean*mean, 0))
		if !(sd > 1e-12) {
			sd = 1
		}
		if margin < 0 {
			margin = sd
		}
		uc := dot(u, c)
		for j := 1; j < len(u); j++ {
			w.Set(j, k, float32(-u[j]/sd))
		}
		w.Set(0, k, 0)
		if bias != 0 {
			w.Set(0, k, float32((margin+uc)/(sd*float64(bias))))
		}
	}
}

// fitter runs EM from given initial weights. It holds every buffer of a
// run, reused across restarts.
type fitter struct {
	o      *objective
	cfg    Config
	trial  *sparsevec.Matrix
	theta  []float64 // flattened weights, for BFGS
	grad   []float64
	dir    []float64
	newton *newtonSolver
	bfgs   *bfgsState
}

func newFitter(o *objective, cfg Config) *fitter {
	f := &fitter{
		o: o, cfg: cfg,
		trial: sparsevec.NewMatrix(o.d, o.k),
		grad:  make([]float64, o.p),
		dir:   make([]float64, o.p),
	}
	switch cfg.MStep {
	case Newton:
		f.newton = newNewtonSolver(o.p, f.dir, f.grad)
	case BFGS:
		f.bfgs = newBFGS(o.p)
		f.theta = make([]float64, o.p)
	}
	return f
}

// negHess returns the Hessian buffer the passes fill, or nil.
func (f *fitter) negHess() []float64 {
	if f.newton == nil {
		return nil
	}
	return f.newton.h
}

// run performs EM from the weights in w, leaving the result in w.
func (f *fitter) run(ctx context.Context, w *sparsevec.Matrix) (*Report, error) {
	o, cfg := f.o, f.cfg
	rep := &Report{}
	if f.bfgs != nil {
		f.bfgs.reset()
	}
	gaStep := 0.0 // GA: start of the next line search (0: not yet set)
	prev := math.Inf(-1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// E-step at Θᶜ = w: π, L(Θᶜ), Q(Θᶜ, Θᶜ), and g = ∇Q(Θᶜ, Θᶜ) = ∇L(Θᶜ).
		l, q := o.pass(w, eStep, f.grad, f.negHess())
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return nil, fmt.Errorf("%w: log-likelihood %v after %d EM iterations", ErrDiverged, l, rep.Iterations)
		}
		rep.LogLik = append(rep.LogLik, l)
		if rep.Iterations > 0 && l-prev < cfg.Epsilon {
			rep.Converged = true
			break
		}
		if rep.Iterations == cfg.MaxIter {
			break
		}
		prev = l
		rep.Iterations++
		// M-step: InnerIter ascent steps on Q(·, Θᶜ); for SPLA1 the line
		// search judges steps by L itself.
		fval := q
		if o.hard {
			fval = l
		}
		for inner := range cfg.InnerIter {
			if inner > 0 {
				lv, qv := o.pass(w, atPi, f.grad, f.negHess())
				fval = qv
				if o.hard {
					fval = lv
				}
			}
			var ok bool
			fval, ok = f.step(w, fval, &gaStep)
			if !ok {
				break
			}
		}
	}
	if err := finite(w); err != nil {
		return nil, err
	}
	return rep, nil
}

// step takes one ascent step from w, whose line-search value is f0 and
// whose gradient is in f.grad (and −Hessian in f.newton.h), leaving the new
// weights in w. It returns the new value and whether a step was taken.
func (f *fitter) step(w *sparsevec.Matrix, f0 float64, gaStep *float64) (float64, bool) {
	gnorm := norm(f.grad)
	if gnorm == 0 || math.IsNaN(gnorm) || math.IsInf(gnorm, 0) {
		return f0, false
	}
	switch f.cfg.MStep {
	case GradientAscent:
		copy(f.dir, f.grad)
		if *gaStep == 0 {
			*gaStep = 1 / gnorm // a first trial step of unit length
		}
		alpha, fv, ok := f.lineSearch(w, f0, *gaStep)
		if ok {
			*gaStep = 2 * alpha
		}
		return fv, ok
	case Newton:
		if f.newton.direction() {
			if _, fv, ok := f.lineSearch(w, f0, 1); ok {
				return fv, true
			}
		}
	case BFGS:
		flatten(f.theta, w)
		f.bfgs.observe(f.theta, f.grad)
		alpha := 1.0
		if !f.bfgs.updated {
			alpha = 1 / gnorm
		}
		f.bfgs.direction(f.dir, f.grad)
		if _, fv, ok := f.lineSearch(w, f0, alpha); ok {
			return fv, true
		}
		// B has gone bad: start it afresh.
		f.bfgs.reset()
		f.bfgs.observe(f.theta, f.grad)
	}
	// Fall back to a gradient step.
	copy(f.dir, f.grad)
	_, fv, ok := f.lineSearch(w, f0, 1/gnorm)
	return fv, ok
}

// lineSearch backtracks from step alpha along f.dir until the Armijo
// condition f(w + α·dir) >= f0 + c₁·α·gᵀdir holds, and then moves w there.
// It fails when the direction is not an ascent direction, when the step
// no longer changes the float32 weights, or after maxBacktrack halvings;
// w is then unchanged.
func (f *fitter) lineSearch(w *sparsevec.Matrix, f0, alpha float64) (float64, float64, bool) {
	slope := dot(f.grad, f.dir)
	if !(slope > 0) || math.IsInf(slope, 0) {
		return 0, f0, false
	}
	k, st := w.K, w.Stride
	for range maxBacktrack {
		changed := false
		for j := range w.D {
			src := w.Data[j*st : j*st+k]
			dst := f.trial.Data[j*st : j*st+k]
			d := f.dir[j*k : (j+1)*k]
			for i, v := range src {
				nv := float32(float64(v) + alpha*d[i])
				dst[i] = nv
				changed = changed || nv != v
			}
		}
		if !changed {
			return 0, f0, false
		}
		fv := f.o.lineValue(f.trial)
		if fv >= f0+armijo*alpha*slope && !math.IsInf(fv, 0) {
			copy(w.Data, f.trial.Data)
			return alpha, fv, true
		}
		alpha *= shrink
	}
	return 0, f0, false
}

// flatten sets dst[j·K+k] = W[j][k].
func flatten(dst []float64, w *sparsevec.Matrix) {
	for j := range w.D {
		for k, v := range w.Row(j)[:w.K] {
			dst[j*w.K+k] = float64(v)
		}
	}
}

func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }

// finite reports an ErrDiverged error if a weight is not finite.
func finite(w *sparsevec.Matrix) error {
	for _, v := range w.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%w: a weight is %v; scale the features down or set Lambda", ErrDiverged, v)
		}
	}
	return nil
}
