// Package learner gives every learner of the cpm tool one face: train by
// name (Train), predict with any saved model (NewPredictor), plug into
// cross-validation (Spec.Fit), read its command-line flags (AddFlags,
// Build) and describe its models to cpm inspect, plot and eval (Describe).
// The algorithms live in their own packages (sgd, perceptron, kperceptron,
// polyceptron, plume); each has one registration in this package (a
// registration value in its own file, listed once in registry.go) that maps
// names, flags, label conventions and seeds onto it. Nothing here switches
// on a learner's name.
//
// Two row maps apply to every learner: feature hashing (Spec.HashBits,
// --hash-bits; package featurehash) and feature scaling (Spec.Scale,
// --scale; package scale). Train hashes the training rows, fits the
// scaling on the hashed rows and stores both in the model; every
// predictor NewPredictor returns hashes, then scales, each raw row, and
// for a compact model (model.Model.Rows) maps its features into the
// stored rows, with scores bit for bit those of the dense model.
//
// Label conventions differ between the papers and are kept: CPM puts its
// outer label outside the polytope (f = max_k W_k x > 0), the Polyceptron,
// PLUME and SPLA1 put the positive class inside (h = min_k w_k·x > 0; PLUME
// when p(y=+1|x) > 1/2), perceptrons predict
// the positive label for a positive score. Every predictor returns the
// label itself, so predict and eval report labels the same way for all.
package learner

