package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/featurehash"
	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// trainRun holds what a training run sets up before it trains (prepare)
// and tears down when it ends (close).
type trainRun struct {
	mlog        *metricsLog  // --metrics-log, or nil
	stopProfile func() error // stops --cpuprofile, or nil
}

// prepare loads the --init model and the --resume checkpoint into the
// learner, hooks up the progress lines and --metrics-log, and starts
// --cpuprofile.
func (o *trainOptions) prepare(stderr io.Writer) (*trainRun, error) {
	if err := o.ckpt.apply(o, stderr); err != nil {
		return nil, err
	}
	if !o.quiet {
		o.cpm.Progress = progressPrinter(stderr)
	}
	o.cpm.ProgressEvery = o.progressEvery
	run := &trainRun{}
	if o.metricsLog != "" {
		mlog, err := createMetricsLog(o.metricsLog, o.spec.Name)
		if err != nil {
			return nil, err
		}
		run.mlog = mlog
		o.cpm.Progress = mlog.hook(o.cpm.Progress)
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			if run.mlog != nil {
				run.mlog.abort()
			}
			return nil, err
		}
		run.stopProfile = stop
	}
	return run, nil
}

// commitLog writes the other learners' history to --metrics-log and puts
// the log in place.
func (run *trainRun) commitLog(rep *learner.Report, rows int) error {
	if run.mlog == nil {
		return nil
	}
	if rep.CPM == nil {
		run.mlog.history(rep, rows)
	}
	return run.mlog.commit()
}

// close stops the CPU profile, setting *err to its error if *err is nil,
// and discards a metrics log that was not committed.
func (run *trainRun) close(err *error) {
	if run.stopProfile != nil {
		if perr := run.stopProfile(); *err == nil {
			*err = perr
		}
	}
	if run.mlog != nil {
		run.mlog.abort()
	}
}

