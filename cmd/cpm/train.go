package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/scale"
)

// labelFlag is an optional float32 label.
type labelFlag struct {
	set bool
	v   float32
}

func (l *labelFlag) String() string {
	if !l.set {
		return ""
	}
	return strconv.FormatFloat(float64(l.v), 'g', -1, 32)
}

func (l *labelFlag) Set(s string) error {
	f, err := strconv.ParseFloat(s, 32)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("label %q is not a finite number", s)
	}
	l.set, l.v = true, float32(f)
	return nil
}

const trainUsage = "cpm train -t TRAIN [-c TEST] -o MODEL [--learner NAME] [-k K] [-i T] [-C C | --lambda L] [--entropy H] [--double-sided | --ovo] [flags]"

// trainOptions is the command line of cpm train: the flags as parsed,
// then (validate) the learner and input they ask for.
type trainOptions struct {
	train, test, modelOut, modelIn, scoresOut string
	cache                                     string // --cache as given
	jsonOut, cpuProfile, metricsLog           string
	quiet, stream                             bool
	buffer, readers, selectFolds              int
	progressEvery                             int64
	inner                                     labelFlag
	spillLimit                                countFlag // --spill-limit
	args                                      []string  // the arguments, for the resume hint

	learnerFlags *learnerFlags
	ckpt         *checkpointFlags
	valid        *validFlags
	calib        *calibrateFlags
	lim          *inputLimits
	mem          *memoryLimit
	nats         *natsFlags

	// Set by validate.
	spec          learner.Spec
	cpm           *learner.CPMConfig // the CPM settings of spec (a scratch value for other learners)
	ks            []int              // -k: one K, or the list to choose from
	seed          uint64             // --seed
	describe      string             // the learner, for log lines
	cachePath     string             // the cache file (--cache auto resolved, or the default of --stream), input.TempCache, or ""
	cacheOptional bool               // the cache is the default of --stream (input.Config.Optional)
	cacheWhy      string             // why the default cache of --stream is a temporary one
	classes       [2]float32
}

// parseTrain parses the command line of cpm train and checks the flags
// that every mode (training, or testing a model with -m) shares.
func parseTrain(args []string, stderr io.Writer) (*trainOptions, error) {
	fs := newFlags("train", stderr, trainUsage)
	o := &trainOptions{args: args, learnerFlags: addLearnerFlags(fs)}
	fs.StringVar(&o.train, "t", "", "training `data`: a file (LIBSVM plain/zstd/gzip/bzip2, Arrow IPC, Parquet, or a cache), - for standard input (any of these), a directory (a shard set, or its files sorted by path, _ and . names skipped) or a quoted glob")
	fs.StringVar(&o.test, "c", "", "test `data` (a file, -, a directory or a glob, as -t): after training, score it and report the error")
	fs.StringVar(&o.modelOut, "o", "", "write the model to `file` (atomically; - for standard output)")
	fs.StringVar(&o.modelIn, "m", "", "without -t: load this model `file` and score -c TEST with it (as the authors' tool)")
	fs.StringVar(&o.scoresOut, "s", "", "with -c: write one line per test row to `file`: the predicted label, then its decision value(s), as cpm predict -s writes them")
	fs.BoolVar(&o.quiet, "q", false, "quiet: no progress lines")
	fs.BoolVar(&o.stream, "stream", false, "cpm: do not load the data into memory: repeated passes through a bounded shuffle buffer")
	fs.IntVar(&o.buffer, "buffer", 1<<15, "with --stream: shuffle buffer size in `rows` (memory: about 2x the rows' nonzeros x 8 bytes)")
	fs.StringVar(&o.cache, "cache", "", cacheHelp)
	fs.IntVar(&o.readers, "readers", 2, "with --stream and a shard set: parallel shard `readers`")
	fs.StringVar(&o.jsonOut, "json", "", "write metrics as JSON to `file`")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of training to `file` (go tool pprof)")
	fs.IntVar(&o.selectFolds, "select-folds", 5, "with a list of K (-k 2,3,4): folds of the stratified cross-validation that chooses K")
	fs.Var(&o.inner, "inner_label", "with --stream: the other label (default -1)")
	o.spillLimit = countFlag{min: 0, max: maxMemoryFlag, sizes: true}
	fs.Var(&o.spillLimit, "spill-limit", "with --stream -t -: the most `bytes` the temporary spill file that keeps standard input's rows for the later passes may take (suffixes KiB, MiB, GiB; 0: as much as the disk holds)")
	o.ckpt = addCheckpointFlags(fs)
	fs.StringVar(&o.metricsLog, "metrics-log", "", "write a training curve to `file` (JSON Lines, one object per progress report of each cpm polytope, or per pass or iteration of the other learners; cpm plot curve draws it)")
	fs.Int64Var(&o.progressEvery, "progress-every", 0, "cpm: SGD `steps` between progress lines and --metrics-log records (default 1048576)")
	o.valid = addValidFlags(fs)
	o.calib = addCalibrateFlags(fs)
	o.lim = addLimitFlags(fs)
	o.mem = addMemoryFlag(fs)
	o.nats = addNATSFlags(fs)
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (the training file goes after -t)", fs.Arg(0))
	}
	if err := checkCacheName(o.cache); err != nil {
		return nil, err
	}
	switch {
	case o.buffer < 1:
		return nil, usagef("--buffer %d: want at least 1 row", o.buffer)
	case o.readers < 1:
		return nil, usagef("--readers %d: want at least 1", o.readers)
	}
	o.ckpt.maxMemory = o.mem.v()
	return o, nil
}

