package polyceptron

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// Config holds the hyperparameters of the online and batch
// Polyceptron. The zero value is usable: every field documents its default.
type Config struct {
	// K is the number of hyperplanes. If 0, it defaults to 2.
	K int
	// Epochs is the number of passes of the online algorithm (the paper's
	// "# passes"); it stops earlier after a pass without a mistake.
	// If 0, it defaults to 100.
	Epochs int
	// Step is the step size: η of the batch update (paper section 4.2 uses
	// 0.1; the default) and of the online update (eq. 5 uses 1; the default
	// when Step is 0).
	Step float64
	// Gamma is the batch stopping threshold γ: training stops when the
	// summed gradient norm Σ_k ‖∇_k E_P‖ falls below it. If 0, it defaults
	// to 50 (paper section 4.2).
	Gamma float64
	// MaxIter bounds the batch iterations. If 0, it defaults to 1000.
	MaxIter int
	// Restarts is the number of seeded initialisations of the batch
	// algorithm. The run whose final weights make the fewest training
	// mistakes is kept, ties going to the smaller Polyceptron criterion
	// E_P. (E_P alone is scale-dependent, E_P(cΘ) = c·E_P(Θ), so it would
	// favour runs that stopped early with small weights.) If 0, it
	// defaults to 1.
	Restarts int
	// Pocket makes the batch algorithm return, when it stops at MaxIter
	// without meeting γ, the iterate with the fewest training mistakes
	// instead of the last one (Gallant's pocket, applied to Algorithm 1).
	// It is off by default: the paper returns the last iterate.
	Pocket bool
	// InitScale is the standard deviation of the Gaussian initial weights.
	// If 0, it defaults to 0.01.
	InitScale float64
	// Bias is the value of the constant feature of x̃ = (x, b). If 0, it
	// defaults to 1. Set NoBias for hyperplanes through the origin.
	Bias   float64
	NoBias bool
	// Lift is the feature map applied to every row (default linear.NoLift).
	Lift linear.Lift
	// Seed seeds the initial weights and the online row order.
	Seed uint64
	// Inside, if set, is the label of the class inside the polyhedron
	// (C_1, h(x) >= 0); by default it is the larger label.
	Inside *float32
}

func (c Config) withDefaults(batch bool) (Config, error) {
	c.K = cmp.Or(c.K, 2)
	c.Epochs = cmp.Or(c.Epochs, 100)
	if c.Step == 0 {
		c.Step = 1
		if batch {
			c.Step = 0.1
		}
	}
	c.Gamma = cmp.Or(c.Gamma, 50)
	c.MaxIter = cmp.Or(c.MaxIter, 1000)
	c.Restarts = cmp.Or(c.Restarts, 1)
	c.InitScale = cmp.Or(c.InitScale, 0.01)
	c.Bias = cmp.Or(c.Bias, 1)
	if c.NoBias {
		c.Bias = 0
	}
	switch {
	case c.K < 1 || c.K > 1<<16:
		return c, fmt.Errorf("K = %d, want 1 to 65536", c.K)
	case c.Epochs < 0, c.MaxIter < 0, c.Restarts < 0:
		return c, fmt.Errorf("epochs, iterations and restarts must be positive")
	case !(c.Step > 0) || math.IsInf(c.Step, 0):
		return c, fmt.Errorf("step = %v, want > 0", c.Step)
	case !(c.Gamma >= 0) || math.IsInf(c.Gamma, 0):
		return c, fmt.Errorf("gamma = %v, want >= 0", c.Gamma)
	case !(c.InitScale > 0) || math.IsInf(c.InitScale, 0):
		return c, fmt.Errorf("init scale = %v, want > 0", c.InitScale)
	case math.IsNaN(c.Bias) || math.IsInf(c.Bias, 0):
		return c, fmt.Errorf("bias = %v, want a finite value", c.Bias)
	case c.Lift != linear.NoLift && c.Lift != linear.LiftQuadratic:
		return c, fmt.Errorf("unknown lift %d", int(c.Lift))
	}
	return c, nil
}

