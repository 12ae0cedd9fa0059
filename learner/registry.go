package learner

import (
	"context"
	"fmt"

	"github.com/polyhedral/cpm/assign"
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
	Perceptron        = perceptron.Learner
	KernelPerceptron  = kperceptron.Learner
	PolyceptronOnline = polyceptron.Online
	PolyceptronBatch  = polyceptron.Batch
	PLUME             = "plume"
	SPLA1             = "spla1"
)

// registry lists every learner, in the order the CLI lists them. Adding a
// learner is one line here and its registration (a registration value, in a
// file of its own in this package).
var registry = []*registration{
	cpmLearner,
	perceptronLearner,
	kperceptronLearner,
	polyceptronOnlineLearner,
	polyceptronBatchLearner,
	plumeLearner,
	spla1Learner,
}

// registration is what the package knows of one learner: its name, the flags it
// reads, and how it trains, predicts and describes its models. The
// functions take the Spec.Config of the learner's own config type.
type registration struct {
	name  string
	flags []flagDef // the flags it reads or refuses
	maxK  int       // largest -k; 0 means assign.MaxFaces

	// configure builds the learner's config from parsed flags.
	configure func(f *Flags) (any, error)
	// summary describes the configured learner for log lines; nil: the name.
	summary func(f *Flags) string
	// checkConfig reports an error if a Spec.Config is not of its type.
	checkConfig func(cfg any) error
	// train trains on in-memory data and fills rep's learner-specific fields.
	train func(ctx context.Context, s Spec, data *sparsevec.CSR, rep *Report) (*model.Model, error)
	// newPredictor returns a predictor for one of its valid models.
	newPredictor func(m *model.Model) (Predictor, error)
	// clone, if set, returns a predictor of p's model with scratch space
	// of its own, sharing p's read-only state; p is one of newPredictor's
	// or clone's. nil: NewPredictors calls newPredictor for each.
	clone func(p Predictor) Predictor
	// withSeed and withK return a copy of cfg with the seed or K set
	// (withK nil: no K).
	withSeed func(cfg any, seed uint64) any
	withK    func(cfg any, k int) any
	// weightColumns is the K of the weight matrices cfg trains on data, for
	// the memory check (nil: not checked).
	weightColumns func(cfg any, data *sparsevec.CSR) int
	// describe tells cpm inspect, plot and eval how its models decide.
	describe func(m *model.Model) (*Description, error)
	// rowsConfig, if set, returns a copy of cfg whose own rows (such as
	// validation rows) are mapped by f, as Train maps the training rows
	// (feature hashing, then scaling).
	rowsConfig func(cfg any, f func(*sparsevec.CSR) *sparsevec.CSR) any
	// compactRows reports that newPredictor takes compact models
	// (model.Model.Rows) itself; for the others NewPredictor maps each row
	// into the compact rows first.
	compactRows bool
	// initModel, if set, returns the model cfg continues training (a warm
	// start) or nil; Train then keeps that model's scaling instead of
	// fitting one.
	initModel func(cfg any) *model.Model
	// probabilities: its predictors are Probabilist (PLUME, SPLA1), and
	// a calibration does not apply to it.
	probabilities bool
}

// Names returns the learner names in the order the CLI lists them.
func Names() []string {
	out := make([]string, len(registry))
	for i, l := range registry {
		out[i] = l.name
	}
	return out
}

// Known reports whether name is a learner name.
func Known(name string) bool {
	_, ok := lookup(name)
	return ok
}

// lookup returns the registration of the learner called name.
func lookup(name string) (*registration, bool) {
	for _, l := range registry {
		if l.name == name {
			return l, true
		}
	}
	return nil, false
}

func mustLookup(name string) *registration {
	l, ok := lookup(name)
	if !ok {
		panic(fmt.Sprintf("learner: unknown learner %q", name))
	}
	return l
}

func (l *registration) maxFaces() int {
	if l.maxK == 0 {
		return assign.MaxFaces
	}
	return l.maxK
}

// config returns a copy of the *C that cfg holds, or C's zero value (the
// defaults) when cfg is nil.
func config[C any](cfg any) C {
	if c, ok := cfg.(*C); ok && c != nil {
		return *c
	}
	var zero C
	return zero
}

// typed returns a check that a Spec.Config is nil or a *C.
func typed[C any](name string) func(cfg any) error {
	return func(cfg any) error {
		if _, ok := cfg.(*C); ok || cfg == nil {
			return nil
		}
		return fmt.Errorf("learner: %s: Config is a %T, want a %T", name, cfg, new(C))
	}
}

// with returns a function that copies a config and changes it by set.
func with[C, V any](set func(c *C, v V)) func(cfg any, v V) any {
	return func(cfg any, v V) any {
		c := config[C](cfg)
		set(&c, v)
		return &c
	}
}

// predictor adapts a family's NewPredictor to Predictor.
func predictor[P Predictor](newP func(*model.Model) (P, error)) func(*model.Model) (Predictor, error) {
	return func(m *model.Model) (Predictor, error) {
		p, err := newP(m)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

// Every learner's predictor has the one Predictor shape.
var (
	_ Predictor = (*sgd.Classifier)(nil)
	_ Predictor = (*plume.Predictor)(nil)
	_ Predictor = (*perceptron.Predictor)(nil)
	_ Predictor = (*kperceptron.Predictor)(nil)
	_ Predictor = (*polyceptron.Predictor)(nil)
)