// runTrain implements "cpm train": it trains a model, writes it and
// reports; or, with -m and no -t, scores test data with a model.
func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseTrain(args, stderr)
	if err != nil {
		return err
	}
	defer o.lim.annotate(&err)
	defer o.mem.annotate(&err)
	if o.train == "" && o.modelIn != "" {
		return o.scoreModel(ctx, stdout, stderr)
	}
	if err := o.validate(); err != nil {
		return err
	}
	if err := o.checkFiles(); err != nil {
		return err
	}
	run, err := o.prepare(stderr)
	if err != nil {
		return err
	}
	defer run.close(&err)
	met := trainMetrics{Command: "train", Learner: o.spec.Name, Train: o.train, Test: o.test, Model: o.modelOut, Seed: o.seed}
	var (
		m   *model.Model
		rep *learner.Report
	)
	if o.stream {
		m, rep, err = o.trainStream(ctx, stderr, &met, run.mlog)
	} else {
		m, rep, err = o.trainInMemory(ctx, stderr, &met, run.mlog)
	}
	if err != nil {
		return err
	}
	if err := run.commitLog(rep, met.Rows); err != nil {
		return err
	}
	if err := o.report(stderr, m, rep, &met); err != nil {
		return err
	}
	if err := o.calib.fit(m, &met, stderr, o.quiet, o.lim.opts(ctx)...); err != nil {
		return err
	}
	return o.writeOutputs(ctx, stdout, stderr, m, &met)
}

// scoreModel is train with -m MODEL -c TEST and no -t: it scores the test
// data with the model, as the authors' tool does.
func (o *trainOptions) scoreModel(ctx context.Context, stdout, stderr io.Writer) error {
	if o.test == "" {
		return usagef("-m MODEL needs -c TEST")
	}
	if err := checkInputs([2]string{"-m", o.modelIn}, [2]string{"-c", o.test}); err != nil {
		return err
	}
	if err := checkOutputs(outputPath{flag: "-s", path: o.scoresOut, stdout: true, inputs: []string{o.modelIn, o.test}}); err != nil {
		return err
	}
	noteData(stderr, "-c", o.test, o.lim.opts(ctx))
	return scoreWithModel(ctx, reportTo(stdout, stderr, o.scoresOut), o.modelIn, o.test, o.scoresOut, scoreOpts{}, o.mem.v(), o.lim.opts(ctx)...)
}

// validate checks the training command line, before any file is read, and
// sets the learner, the cache file and the classes of a streamed run.
func (o *trainOptions) validate() error {
	switch {
	case o.train == "":
		return usagef("no training data: give -t FILE")
	case o.modelIn != "":
		return usagef("-m MODEL with -t: -m only tests a model; to continue training it (warm start) use --init MODEL")
	case o.modelOut == "" && o.test == "":
		return usagef("nothing to do: give -o MODEL and/or -c TEST")
	case o.scoresOut != "" && o.test == "":
		return usagef("-s needs -c TEST")
	}
	if err := o.setLearner(); err != nil {
		return err
	}
	switch {
	case len(o.ks) > 1 && o.stream:
		return usagef("choosing K from a list needs the data in memory; drop --stream or give one K")
	case len(o.ks) > 1 && o.selectFolds < 2:
		return usagef("--select-folds %d: want at least 2", o.selectFolds)
	case o.stream && (o.spec.Name != learner.CPM || o.cpm.OvO):
		return usagef("--stream is for binary cpm training; %s needs the data in memory", o.describe)
	case o.stream && o.spec.Scale != scale.Auto && o.spec.Scale != scale.None:
		return usagef("--scale %s fits its statistics on the data in memory; --stream trains on rows as they are: scale the data first, or drop --stream", o.spec.Scale)
	case o.progressEvery < 0:
		return usagef("--progress-every %d: want >= 1 (or 0 for the default)", o.progressEvery)
	}
	if err := o.valid.check(o.spec, o.stream); err != nil {
		return err
	}
	if err := o.calib.check(o); err != nil {
		return err
	}
	if err := o.nats.check(); err != nil {
		return err
	}
	if err := o.nats.checkTrain(o); err != nil {
		return err
	}
	return o.validateInput()
}

