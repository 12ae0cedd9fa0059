package main

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

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
	s, err := l.buildWith(l.flags)
	if err == nil {
		l.k = l.flags.Ints("k")
	}
	return s, err
}

// buildWith returns the learner spec that f describes with the learner,
// label and seed of l (f: l's flags, or a copy with other values, as cpm
// tune's points are), or a usage error.
func (l *learnerFlags) buildWith(f *learner.Flags) (learner.Spec, error) {
	s, err := learner.Build(l.name, f)
	if err != nil {
		return s, usageError{err}
	}
	if l.label.set {
		v := l.label.v
		s.Label = &v
	}
	return s.WithSeed(l.seed), nil
}

// describe returns a short description of the learner for log lines.
func (l *learnerFlags) describe() string { return learner.Summary(l.name, l.flags) }

// badValueRE matches the flag package's error for a value a flag does not
// parse (compiled on first use).
var badValueRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -(\S+): `)
})

// listHint returns err, from parsing the flags of fs, with a hint when it
// is a list given to a flag that takes one number: such a flag takes a list
// only in cpm tune's --grid.
func listHint(fs *flag.FlagSet, err error) error {
	m := badValueRE().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	value, uerr := strconv.Unquote(m[1])
	f := fs.Lookup(m[2])
	if uerr != nil || f == nil || !strings.Contains(value, ",") {
		return err
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return err
	}
	switch g.Get().(type) {
	case float64, int64, int, uint64, uint:
	default:
		return err
	}
	if name, ok := learner.NumericFlag(m[2]); ok {
		return fmt.Errorf("%w; -%s takes one number: to search a list use cpm tune --grid '%s=%s'", err, m[2], name, value)
	}
	return fmt.Errorf("%w; -%s takes one number, not a list", err, m[2])
}