// Polyceptron is a trained polyhedral classifier (Manwani & Sastry,
// "Polyceptron: A Polyhedral Learning Algorithm"):
//
//	h(x) = min_k w̃_k·x̃,   x̃ = (x, b) (eq. 1)
//
// and label Classes[0] (C_1, inside the polyhedron) when h(x) > 0. Note the
// sign convention: the positive class is inside (h = min), unlike CPM,
// whose positive (outer) class is outside (f = max).
//
// Both algorithms minimise the Polyceptron criterion (eq. 3)
//
//	E_P(Θ) = −Σ_n y_n h(x_n) 1{y_n h(x_n) < 0}.
//
// A row counts as a mistake, and drives an update, when y·h(x) <= 0, as in
// the perceptron (a zero score is no decision).
type Polyceptron struct {
	Online    bool
	Classes   []float32 // [inside label, outside label]
	Weights   *sparsevec.Matrix
	Bias      float32
	Lift      linear.Lift
	LiftIndex uint32
	Epochs    int // online: passes run; batch: iterations run
}

// Report summarises a Polyceptron run.
type Report struct {
	Epochs     int       // online: passes run; batch: iterations of the kept restart
	Mistakes   []int     // online: mistakes per pass; batch: training mistakes per iteration of the kept restart
	GradNorm   []float64 // batch: Σ_k ‖∇_k‖ per iteration of the kept restart
	Converged  bool      // online: a pass without mistakes; batch: the gradient norm fell below γ
	Criterion  float64   // E_P of the returned weights
	Restart    int       // batch: index of the kept restart
	Pocket     int       // batch: iteration whose weights were returned (Epochs: the last; earlier only with Pocket)
	Criteria   []float64 // batch: final E_P of every restart
	Errors     []float64 // batch: final training error of every restart
	Seconds    float64
	TrainError float64 // fraction of training rows misclassified by the returned weights
}

// TrainOnline runs the online Polyceptron (Algorithm 2): for
// each row, r = argmin_k w̃_k·x̃ (ties to the lowest k); on a mistake only
// face r moves, w̃_r ← w̃_r + η·y·x̃ (eq. 5, η = Step, 1 by default). Rows
// are visited in a fresh seeded permutation every pass, for up to Epochs
// passes or until a pass makes no mistake.
//
// The algorithm leaves the initial weights open; zero weights make every
// face tie, so we draw them from N(0, InitScale²) with the seed.
func TrainOnline(ctx context.Context, cfg Config, data *sparsevec.CSR) (*Polyceptron, *Report, error) {
	cfg, err := cfg.withDefaults(false)
	if err != nil {
		return nil, nil, fmt.Errorf("polyceptron: online: %w", err)
	}
	classes, err := binaryLabels(data, cfg.Inside)
	if err != nil {
		return nil, nil, fmt.Errorf("polyceptron: online: %w", err)
	}
	start := time.Now()
	m := linear.New(data.Dim, cfg.K, float32(cfg.Bias), cfg.Lift)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6f6e6c696e65))
	initWeights(m.W, rng, cfg.InitScale)
	ys := signs(data, classes)
	order := linear.NewEpochOrder(data.Rows(), cfg.Seed, 0x706f6c796f6e)
	eta := float32(cfg.Step)
	rep := &Report{}
	for rep.Epochs < cfg.Epochs {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("polyceptron: online: %w", err)
		}
		mistakes := 0
		for _, r := range order.Next() {
			x := m.Prepare(data.Row(int(r)))
			s := m.Scores(x)
			k := minFace(s)
			if ys[r]*s[k] <= 0 {
				m.Add(k, eta*ys[r], x)
				mistakes++
			}
		}
		rep.Epochs++
		rep.Mistakes = append(rep.Mistakes, mistakes)
		if mistakes == 0 {
			rep.Converged = true
			break
		}
	}
	if err := linear.FiniteWeights(m.W); err != nil {
		return nil, nil, fmt.Errorf("polyceptron: online: %w", err)
	}
	rep.Criterion, rep.TrainError = criterion(m, data, ys)
	rep.Seconds = time.Since(start).Seconds()
	return &Polyceptron{Online: true, Classes: classes, Weights: m.W, Bias: m.Bias,
		Lift: m.Lift, LiftIndex: m.LiftIndex, Epochs: rep.Epochs}, rep, nil
}