// trainStream trains a binary CPM by passes over -t (a file or a shard
// set, through the cache), shared by the polytopes of a double-sided CPM,
// hashing each block's rows with --hash-bits. The input is opened by
// input.Run, which reads LIBSVM files with --zero-based auto as 1-based
// without scanning them first and restarts the run from scratch, after a
// notice (zeroRestarted), when one turns out to hold an index 0.
func (o *trainOptions) trainStream(ctx context.Context, stderr io.Writer, met *trainMetrics, mlog *metricsLog) (*model.Model, *learner.Report, error) {
	if !o.quiet {
		noteData(stderr, "-t", o.train, o.lim.opts(ctx))
	}
	var (
		m     *model.Model
		r     *sgd.Report
		cfg   *sgd.Config // the learner's settings, with the validation rows: set by the first run
		hash  *featurehash.Hasher
		stats *inputMetrics
	)
	icfg := input.Config{Cache: o.cachePath, Optional: o.cacheOptional, Readers: o.readers, SpillLimit: int64(o.spillLimit.v)}
	restart := func(z *input.ZeroRestart) { o.zeroRestarted(stderr, z, mlog) }
	err := input.Run(o.train, icfg, o.lim.opts(ctx), restart, func(in *input.Input) error {
		o.noteCache(stderr, in.Cache())
		if cfg == nil {
			c, h, err := o.streamConfig(ctx, stderr)
			if err != nil {
				return err
			}
			cfg, hash = &c, h
		}
		sides := 1
		if o.cpm.DoubleSided {
			sides = 2
		}
		var err error
		m, r, err = sgd.TrainStream(ctx, *cfg, learner.HashInput(in.Passes(ctx, sides), hash), o.buffer, o.classes)
		if err == nil {
			stats = newInputMetrics(in, r.Seconds)
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	m.Hash = learner.HashingOf(hash)
	met.Input = stats
	if !o.quiet {
		met.Input.print(stderr)
	}
	return m, &learner.Report{Learner: learner.CPM, Seconds: r.Seconds, CPM: r, Hyperplanes: len(m.Weights) * m.K}, nil
}

// streamConfig loads the validation rows of a streamed run and returns
// the learner's settings with them, hashed as the streamed blocks are
// (feature hashing applies to both, as learner.Train applies it in
// memory), and the hashing.
func (o *trainOptions) streamConfig(ctx context.Context, stderr io.Writer) (sgd.Config, *featurehash.Hasher, error) {
	if err := o.valid.load(&o.spec, nil, stderr, o.quiet, o.lim.opts(ctx)...); err != nil {
		return sgd.Config{}, nil, err
	}
	h, err := o.spec.Hasher(o.cpm.Init)
	if err != nil {
		return sgd.Config{}, nil, err
	}
	cfg := o.cpm.Config
	if h != nil && cfg.Valid.Data != nil {
		cfg.Valid.Data = h.Apply(cfg.Valid.Data)
	}
	return cfg, h, nil
}

// trainInMemory loads -t (through the cache) and trains the learner on
// it, choosing K first when -k lists several.
func (o *trainOptions) trainInMemory(ctx context.Context, stderr io.Writer, met *trainMetrics, mlog *metricsLog) (*model.Model, *learner.Report, error) {
	if o.packable() {
		return o.trainPacked(ctx, stderr, met)
	}
	start := time.Now()
	data, err := o.load(ctx, stderr)
	if err != nil {
		return nil, nil, err
	}
	if data.Rows() == 0 {
		return nil, nil, fmt.Errorf("%s: %w to train on", o.train, sgd.ErrNoRows)
	}
	o.noteLoaded(stderr, met, start, data.Rows(), data.NNZ(), data.Dim)
	if len(o.ks) > 1 {
		mlog.pause() // keep only the final training's records
		if err := o.selectK(ctx, stderr, data, met); err != nil {
			return nil, nil, err
		}
		mlog.restart()
	}
	if err := o.valid.load(&o.spec, &data, stderr, o.quiet, o.lim.opts(ctx)...); err != nil {
		return nil, nil, err
	}
	if err := o.calib.split(&data, o.seed, stderr, o.quiet); err != nil {
		return nil, nil, err
	}
	var (
		m   *model.Model
		rep *learner.Report
	)
	if o.nats.on() {
		m, rep, err = o.trainNATS(ctx, stderr, data)
	} else {
		m, rep, err = learner.Train(ctx, o.spec, data)
	}
	if err != nil {
		return nil, nil, o.ckpt.interrupted(err, o.args, stderr)
	}
	if err := o.hints(stderr, data, m, rep); err != nil {
		return nil, nil, err
	}
	return m, rep, nil
}

// noteLoaded records the size of the loaded -t (rows, nonzeros and the
// dimension dim, the features plus the bias column) and the time since
// start in met, and without -q says them on stderr.
func (o *trainOptions) noteLoaded(stderr io.Writer, met *trainMetrics, start time.Time, rows, nnz, dim int) {
	met.LoadSeconds = time.Since(start).Seconds()
	met.Rows, met.NNZ, met.Features = rows, nnz, max(dim-1, 0)
	if !o.quiet {
		fmt.Fprintf(stderr, "loaded %s: %d rows, %d nonzeros, %d features in %.2fs\n",
			o.train, rows, nnz, met.Features, met.LoadSeconds)
	}
}

// packable reports whether the run can train on rows packed as they are
// read (trainPacked): a CPM (learner.Spec.Packable) with one K, no
// cache, no cluster and no rows held out of -t (--holdout, --calibrate
// without a file).
func (o *trainOptions) packable() bool {
	return o.spec.Packable() && len(o.ks) <= 1 && o.cachePath == "" && !o.nats.on() &&
		o.valid.holdout == 0 && !o.calib.holdout()
}

// trainPacked reads -t block by block into packed rows and trains the
// CPM on them (learner.TrainPacked): the rows never exist as one CSR, so
// the run holds about one copy of them. The model and, but for the load
// time, the lines on stderr are trainInMemory's: without -q the hints'
// figures are taken from the packed rows, the feature spread from the
// raw rows before training and the labels and training error from the
// trained rows before they are released (packedFacts).
func (o *trainOptions) trainPacked(ctx context.Context, stderr io.Writer, met *trainMetrics) (*model.Model, *learner.Report, error) {
	start := time.Now()
	if !o.quiet {
		noteData(stderr, "-t", o.train, o.lim.opts(ctx))
	}
	src, err := input.Resolve(o.train)
	if err != nil {
		return nil, nil, err
	}
	rows, err := src.Pack(o.spec.Packing(), o.lim.opts(ctx)...)
	if err != nil {
		return nil, nil, err
	}
	if rows.Rows() == 0 {
		return nil, nil, fmt.Errorf("%s: %w to train on", o.train, sgd.ErrNoRows)
	}
	o.noteLoaded(stderr, met, start, rows.Rows(), rows.NNZ(), rows.Dim())
	if err := o.valid.load(&o.spec, nil, stderr, o.quiet, o.lim.opts(ctx)...); err != nil {
		return nil, nil, err
	}
	var (
		facts *trainFacts
		visit sgd.PackedVisit
	)
	if !o.quiet {
		facts, visit = packedFacts(rows)
	}
	m, rep, err := learner.TrainPacked(ctx, o.spec, rows, visit)
	if err != nil {
		return nil, nil, o.ckpt.interrupted(err, o.args, stderr)
	}
	if facts != nil {
		printHints(stderr, facts, m, rep)
	}
	return m, rep, nil
}

// trainNATS trains on data through the cluster of --nats.
func (o *trainOptions) trainNATS(ctx context.Context, stderr io.Writer, data *sparsevec.CSR) (m *model.Model, rep *learner.Report, err error) {
	s, ctx, err := o.nats.open(ctx, o.quiet, stderr)
	if err != nil {
		return nil, nil, err
	}
	defer s.close(&err)
	return s.train(ctx, o, data)
}

// load reads -t into memory: with a cache, through it (a cache that
// matches the source is read instead of it; otherwise the source is read
// and the cache written on the way).
func (o *trainOptions) load(ctx context.Context, stderr io.Writer) (*sparsevec.CSR, error) {
	if !o.quiet {
		noteData(stderr, "-t", o.train, o.lim.opts(ctx))
	}
	if o.cachePath == "" {
		return loadData(o.train, o.lim.opts(ctx)...)
	}
	in, err := input.Open(o.train, input.Config{Cache: o.cachePath, Readers: 1}, o.lim.opts(ctx)...)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	o.noteCache(stderr, in.Cache())
	return in.Load()
}

// noteCache says on stderr what the run does with its cache.
func (o *trainOptions) noteCache(stderr io.Writer, c input.CacheStatus) {
	if o.quiet {
		return
	}
	switch c.Use {
	case input.CacheHit:
		fmt.Fprintf(stderr, "reading rows from cache %s\n", c.Path)
	case input.CacheNew:
		if o.cacheOptional {
			fmt.Fprintf(stderr, "the first pass writes cache %s, kept for the later passes and runs once a second pass starts (--cache none: no cache)\n", c.Path)
			break
		}
		fmt.Fprintf(stderr, "the first pass writes cache %s\n", c.Path)
	case input.CacheTemp:
		why := ""
		if o.cacheWhy != "" {
			why = " (" + o.cacheWhy + ")"
		}
		fmt.Fprintf(stderr, "the first pass writes temporary cache %s for the later passes, removed at exit%s; --cache FILE keeps one, --cache none writes none\n", c.Path, why)
	case input.CacheStale:
		fmt.Fprintf(stderr, "rebuilding cache: %v\n", c.Reason)
	case input.CacheSpill:
		limit := "as much as the disk holds"
		if o.spillLimit.v > 0 {
			limit = fmt.Sprintf("at most %d bytes (--spill-limit)", o.spillLimit.v)
		}
		fmt.Fprintf(stderr, "standard input is read once: the first pass keeps its rows in spill file %s for the later passes (%s; removed at exit)\n", c.Path, limit)
	}
}

// selectK chooses K from the -k list by stratified cross-validation on
// data and sets it in the learner.
func (o *trainOptions) selectK(ctx context.Context, stderr io.Writer, data *sparsevec.CSR, met *trainMetrics) error {
	k, choices, err := learner.SelectK(ctx, o.spec, data, o.ks, cv.Config{Reps: 1, Folds: o.selectFolds, Seed: o.seed})
	if err != nil {
		return err
	}
	for _, c := range choices {
		met.KSelection = append(met.KSelection, kChoiceMetrics{K: c.K, AccuracyMean: c.Result.AccuracyMean})
		if !o.quiet {
			fmt.Fprintf(stderr, "K=%d: %d-fold CV accuracy %.2f%%\n", c.K, o.selectFolds, c.Result.AccuracyMean)
		}
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "chose K=%d\n", k)
	}
	o.spec = o.spec.WithK(k)
	return nil
}

// checkCacheName refuses a --cache name with a compression suffix: the
// cache format is not compressed, and such a name would be read back as a
// compressed file.
func checkCacheName(name string) error {
	for _, ext := range []string{".zst", ".gz", ".bz2"} {
		if len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
			return usagef("--cache %s: a cache file is not compressed (%s); name it *.cpmcache", name, ext)
		}
	}
	return nil
}
