package sgd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/polyhedral/cpm/internal/rng"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// Report summarises a training run for logs and --json metrics.
type Report struct {
	Seconds        float64
	Steps          int64 // SGD steps this run took over every polytope (not counting those of a resumed checkpoint)
	StepsPerSecond float64
	Polytopes      []PolytopeReport
}

// PolytopeReport describes one trained polytope.
type PolytopeReport struct {
	Task    string
	Steps   int64   // the polytope's step counter t (with a warm start, including the initial model's steps)
	Entropy float64 // final assignment entropy, nats
	Counts  []int64 // per face: positives whose unadjusted assignment is that face

	// With validation (Config.Valid): the validation error of the polytope
	// returned (NaN if its problem has no validation rows), the steps of
	// this run after which it was measured, and whether early stopping
	// ended training before Iterations.
	ValidError float64
	ValidStep  int64
	Stopped    bool
}

// task is one polytope to train: rows whose label equals outer are
// positives (outside the polytope).
type task struct {
	name   string
	outer  float32
	source func() (source, error)
	d      int    // initial feature rows (grown on demand)
	maxD   int    // streamed: most feature rows within Config.MaxMemory (0: no limit)
	tasks  int    // polytopes of the run, for maxD's error
	ids    int    // row ids to reserve in ASSIGN's dictionary
	leave  func() // if set, called when the task reads no more

	// withNext says that the task reads the same passes as the next task
	// (package input/shared): neither can finish a pass without the other, so
	// runAll starts them together.
	withNext bool

	init      *sparsevec.Matrix // warm start: initial weights (nil: zero)
	initSteps int64             // warm start: steps init was trained with

	valid *validSet // validation problem (nil: none)
}

// outcome is what task.run returns besides the polytope.
type outcome struct {
	steps      int64 // steps taken by this run
	validError float64
	validStep  int64
	stopped    bool
}

// mix derives the PCG stream of task i, so that every polytope's row order
// depends only on the seed and its position in the model, never on
// scheduling.
func mix(i int) uint64 { return rng.Gamma * uint64(i+1) }

// shuffleStream is the PCG stream of the one physical shuffle of in-memory
// data that precedes training.
const shuffleStream = 0x5eed

// run trains one polytope for cfg.Iterations steps, or for what remains of
// them after the snapshot resume (nil: from the start), and returns it with
// the number of steps it took. With ck set it snapshots its state at chunk
// boundaries (see Checkpointing); with a validation problem it evaluates
// the polytope at chunk boundaries too, and may stop early and roll back
// to the best evaluation (see Validation). The step loop itself is the
// same either way.
func (t *task) run(ctx context.Context, cfg Config, ck *taskCk, resume *taskState) (*polytope, outcome, error) {
	var out outcome
	p, err := t.train(ctx, cfg, ck, resume, &out)
	return p, out, err
}

func (t *task) train(ctx context.Context, cfg Config, ck *taskCk, resume *taskState, out *outcome) (*polytope, error) {
	p, err := newPolytope(cfg, t.d)
	if err != nil {
		return nil, err
	}
	p.asg.Reserve(t.ids)
	if t.init != nil {
		p.warm(t.init, t.initSteps)
	}
	if t.leave != nil {
		defer t.leave()
	}
	src, err := t.source()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	if c, ok := src.(interface{ Close() error }); ok {
		defer c.Close()
	}
	var mem *memorySource
	if ck != nil || resume != nil {
		var ok bool
		if mem, ok = src.(*memorySource); !ok {
			return nil, fmt.Errorf("%s: checkpoints need in-memory training data", t.name)
		}
	}
	start, err := t.resume(cfg, p, mem, resume)
	if err != nil {
		return nil, err
	}
	if m, ok := src.(*memorySource); ok {
		m.prefetchWeights(p.W) // after resume, which may replace p.W
	}
	vs := newStopper(t.valid, cfg)
	end := cfg.Iterations // lowered by early stopping
	if resume != nil && resume.Early != nil && vs != nil {
		vs.restore(resume.Early)
		if vs.stopped() {
			end, out.stopped = start, true
		}
	}
	if ck != nil {
		ck.last, ck.lastDone = time.Now(), start
	}
	every := cfg.ProgressEvery
	for done := start; done < end; {
		n := min(end-done, 1<<14)
		if n > every-done%every {
			n = every - done%every
		}
		if ck != nil {
			n = ck.limit(done, n)
		}
		if vs != nil {
			n = vs.limit(done, n)
		}
		if err := ctx.Err(); err != nil {
			if ck != nil && done != ck.lastDone {
				ck.snapshot(p, mem, vs, done)
			}
			out.steps = done - start
			return nil, err
		}
		if err := t.steps(cfg, p, src, n); err != nil {
			out.steps = done - start
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr // the input stopped because training was cancelled
			}
			return nil, err
		}
		done += n
		evaluated := vs != nil && vs.due(done, cfg.Iterations)
		if evaluated && vs.eval(p, done) {
			end, out.stopped = done, true
		}
		if cfg.Progress != nil && (done%every == 0 || done == end || evaluated) {
			pr := t.progress(cfg, p, src, done)
			if evaluated {
				pr.ValidError = vs.last
				if !math.IsInf(vs.best, 1) {
					pr.BestValidError, pr.BestStep = vs.best, vs.bestDone
				}
				pr.Stopped = out.stopped
			}
			cfg.Progress(pr)
		}
		if ck != nil && ck.due(done) {
			ck.snapshot(p, mem, vs, done)
		}
	}
	if ck != nil && ck.lastDone != end {
		ck.snapshot(p, mem, vs, end)
	}
	out.steps = end - start
	if vs != nil {
		out.validError, out.validStep = vs.last, end
		if vs.keepBest(p) {
			out.validError, out.validStep = vs.best, vs.bestDone
		}
	}
	p.fold()
	return p, nil
}

