package learner

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/polyhedral/cpm/kperceptron"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// kperceptronLearner registers the kernel perceptron (package
// kperceptron).
var kperceptronLearner = &registration{
	name: KernelPerceptron,
	flags: []flagDef{
		epochsFlag,
		{Name: "kernel", Kind: stringFlag, Default: "rbf", Usage: "kernel: rbf (exp(-||x-y||^2/(2 sigma^2))), poly ((x.y + coef0)^degree), linear (the perceptron in dual form)",
			Check: func(f *Flags) error {
				_, err := kperceptron.ParseKernelKind(f.String("kernel"))
				return err
			}},
		defaultInt("degree", "polynomial degree p (default 2)"),
		{Name: "coef0", Kind: floatFlag, Default: "0", Usage: "polynomial offset c (0: the paper's (x.y)^p)",
			Check: func(f *Flags) error {
				if v := f.Float("coef0"); math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("--coef0 %v: want a finite value", v)
				}
				return nil
			}},
		defaultFloat("sigma", "RBF width sigma (default: sqrt(d*Var(x)/2) of the training rows, d features, as scikit-learn's gamma=scale)"),
		defaultInt("cache-mb", "kernel-row cache bound in MiB (default 256)"),
		refuseLift, refuseOvO(KernelPerceptron),
	},
	configure: func(f *Flags) (any, error) {
		kind, err := kperceptron.ParseKernelKind(f.String("kernel"))
		if err != nil {
			return nil, err
		}
		return &kperceptron.Config{
			Kernel:        kperceptron.Kernel{Kind: kind, Degree: f.Int("degree"), Coef0: f.Float("coef0"), Sigma: f.Float("sigma")},
			Epochs:        f.Int("epochs"),
			CacheMB:       f.Int("cache-mb"),
			SigmaFromData: true,
		}, nil
	},
	summary: func(f *Flags) string {
		return fmt.Sprintf("%s (%s kernel)", KernelPerceptron, f.String("kernel"))
	},
	checkConfig:  typed[kperceptron.Config](KernelPerceptron),
	train:        trainKernel,
	newPredictor: predictor(kperceptron.NewPredictor),
	withSeed:     with(func(c *kperceptron.Config, seed uint64) { c.Seed = seed }),
	describe: func(m *model.Model) (*Description, error) {
		d := &Description{EvalRule: "face", NoHyperplanes: fmt.Sprintf(
			"a %s model holds support rows and dual coefficients, not hyperplanes (cpm export dumps them)", m.Learner)}
		d.Title = m.Learner
		for _, b := range m.Extra {
			if b.Name == "sv" && len(b.U32) > 0 {
				d.Features = int(slices.Max(b.U32))
			}
		}
		return d, nil
	},
}

func trainKernel(ctx context.Context, s Spec, data *sparsevec.CSR, rep *Report) (*model.Model, error) {
	if s.Label != nil {
		return nil, fmt.Errorf("learner: the kernel perceptron predicts the larger label for a positive score; a positive label cannot be chosen")
	}
	p, r, err := kperceptron.Train(ctx, config[kperceptron.Config](s.Config), data)
	if err != nil {
		return nil, err
	}
	rep.Epochs, rep.Converged, rep.Support = r.Epochs, r.Converged, r.Support
	for _, n := range r.Mistakes {
		rep.Mistakes += n
	}
	rep.EpochMistakes = r.Mistakes
	return p.Model(), nil
}
