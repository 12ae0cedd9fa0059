package sgd

import (
	"cmp"
	"fmt"
	"math"
	"runtime"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// Config holds the hyperparameters of CPM training. The zero value is
// usable: every field documents its default.
type Config struct {
	// K is the number of faces per polytope. If 0, it defaults to 10.
	K int
	// Iterations is T, the number of SGD steps per polytope.
	// If 0, it defaults to 10,000,000.
	Iterations int64
	// Lambda is the L2 regularisation λ. If 0, it is 1/(C·T), as the
	// authors' tool derives it.
	Lambda float64
	// C is the regularisation factor used when Lambda is 0.
	// If 0, it defaults to 1.
	C float64
	// Entropy is ASSIGN's target entropy h in nats; 0 disables the
	// adjustment (plain argmax).
	Entropy float64
	// CostRatio multiplies the step of negative rows. If 0, it defaults to 1.
	CostRatio float64
	// Bias is the value of the constant feature appended to every row.
	// If 0, it defaults to 1. Set NoBias to train without one.
	Bias   float64
	NoBias bool
	// Seed seeds every random choice (row order). The same data, config and
	// seed give bit-identical weights.
	Seed uint64
	// Reshuffle draws a fresh permutation every epoch; otherwise the rows
	// are shuffled once and every epoch repeats that order.
	Reshuffle bool
	// DoubleSided trains a second polytope with the labels swapped and
	// scores f_outer(x) - f_inner(x).
	DoubleSided bool
	// Workers bounds the number of polytopes trained at once, except that
	// polytopes sharing the passes of a streamed input (the two of a
	// double-sided TrainStream) always train together, counting as one.
	// If 0, it defaults to runtime.GOMAXPROCS(0).
	Workers int
	// Progress, if set, is called about every ProgressEvery steps of each
	// polytope, from the goroutine training it.
	Progress func(Progress)
	// ProgressEvery is the number of steps between Progress calls.
	// If 0, it defaults to 1<<20.
	ProgressEvery int64

	// MaxMemory, if > 0, bounds the bytes of weights a run holds: the
	// D×StrideFor(K) float32 matrices of its polytopes (every polytope of
	// the run, as all are kept until the model is assembled; one more copy
	// each with checkpoints, and one more per worker with validation).
	// In-memory training checks it before allocating and fails with an
	// error wrapping ErrMemoryLimit; streamed training, whose feature rows
	// grow as rows arrive, fails at the first row whose feature index
	// would need more. If 0, there is no limit.
	MaxMemory int64

	// Init, if set, warm-starts training from a CPM model: polytope i
	// starts from Init.Weights[i] (feature rows beyond Init.D start at 0;
	// a compact Init, model.Model.Rows set, is made dense first)
	// and its Pegasos step counter continues from Init.StepsOf(i), so the
	// first step is t0+1 with shrink 1 - 1/(t0+1), not t = 1, whose shrink
	// 1 - η_1·λ = 0 would erase the weights. Init must be a valid CPM model
	// of the same shape as the run: K, Sides (DoubleSided), OvO, the label
	// map and Bias; otherwise training fails with an error naming both.
	// ASSIGN's dictionary starts empty. Lambda is not taken from Init:
	// when Lambda is 0 it is still 1/(C·T) with T this run's Iterations,
	// which changes the objective whenever T differs from Init's; set
	// Lambda (usually to Init.Lambda) to continue the same one.
	Init *model.Model
	// Checkpoint configures checkpoints of the training state and resuming
	// from one (in-memory training only); the zero value takes none.
	Checkpoint Checkpointing
	// Valid configures validation during training and early stopping; the
	// zero value validates nothing.
	Valid Validation

	// Compact chooses the encoding of the shuffled copy of in-memory
	// training rows (see Compaction); the zero value is CompactAuto. The
	// steps, and so the model, are the same in every encoding.
	Compact Compaction

	// Runner, if set, trains the polytopes of Train and TrainOvO elsewhere
	// (see Runner); Workers then does not bound them (up to 4096 are asked
	// for at once). It cannot be combined with checkpoints, and
	// TrainStream refuses it. If nil, every polytope trains in this
	// process.
	Runner Runner
}

// Progress is a snapshot of one polytope's training.
type Progress struct {
	Task      string  // which polytope: "outer", "inner", "pair 3 vs 7/outer", ...
	Step, Of  int64   // steps done and planned
	Epoch     float64 // passes over the data, fractional
	NegLoss   float64 // mean hinge loss of negative rows since the last report
	PosLoss   float64 // mean hinge loss of positive rows since the last report
	Violation float64 // fraction of rows that caused an update since the last report
	Entropy   float64 // assignment entropy (nats)

	// With validation (Config.Valid), at the reports that follow an
	// evaluation: the polytope's validation error now, the lowest so far
	// and the step it was measured at, and whether early stopping ends
	// training here. ValidError and BestValidError are NaN at the other
	// reports and without validation.
	ValidError     float64
	BestValidError float64
	BestStep       int64
	Stopped        bool
}

// withDefaults returns c with defaults filled in, or an error if a field is
// out of range.
func (c Config) withDefaults() (Config, error) {
	c.K = cmp.Or(c.K, 10)
	c.Iterations = cmp.Or(c.Iterations, 10_000_000)
	c.C = cmp.Or(c.C, 1)
	c.CostRatio = cmp.Or(c.CostRatio, 1)
	c.Bias = cmp.Or(c.Bias, 1)
	if c.NoBias {
		c.Bias = 0
	}
	c.Workers = cmp.Or(c.Workers, runtime.GOMAXPROCS(0))
	c.ProgressEvery = cmp.Or(c.ProgressEvery, 1<<20)
	c.Lambda = cmp.Or(c.Lambda, 1/(c.C*float64(c.Iterations)))
	if c.Init != nil {
		c.Init = c.Init.Dense() // training continues every feature row
	}
	if c.Valid.Data != nil && c.Valid.Every == 0 {
		c.Valid.Every = c.ProgressEvery
	}
	switch {
	case c.K < 1:
		return c, fmt.Errorf("sgd: K = %d, want >= 1", c.K)
	case c.Iterations < 1:
		return c, fmt.Errorf("sgd: Iterations = %d, want >= 1", c.Iterations)
	case !(c.Lambda > 0) || math.IsInf(c.Lambda, 0):
		return c, fmt.Errorf("sgd: Lambda = %v, want a finite value > 0", c.Lambda)
	case !(c.C > 0) || math.IsInf(c.C, 0):
		return c, fmt.Errorf("sgd: C = %v, want a finite value > 0", c.C)
	case !(c.CostRatio > 0) || math.IsInf(c.CostRatio, 0):
		return c, fmt.Errorf("sgd: CostRatio = %v, want a finite value > 0", c.CostRatio)
	case c.Entropy < 0 || math.IsNaN(c.Entropy) || math.IsInf(c.Entropy, 0):
		return c, fmt.Errorf("sgd: Entropy = %v, want a finite value >= 0", c.Entropy)
	case math.IsNaN(c.Bias) || math.IsInf(c.Bias, 0):
		return c, fmt.Errorf("sgd: Bias = %v, want a finite value", c.Bias)
	case c.MaxMemory < 0:
		return c, fmt.Errorf("sgd: MaxMemory = %d, want >= 0", c.MaxMemory)
	case c.Workers < 1:
		return c, fmt.Errorf("sgd: Workers = %d, want >= 1", c.Workers)
	case c.Checkpoint.Every < 0 || c.Checkpoint.Interval < 0:
		return c, fmt.Errorf("sgd: checkpoint every %d steps / %v, want >= 0", c.Checkpoint.Every, c.Checkpoint.Interval)
	case c.Valid.Data == nil && (c.Valid.Every != 0 || c.Valid.Patience != 0):
		return c, fmt.Errorf("sgd: validation every %d steps with patience %d, but no validation data", c.Valid.Every, c.Valid.Patience)
	case c.Valid.Data != nil && c.Valid.Data.Rows() == 0:
		return c, fmt.Errorf("sgd: the validation data has %w", ErrNoRows)
	case c.Runner != nil && c.Checkpoint.active():
		return c, fmt.Errorf("sgd: checkpoints need every polytope in this process; a Runner trains them elsewhere")
	case c.Valid.Every < 0 || c.Valid.Patience < 0:
		return c, fmt.Errorf("sgd: validation every %d steps with patience %d, want >= 0", c.Valid.Every, c.Valid.Patience)
	}
	return c, nil
}

// Compaction is how the shuffled copy of in-memory training rows is
// stored (sparsevec.Packing).
type Compaction uint8

const (
	// CompactAuto stores 2-byte indices when every index is below 65536,
	// and 1-byte codes into a dictionary when, in addition, the rows hold
	// at most 256 distinct values (sparsevec.PackCompact|PackDirect):
	// MNIST takes 3 bytes per nonzero instead of 8, and the kernels read
	// codes directly (sparsevec.CodedRow), so a step costs what it costs
	// on 4-byte rows. 2-byte indices with float32 values are widened
	// before each step (about 10 ns per MNIST-sized row).
	CompactAuto Compaction = iota
	// CompactNo stores 4-byte indices and float32 values, read in place.
	CompactNo
	// CompactYes stores every compact encoding that fits
	// (sparsevec.PackCompact), also 1-byte codes beside 4-byte indices,
	// which are decoded before each step (about 0.5 ns per nonzero).
	CompactYes
)

// Packing returns the sparsevec encodings of c.
func (c Compaction) Packing() sparsevec.Packing {
	switch c {
	case CompactNo:
		return 0
	case CompactYes:
		return sparsevec.PackCompact
	}
	return sparsevec.PackCompact | sparsevec.PackDirect
}

// String returns auto, no or yes.
func (c Compaction) String() string {
	switch c {
	case CompactNo:
		return "no"
	case CompactYes:
		return "yes"
	}
	return "auto"
}