// setLearner sets the learner of the run from the learner flags; it is
// the one place train reads them after parsing.
func (o *trainOptions) setLearner() error {
	lf := o.learnerFlags
	spec, err := lf.build()
	if err != nil {
		return err
	}
	o.spec, o.ks, o.seed, o.describe = spec, lf.k, lf.seed, lf.describe()
	if o.stream && spec.Scale == scale.Auto {
		o.spec.Scale = scale.None // --stream trains on rows as they are
	}
	// o.cpm points into o.spec for a CPM run; for other learners it is a
	// scratch value that nothing reads, so that the CPM-only settings
	// (progress, validation, checkpoints) need no test of the learner.
	if o.cpm = o.spec.CPM(); o.cpm == nil {
		o.cpm = &learner.CPMConfig{}
	}
	o.spec.MaxMemory, o.cpm.MaxMemory = o.mem.v(), o.mem.v()
	return nil
}

// validateInput checks -t against --stream and --cache and sets the cache
// file and, for a streamed run, the two classes [outer, inner].
func (o *trainOptions) validateInput() error {
	if err := o.resolveCache(); err != nil {
		return err
	}
	if !o.stream {
		return nil
	}
	o.classes = [2]float32{1, -1}
	if o.spec.Label != nil {
		o.classes[0] = *o.spec.Label
	}
	if o.inner.set {
		o.classes[1] = o.inner.v
	}
	if o.classes[0] == o.classes[1] {
		return usagef("outer and inner labels are both %v", o.classes[0])
	}
	return nil
}

// checkFiles checks, before train reads or trains anything, that its
// input files exist and that its outputs may be written (checkTrainFiles).
func (o *trainOptions) checkFiles() error {
	cache := o.cachePath
	if cache == input.TempCache {
		cache = ""
	}
	return checkTrainFiles(o.train, o.test, o.valid.file, o.ckpt, cache, []outputPath{
		{flag: "-o", path: o.modelOut, stdout: true},
		{flag: "-s", path: o.scoresOut, stdout: true},
		{flag: "--json", path: o.jsonOut, stdout: true},
		{flag: "--metrics-log", path: o.metricsLog},
		{flag: "--cpuprofile", path: o.cpuProfile},
	})
}

// checkTrainFiles checks, before train reads or trains anything, that its
// input files exist (-t, -c TEST, --valid, --init, --resume; a directory or
// glob names data files) and that its outputs may be written (checkOutputs): outs, plus
// --checkpoint and the cache file (input.CachePath). No output may
// be a data input; -o may be the --init model and --checkpoint the
// --resume file, which they continue.
func checkTrainFiles(train, test, valid string, ckf *checkpointFlags, cache string, outs []outputPath) error {
	ins := [][2]string{{"-t", train}, {"-c", test}, {"--valid", valid}, {"--init", ckf.init}, {"--resume", ckf.resume}}
	if err := checkInputs(ins...); err != nil {
		return err
	}
	data := []string{train, test, valid}
	all := append([]string{ckf.init, ckf.resume}, data...)
	for i := range outs {
		outs[i].inputs = all
		if outs[i].flag == "-o" {
			outs[i].inputs = append([]string{ckf.resume}, data...)
		}
	}
	outs = append(outs,
		outputPath{flag: "--checkpoint", path: ckf.checkpoint, inputs: append([]string{ckf.init}, data...)},
		outputPath{flag: "--cache", path: cache, inputs: all, opts: cacheRules()})
	return checkOutputs(outs...)
}

var _ flag.Value = (*labelFlag)(nil)
