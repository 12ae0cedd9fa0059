package main

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/polyhedral/cpm/assign"
	"github.com/polyhedral/cpm/kperceptron"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/plume"
)

// learnerFlags are the flags that choose and configure a learner, shared
// by train and cv.
type learnerFlags struct {
	name       string
	spec       learner.Spec
	label      labelFlag
	iterations int64
	k          intList
	seed       uint64
	bias       float64
	epochs     int
	kernel     string
	lift       string
	step       float64
	gamma      float64
	mstep      string
}

func addLearnerFlags(fs *flag.FlagSet) *learnerFlags {
	l := &learnerFlags{}
	s := &l.spec
	fs.StringVar(&l.name, "learner", learner.CPM, "learner: "+strings.Join(learner.Names(), ", "))
	fs.Var(&l.k, "k", "cpm: faces per polytope (default 10); polyceptron: hyperplanes K (default 2); a list such as 2,3,4 makes train choose K by cross-validation")
	fs.Uint64Var(&l.seed, "seed", 1, "random seed: same data, flags and seed give a byte-identical model")
	fs.Float64Var(&l.bias, "bias", 1, "value of the constant bias feature (0: no bias)")
	fs.Var(&l.label, "outer_label", "binary data: cpm's label outside the polytope; perceptron's label for a positive score; polyceptron's label inside (default: the larger label)")
	fs.Var(&l.label, "positive_label", "same as --outer_label")

	// CPM.
	fs.Int64Var(&l.iterations, "i", 10_000_000, "cpm: SGD steps `T` per polytope")
	fs.Int64Var(&l.iterations, "iterations", 10_000_000, "same as -i")
	fs.Float64Var(&s.CPM.C, "C", 1, "cpm: regularisation factor: lambda = 1/(C*T) unless --lambda is given")
	fs.Float64Var(&s.CPM.Lambda, "lambda", 0, "cpm: L2 regularisation lambda (overrides -C)")
	fs.Float64Var(&s.CPM.Entropy, "entropy", 0, "cpm: ASSIGN target assignment entropy h in nats (0 = plain argmax)")
	fs.Float64Var(&s.CPM.CostRatio, "cost_ratio", 1, "cpm: weight of negative rows' hinge loss relative to positives'")
	fs.BoolVar(&s.CPM.Reshuffle, "reshuffle", false, "cpm: draw a fresh permutation every epoch (default: one shuffled order repeated)")
	fs.BoolVar(&s.CPM.DoubleSided, "double-sided", false, "cpm: train two polytopes (one per class inside) and score f_outer - f_inner")
	fs.BoolVar(&s.OvO, "ovo", false, "cpm: one-vs-one multiclass: a binary CPM per pair of labels, majority vote")
	fs.IntVar(&s.CPM.Workers, "workers", 0, "cpm: polytopes trained at once (default GOMAXPROCS)")

	// Perceptron family.
	fs.IntVar(&l.epochs, "epochs", 0, "perceptron, kperceptron, polyceptron-online: maximum passes over the data (default 100)")
	fs.StringVar(&l.lift, "lift", "none", "perceptron, polyceptron: feature map: none, or quadratic (appends ||x||^2 as one extra feature)")
	fs.StringVar(&l.kernel, "kernel", "linear", "kperceptron: kernel: linear, poly ((x.y + coef0)^degree), rbf (exp(-||x-y||^2/(2 sigma^2)))")
	fs.IntVar(&s.Kernel.Kernel.Degree, "degree", 0, "kperceptron: polynomial degree p (default 2)")
	fs.Float64Var(&s.Kernel.Kernel.Coef0, "coef0", 0, "kperceptron: polynomial offset c (0: the paper's (x.y)^p)")
	fs.Float64Var(&s.Kernel.Kernel.Sigma, "sigma", 0, "kperceptron: RBF width sigma (default 1)")
	fs.IntVar(&s.Kernel.CacheMB, "cache-mb", 0, "kperceptron: kernel-row cache bound in MiB (default 256)")
	fs.Float64Var(&l.step, "step", 0, "polyceptron: step size eta (default 0.1 batch, 1 online)")
	fs.Float64Var(&l.gamma, "gamma", 0, "polyceptron-batch: stop when the summed gradient norm falls below gamma (default 50); plume: gate sharpness (default 1)")
	fs.IntVar(&s.Polyceptron.MaxIter, "max-iter", 0, "polyceptron-batch: maximum iterations (default 1000); plume, spla1: maximum EM iterations (default 100)")
	fs.BoolVar(&s.Polyceptron.Pocket, "pocket", false, "polyceptron-batch: at --max-iter, return the iterate with the fewest training mistakes, not the last")
	fs.IntVar(&s.Polyceptron.Restarts, "restarts", 0, "polyceptron-batch: seeded initialisations, the one with the fewest training mistakes is kept; plume, spla1: the highest log-likelihood is kept (default 1)")

	// PLUME and SPLA1.
	fs.StringVar(&l.mstep, "m-step", "ga", "plume, spla1: M-step ascent: ga (gradient ascent), newton, bfgs")
	fs.Float64Var(&s.PLUME.Epsilon, "epsilon", 0, "plume, spla1: stop EM when the log-likelihood gain is below epsilon (default 5e-4 x rows)")
	fs.IntVar(&s.PLUME.InnerIter, "inner-iter", 0, "plume, spla1: ascent steps per M-step (default 1)")
	return l
}

