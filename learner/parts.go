package learner

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"

	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// ErrNoParts is returned by Plan for a spec whose training does not split
// into independent parts (every learner but the CPM).
var ErrNoParts = errors.New("learner: training does not split into parts")

// Plan returns the CPM run Train would make of s on data, split into its
// polytopes (sgd.Plan): the same checks, the same scaling fitted on data
// and the same completed configuration, so that sgd.Plan.TrainPart(i)
// gives exactly polytope i of the model Train returns (hashing and
// scaling, which Train adds to the model, included). Together with
// sgd.Config.Runner this lets another process train each polytope (package
// cluster). It returns ErrNoParts for other learners.
func Plan(s Spec, data *sparsevec.CSR) (*sgd.Plan, error) {
	if s.name() != CPM {
		return nil, fmt.Errorf("%w: %s trains as one piece", ErrNoParts, s.name())
	}
	p, err := s.prepare(data)
	if err != nil {
		return nil, err
	}
	c := cpmRun(p.s, p.data.Rows())
	if c.OvO && p.s.Label != nil {
		return nil, fmt.Errorf("learner: an outer label does not apply to one-vs-one training")
	}
	return sgd.NewPlan(c.Config, p.data, p.s.Label, c.OvO)
}

// NewFlags returns every registered learner's flags at their defaults,
// bound to no command line: the flags of a spec that arrives as values
// (SetValues) rather than as arguments.
func NewFlags() *Flags { return AddFlags(flag.NewFlagSet("learner", flag.ContinueOnError)) }

// Values returns the value of every flag as text, by canonical name, as
// Set accepts it back: the whole learner configuration f describes.
func (f *Flags) Values() map[string]string {
	out := make(map[string]string, len(f.vals))
	for n, v := range f.vals {
		out[n] = v.String()
	}
	return out
}

// SetValues sets the flags named in vals (canonical names only, as Values
// gives them) and leaves the others as they are. An unknown name or a
// value the flag does not parse is an error naming it.
func (f *Flags) SetValues(vals map[string]string) error {
	for _, n := range sortedKeys(vals) {
		if _, ok := f.vals[n]; !ok {
			return fmt.Errorf("no learner flag --%s", n)
		}
		if err := f.vals[n].Set(vals[n]); err != nil {
			return fmt.Errorf("--%s %q: %w", n, vals[n], err)
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Parts returns the number of polytopes a CPM run of s on data trains
// (what Plan(s, data).Len() returns, without preparing the run), or
// ErrNoParts for other learners.
func Parts(s Spec, data *sparsevec.CSR) (int, error) {
	if s.name() != CPM {
		return 0, fmt.Errorf("%w: %s trains as one piece", ErrNoParts, s.name())
	}
	c := cpmRun(s, data.Rows())
	n := 1
	if c.OvO {
		k := len(data.DistinctLabels())
		n = k * (k - 1) / 2
	}
	if c.DoubleSided {
		n *= 2
	}
	return n, nil
}
