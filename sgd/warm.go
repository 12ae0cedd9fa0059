package sgd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/polyhedral/cpm/sgd/internal/checkpoint"
	"github.com/polyhedral/cpm/sparsevec"
)

// ErrInitMismatch is wrapped by the error of a warm start (Config.Init)
// from a model that does not fit the run.
var ErrInitMismatch = errors.New("initial model does not match this run")

// ErrNoRows: the training or validation data holds no row. Errors wrap it
// with the data concerned; test with errors.Is.
var ErrNoRows = errors.New("no rows")

// prepare checks cfg.Init against a run with the given label map, and,
// when checkpoints are active, returns the run's fingerprint after checking
// it against the checkpoint to resume. data is nil for streamed training,
// which takes no checkpoints.
func prepare(cfg Config, data *sparsevec.CSR, classes []float32, ovo bool) (*fingerprint, error) {
	if cfg.Init != nil {
		if err := checkInit(cfg, classes, ovo); err != nil {
			return nil, err
		}
	}
	if !cfg.Checkpoint.active() {
		return nil, nil
	}
	if data == nil {
		return nil, errors.New("sgd: checkpoints need in-memory training data; streamed training cannot be checkpointed")
	}
	sides := 1
	if cfg.DoubleSided {
		sides = 2
	}
	tasks := sides
	if ovo {
		tasks = sides * len(Pairs(len(classes)))
	}
	fp, err := newFingerprint(cfg, data, classes, ovo, tasks)
	if err != nil {
		return nil, err
	}
	if r := cfg.Checkpoint.Resume; r != nil {
		if err := fp.Matches(r.fp, r.name); err != nil {
			return nil, err
		}
	}
	return fp, nil
}

// checkInit reports whether cfg.Init can warm-start a run of cfg (completed
// by withDefaults) with the given label map: a valid CPM model with the
// run's K, sides, one-vs-one setting, labels and bias. The error wraps
// ErrInitMismatch and names every difference.
func checkInit(cfg Config, classes []float32, ovo bool) error {
	m := cfg.Init
	if m.Learner != "cpm" {
		return fmt.Errorf("sgd: warm start: %w: it was trained by %s, not cpm", ErrInitMismatch, m.Learner)
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("sgd: warm start: %w", err)
	}
	sided := func(n int) string {
		if n == 2 {
			return "double-sided"
		}
		return "single-sided"
	}
	kind := func(ovo, multi bool) string {
		switch {
		case ovo:
			return "one-vs-one"
		case multi:
			return "all-together multiclass"
		}
		return "binary"
	}
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	sides := 1
	if cfg.DoubleSided {
		sides = 2
	}
	if m.K != cfg.K {
		add("K: initial model %d, this run %d", m.K, cfg.K)
	}
	if m.Sides != sides {
		add("initial model is %s, this run %s", sided(m.Sides), sided(sides))
	}
	if m.OvO != ovo || m.Multiclass {
		add("initial model is %s, this run %s", kind(m.OvO, m.Multiclass), kind(ovo, false))
	}
	if !checkpoint.EqualBits(m.Classes, classes) {
		if ovo {
			add("labels: initial model %v, this run %v", m.Classes, classes)
		} else {
			add("label map [outer inner]: initial model %v, this run %v", m.Classes, classes)
		}
	}
	if m.Bias != cfg.Bias {
		add("bias: initial model %v, this run %v", m.Bias, cfg.Bias)
	}
	if diffs != nil {
		return fmt.Errorf("sgd: warm start: %w: %s", ErrInitMismatch, strings.Join(diffs, "; "))
	}
	return nil
}
