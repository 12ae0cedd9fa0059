// Package learner gives every learner of the cpm tool one face: train by
// name (Train), predict with any saved model (NewPredictor), and plug into
// cross-validation (Spec.Fit). The algorithms live in package sgd; this
// package only maps names, label conventions and seeds onto them.
//
// Label conventions differ between the papers and are kept: CPM puts its
// outer label outside the polytope (f = max_k W_k x > 0), the Polyceptron,
// PLUME and SPLA1 put the positive class inside (h = min_k w_k·x > 0; PLUME
// when p(y=+1|x) > 1/2), perceptrons predict
// the positive label for a positive score. Every predictor returns the
// label itself, so predict and eval report labels the same way for all.
package learner

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/kperceptron"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/perceptron"
	"github.com/polyhedral/cpm/plume"
	"github.com/polyhedral/cpm/polyceptron"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// Learner names, as accepted by `cpm train --learner` and stored in model
// files.
const (
	CPM               = "cpm"
	Perceptron        = "perceptron"
	KernelPerceptron  = "kperceptron"
	PolyceptronOnline = "polyceptron-online"
	PolyceptronBatch  = "polyceptron-batch"
	PLUME             = "plume"
	SPLA1             = "spla1"
)

// Names returns the learner names in the order the CLI lists them.
func Names() []string {
	return []string{CPM, Perceptron, KernelPerceptron, PolyceptronOnline, PolyceptronBatch, PLUME, SPLA1}
}

// Spec names a learner and holds the configuration of every learner; only
// the one of Name is used. The zero value trains a binary CPM with its
// defaults.
type Spec struct {
	Name string // one of Names(); "" means CPM

	CPM         sgd.Config
	OvO         bool // CPM: one-vs-one multiclass
	Perceptron  perceptron.Config
	Kernel      kperceptron.Config
	Polyceptron polyceptron.Config
	PLUME       plume.Config // PLUME and SPLA1 (Hard is set by the name)

	// MaxMemory, if > 0, bounds the bytes of weights training allocates,
	// checked before it starts (error wrapping sgd.ErrMemoryLimit): for
	// CPM it is CPM.MaxMemory when that is 0 (see sgd.Config.MaxMemory);
	// the perceptron, the Polyceptron, PLUME and SPLA1 count their
	// D×StrideFor(K) float32 weights twice (the weights and a kept copy:
	// the pocket, the best restart); the kernel perceptron keeps support
	// rows, not weights over features, and is not checked. If 0, there is
	// no limit.
	MaxMemory int64

	// Label, if set, picks the distinguished label of binary data: CPM's
	// outer label, the perceptrons' positive label, the Polyceptron's
	// inside label. By default it is the larger label.
	Label *float32
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

	// EpochMistakes holds, per pass or iteration, the updates of the
	// perceptron, kernel perceptron and online Polyceptron, and the
	// training mistakes of the batch Polyceptron's kept restart.
	EpochMistakes []int
	GradNorm      []float64 // batch Polyceptron: Σ_k ‖∇_k‖ per iteration of the kept restart
}

// WithSeed returns s with every learner's seed set to seed.
func (s Spec) WithSeed(seed uint64) Spec {
	s.CPM.Seed, s.Perceptron.Seed, s.Kernel.Seed, s.Polyceptron.Seed, s.PLUME.Seed = seed, seed, seed, seed, seed
	return s
}

func (s Spec) name() string {
	if s.Name == "" {
		return CPM
	}
	return s.Name
}