// TrainBatch runs the batch Polyceptron (Algorithm 1), an
// alternating minimisation of E_P: with the sets
//
//	S_k = {x_n : k = argmin_j w̃_j·x̃_n}   (ties to the lowest k)
//
// held fixed, E_P is a sum of K perceptron criteria, and each face takes
// one gradient step on its own set,
//
//	w̃_k ← w̃_k + η·g_k,   g_k = Σ_{x_n ∈ S_k, y_n w̃_k·x̃_n <= 0} y_n x̃_n,
//
// after which the sets are recomputed. Two places where we follow the
// paper's text rather than its printed pseudo-code:
//
//   - The printed while-condition loops while Σ_k ‖g_k‖ < γ, which would
//     stop at once from any start with a large gradient. The text says the
//     algorithm stops "if the sum of the norms of gradients ... is less
//     than a threshold γ"; we stop when Σ_k ‖g_k‖ < γ, or after MaxIter
//     iterations.
//   - The printed update and stop sum y_n x̃_n over all of S_k; the
//     gradient of E_P (eq. 4, the text's "t_n") only has the misclassified
//     points of S_k, which is what we sum, augmented x̃ included.
//
// Initial weights are drawn from N(0, InitScale²); with Restarts > 1 each
// restart draws its own and the one with the fewest training mistakes
// (then the smallest E_P) is kept.
func TrainBatch(ctx context.Context, cfg Config, data *sparsevec.CSR) (*Polyceptron, *Report, error) {
	cfg, err := cfg.withDefaults(true)
	if err != nil {
		return nil, nil, fmt.Errorf("polyceptron: batch: %w", err)
	}
	classes, err := binaryLabels(data, cfg.Inside)
	if err != nil {
		return nil, nil, fmt.Errorf("polyceptron: batch: %w", err)
	}
	start := time.Now()
	ys := signs(data, classes)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6261746368))
	var (
		best    *linear.Machine
		bestRep *Report
		crit    []float64
		errs    []float64
	)
	for r := range cfg.Restarts {
		m, rep, err := batchRun(ctx, cfg, data, ys, rng)
		if err != nil {
			return nil, nil, fmt.Errorf("polyceptron: batch: %w", err)
		}
		crit = append(crit, rep.Criterion)
		errs = append(errs, rep.TrainError)
		if best == nil || rep.TrainError < bestRep.TrainError || (rep.TrainError == bestRep.TrainError && rep.Criterion < bestRep.Criterion) {
			best, bestRep = m, rep
			bestRep.Restart = r
		}
	}
	bestRep.Criteria, bestRep.Errors = crit, errs
	bestRep.Seconds = time.Since(start).Seconds()
	return &Polyceptron{Classes: classes, Weights: best.W, Bias: best.Bias,
		Lift: best.Lift, LiftIndex: best.LiftIndex, Epochs: bestRep.Epochs}, bestRep, nil
}

// batchRun is one restart of the batch Polyceptron.
func batchRun(ctx context.Context, cfg Config, data *sparsevec.CSR, ys []float32, rng *rand.Rand) (*linear.Machine, *Report, error) {
	m := linear.New(data.Dim, cfg.K, float32(cfg.Bias), cfg.Lift)
	initWeights(m.W, rng, cfg.InitScale)
	grad := linear.New(data.Dim, cfg.K, float32(cfg.Bias), cfg.Lift)
	norms := make([]float64, cfg.K)
	rep := &Report{}
	var pocket *sparsevec.Matrix
	pocketMistakes, pocketIter := math.MaxInt, 0
	for rep.Epochs < cfg.MaxIter {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		// Gradient of E_P with the sets S_k of the current weights.
		grad.W.Zero()
		mistakes := 0
		for r := range data.Rows() {
			x := m.Prepare(data.Row(r))
			s := m.Scores(x)
			k := minFace(s)
			if ys[r]*s[k] <= 0 {
				grad.Add(k, ys[r], x)
				mistakes++
			}
		}
		total := faceNorms(norms, grad.W)
		if cfg.Pocket && mistakes < pocketMistakes {
			if pocket == nil {
				pocket = sparsevec.NewMatrix(m.W.D, m.W.K)
			}
			copy(pocket.Data, m.W.Data)
			pocketMistakes, pocketIter = mistakes, rep.Epochs
		}
		rep.Mistakes = append(rep.Mistakes, mistakes)
		rep.GradNorm = append(rep.GradNorm, total)
		if total < cfg.Gamma {
			rep.Converged = true
			break
		}
		axpy(m.W, float32(cfg.Step), grad.W)
		rep.Epochs++
	}
	if err := linear.FiniteWeights(m.W); err != nil {
		return nil, nil, err
	}
	rep.Criterion, rep.TrainError = criterion(m, data, ys)
	rep.Pocket = rep.Epochs
	if pocket != nil && !rep.Converged && float64(pocketMistakes) < rep.TrainError*float64(data.Rows()) {
		// An earlier iterate beats the last one (which Mistakes does not
		// cover: the loop scores weights before updating them).
		m.W, rep.Pocket = pocket, pocketIter
		rep.Criterion, rep.TrainError = criterion(m, data, ys)
	}
	return m, rep, nil
}

