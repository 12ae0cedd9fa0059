package compute

import (
	"fmt"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/learner"
)

// SpecOf returns the learner spec task t describes, built as cpm builds it
// from its command line: every learner flag set from t.Flags (and checked
// as the command line checks it), then the label and the seed. A flag
// that does not exist or does not parse is an error wrapping
// cluster.ErrInvalidTask.
func SpecOf(t *cluster.Task) (learner.Spec, error) {
	f := learner.NewFlags()
	if err := f.SetValues(t.Flags); err != nil {
		return learner.Spec{}, fmt.Errorf("%w: %w", cluster.ErrInvalidTask, err)
	}
	if len(f.Ints("k")) > 1 {
		return learner.Spec{}, fmt.Errorf("%w: -k %s: a task trains one K", cluster.ErrInvalidTask, f.Get("k"))
	}
	s, err := learner.Build(t.Learner, f)
	if err != nil {
		return learner.Spec{}, fmt.Errorf("%w: %w", cluster.ErrInvalidTask, err)
	}
	if t.Label != nil {
		v := *t.Label
		s.Label = &v
	}
	return s.WithSeed(t.Seed), nil
}
