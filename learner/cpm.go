package learner

import (
	"context"
	"fmt"
	"math"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// The step budget of a CPM trained with the default λ = 1/n and no -i:
// defaultPasses passes over the n training rows, within [minDefaultSteps,
// maxDefaultSteps]. With λ = 1/n, Pegasos needs O(n) steps per digit of
// accuracy; on Pima, 0.2 M and 10 M steps give the same CV accuracy, so
// the paper's fixed 10 M would spend 50 times the time for nothing.
const (
	defaultPasses   = 100
	minDefaultSteps = 1_000_000
	maxDefaultSteps = 10_000_000
)

// cpmLearner registers the Convex Polytope Machine (package sgd).
var cpmLearner = &registration{
	name: CPM,
	flags: []flagDef{
		kFlag("faces per polytope (default 10)"),
		{Name: "iterations", Aliases: []string{"i"}, Kind: int64Flag, Default: "0", Usage: "SGD steps `T` per polytope (default 10,000,000; with neither -C nor --lambda, 100 passes over the training rows, from 1,000,000 to 10,000,000)",
			Check: func(f *Flags) error {
				if f.Int64("iterations") < 0 {
					return fmt.Errorf("-i %d: want at least 1 SGD step (0 for the default)", f.Int64("iterations"))
				}
				return nil
			}},
		defaultFloat("C", "regularisation factor: lambda = 1/(C*T) as in the CPM paper, unless --lambda is given; with neither, lambda = 1/n for n training rows (SVM's C = 1), or 1/T with --stream"),
		lambdaFlag("L2 regularisation lambda (overrides -C)"),
		{Name: "entropy", Kind: floatFlag, Default: "0", Usage: "ASSIGN target assignment entropy h in nats (0 = plain argmax)",
			Check: finiteNonNeg("--entropy", "entropy", " (nats; 0 = plain argmax)")},
		{Name: "cost_ratio", Kind: floatFlag, Default: "1", Usage: "weight of negative rows' hinge loss relative to positives'",
			Check: positive("--cost_ratio", "cost_ratio", "")},
		{Name: "reshuffle", Kind: boolFlag, Default: "false", Usage: "draw a fresh permutation every epoch (default: one shuffled order repeated)"},
		{Name: "double-sided", Kind: boolFlag, Default: "false", Usage: "train two polytopes (one per class inside) and score f_outer - f_inner (the default in memory without -C and --lambda)"},
		{Name: "single-sided", Kind: boolFlag, Default: "false", Usage: "one polytope around the inner label even without -C and --lambda (with -C or --lambda, and with --stream, one polytope is the default)"},
		{Name: "compact", Kind: stringFlag, Default: "auto", Usage: "how the shuffled in-memory training rows are kept (the model is the same): auto (2-byte indices when every index is below 65536, and 1-byte value codes when the rows also hold at most 256 distinct values, which the kernels read directly: MNIST in 3 bytes per nonzero instead of 8), no (4-byte indices and values), or yes (also 1-byte codes beside 4-byte indices, decoded before each step: least memory, slower steps)",
			Check: func(f *Flags) error {
				if _, err := parseCompaction(f.String("compact")); err != nil {
					return err
				}
				return nil
			}},
		{Name: "ovo", Kind: boolFlag, Default: "false", Usage: "one-vs-one multiclass: a binary CPM per pair of labels, majority vote"},
		{Name: "workers", Kind: intFlag, Default: "0", Usage: "polytopes trained at once (default GOMAXPROCS)",
			Check: func(f *Flags) error {
				if f.Int("workers") < 0 {
					return fmt.Errorf("--workers %d: want at least 1 (or 0 for GOMAXPROCS)", f.Int("workers"))
				}
				return nil
			}},
		biasFlag,
	},
	configure: func(f *Flags) (any, error) {
		c := &CPMConfig{OvO: f.Bool("ovo"), DefaultLambda: true, SingleSided: f.Bool("single-sided")}
		if c.SingleSided && f.Bool("double-sided") {
			return nil, fmt.Errorf("--single-sided and --double-sided: give one")
		}
		c.K, c.Iterations = firstK(f), f.Int64("iterations")
		c.C, c.Lambda, c.Entropy, c.CostRatio = f.Float("C"), f.Float("lambda"), f.Float("entropy"), f.Float("cost_ratio")
		c.Reshuffle, c.DoubleSided, c.Workers = f.Bool("reshuffle"), f.Bool("double-sided"), f.Int("workers")
		c.Compact, _ = parseCompaction(f.String("compact"))
		c.Bias, c.NoBias = f.Float("bias"), f.Float("bias") == 0
		return c, nil
	},
	checkConfig:  typed[CPMConfig](CPM),
	train:        trainCPM,
	newPredictor: predictor(sgd.NewClassifier),
	clone:        func(p Predictor) Predictor { return p.(*sgd.Classifier).Clone() },
	withSeed:     with(func(c *CPMConfig, seed uint64) { c.Seed = seed }),
	withK:        with(func(c *CPMConfig, k int) { c.K = k }),
	describe:     describeCPM,
	rowsConfig: with(func(c *CPMConfig, f func(*sparsevec.CSR) *sparsevec.CSR) {
		if c.Valid.Data != nil {
			c.Valid.Data = f(c.Valid.Data)
		}
	}),
	initModel: func(cfg any) *model.Model { return config[CPMConfig](cfg).Init },
}

func trainCPM(ctx context.Context, s Spec, data *sparsevec.CSR, rep *Report) (*model.Model, error) {
	c := cpmRun(s, data.Rows())
	var (
		m   *model.Model
		r   *sgd.Report
		err error
	)
	if c.OvO {
		if s.Label != nil {
			return nil, fmt.Errorf("learner: an outer label does not apply to one-vs-one training")
		}
		m, r, err = sgd.TrainOvO(ctx, c.Config, data)
	} else {
		m, r, err = sgd.Train(ctx, c.Config, data, s.Label)
	}
	if err != nil {
		return nil, err
	}
	rep.CPM = r
	rep.Hyperplanes = len(m.Weights) * m.K
	return m, nil
}

// cpmRun returns the CPM configuration of s completed for a run on n
// training rows: the memory budget, and under DefaultLambda λ = 1/n, the
// step budget and the double-sided default.
func cpmRun(s Spec, n int) CPMConfig {
	c := config[CPMConfig](s.Config)
	if c.MaxMemory == 0 {
		c.MaxMemory = s.MaxMemory
	}
	if c.DefaultLambda && c.Lambda == 0 && c.C == 0 && n > 0 {
		c.Lambda = 1 / float64(n)
		c.DoubleSided = c.DoubleSided || !c.SingleSided
		if c.Iterations == 0 {
			c.Iterations = min(max(defaultPasses*int64(n), minDefaultSteps), maxDefaultSteps)
		}
	}
	return c
}

func describeCPM(m *model.Model) (*Description, error) {
	if m.Multiclass {
		return nil, fmt.Errorf("a cpm model cannot be all-together multiclass")
	}
	d := &Description{
		Rule:     "outer label when max_k (w_k·x + b_k) > 0",
		FaceRule: "argmax_k (w_k·x + b_k) of each polytope", FaceNoun: "face",
		Polytopes: true, Features: m.D - 1, EvalRule: "argmax face of the outer polytope",
		Classes: binaryClasses(m, "outer %s, inner %s"),
		Title:   fmt.Sprintf("%s, %s", m.Learner, []string{"single-sided", "double-sided"}[m.Sides-1]),
	}
	if m.Sides == 2 {
		d.Rule = "outer label when f_outer(x) - f_inner(x) > 0, f = max_k (w_k·x + b_k)"
	}
	if m.OvO {
		d.Title += ", one-vs-one"
	}
	d.Title += fmt.Sprintf(", K = %d", m.K)
	sides := []string{"outer", "inner"}[:m.Sides]
	if !m.OvO {
		for s, side := range sides {
			d.Matrices = append(d.Matrices, side)
			d.Positives = append(d.Positives, &m.Classes[s])
			d.Legends = append(d.Legends, fmt.Sprintf("%s polytope's faces (%v outside)", side, m.Classes[s]))
		}
		return d, nil
	}
	for _, p := range sgd.Pairs(len(m.Classes)) {
		a, b := m.Classes[p[0]], m.Classes[p[1]]
		d.Pairs = append(d.Pairs, [2]float32{a, b})
		for s, side := range sides {
			d.Matrices = append(d.Matrices, fmt.Sprintf("%v vs %v/%s", a, b, side))
			d.Positives = append(d.Positives, &[]float32{a, b}[s])
			d.Legends = append(d.Legends, fmt.Sprintf("%v vs %v/%s faces", a, b, side))
		}
	}
	return d, nil
}

// positive returns a check that float flag name is finite and > 0.
func positive(flagText, name, note string) func(f *Flags) error {
	return func(f *Flags) error {
		if v := f.Float(name); math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return fmt.Errorf("%s %v: want a finite value > 0%s", flagText, v, note)
		}
		return nil
	}
}

// finiteNonNeg returns a check that float flag name is finite and >= 0.
func finiteNonNeg(flagText, name, note string) func(f *Flags) error {
	return func(f *Flags) error {
		if v := f.Float(name); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%s %v: want a finite value >= 0%s", flagText, v, note)
		}
		return nil
	}
}

// parseCompaction parses --compact.
func parseCompaction(s string) (sgd.Compaction, error) {
	for _, c := range []sgd.Compaction{sgd.CompactAuto, sgd.CompactNo, sgd.CompactYes} {
		if s == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("--compact %s: want auto, yes or no", s)
}
