package learner

import (
	"context"
	"fmt"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/plume"
	"github.com/polyhedral/cpm/sparsevec"
)

// plumeFlags are the flags PLUME and SPLA1 both read.
var plumeFlags = []flagDef{
	kFlag("experts K (default 2)"), biasFlag,
	defaultInt("max-iter", "maximum EM iterations (default 100)"),
	defaultInt("restarts", "seeded initialisations, the highest log-likelihood is kept (default 1)"),
	lambdaFlag("L2 penalty on the expert weights (default 0: none)"),
	{Name: "m-step", Kind: stringFlag, Default: "ga", Usage: "M-step ascent: ga (gradient ascent), newton, bfgs",
		Check: func(f *Flags) error {
			_, err := plume.ParseMStep(f.String("m-step"))
			return err
		}},
	defaultFloat("epsilon", "stop EM when the log-likelihood gain is below epsilon (default 5e-4 x rows)"),
	defaultInt("inner-iter", "ascent steps per M-step (default 1)"),
	refuseLift,
}

// plumeLearner registers PLUME (package plume).
var plumeLearner = &registration{
	name: PLUME,
	flags: append([]flagDef{
		defaultFloat("plume-gamma", "gate sharpness gamma (default 1)"),
		{Name: "gamma", Kind: floatFlag, Default: "0", Usage: "same as --plume-gamma", Check: defaultFloat("gamma", "").Check},
		refuseOvO(PLUME),
	}, plumeFlags...),
	maxK: 1 << 16,
	configure: func(f *Flags) (any, error) {
		return plumeConfig(f, plume.Config{Gamma: f.FloatOf("plume-gamma", "gamma")})
	},
	summary:       mstepSummary(PLUME),
	checkConfig:   typed[plume.Config](PLUME),
	train:         trainPLUME(false),
	newPredictor:  newPLUMEPredictor,
	withSeed:      with(func(c *plume.Config, seed uint64) { c.Seed = seed }),
	withK:         with(func(c *plume.Config, k int) { c.K = k }),
	weightColumns: plumeColumns,
	describe:      describePLUME(false),
	probabilities: true,
}

// spla1Learner registers SPLA1, PLUME's hard-gate limit (package plume).
var spla1Learner = &registration{
	name: SPLA1,
	flags: append([]flagDef{
		{Name: "gamma", Refuse: true, Usage: "does not apply: spla1 is PLUME's gamma -> infinity limit"},
		{Name: "plume-gamma", Refuse: true, Usage: "does not apply: spla1 is PLUME's gamma -> infinity limit"},
		refuseOvO(SPLA1),
	}, plumeFlags...),
	maxK:          1 << 16,
	configure:     func(f *Flags) (any, error) { return plumeConfig(f, plume.Config{}) },
	summary:       mstepSummary(SPLA1),
	checkConfig:   typed[plume.Config](SPLA1),
	train:         trainPLUME(true),
	newPredictor:  newPLUMEPredictor,
	withSeed:      with(func(c *plume.Config, seed uint64) { c.Seed = seed }),
	withK:         with(func(c *plume.Config, k int) { c.K = k }),
	weightColumns: plumeColumns,
	describe:      describePLUME(true),
	probabilities: true,
}

// plumeConfig completes c with the flags PLUME and SPLA1 both read.
func plumeConfig(f *Flags, c plume.Config) (any, error) {
	ms, err := plume.ParseMStep(f.String("m-step"))
	if err != nil {
		return nil, err
	}
	c.K, c.MStep, c.MaxIter, c.Restarts = firstK(f), ms, f.Int("max-iter"), f.Int("restarts")
	c.Lambda, c.Epsilon, c.InnerIter = f.Float("lambda"), f.Float("epsilon"), f.Int("inner-iter")
	c.Bias, c.NoBias = bias(f)
	return &c, nil
}

func mstepSummary(name string) func(f *Flags) string {
	return func(f *Flags) string { return fmt.Sprintf("%s (%s M-step)", name, f.String("m-step")) }
}

func plumeColumns(cfg any, _ *sparsevec.CSR) int {
	if k := config[plume.Config](cfg).K; k != 0 {
		return k
	}
	return 2
}

func trainPLUME(hard bool) func(context.Context, Spec, *sparsevec.CSR, *Report) (*model.Model, error) {
	return func(ctx context.Context, s Spec, data *sparsevec.CSR, rep *Report) (*model.Model, error) {
		c := config[plume.Config](s.Config)
		c.Inside, c.Hard = s.Label, hard
		p, r, err := plume.Train(ctx, c, data)
		if err != nil {
			return nil, err
		}
		m := p.Model()
		rep.Epochs, rep.Converged, rep.TrainError = r.Iterations, r.Converged, r.TrainError
		rep.Hyperplanes, rep.LogLik = m.K, r.LogLik
		return m, nil
	}
}

func newPLUMEPredictor(m *model.Model) (Predictor, error) {
	p, err := plume.FromModel(m)
	if err != nil {
		return nil, err
	}
	return p.NewPredictor(), nil
}

// describePLUME describes the models of PLUME, or of SPLA1 when hard.
func describePLUME(hard bool) func(m *model.Model) (*Description, error) {
	return func(m *model.Model) (*Description, error) {
		d := &Description{
			FaceNoun: "expert", FaceArgmin: true,
			Rule:     "first (inside) label when p(y = +1 | x) = Σ_k g_k(x) σ(w_k·x + b_k) > 1/2, g = softmax(-γ (w_k·x + b_k))",
			FaceRule: "the gate's argmax = argmin_k (w_k·x + b_k)", EvalRule: "face",
			Matrices: []string{"experts, gated by softmax(-γ (w_k·x + b_k))"}, Positives: []*float32{nil},
			Legends: []string{"experts' hyperplanes"}, Classes: binaryClasses(m, "inside %s, outside %s"),
			Title: fmt.Sprintf("%s, K = %d", m.Learner, m.K), Features: m.D - 1,
		}
		if hard {
			d.Rule = "first (inside) label when min_k (w_k·x + b_k) > 0 (hard gate)"
		}
		return d, nil
	}
}
