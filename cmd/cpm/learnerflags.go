package main

import (
	"flag"
	"strings"

	"github.com/polyhedral/cpm/learner"
)

// learnerFlags are the flags that choose and configure a learner, shared
// by train and cv. Which learner reads which flag is the registry's
// (package learner); k holds the -k list once build has run.
type learnerFlags struct {
	name  string
	label labelFlag
	seed  uint64
	flags *learner.Flags
	k     []int
}

func addLearnerFlags(fs *flag.FlagSet) *learnerFlags {
	l := &learnerFlags{}
	fs.StringVar(&l.name, "learner", learner.CPM, "learner: "+strings.Join(learner.Names(), ", "))
	fs.Uint64Var(&l.seed, "seed", 1, "random seed: same data, flags and seed give a byte-identical model")
	fs.Var(&l.label, "outer_label", "binary data: cpm's label outside the polytope; perceptron's label for a positive score; polyceptron's label inside (default: the larger label)")
	fs.Var(&l.label, "positive_label", "same as --outer_label")
	l.flags = learner.AddFlags(fs)
	return l
}

// build returns the learner spec the flags describe, or a usage error.
func (l *learnerFlags) build() (learner.Spec, error) {
	s, err := learner.Build(l.name, l.flags)
	if err != nil {
		return s, usageError{err}
	}
	l.k = l.flags.Ints("k")
	if l.label.set {
		v := l.label.v
		s.Label = &v
	}
	return s.WithSeed(l.seed), nil
}

// describe returns a short description of the learner for log lines.
func (l *learnerFlags) describe() string { return learner.Summary(l.name, l.flags) }