// Train trains the learner s names on in-memory data. Data with more than
// two labels trains the multiclass form (CPM one-vs-one only with OvO; the
// perceptrons' all-together form); the Polyceptron refuses it.
func Train(ctx context.Context, s Spec, data *sparsevec.CSR) (*model.Model, *Report, error) {
	start := time.Now()
	rep := &Report{Learner: s.name()}
	if err := s.checkMemory(data); err != nil {
		return nil, nil, err
	}
	if s.CPM.MaxMemory == 0 {
		s.CPM.MaxMemory = s.MaxMemory
	}
	var m *model.Model
	switch s.name() {
	case CPM:
		var (
			r   *sgd.Report
			err error
		)
		if s.OvO {
			if s.Label != nil {
				return nil, nil, fmt.Errorf("learner: an outer label does not apply to one-vs-one training")
			}
			m, r, err = sgd.TrainOvO(ctx, s.CPM, data)
		} else {
			m, r, err = sgd.Train(ctx, s.CPM, data, s.Label)
		}
		if err != nil {
			return nil, nil, err
		}
		rep.CPM = r
		rep.Hyperplanes = len(m.Weights) * m.K
	case Perceptron:
		cfg := s.Perceptron
		cfg.Positive = s.Label
		p, r, err := perceptron.Train(ctx, cfg, data)
		if err != nil {
			return nil, nil, err
		}
		m = p.Model()
		rep.Epochs, rep.Converged, rep.Mistakes = r.Epochs, r.Converged, r.TotalMistakes()
		rep.Hyperplanes = m.K
		rep.EpochMistakes = r.Mistakes
	case KernelPerceptron:
		if s.Label != nil {
			return nil, nil, fmt.Errorf("learner: the kernel perceptron predicts the larger label for a positive score; a positive label cannot be chosen")
		}
		p, r, err := kperceptron.Train(ctx, s.Kernel, data)
		if err != nil {
			return nil, nil, err
		}
		m = p.Model()
		rep.Epochs, rep.Converged, rep.Support = r.Epochs, r.Converged, r.Support
		for _, n := range r.Mistakes {
			rep.Mistakes += n
		}
		rep.EpochMistakes = r.Mistakes
	case PolyceptronOnline, PolyceptronBatch:
		cfg := s.Polyceptron
		cfg.Inside = s.Label
		train := polyceptron.TrainBatch
		if s.name() == PolyceptronOnline {
			train = polyceptron.TrainOnline
		}
		p, r, err := train(ctx, cfg, data)
		if err != nil {
			return nil, nil, err
		}
		m = p.Model()
		rep.Epochs, rep.Converged, rep.TrainError = r.Epochs, r.Converged, r.TrainError
		for _, n := range r.Mistakes {
			rep.Mistakes += n
		}
		rep.Hyperplanes = m.K
		rep.EpochMistakes, rep.GradNorm = r.Mistakes, r.GradNorm
	case PLUME, SPLA1:
		cfg := s.PLUME
		cfg.Inside, cfg.Hard = s.Label, s.name() == SPLA1
		p, r, err := plume.Train(ctx, cfg, data)
		if err != nil {
			return nil, nil, err
		}
		m = p.Model()
		rep.Epochs, rep.Converged, rep.TrainError = r.Iterations, r.Converged, r.TrainError
		rep.Hyperplanes = m.K
		rep.LogLik = r.LogLik
	default:
		return nil, nil, fmt.Errorf("learner: unknown learner %q (want one of %v)", s.Name, Names())
	}
	rep.Seconds = time.Since(start).Seconds()
	return m, rep, nil
}

// checkMemory refuses a run of the linear and mixture learners whose
// weights would exceed s.MaxMemory; see Spec.MaxMemory.
func (s Spec) checkMemory(data *sparsevec.CSR) error {
	if s.MaxMemory <= 0 {
		return nil
	}
	var k int
	switch s.name() {
	case Perceptron:
		k = max(len(data.DistinctLabels()), 2)
		if k == 2 {
			k = 1 // binary: one weight vector
		}
	case PolyceptronOnline, PolyceptronBatch:
		k = cmp.Or(s.Polyceptron.K, 2)
	case PLUME, SPLA1:
		k = cmp.Or(s.PLUME.K, 2)
	default:
		return nil
	}
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

// NewPredictor returns a predictor for any valid model file.
func NewPredictor(m *model.Model) (Predictor, error) {
	switch m.Learner {
	case CPM:
		return sgd.NewClassifier(m)
	case Perceptron:
		return perceptron.NewPredictor(m)
	case PolyceptronOnline, PolyceptronBatch:
		return polyceptron.NewPredictor(m)
	case KernelPerceptron:
		return kperceptron.NewPredictor(m)
	case PLUME, SPLA1:
		p, err := plume.FromModel(m)
		if err != nil {
			return nil, err
		}
		return p.NewPredictor(), nil
	}
	return nil, fmt.Errorf("learner: model of unknown learner %q (this build knows %v)", m.Learner, Names())
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

// Known reports whether name is a learner name.
func Known(name string) bool { return slices.Contains(Names(), name) }

// WithK returns s with the number of faces (CPM), hyperplanes (Polyceptron)
// or experts set to k.
func (s Spec) WithK(k int) Spec {
	s.CPM.K, s.Polyceptron.K, s.PLUME.K = k, k, k
	return s
}

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
// (PLUME, SPLA1): Proba returns p(y = Classes[0] | x).
type Probabilist interface {
	Proba(x sparsevec.Vector) float64
}