// faceNorms sets norms[k] = ‖column k of g‖ and returns their sum.
func faceNorms(norms []float64, g *sparsevec.Matrix) float64 {
	clear(norms)
	for j := range g.D {
		for k, v := range g.Row(j)[:g.K] {
			norms[k] += float64(v) * float64(v)
		}
	}
	total := 0.0
	for k := range norms {
		norms[k] = math.Sqrt(norms[k])
		total += norms[k]
	}
	return total
}

// axpy performs w += a·g over whole matrices of the same shape.
func axpy(w *sparsevec.Matrix, a float32, g *sparsevec.Matrix) {
	gd := g.Data[:len(w.Data)]
	for i, v := range gd {
		w.Data[i] += a * v
	}
}

// criterion returns E_P and the training error fraction of m on data.
func criterion(m *linear.Machine, data *sparsevec.CSR, ys []float32) (ep, errRate float64) {
	wrong := 0
	for r := range data.Rows() {
		s := m.Scores(m.Prepare(data.Row(r)))
		h := s[minFace(s)]
		if yh := float64(ys[r] * h); yh <= 0 {
			ep -= yh
			wrong++
		}
	}
	return ep, float64(wrong) / float64(max(data.Rows(), 1))
}

// initWeights fills the real columns of w with N(0, scale²) draws.
func initWeights(w *sparsevec.Matrix, rng *rand.Rand, scale float64) {
	for j := range w.D {
		row := w.Row(j)
		for k := range w.K {
			row[k] = float32(scale * rng.NormFloat64())
		}
	}
}

// binaryLabels returns [first, other] for two-label data, first being the
// given label or by default the larger one; more labels are an error.
func binaryLabels(data *sparsevec.CSR, first *float32) ([]float32, error) {
	classes, multi, err := linear.Classes(data, nil)
	if err != nil {
		return nil, err
	}
	if multi {
		return nil, fmt.Errorf("the data has %d labels; the Polyceptron is binary (positive inside, negative outside)", len(classes))
	}
	if first != nil {
		switch *first {
		case classes[0]:
		case classes[1]:
			classes[0], classes[1] = classes[1], classes[0]
		default:
			return nil, fmt.Errorf("label %v is not in the data (labels %v and %v)", *first, classes[1], classes[0])
		}
	}
	return classes, nil
}

// signs returns y = +1 for rows labelled classes[0] and -1 otherwise.
func signs(data *sparsevec.CSR, classes []float32) []float32 {
	ys := make([]float32, data.Rows())
	for r, y := range data.Labels {
		ys[r] = -1
		if y == classes[0] {
			ys[r] = 1
		}
	}
	return ys
}

// Name returns the learner name of p: "polyceptron-online" or
// "polyceptron-batch".
func (p *Polyceptron) Name() string {
	if p.Online {
		return Online
	}
	return Batch
}

// Model converts p to the shared model file: one D×K matrix, faces in
// columns, bias weights in row 0, Classes = [inside, outside].
func (p *Polyceptron) Model() *model.Model {
	return &model.Model{
		Learner: p.Name(), Sides: 1, K: p.Weights.K, D: p.Weights.D,
		Bias: float64(p.Bias), Iterations: int64(p.Epochs),
		Classes: slices.Clone(p.Classes),
		Params:  linear.LiftParams(p.Lift, p.LiftIndex),
		Weights: []*sparsevec.Matrix{p.Weights},
	}
}

// minFace returns the index of the smallest score, ties to the lowest index.
func minFace(s []float32) int {
	best := 0
	for k := 1; k < len(s); k++ {
		if s[k] < s[best] {
			best = k
		}
	}
	return best
}
