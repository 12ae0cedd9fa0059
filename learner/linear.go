package learner

import (
	"context"
	"fmt"

	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/perceptron"
	"github.com/polyhedral/cpm/polyceptron"
	"github.com/polyhedral/cpm/sparsevec"
)

// perceptronLearner registers the perceptron (package perceptron).
var perceptronLearner = &registration{
	name:        Perceptron,
	flags:       []flagDef{epochsFlag, liftFlag, biasFlag, refuseOvO(Perceptron)},
	compactRows: true, // linear.ViewModel maps the rows (and the lift)
	configure: func(f *Flags) (any, error) {
		c := &perceptron.Config{Epochs: f.Int("epochs"), Lift: lift(f)}
		c.Bias, c.NoBias = bias(f)
		return c, nil
	},
	summary:     liftSummary(Perceptron),
	checkConfig: typed[perceptron.Config](Perceptron),
	train: func(ctx context.Context, s Spec, data *sparsevec.CSR, rep *Report) (*model.Model, error) {
		c := config[perceptron.Config](s.Config)
		c.Positive = s.Label
		p, r, err := perceptron.Train(ctx, c, data)
		if err != nil {
			return nil, err
		}
		m := p.Model()
		rep.Epochs, rep.Converged, rep.Mistakes = r.Epochs, r.Converged, r.TotalMistakes()
		rep.Hyperplanes, rep.EpochMistakes = m.K, r.Mistakes
		return m, nil
	},
	newPredictor: predictor(perceptron.NewPredictor),
	withSeed:     with(func(c *perceptron.Config, seed uint64) { c.Seed = seed }),
	weightColumns: func(_ any, data *sparsevec.CSR) int {
		if k := len(data.DistinctLabels()); k > 2 {
			return k
		}
		return 1 // binary: one weight vector
	},
	describe: func(m *model.Model) (*Description, error) {
		d, err := describeLinear(m)
		if err != nil {
			return nil, err
		}
		d.Rule, d.FaceRule = "first label when w·x + b > 0", "the one hyperplane"
		d.Matrices = []string{"hyperplane w·x + b = 0"}
		d.Legends = []string{"hyperplane w·x + b = 0"}
		d.Classes = binaryClasses(m, "%s when the score is > 0, else %s")
		if m.Multiclass {
			d.FaceClasses = true
			d.Rule = "the class of argmax_k (w_k·x + b_k)"
			d.FaceRule = d.Rule
			d.Matrices = []string{"one hyperplane per class"}
			d.Legends = []string{"w_c·x + b_c = 0, one per class"}
		}
		d.Title = m.Learner
		if d.LiftIndex > 0 {
			d.Title += ", quadratic lift"
		}
		return d, nil
	},
}

// polyceptronFlags are the flags both Polyceptrons read.
var polyceptronFlags = []flagDef{
	kFlag("hyperplanes K (default 2)"), liftFlag, biasFlag,
	defaultFloat("step", "step size eta (default 0.1 batch, 1 online)"),
}

// polyceptronOnlineLearner registers the online Polyceptron (package
// polyceptron, Algorithm 2).
var polyceptronOnlineLearner = &registration{
	name:        PolyceptronOnline,
	flags:       append([]flagDef{epochsFlag, refuseOvO(PolyceptronOnline)}, polyceptronFlags...),
	compactRows: true, // linear.ViewModel maps the rows (and the lift)
	maxK:        1 << 16,
	configure: func(f *Flags) (any, error) {
		return polyceptronConfig(f, polyceptron.Config{Epochs: f.Int("epochs")}), nil
	},
	summary:       liftSummary(PolyceptronOnline),
	checkConfig:   typed[polyceptron.Config](PolyceptronOnline),
	train:         trainPolyceptron(polyceptron.TrainOnline),
	newPredictor:  predictor(polyceptron.NewPredictor),
	withSeed:      with(func(c *polyceptron.Config, seed uint64) { c.Seed = seed }),
	withK:         with(func(c *polyceptron.Config, k int) { c.K = k }),
	weightColumns: polyceptronColumns,
	describe:      describePolyceptron,
}

