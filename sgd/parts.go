package sgd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/polyhedral/cpm/sparsevec"
)

// Part is one trained polytope of a run, everything Train takes from it to
// build the model and its report: the true weights (lazy scale folded), the
// step counter, the assignment statistics and the validation outcome.
type Part struct {
	W       *sparsevec.Matrix
	T       int64   // the polytope's step counter
	Counts  []int64 // per face, as PolytopeReport.Counts
	Entropy float64

	Steps      int64 // steps this run took
	ValidError float64
	ValidStep  int64
	Stopped    bool
}

// Runner trains the polytopes of a run somewhere else (package cluster: on
// the workers of a NATS JetStream cluster). With Config.Runner set, Train
// and TrainOvO ask it for every polytope, up to maxInFlight at once, from
// one goroutine each, instead of training them in this process, and build
// the model from the parts it returns. Run must return the part that Plan.TrainPart(ctx, i)
// returns for the same config and data, so that the model is the same
// bytes; n is the number of polytopes of the run and name polytope i's
// (Progress.Task).
type Runner interface {
	Run(ctx context.Context, i, n int, name string) (*Part, error)
}

// maxInFlight bounds the polytopes a run asks its Runner for at once.
const maxInFlight = 4096

// Plan is a training run split into its polytopes, which train
// independently: polytope i's row order depends only on the seed and i.
// Train and TrainOvO train every polytope of a plan; TrainPart trains one,
// so that a worker process computes exactly the part a local run would.
type Plan struct {
	cfg     Config
	classes []float32
	ovo     bool
	tasks   []task
	fp      *fingerprint
}

// NewPlan prepares the run Train (ovo false, outer as Train's) or TrainOvO
// (ovo true; outer must be nil) would make of data with cfg: the checks,
// the one shuffle of the rows and the polytopes' tasks. The plan keeps the
// shuffled copy of data; cfg.Runner is ignored.
func NewPlan(cfg Config, data *sparsevec.CSR, outer *float32, ovo bool) (*Plan, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if ovo {
		if outer != nil {
			return nil, errors.New("sgd: an outer label does not apply to one-vs-one training")
		}
		return planOvO(cfg, data)
	}
	return planBinary(cfg, data, outer)
}

// Len returns the number of polytopes of the plan.
func (p *Plan) Len() int { return len(p.tasks) }

// Name returns the name of polytope i ("outer", "3 vs 5/inner").
func (p *Plan) Name(i int) string { return p.tasks[i].name }

// TrainPart trains polytope i of the plan (0 <= i < Len) as Train or
// TrainOvO trains it. It may be called for several parts at once.
func (p *Plan) TrainPart(ctx context.Context, i int) (*Part, error) {
	if i < 0 || i >= len(p.tasks) {
		return nil, fmt.Errorf("sgd: part %d of a run of %d polytopes", i, len(p.tasks))
	}
	if p.cfg.Checkpoint.active() {
		return nil, errors.New("sgd: a part of a run cannot take checkpoints")
	}
	t := p.tasks[i]
	if p.cfg.Init != nil {
		t.init, t.initSteps = p.cfg.Init.Weights[i], p.cfg.Init.StepsOf(i)
	}
	poly, out, err := t.run(ctx, p.cfg, nil, nil)
	if err != nil {
		return nil, err
	}
	part := &Part{
		W: poly.W, T: poly.t, Counts: slices.Clone(poly.counts()), Entropy: poly.entropy(),
		Steps: out.steps, ValidError: math.NaN(),
	}
	if t.valid != nil {
		part.ValidError, part.ValidStep, part.Stopped = out.validError, out.validStep, out.stopped
	}
	return part, nil
}

// polytope returns the part as the trained polytope runAll hands to
// buildModel, and its outcome.
func (pt *Part) polytope() (*polytope, outcome) {
	p := &polytope{W: pt.W, scale: 1, t: pt.T, kept: &keptStats{Counts: pt.Counts, Entropy: pt.Entropy}}
	return p, outcome{steps: pt.Steps, validError: pt.ValidError, validStep: pt.ValidStep, stopped: pt.Stopped}
}