// resume restores p and mem from the snapshot of a resumed run, if any,
// and returns the number of steps already done.
func (t *task) resume(cfg Config, p *polytope, mem *memorySource, resume *taskState) (int64, error) {
	if resume == nil {
		return 0, nil
	}
	// The checkpoint decoded whole; what remains to check is how it fits
	// this run's polytope and rows, and a misfit is a malformed checkpoint
	// (its fingerprint matched).
	bad := func(err error) error {
		return fmt.Errorf("%s: %w", t.name, &CheckpointError{Name: cfg.Checkpoint.Resume.name, Offset: -1, Err: fmt.Errorf("%w: %w", ErrCheckpointCorrupt, err)})
	}
	if want := t.initSteps + resume.Done; resume.T != want {
		return 0, bad(fmt.Errorf("snapshot after %d steps has step counter %d, want %d", resume.Done, resume.T, want))
	}
	if err := p.restore(resume); err != nil {
		return 0, bad(err)
	}
	if err := mem.restore(&resume.Src); err != nil {
		return 0, bad(err)
	}
	return resume.Done, nil
}

// steps makes n SGD steps of p on rows drawn from src, growing p's weight
// rows up to t.maxD for rows with larger feature indices.
func (t *task) steps(cfg Config, p *polytope, src source, n int64) error {
	if m, ok := src.(*memorySource); ok && m.coded {
		return t.stepsCoded(cfg, p, m, n)
	}
	if c, ok := src.(*checkedSource); ok {
		return t.stepsStream(cfg, p, c, n)
	}
	for range n {
		x, y, id, err := src.Next()
		if err == nil && len(x.Idx) > 0 {
			err = t.fit(&cfg, p, x.Idx[len(x.Idx)-1])
		}
		if err != nil {
			return fmt.Errorf("%s: step %d: %w", t.name, p.t+1, err)
		}
		p.step(&x, y == t.outer, id)
	}
	return nil
}

// fit grows p.W, when the run bounds its rows (t.maxD > 0), to hold
// feature last, a row's largest index; a feature at or beyond the bound
// is an error (rowsError).
//
// The check is inlined into the step loops; the growth is not.
func (t *task) fit(cfg *Config, p *polytope, last uint32) error {
	if t.maxD == 0 || int(last) < p.W.D {
		return nil
	}
	return t.grow(cfg, p, last)
}

// grow is fit's growth of p.W.
func (t *task) grow(cfg *Config, p *polytope, last uint32) error {
	if int(last) >= t.maxD {
		return rowsError(*cfg, t.tasks, t.maxD, last)
	}
	p.W.GrowMax(int(last)+1, t.maxD)
	return nil
}