// build returns the learner spec the flags describe, or a usage error.
func (l *learnerFlags) build() (learner.Spec, error) {
	if !learner.Known(l.name) {
		return learner.Spec{}, usagef("unknown learner %q (want one of %s)", l.name, strings.Join(learner.Names(), ", "))
	}
	if err := l.validate(); err != nil {
		return learner.Spec{}, err
	}
	s := l.spec
	s.Name = l.name
	if l.label.set {
		v := l.label.v
		s.Label = &v
	}
	if l.name != learner.CPM && s.OvO {
		return s, usagef("--ovo is for the cpm learner; %s trains its own multiclass form", l.name)
	}
	k := 0
	if len(l.k) > 0 {
		k = l.k[0]
	}
	// CPM.
	s.CPM.K = k
	s.CPM.Iterations = l.iterations
	s.CPM.Bias = l.bias
	s.CPM.NoBias = l.bias == 0
	// Perceptron family.
	lift, err := linear.ParseLift(l.lift)
	if err != nil {
		return s, usageError{err}
	}
	kind, err := kperceptron.ParseKernelKind(l.kernel)
	if err != nil {
		return s, usageError{err}
	}
	if l.epochs < 0 {
		return s, usagef("--epochs %d: want >= 1", l.epochs)
	}
	s.Perceptron.Epochs, s.Perceptron.Lift = l.epochs, lift
	s.Perceptron.Bias, s.Perceptron.NoBias = l.bias, l.bias == 0
	s.Kernel.Epochs, s.Kernel.Kernel.Kind = l.epochs, kind
	s.Polyceptron.K, s.Polyceptron.Epochs, s.Polyceptron.Lift = k, l.epochs, lift
	s.Polyceptron.Step, s.Polyceptron.Gamma = l.step, l.gamma
	s.Polyceptron.Bias, s.Polyceptron.NoBias = l.bias, l.bias == 0
	mstep, err := plume.ParseMStep(l.mstep)
	if err != nil {
		return s, usageError{err}
	}
	s.PLUME.K, s.PLUME.Gamma, s.PLUME.MStep = k, l.gamma, mstep
	s.PLUME.MaxIter, s.PLUME.Restarts = s.Polyceptron.MaxIter, s.Polyceptron.Restarts
	s.PLUME.Lambda = s.CPM.Lambda
	s.PLUME.Bias, s.PLUME.NoBias = l.bias, l.bias == 0
	if l.name == learner.SPLA1 && l.gamma != 0 {
		return s, usagef("spla1 is PLUME's gamma -> infinity limit; --gamma does not apply")
	}
	if (l.name == learner.KernelPerceptron || l.name == learner.PLUME || l.name == learner.SPLA1) && lift != linear.NoLift {
		return s, usagef("--lift is for the perceptron and the Polyceptron")
	}
	return s.WithSeed(l.seed), nil
}