// polyceptronBatchLearner registers the batch Polyceptron (package
// polyceptron, Algorithm 1).
var polyceptronBatchLearner = &registration{
	name:        PolyceptronBatch,
	compactRows: true, // linear.ViewModel maps the rows (and the lift)
	flags: append([]flagDef{
		defaultFloat("poly-gamma", "stop when the summed gradient norm falls below gamma (default 50)"),
		{Name: "gamma", Kind: floatFlag, Default: "0", Usage: "same as --poly-gamma", Check: defaultFloat("gamma", "").Check},
		defaultInt("max-iter", "maximum iterations (default 1000)"),
		{Name: "pocket", Kind: boolFlag, Default: "false", Usage: "at --max-iter, return the iterate with the fewest training mistakes, not the last"},
		defaultInt("restarts", "seeded initialisations, the one with the fewest training mistakes is kept (default 1)"),
		refuseOvO(PolyceptronBatch),
	}, polyceptronFlags...),
	maxK: 1 << 16,
	configure: func(f *Flags) (any, error) {
		// The defaults are the paper's gamma = 50 and one start: gamma =
		// 10 with 5 starts gains a point on the Polyceptron datasets and
		// loses 4 on heart_scale (bench/RESULTS.md, "Defaults on raw
		// data").
		return polyceptronConfig(f, polyceptron.Config{
			Gamma: f.FloatOf("poly-gamma", "gamma"), MaxIter: f.Int("max-iter"),
			Pocket: f.Bool("pocket"), Restarts: f.Int("restarts"),
		}), nil
	},
	summary:       liftSummary(PolyceptronBatch),
	checkConfig:   typed[polyceptron.Config](PolyceptronBatch),
	train:         trainPolyceptron(polyceptron.TrainBatch),
	newPredictor:  predictor(polyceptron.NewPredictor),
	withSeed:      with(func(c *polyceptron.Config, seed uint64) { c.Seed = seed }),
	withK:         with(func(c *polyceptron.Config, k int) { c.K = k }),
	weightColumns: polyceptronColumns,
	describe:      describePolyceptron,
}

// polyceptronConfig completes c with the flags both Polyceptrons read.
func polyceptronConfig(f *Flags, c polyceptron.Config) *polyceptron.Config {
	c.K, c.Lift, c.Step = firstK(f), lift(f), f.Float("step")
	c.Bias, c.NoBias = bias(f)
	return &c
}

func polyceptronColumns(cfg any, _ *sparsevec.CSR) int {
	if k := config[polyceptron.Config](cfg).K; k != 0 {
		return k
	}
	return 2
}

func trainPolyceptron(train func(context.Context, polyceptron.Config, *sparsevec.CSR) (*polyceptron.Polyceptron, *polyceptron.Report, error)) func(context.Context, Spec, *sparsevec.CSR, *Report) (*model.Model, error) {
	return func(ctx context.Context, s Spec, data *sparsevec.CSR, rep *Report) (*model.Model, error) {
		c := config[polyceptron.Config](s.Config)
		c.Inside = s.Label
		p, r, err := train(ctx, c, data)
		if err != nil {
			return nil, err
		}
		m := p.Model()
		rep.Epochs, rep.Converged, rep.TrainError = r.Epochs, r.Converged, r.TrainError
		for _, n := range r.Mistakes {
			rep.Mistakes += n
		}
		rep.Hyperplanes = m.K
		rep.EpochMistakes, rep.GradNorm = r.Mistakes, r.GradNorm
		return m, nil
	}
}

func describePolyceptron(m *model.Model) (*Description, error) {
	d, err := describeLinear(m)
	if err != nil {
		return nil, err
	}
	d.FaceArgmin = true
	d.Rule = "first (inside) label when min_k (w_k·x + b_k) > 0"
	d.FaceRule, d.EvalRule = "argmin_k (w_k·x + b_k)", "argmin face, h = min"
	d.Matrices = []string{"polyhedron, h(x) = min_k (w_k·x + b_k)"}
	d.Legends = []string{"hyperplanes w_k·x + b_k = 0"}
	d.Classes = binaryClasses(m, "inside %s, outside %s")
	d.Title = fmt.Sprintf("%s, K = %d", m.Learner, m.K)
	if d.LiftIndex > 0 {
		d.Title += ", quadratic lift"
	}
	return d, nil
}

// describeLinear is the part of a linear model's description that the
// perceptron and the Polyceptron share: hyperplanes and the lift.
func describeLinear(m *model.Model) (*Description, error) {
	d := &Description{FaceNoun: "hyperplane", Positives: []*float32{nil}, Features: m.D - 1, EvalRule: "face"}
	l, idx, err := linear.ParseLiftParams(m)
	if err != nil {
		return nil, fmt.Errorf("%s model: %w: %w", m.Learner, model.ErrInvalid, err)
	}
	if l != linear.NoLift {
		d.Lift, d.LiftIndex, d.Features = l.String(), int(idx), int(idx)-1
	}
	return d, nil
}