// progress returns the progress report of p after done steps, with the
// step statistics gathered since the previous report.
func (t *task) progress(cfg Config, p *polytope, src source, done int64) Progress {
	st := p.takeStats()
	pr := Progress{Task: t.name, Step: done, Of: cfg.Iterations, Epoch: src.Epoch(), Entropy: p.asg.Entropy(), ValidError: math.NaN(), BestValidError: math.NaN()}
	if st.Neg > 0 {
		pr.NegLoss = st.NegLoss / float64(st.Neg)
	}
	if st.Pos > 0 {
		pr.PosLoss = st.PosLoss / float64(st.Pos)
	}
	if st.Neg+st.Pos > 0 {
		pr.Violation = float64(st.Updates) / float64(st.Neg+st.Pos)
	}
	return pr
}

// runAll trains every task and returns the polytopes in task order. Tasks
// run in units: a task alone, or a run of tasks chained by withNext, which
// share passes and so start together, each in its own goroutine, whatever
// cfg.Workers says (they interleave even with GOMAXPROCS=1). At most
// cfg.Workers units run at once. fp describes the run for checkpoints (nil
// when cfg.Checkpoint is not active). With cfg.Checkpoint.Path set, the
// checkpoint file is written a last time before runAll returns, also when
// training was cancelled; a failure to write it stops training.
func runAll(ctx context.Context, cfg Config, tasks []task, fp *fingerprint) ([]*polytope, *Report, error) {
	start := time.Now()
	out := make([]*polytope, len(tasks))
	ran := make([]outcome, len(tasks))
	if cfg.Init != nil {
		for i := range tasks {
			tasks[i].init, tasks[i].initSteps = cfg.Init.Weights[i], cfg.Init.StepsOf(i)
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var w *ckWriter
	resume := cfg.Checkpoint.Resume
	if cfg.Checkpoint.Path != "" {
		w = newCkWriter(cfg.Checkpoint.Path, fp, resume, cancel)
	}
	runTask := func(ctx context.Context, i int) error {
		if err := ctx.Err(); err != nil {
			return err // cancelled before it started: no snapshot
		}
		var ck *taskCk
		if w != nil {
			ck = &taskCk{w: w, i: i, every: cfg.Checkpoint.Every, interval: cfg.Checkpoint.Interval}
		}
		var st *taskState
		if resume != nil {
			st = resume.tasks[i]
		}
		if cfg.Runner != nil {
			part, err := cfg.Runner.Run(ctx, i, len(tasks), tasks[i].name)
			if err != nil {
				return fmt.Errorf("%s: %w", tasks[i].name, err)
			}
			if err := part.check(cfg, tasks[i].d); err != nil {
				return fmt.Errorf("%s: %w: %w", tasks[i].name, ErrBadPart, err)
			}
			out[i], ran[i] = part.polytope()
			return nil
		}
		p, o, err := tasks[i].run(ctx, cfg, ck, st)
		out[i], ran[i] = p, o
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cfg.Workers)
	if cfg.Runner != nil {
		// Polytopes are asked for at once, up to maxInFlight: enough to
		// keep a large fleet busy, few enough goroutines for any run.
		g.SetLimit(min(len(tasks), maxInFlight))
	}
	for next := 0; next < len(tasks); {
		lo, hi := next, next+1
		for hi < len(tasks) && tasks[hi-1].withNext {
			hi++
		}
		next = hi
		if hi-lo == 1 {
			g.Go(func() error { return runTask(gctx, lo) })
		} else {
			g.Go(func() error {
				// A failing member stops the others, which would
				// otherwise read on alone.
				u, uctx := errgroup.WithContext(gctx)
				for i := lo; i < hi; i++ {
					u.Go(func() error { return runTask(uctx, i) })
				}
				return u.Wait()
			})
		}
	}
	err := g.Wait()
	if w != nil {
		if werr := w.close(); werr != nil {
			return nil, nil, werr
		}
	}
	if err != nil {
		return nil, nil, err
	}
	rep := &Report{Seconds: time.Since(start).Seconds()}
	for i, p := range out {
		o := ran[i]
		rep.Steps += o.steps
		pr := PolytopeReport{
			Task: tasks[i].name, Steps: p.t, Entropy: p.entropy(),
			Counts: slices.Clone(p.counts()), ValidError: math.NaN(),
		}
		if tasks[i].valid != nil {
			pr.ValidError, pr.ValidStep, pr.Stopped = o.validError, o.validStep, o.stopped
		}
		rep.Polytopes = append(rep.Polytopes, pr)
	}
	if rep.Seconds > 0 {
		rep.StepsPerSecond = float64(rep.Steps) / rep.Seconds
	}
	return out, rep, nil
}

// buildModel assembles the model file contents from trained polytopes,
// padding every matrix to a common number of feature rows.
func buildModel(cfg Config, classes []float32, ovo bool, polys []*polytope) *model.Model {
	d := 1
	for _, p := range polys {
		d = max(d, p.W.D)
	}
	m := &model.Model{
		Learner: "cpm", Sides: 1, K: cfg.K, D: d,
		Lambda: cfg.Lambda, Entropy: cfg.Entropy, CostRatio: cfg.CostRatio,
		Bias: cfg.Bias, Seed: cfg.Seed, Iterations: cfg.Iterations,
		Classes: classes, OvO: ovo,
		Params: map[string]string{"reshuffle": fmt.Sprint(cfg.Reshuffle)},
	}
	if cfg.DoubleSided {
		m.Sides = 2
	}
	for _, p := range polys {
		if p.t != cfg.Iterations { // warm start: record every polytope's steps
			m.Steps = make([]int64, len(polys))
			for i, p := range polys {
				m.Steps[i] = p.t
			}
			break
		}
	}
	for _, p := range polys {
		p.W.Grow(d)
		m.Weights = append(m.Weights, p.W)
		c := make([]uint64, cfg.K)
		for k, n := range p.counts() {
			c[k] = uint64(n)
		}
		m.Counts = append(m.Counts, c)
	}
	return m
}

// binaryClasses returns [outer, inner] for a two-label data set. If outer is
// nil the larger label is the outer one (+1 for ±1 data).
func binaryClasses(labels []float32, outer *float32) ([]float32, error) {
	if len(labels) != 2 {
		return nil, fmt.Errorf("sgd: binary CPM needs exactly 2 labels, the data has %d (%v); use one-vs-one for multiclass data", len(labels), labels)
	}
	if outer == nil {
		return []float32{labels[1], labels[0]}, nil
	}
	switch *outer {
	case labels[0]:
		return []float32{labels[0], labels[1]}, nil
	case labels[1]:
		return []float32{labels[1], labels[0]}, nil
	}
	return nil, fmt.Errorf("sgd: outer label %v is not one of the data's labels %v", *outer, labels)
}

// Train trains a binary CPM (double-sided if cfg.DoubleSided) on in-memory
// data. The rows are shuffled once, by a copy laid out in the new order
// (seeded by cfg.Seed), before training. outer selects the label that lives outside the polytope (nil: the
// larger label). The two polytopes of a double-sided CPM train concurrently.
// cfg.Init warm-starts from a model and cfg.Checkpoint writes checkpoints or
// resumes from one; see Config.
func Train(ctx context.Context, cfg Config, data *sparsevec.CSR, outer *float32) (*model.Model, *Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	p, err := planBinary(cfg, data, outer)
	if err != nil {
		return nil, nil, err
	}
	return p.train(ctx)
}

// train trains every polytope of p (in this process, or by cfg.Runner)
// and builds the model.
func (p *Plan) train(ctx context.Context) (*model.Model, *Report, error) {
	polys, rep, err := runAll(ctx, p.cfg, p.tasks, p.fp)
	if err != nil {
		return nil, nil, err
	}
	return buildModel(p.cfg, p.classes, p.ovo, polys), rep, nil
}

// planBinary is NewPlan of a binary run; cfg is complete (withDefaults).
// With cfg.Runner set the rows are not shuffled: no polytope trains here.
func planBinary(cfg Config, data *sparsevec.CSR, outer *float32) (*Plan, error) {
	classes, err := binaryClasses(data.DistinctLabels(), outer)
	if err != nil {
		return nil, err
	}
	if err := checkMemory(cfg, sides(cfg), initRows(cfg, data.Dim)); err != nil {
		return nil, err
	}
	fp, err := prepare(cfg, data, classes, false)
	if err != nil {
		return nil, err
	}
	if err := checkValidLabels(cfg.Valid.Data, classes); err != nil {
		return nil, err
	}
	return binaryPlan(cfg, classes, shuffled(cfg, data), fp), nil
}

// binaryPlan is the plan of a binary run on rows, checked.
func binaryPlan(cfg Config, classes []float32, rows trainRows, fp *fingerprint) *Plan {
	tasks := []task{memTask(cfg, rows, nil, "outer", classes[0], 0)}
	if cfg.DoubleSided {
		tasks = append(tasks, memTask(cfg, rows, nil, "inner", classes[1], 1))
	}
	for i := range tasks {
		tasks[i].valid = newValidSet(cfg.Valid.Data, tasks[i].outer, nil)
	}
	return &Plan{cfg: cfg, classes: classes, tasks: tasks, fp: fp}
}

// TrainPacked is Train (ovo false; outer as Train's) or TrainOvO (ovo
// true; outer must be nil) on the rows appended to rows, in the order
// they were appended: the run's one shuffle lays them out as its packed
// copy (sparsevec.Packer.Shuffle), freeing the appended blocks as it
// goes, so that rows read in blocks never exist as a CSR and the run
// holds about one copy of them (3 bytes per nonzero for MNIST with
// sparsevec.PackCompact). The steps, and so the model, are those of
// Train and TrainOvO on the same rows as a CSR. rows is empty afterwards.
// Checkpoints (cfg.Checkpoint) and cfg.Runner need the rows as a CSR and
// are refused. visit, if not nil, is called once after training with the
// model and the packed copy, before the copy is released: a pass over
// the training rows (in the shuffled order) that costs no second copy;
// its error is TrainPacked's.
func TrainPacked(ctx context.Context, cfg Config, rows *sparsevec.Packer, outer *float32, ovo bool, visit PackedVisit) (*model.Model, *Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	if cfg.Checkpoint.active() || cfg.Runner != nil {
		return nil, nil, errors.New("sgd: checkpoints and a Runner need the training rows as a CSR (Train, TrainOvO)")
	}
	if ovo && outer != nil {
		return nil, nil, errors.New("sgd: an outer label does not apply to one-vs-one training")
	}
	labels := rows.DistinctLabels()
	var classes []float32
	if ovo {
		classes, err = ovoClasses(labels)
	} else {
		classes, err = binaryClasses(labels, outer)
	}
	if err != nil {
		return nil, nil, err
	}
	tasks := sides(cfg)
	if ovo {
		tasks *= len(classes) * (len(classes) - 1) / 2
	}
	if err := checkMemory(cfg, tasks, initRows(cfg, rows.Dim())); err != nil {
		return nil, nil, err
	}
	if _, err := prepare(cfg, nil, classes, ovo); err != nil {
		return nil, nil, err
	}
	if err := checkValidLabels(cfg.Valid.Data, classes); err != nil {
		return nil, nil, err
	}
	shuffled := packedRows(rows.Shuffle(permutation(rows.Rows(), cfg.Seed, shuffleStream)))
	var p *Plan
	if ovo {
		p = ovoPlan(cfg, classes, shuffled, nil)
	} else {
		p = binaryPlan(cfg, classes, shuffled, nil)
	}
	m, r, err := p.train(ctx)
	if err == nil && visit != nil {
		err = visit(m, shuffled.data)
	}
	if err != nil {
		return nil, nil, err
	}
	return m, r, nil
}

// PackedVisit is a pass of TrainPacked's caller over the trained model m
// and its training rows, packed in the run's shuffled order.
type PackedVisit func(m *model.Model, rows *sparsevec.Packed) error

// trainRows is the training data of the polytopes of an in-memory run:
// packed in the one shuffled order, or, with a Runner (no polytope trains
// in this process), only the shape of the rows.
type trainRows struct {
	data   *sparsevec.Packed // nil with a Runner
	labels []float32         // per row, in the order of data
	dim    int               // the feature rows the polytopes start with (at least 1)
}

// shuffled returns the rows of data as the polytopes of a run read them:
// copied (sparsevec.Pack, encoded by cfg.Compact) in the order of the
// one seeded shuffle, so that an epoch reads memory sequentially. With
// cfg.Runner set the rows are neither shuffled nor copied.
func shuffled(cfg Config, data *sparsevec.CSR) trainRows {
	if cfg.Runner != nil {
		return trainRows{labels: data.Labels, dim: data.Dim}
	}
	return packedRows(sparsevec.Pack(data, permutation(data.Rows(), cfg.Seed, shuffleStream), cfg.Compact.Packing()))
}

// packedRows returns the training rows of p.
func packedRows(p *sparsevec.Packed) trainRows {
	return trainRows{data: p, labels: p.Labels(), dim: p.Dim()}
}

// memTask is polytope i trained on rows of data (nil: all). A subset (a
// one-vs-one pair's rows) is copied in its order when the task starts,
// into a buffer given back when it ends (pairRows), so that an epoch reads
// the task's rows sequentially instead of gathering them from the whole
// data set, whose rows of other classes would share the cache with them;
// row ids stay positions in rows, so the steps are the same. The copy
// costs the pair's rows in memory per running task (MNIST one-vs-one: 30 s
// before, 22 s after on 2 cores; bench/RESULTS.md).
func memTask(cfg Config, data trainRows, rows []int32, name string, outer float32, i int) task {
	n := len(data.labels)
	if rows != nil {
		n = len(rows)
	}
	return task{
		name: name, outer: outer, d: max(data.dim, 1), ids: n,
		source: func() (source, error) {
			if rows == nil {
				return newMemorySource(data.data, nil, cfg.Seed, mix(i), cfg.Reshuffle)
			}
			buf, _ := pairRows.Get().(*sparsevec.Packed)
			sub := data.data.PermuteInto(buf, rows)
			s, err := newMemorySource(sub, nil, cfg.Seed, mix(i), cfg.Reshuffle)
			if err != nil {
				return nil, err
			}
			s.release = func() { pairRows.Put(sub) }
			return s, nil
		},
	}
}

// pairRows holds the buffers of the pairs' row copies of memTask, reused
// by the next task so that a one-vs-one run holds about one copy per
// running task rather than one per task until the collector runs.
var pairRows sync.Pool

// Input opens the passes of streamed training data for each polytope.
// Open is called at the start of every pass; a polytope calls Leave when it
// will open no more passes, so that an Input sharing passes among polytopes
// (package input/shared) stops waiting for it.
type Input interface {
	Open(polytope int) (Blocks, error)
	Leave(polytope int)
}

// OpenFunc is an Input whose polytopes each open their own passes with the
// function.
type OpenFunc func() (Blocks, error)

// Open implements Input.
func (f OpenFunc) Open(int) (Blocks, error) { return f() }

// Leave implements Input.
func (f OpenFunc) Leave(int) {}

// TrainStream trains a binary CPM by repeated passes over an input too large
// for memory: in opens the passes, buffer is the shuffle buffer in rows.
// Classes must be given as [outer, inner]; a row with any other label is an
// error. Polytope 0 is the outer one, 1 the inner one of a double-sided CPM;
// the Input may give both the same pass (package input/shared), so that the input
// is read once per pass for both; they train together whatever cfg.Workers,
// and their sources hold one copy of the rows between them (heldShare).
// cfg.Init may warm-start it; checkpoints
// (cfg.Checkpoint) need in-memory data and are refused.
func TrainStream(ctx context.Context, cfg Config, in Input, buffer int, classes [2]float32) (*model.Model, *Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	if cfg.Runner != nil {
		return nil, nil, errors.New("sgd: streamed training runs in one process; a Runner needs in-memory data")
	}
	if _, err := prepare(cfg, nil, classes[:], false); err != nil {
		return nil, nil, err
	}
	d := initRows(cfg, 0)
	if err := checkMemory(cfg, sides(cfg), d); err != nil {
		return nil, nil, err
	}
	maxD := maxRows(cfg, sides(cfg))
	share := &heldShare{} // the polytopes' sources hold one copy of the rows
	mk := func(name string, outer float32, i int) task {
		open := func() (Blocks, error) { return in.Open(i) }
		return task{name: name, outer: outer, d: 1, maxD: maxD, tasks: sides(cfg), leave: func() { in.Leave(i) }, source: func() (source, error) {
			s, err := newStreamSource(open, buffer, cfg.Seed, mix(i))
			if err != nil {
				return nil, err
			}
			s.leave, s.packing = func() { in.Leave(i) }, cfg.Compact.Packing()
			if s.held != nil {
				share.join(s.held)
			}
			return &checkedSource{streamSource: s, classes: classes}, nil
		}}
	}
	if err := checkValidLabels(cfg.Valid.Data, classes[:]); err != nil {
		return nil, nil, err
	}
	tasks := []task{mk("outer", classes[0], 0)}
	if cfg.DoubleSided {
		tasks[0].withNext = true // the Input may share passes between them
		tasks = append(tasks, mk("inner", classes[1], 1))
	}
	for i := range tasks {
		tasks[i].valid = newValidSet(cfg.Valid.Data, tasks[i].outer, nil)
	}
	polys, rep, err := runAll(ctx, cfg, tasks, nil)
	if err != nil {
		return nil, nil, err
	}
	return buildModel(cfg, classes[:], false, polys), rep, nil
}

// checkedSource refuses rows whose label is not one of the two classes.
type checkedSource struct {
	*streamSource
	classes [2]float32
}

func (c *checkedSource) Next() (sparsevec.Vector, float32, int, error) {
	x, y, id, err := c.streamSource.Next()
	if err == nil {
		err = c.check(y, id)
	}
	return x, y, id, err
}

// check refuses label y of row id unless it is one of the two classes.
func (c *checkedSource) check(y float32, id int) error {
	if y != c.classes[0] && y != c.classes[1] {
		return fmt.Errorf("row %d has label %v; binary training expects %v or %v (set the outer label, or use one-vs-one)", id+1, y, c.classes[0], c.classes[1])
	}
	return nil
}

// Pairs returns the one-vs-one class pairs (i, j), i < j, in model order.
func Pairs(c int) [][2]int {
	p := make([][2]int, 0, c*(c-1)/2)
	for i := 0; i < c; i++ {
		for j := i + 1; j < c; j++ {
			p = append(p, [2]int{i, j})
		}
	}
	return p
}

// TrainOvO trains one-vs-one multiclass CPM: one binary CPM (double-sided
// if cfg.DoubleSided) per pair of classes, on the rows of those two classes,
// with class i of pair (i, j) outside. Polytopes train on a bounded pool of
// cfg.Workers goroutines. cfg.Init and cfg.Checkpoint work as for Train.
func TrainOvO(ctx context.Context, cfg Config, data *sparsevec.CSR) (*model.Model, *Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	p, err := planOvO(cfg, data)
	if err != nil {
		return nil, nil, err
	}
	return p.train(ctx)
}

// planOvO is NewPlan of a one-vs-one run; cfg is complete (withDefaults).
// With cfg.Runner set the rows are not shuffled: no polytope trains here.
func planOvO(cfg Config, data *sparsevec.CSR) (*Plan, error) {
	classes, err := ovoClasses(data.DistinctLabels())
	if err != nil {
		return nil, err
	}
	if err := checkMemory(cfg, sides(cfg)*len(classes)*(len(classes)-1)/2, initRows(cfg, data.Dim)); err != nil {
		return nil, err
	}
	fp, err := prepare(cfg, data, classes, true)
	if err != nil {
		return nil, err
	}
	if err := checkValidLabels(cfg.Valid.Data, classes); err != nil {
		return nil, err
	}
	return ovoPlan(cfg, classes, shuffled(cfg, data), fp), nil
}

// ovoClasses returns the classes of a one-vs-one run on rows with the
// distinct labels given.
func ovoClasses(labels []float32) ([]float32, error) {
	if len(labels) < 2 {
		return nil, fmt.Errorf("sgd: one-vs-one needs at least 2 labels, the data has %d", len(labels))
	}
	return labels, nil
}

// ovoPlan is the plan of a one-vs-one run on rows, checked.
func ovoPlan(cfg Config, classes []float32, data trainRows, fp *fingerprint) *Plan {
	byClass := make(map[float32][]int32, len(classes))
	for r, y := range data.labels {
		byClass[y] = append(byClass[y], int32(r))
	}
	var tasks []task
	for pi, pr := range Pairs(len(classes)) {
		a, b := classes[pr[0]], classes[pr[1]]
		rows := mergeSorted(byClass[a], byClass[b])
		name := fmt.Sprintf("%v vs %v", a, b)
		pair := &[2]float32{a, b}
		vs := newValidSet(cfg.Valid.Data, a, pair)
		tasks = append(tasks, memTask(cfg, data, rows, name+"/outer", a, 2*pi))
		tasks[len(tasks)-1].valid = vs
		if cfg.DoubleSided {
			tasks = append(tasks, memTask(cfg, data, rows, name+"/inner", b, 2*pi+1))
			tasks[len(tasks)-1].valid = vs.swapped(b)
		}
	}
	return &Plan{cfg: cfg, classes: classes, ovo: true, tasks: tasks, fp: fp}
}

func mergeSorted(a, b []int32) []int32 {
	out := make([]int32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] < b[j] {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}