// check reports whether pt fits polytope i of the plan's run: its K, its
// counts, at least the run's feature rows (the model pads to the largest).
func (pt *Part) check(cfg Config, minD int) error {
	switch {
	case pt == nil || pt.W == nil:
		return errors.New("no weights")
	case pt.W.K != cfg.K || pt.W.Stride != sparsevec.StrideFor(cfg.K):
		return fmt.Errorf("K = %d (stride %d), the run has K = %d", pt.W.K, pt.W.Stride, cfg.K)
	case pt.W.D < minD || len(pt.W.Data) != pt.W.D*pt.W.Stride:
		return fmt.Errorf("%d feature rows (%d values), the run has %d", pt.W.D, len(pt.W.Data), minD)
	case len(pt.Counts) != cfg.K:
		return fmt.Errorf("%d assignment counts for K = %d", len(pt.Counts), cfg.K)
	}
	return nil
}

// partMagic starts every encoded Part.
const partMagic = "CPMPART1"

// MarshalBinary encodes the part: partMagic, then little-endian D, K,
// Stride (u32), T, Steps, ValidStep (i64), Entropy, ValidError (f64),
// Stopped (u8), K counts (i64) and D×Stride weights (f32).
func (pt *Part) MarshalBinary() ([]byte, error) {
	w := pt.W
	b := make([]byte, 0, len(partMagic)+12+24+16+1+8*len(pt.Counts)+4*len(w.Data))
	b = append(b, partMagic...)
	for _, v := range []int{w.D, w.K, w.Stride} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	for _, v := range []int64{pt.T, pt.Steps, pt.ValidStep} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	for _, v := range []float64{pt.Entropy, pt.ValidError} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	if pt.Stopped {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	for _, c := range pt.Counts {
		b = binary.LittleEndian.AppendUint64(b, uint64(c))
	}
	for _, v := range w.Data {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b, nil
}

// ErrBadPart is wrapped by the errors of UnmarshalBinary.
var ErrBadPart = errors.New("sgd: malformed part")

// UnmarshalBinary decodes a part written by MarshalBinary. It checks the
// shape against the length of b before allocating, so a hostile header
// cannot make it allocate more than b's size.
func (pt *Part) UnmarshalBinary(b []byte) error {
	const head = len(partMagic) + 12 + 24 + 16 + 1
	if len(b) < head || string(b[:len(partMagic)]) != partMagic {
		return fmt.Errorf("%w: no part header", ErrBadPart)
	}
	u32 := func(off int) int { return int(binary.LittleEndian.Uint32(b[off:])) }
	u64 := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	o := len(partMagic)
	d, k, stride := u32(o), u32(o+4), u32(o+8)
	if k < 1 || stride != sparsevec.StrideFor(k) || d < 1 {
		return fmt.Errorf("%w: shape %d×%d (stride %d)", ErrBadPart, d, k, stride)
	}
	if want := uint64(head) + 8*uint64(k) + 4*uint64(d)*uint64(stride); uint64(len(b)) != want {
		return fmt.Errorf("%w: %d bytes, a %d×%d part has %d", ErrBadPart, len(b), d, k, want)
	}
	o += 12
	p := Part{T: int64(u64(o)), Steps: int64(u64(o + 8)), ValidStep: int64(u64(o + 16))}
	o += 24
	p.Entropy, p.ValidError = math.Float64frombits(u64(o)), math.Float64frombits(u64(o+8))
	o += 16
	if b[o] > 1 {
		return fmt.Errorf("%w: stopped flag %d", ErrBadPart, b[o])
	}
	p.Stopped = b[o] == 1
	o++
	p.Counts = make([]int64, k)
	for j := range p.Counts {
		p.Counts[j] = int64(u64(o))
		o += 8
	}
	p.W = &sparsevec.Matrix{D: d, K: k, Stride: stride, Data: make([]float32, d*stride)}
	for j := range p.W.Data {
		p.W.Data[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[o:]))
		o += 4
	}
	*pt = p
	return nil
}