import (
	"context"
	"fmt"
	"time"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/featurehash"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// Spec names a learner and holds its configuration. The zero value
// trains a binary CPM with its defaults.
type Spec struct {
	Name string // one of Names(); "" means CPM

	// Config is the learner's configuration: a pointer to the config type
	// of its registration (*CPMConfig for CPM, *perceptron.Config,
	// *kperceptron.Config, *polyceptron.Config, *plume.Config). If nil,
	// the learner trains with its defaults. Train, WithSeed and WithK copy
	// it; they never change the value it points to.
	Config any

	// MaxMemory, if > 0, bounds the bytes of weights training allocates,
	// checked before it starts (error wrapping sgd.ErrMemoryLimit): for
	// CPM it is sgd.Config.MaxMemory when that is 0 (see
	// sgd.Config.MaxMemory); the perceptron, the Polyceptron, PLUME and
	// SPLA1 count their D×StrideFor(K) float32 weights twice (the weights
	// and a kept copy: the pocket, the best restart); the kernel
	// perceptron keeps support rows, not weights over features, and is not
	// checked. If 0, there is no limit.
	MaxMemory int64

	// Label, if set, picks the distinguished label of binary data: CPM's
	// outer label, the perceptrons' positive label, the Polyceptron's
	// inside label. By default it is the larger label.
	Label *float32

	// Scale is the feature scaling Train fits on its training rows and
	// stores in the model, so that the model takes raw rows (package
	// scale). "" means none; the cpm tool's default is scale.Auto.
	Scale scale.Mode

	// HashBits, if not 0, hashes every row's features into 2^HashBits
	// rows (package featurehash, seed 0) before the scaling is fitted; the
	// model stores the hashing and applies it to raw rows. 0 means none.
	HashBits int
}

// CPMConfig is the configuration of the CPM learner: the trainer's and
// whether multiclass data trains one-vs-one.
type CPMConfig struct {
	sgd.Config
	OvO bool // one-vs-one multiclass

	// DefaultLambda, when Lambda and C are both 0, sets λ = 1/n for the
	// n training rows instead of sgd's 1/T: the Pegasos objective
	// λ/2‖W‖² + (1/n)Σ hinge is then the SVM objective with C = 1, a
	// regularisation that holds whatever T is. The CPM paper's λ = 1/(C·T)
	// ties λ to the step budget, which suits its large sets (T of a few
	// epochs) and overfits a table of a few hundred rows trained for 10 M
	// steps (bench/RESULTS.md, "Defaults on raw data"). If Iterations is
	// also 0, T is 100 passes over the rows, within 1 M to 10 M steps, and
	// unless SingleSided the CPM is double-sided, as the CPM paper runs it
	// (section 5.1): a single polytope must enclose the inner label, and
	// when that class is not the convex one it cannot fit (Polyceptron
	// Dataset 1, positives inside three halfspaces: 80 % single-sided
	// around the negatives, 91.5 % double-sided). cpm train and cv set
	// DefaultLambda; the paper's figures and the authors' tool's runs are
	// reproduced with an explicit -C.
	DefaultLambda bool
	// SingleSided keeps one polytope under DefaultLambda.
	SingleSided bool
}

// CPM returns the CPM configuration of s, a CPM spec, creating it if
// Config is nil; it returns nil when s names another learner. The result
// points into s: changing it changes s and every copy of s made before.
func (s *Spec) CPM() *CPMConfig {
	if s.name() != CPM {
		return nil
	}
	if s.Config == nil {
		s.Config = &CPMConfig{}
	}
	c, _ := s.Config.(*CPMConfig)
	return c
}

// Report summarises a training run for logs and metrics.
type Report struct {
	Learner     string
	Seconds     float64
	Epochs      int  // passes or iterations run (online and batch learners)
	Converged   bool // the learner's own stopping rule fired before its limit
	Mistakes    int  // updates made (online learners)
	Hyperplanes int  // hyperplanes of the model (0 for the kernel perceptron)
	Support     int  // kernel perceptron: support rows kept
	TrainError  float64
	LogLik      []float64   // PLUME, SPLA1: log-likelihood after each EM iteration
	CPM         *sgd.Report // the CPM trainer's own report
	Scale       scale.Mode  // the scaling applied (none, or the mode Auto chose)

	// EpochMistakes holds, per pass or iteration, the updates of the
	// perceptron, kernel perceptron and online Polyceptron, and the
	// training mistakes of the batch Polyceptron's kept restart.
	EpochMistakes []int
	GradNorm      []float64 // batch Polyceptron: Σ_k ‖∇_k‖ per iteration of the kept restart
}

func (s Spec) name() string {
	if s.Name == "" {
		return CPM
	}
	return s.Name
}

// WithSeed returns s with the learner's seed set to seed. It panics if s
// names no learner.
func (s Spec) WithSeed(seed uint64) Spec {
	s.Config = mustLookup(s.name()).withSeed(s.Config, seed)
	return s
}

// WithK returns s with the number of faces (CPM), hyperplanes
// (Polyceptron) or experts set to k; learners without a K ignore it. It
// panics if s names no learner.
func (s Spec) WithK(k int) Spec {
	if l := mustLookup(s.name()); l.withK != nil {
		s.Config = l.withK(s.Config, k)
	}
	return s
}

// Train trains the learner s names on in-memory data. Data with more than
// two labels trains the multiclass form (CPM one-vs-one only with OvO; the
// perceptrons' all-together form); the Polyceptron refuses it.
func Train(ctx context.Context, s Spec, data *sparsevec.CSR) (*model.Model, *Report, error) {
	start := time.Now()
	p, err := s.prepare(data)
	if err != nil {
		return nil, nil, err
	}
	l, s, sc := p.l, p.s, p.sc
	rep := &Report{Learner: s.name()}
	m, err := l.train(ctx, s, p.data, rep)
	if err != nil {
		return nil, nil, err
	}
	if sc != nil {
		m.Scale = sc.Model()
	}
	m.Hash = HashingOf(p.h)
	rep.Scale = scale.None
	if sc != nil {
		rep.Scale = sc.Mode()
	}
	rep.Seconds = time.Since(start).Seconds()
	return m, rep, nil
}

// prepared is a run of Train before the learner trains: the learner, the
// spec with its config mapped, the scaler and hasher (nil: none) and the
// rows to train on, hashed and scaled.
type prepared struct {
	l    *registration
	s    Spec
	sc   *scale.Scaler
	h    *featurehash.Hasher
	data *sparsevec.CSR
}

// prepare is what Train does before the learner trains: it looks the
// learner up, checks s against it and data, hashes data (Spec.HashBits)
// and fits the scaling on the hashed rows; the learner's own rows (such as
// validation rows) are hashed and scaled alike.
func (s Spec) prepare(data *sparsevec.CSR) (*prepared, error) {
	l, ok := lookup(s.name())
	if !ok {
		return nil, fmt.Errorf("learner: unknown learner %q (want one of %v)", s.Name, Names())
	}
	if err := l.checkConfig(s.Config); err != nil {
		return nil, err
	}
	h, data, err := s.hashing(l, data)
	if err != nil {
		return nil, err
	}
	if err := s.checkMemory(l, data); err != nil {
		return nil, err
	}
	sc, data, err := s.scaler(l, data)
	if err != nil {
		return nil, err
	}
	if (sc != nil || h != nil) && l.rowsConfig != nil {
		s.Config = l.rowsConfig(s.Config, func(c *sparsevec.CSR) *sparsevec.CSR {
			if h != nil {
				c = h.Apply(c)
			}
			if sc != nil {
				c = sc.Apply(c)
			}
			return c
		})
	}
	return &prepared{l: l, s: s, sc: sc, h: h, data: data}, nil
}

// checkMemory refuses a run of the linear and mixture learners whose
// weights would exceed s.MaxMemory; see Spec.MaxMemory.
func (s Spec) checkMemory(l *registration, data *sparsevec.CSR) error {
	if s.MaxMemory <= 0 || l.weightColumns == nil {
		return nil
	}
	k := l.weightColumns(s.Config, data)
	if k < 1 {
		return nil // the learner refuses K itself
	}
	d := max(data.Dim, 1)
	need := 2 * float64(d) * float64(sparsevec.StrideFor(k)) * 4
	if need > float64(s.MaxMemory) {
		return fmt.Errorf("learner: %s with K = %d over %d feature rows needs %.0f bytes of weights (2 matrices of %d×%d float32), more than the memory limit of %d bytes: %w",
			s.name(), k, d, need, d, sparsevec.StrideFor(k), s.MaxMemory, sgd.ErrMemoryLimit)
	}
	return nil
}

// Predictor predicts one row with a trained model: its label, a decision
// score and a face (or class) index, -1 when the learner has none.
// Predictors hold scratch space: one per goroutine.
type Predictor interface {
	Predict(x sparsevec.Vector) (label, score float32, face int)
}

// NewPredictor returns a predictor for any valid model file. It applies
// the model's feature hashing, then its scaling, to each raw row, and maps
// the features of a compact model (model.Model.Rows) to its rows, so that
// the learner's predictor sees the rows its weights were trained on. It is
// a ClassScorer for a multiclass model, a Probabilist for a model with
// probabilities of its own (PLUME, SPLA1), and a ClassScorer, Probabilist
// and ClassProbabilist for a model with a Calibration (cpm train
// --calibrate), whose probabilities replace a learner's own.
func NewPredictor(m *model.Model) (Predictor, error) {
	ps, err := NewPredictors(m)
	if err != nil {
		return nil, err
	}
	return ps.New()
}

// Fit returns a cross-validation fit function training s with each fold's
// seed.
func (s Spec) Fit() cv.Fit {
	return func(ctx context.Context, train *sparsevec.CSR, seed uint64) (cv.Predictor, cv.FitInfo, error) {
		m, rep, err := Train(ctx, s.WithSeed(seed), train)
		if err != nil {
			return nil, cv.FitInfo{}, err
		}
		p, err := NewPredictor(m)
		if err != nil {
			return nil, cv.FitInfo{}, err
		}
		return labelOnly{p}, cv.FitInfo{Hyperplanes: float64(rep.Hyperplanes)}, nil
	}
}

type labelOnly struct{ p Predictor }

func (l labelOnly) Predict(x sparsevec.Vector) float32 {
	y, _, _ := l.p.Predict(x)
	return y
}

// IsMulticlass reports whether m predicts more than two labels.
func IsMulticlass(m *model.Model) bool { return m.OvO || m.Multiclass }

// KChoice is the cross-validated accuracy of one candidate K.
type KChoice struct {
	K      int
	Result *cv.Result
}

// SelectK cross-validates s on data for every K in ks with cfg and returns
// the K of the best mean accuracy (ties to the smaller K) and every
// candidate's result.
func SelectK(ctx context.Context, s Spec, data *sparsevec.CSR, ks []int, cfg cv.Config) (int, []KChoice, error) {
	if len(ks) == 0 {
		return 0, nil, fmt.Errorf("learner: no candidate K")
	}
	var out []KChoice
	best := -1
	for _, k := range ks {
		res, err := cv.Run(ctx, cfg, data, s.WithK(k).Fit())
		if err != nil {
			return 0, nil, fmt.Errorf("learner: selecting K, K=%d: %w", k, err)
		}
		out = append(out, KChoice{k, res})
		if b := len(out) - 1; best < 0 || res.AccuracyMean > out[best].Result.AccuracyMean ||
			(res.AccuracyMean == out[best].Result.AccuracyMean && k < out[best].K) {
			best = b
		}
	}
	return out[best].K, out, nil
}

// Probabilist is implemented by predictors that give class probabilities
// (PLUME, SPLA1, and every model with a Calibration): Proba returns
// p(y = Classes[0] | x).
type Probabilist interface {
	Proba(x sparsevec.Vector) float64
}