// validate checks the numeric flags against the ranges the learners
// accept, so that a bad value is a usage error naming the flag before any
// data is read. Zero keeps its meaning of "the default" where the flag has
// one (--lambda, --workers).
func (l *learnerFlags) validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	c, s := l.spec.CPM, &l.spec
	maxK := assign.MaxFaces // cpm
	switch l.name {
	case learner.PolyceptronOnline, learner.PolyceptronBatch, learner.PLUME, learner.SPLA1:
		maxK = 1 << 16
	}
	for _, k := range l.k {
		if k > maxK {
			return usagef("-k %d: want a number of faces from 1 to %d", k, maxK)
		}
	}
	nonNeg := func(name string, v float64) error {
		if !finite(v) || v < 0 {
			return usagef("%s %v: want a finite value >= 0 (0 for the default)", name, v)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"--step", l.step}, {"--gamma", l.gamma}, {"--epsilon", s.PLUME.Epsilon}, {"--sigma", s.Kernel.Kernel.Sigma}} {
		if err := nonNeg(f.name, f.v); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"--degree", s.Kernel.Kernel.Degree}, {"--cache-mb", s.Kernel.CacheMB}, {"--max-iter", s.Polyceptron.MaxIter}, {"--restarts", s.Polyceptron.Restarts}, {"--inner-iter", s.PLUME.InnerIter}} {
		if f.v < 0 {
			return usagef("%s %d: want a whole number >= 0 (0 for the default)", f.name, f.v)
		}
	}
	switch {
	case !finite(s.Kernel.Kernel.Coef0):
		return usagef("--coef0 %v: want a finite value", s.Kernel.Kernel.Coef0)
	case l.iterations < 1:
		return usagef("-i %d: want at least 1 SGD step", l.iterations)
	case !finite(c.C) || c.C <= 0:
		return usagef("-C %v: want a finite value > 0", c.C)
	case !finite(c.Lambda) || c.Lambda < 0:
		return usagef("--lambda %v: want a finite value > 0 (or 0 for 1/(C*T))", c.Lambda)
	case !finite(c.Entropy) || c.Entropy < 0:
		return usagef("--entropy %v: want a finite value >= 0 (nats; 0 = plain argmax)", c.Entropy)
	case !finite(c.CostRatio) || c.CostRatio <= 0:
		return usagef("--cost_ratio %v: want a finite value > 0", c.CostRatio)
	case !finite(l.bias):
		return usagef("--bias %v: want a finite value (0 = no bias)", l.bias)
	case c.Workers < 0:
		return usagef("--workers %d: want at least 1 (or 0 for GOMAXPROCS)", c.Workers)
	}
	return nil
}

// describe returns a short description of the learner for log lines.
func (l *learnerFlags) describe() string {
	switch l.name {
	case learner.KernelPerceptron:
		return fmt.Sprintf("%s (%s kernel)", l.name, l.kernel)
	case learner.PLUME, learner.SPLA1:
		return fmt.Sprintf("%s (%s M-step)", l.name, l.mstep)
	case learner.Perceptron, learner.PolyceptronOnline, learner.PolyceptronBatch:
		if l.lift != "none" {
			return fmt.Sprintf("%s (%s lift)", l.name, l.lift)
		}
	}
	return l.name
}

// intList is a flag holding one integer or a comma-separated list of
// distinct positive integers.
type intList []int

func (l *intList) String() string {
	var b []string
	for _, v := range *l {
		b = append(b, strconv.Itoa(v))
	}
	return strings.Join(b, ",")
}

func (l *intList) Set(s string) error {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return fmt.Errorf("%q is not a positive integer", f)
		}
		if slices.Contains(out, v) {
			return fmt.Errorf("%d is listed twice", v)
		}
		out = append(out, v)
	}
	*l = out
	return nil
}
