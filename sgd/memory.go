package sgd

import (
	"fmt"
	"math"

	"github.com/polyhedral/cpm/internal/budget"
	"github.com/polyhedral/cpm/sparsevec"
)

// ErrMemoryLimit means that a run would need more weight memory than
// Config.MaxMemory. It is the same value as model.ErrMemoryLimit.
var ErrMemoryLimit = budget.ErrMemoryLimit

// weightCopies returns how many D×Stride weight matrices a run of tasks
// polytopes holds at its peak: every polytope's own (a finished polytope
// is kept until the model is assembled from it, so a one-vs-one run holds
// all of them), one more per polytope with checkpoints (the writer's
// encoded snapshots, or the checkpoint resumed from), and one more per
// polytope training at once with validation (the best weights early
// stopping keeps).
func weightCopies(cfg Config, tasks int) int64 {
	n := int64(tasks)
	if cfg.Checkpoint.active() {
		n += int64(tasks)
	}
	if cfg.Valid.Data != nil {
		n += int64(min(cfg.Workers, tasks))
	}
	return n
}

// runMemory returns the weight memory of a run of tasks polytopes over d
// feature rows: weightCopies × d × StrideFor(K) × 4 bytes, as a float64
// so that it cannot overflow.
func runMemory(cfg Config, tasks, d int) float64 {
	return float64(weightCopies(cfg, tasks)) * float64(d) * float64(sparsevec.StrideFor(cfg.K)) * 4
}

// checkMemory refuses, with an error wrapping ErrMemoryLimit, a run of
// tasks polytopes over d feature rows whose weights would take more than
// cfg.MaxMemory bytes. It allows everything when MaxMemory is 0.
func checkMemory(cfg Config, tasks, d int) error {
	if cfg.MaxMemory <= 0 {
		return nil
	}
	if need := runMemory(cfg, tasks, d); need > float64(cfg.MaxMemory) {
		return fmt.Errorf("sgd: %d polytope(s) of K = %d faces over %d feature rows need %.0f bytes of weights (%d matrices of %d×%d float32), more than the memory limit of %d bytes: %w",
			tasks, cfg.K, d, need, weightCopies(cfg, tasks), d, sparsevec.StrideFor(cfg.K), cfg.MaxMemory, ErrMemoryLimit)
	}
	return nil
}

// maxRows returns the most feature rows that the weights of a streamed run
// of tasks polytopes may grow to within cfg.MaxMemory, or 0 for no limit.
func maxRows(cfg Config, tasks int) int {
	if cfg.MaxMemory <= 0 {
		return 0
	}
	per := runMemory(cfg, tasks, 1)
	return int(min(math.Floor(float64(cfg.MaxMemory)/per), math.MaxInt32))
}

// rowsError is the error of a streamed row whose feature index would grow
// the weights beyond maxD rows.
func rowsError(cfg Config, tasks, maxD int, index uint32) error {
	return fmt.Errorf("feature index %d: %d polytope(s) of K = %d faces over %d feature rows would need %.0f bytes of weights, more than the memory limit of %d bytes (at most %d feature rows fit): %w",
		index, tasks, cfg.K, int64(index)+1, runMemory(cfg, tasks, int(index)+1), cfg.MaxMemory, maxD, ErrMemoryLimit)
}

// sides returns the polytopes per binary problem: 2 when double-sided.
func sides(cfg Config) int {
	if cfg.DoubleSided {
		return 2
	}
	return 1
}

// initRows returns the feature rows the polytopes start with: dim, the
// data's (0 for streamed data, which starts at 1), or the initial model's
// if it has more.
func initRows(cfg Config, dim int) int {
	d := max(1, dim)
	if cfg.Init != nil {
		d = max(d, cfg.Init.D)
	}
	return d
}
