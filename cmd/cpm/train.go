package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
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

type trainMetrics struct {
	Command        string            `json:"command"`
	Learner        string            `json:"learner"`
	Train          string            `json:"train"`
	Test           string            `json:"test,omitempty"`
	Model          string            `json:"model,omitempty"`
	Rows           int               `json:"rows,omitempty"`
	NNZ            int               `json:"nonzeros,omitempty"`
	Features       int               `json:"features,omitempty"`
	LoadSeconds    float64           `json:"load_seconds"`
	TrainSeconds   float64           `json:"train_seconds"`
	Steps          int64             `json:"steps,omitempty"`
	StepsPerSecond float64           `json:"steps_per_second,omitempty"`
	Epochs         int               `json:"epochs,omitempty"`
	Converged      bool              `json:"converged,omitempty"`
	Mistakes       int               `json:"mistakes,omitempty"`
	Support        int               `json:"support_rows,omitempty"`
	Hyperplanes    int               `json:"hyperplanes,omitempty"`
	TestSeconds    float64           `json:"test_seconds,omitempty"`
	TestError      *float64          `json:"test_error,omitempty"`
	ValidError     *float64          `json:"validation_error,omitempty"` // with --holdout or --valid: the model's error on the validation rows
	K              int               `json:"k"`
	Lambda         float64           `json:"lambda,omitempty"`
	Entropy        float64           `json:"entropy,omitempty"`
	Seed           uint64            `json:"seed"`
	Polytopes      []polytopeMetrics `json:"polytopes,omitempty"`
	KSelection     []kChoiceMetrics  `json:"k_selection,omitempty"`
	Input          *inputMetrics     `json:"input,omitempty"`
}

type kChoiceMetrics struct {
	K            int     `json:"k"`
	AccuracyMean float64 `json:"cv_accuracy_mean"`
}

type polytopeMetrics struct {
	Task        string  `json:"task"`
	Steps       int64   `json:"steps"`
	Entropy     float64 `json:"assignment_entropy"`
	FaceCounts  []int64 `json:"face_assignment_counts"`
	ActiveFaces int     `json:"active_faces"`
	// With --holdout or --valid: the validation error of the weights kept,
	// the step of this run it was measured after, and whether
	// --early-stop ended training early.
	ValidError *float64 `json:"validation_error,omitempty"`
	ValidStep  int64    `json:"validation_step,omitempty"`
	Stopped    bool     `json:"early_stopped,omitempty"`
}

const trainUsage = "cpm train -t TRAIN [-c TEST] -o MODEL [--learner NAME] [-k K] [-i T] [-C C | --lambda L] [--entropy H] [--double-sided | --ovo] [flags]"

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("train", stderr, trainUsage)
	var (
		lf          = addLearnerFlags(fs)
		inner       labelFlag
		trainPath   = fs.String("t", "", "training data: a `file` (LIBSVM plain/zstd/gzip/bzip2, Arrow IPC, Parquet, or a cache; - for stdin LIBSVM), or with --stream a shard directory or glob")
		testPath    = fs.String("c", "", "test data `file`: after training, score it and report the error")
		modelOut    = fs.String("o", "", "write the model to `file` (atomically)")
		modelIn     = fs.String("m", "", "without -t: load this model `file` and score -c TEST with it (as the authors' tool)")
		scoresOut   = fs.String("s", "", "with -c: write one line per test row to `file` (score and face; the label for multiclass models)")
		quiet       = fs.Bool("q", false, "quiet: no progress lines")
		stream      = fs.Bool("stream", false, "cpm: do not load the data into memory: repeated passes through a bounded shuffle buffer")
		buffer      = fs.Int("buffer", 1<<15, "with --stream: shuffle buffer size in `rows` (memory: about 2x the rows' nonzeros x 8 bytes)")
		cacheFile   = fs.String("cache", "", "binary row cache `file` (*.cpmcache), or auto for TRAIN.cpmcache: written by the first read of TRAIN, read instead of TRAIN while it matches TRAIN's size, mtime and first 64 KiB")
		readers     = fs.Int("readers", 2, "with --stream and a shard set: parallel shard `readers`")
		jsonOut     = fs.String("json", "", "write metrics as JSON to `file`")
		cpuProfile  = fs.String("cpuprofile", "", "write a CPU profile of training to `file` (go tool pprof)")
		selectFolds = fs.Int("select-folds", 5, "with a list of K (-k 2,3,4): folds of the stratified cross-validation that chooses K")
	)
	fs.Var(&inner, "inner_label", "with --stream: the other label (default -1)")
	ckf := addCheckpointFlags(fs)
	metricsLogPath := fs.String("metrics-log", "", "write a training curve to `file` (JSON Lines, one object per progress report of each cpm polytope, or per pass or iteration of the other learners; cpm plot curve draws it)")
	progressEvery := fs.Int64("progress-every", 0, "cpm: SGD `steps` between progress lines and --metrics-log records (default 1048576)")
	vf := addValidFlags(fs)
	lim := addLimitFlags(fs)
	defer lim.annotate(&err)
	mem := addMemoryFlag(fs)
	defer mem.annotate(&err)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (the training file goes after -t)", fs.Arg(0))
	}
	if err := checkCacheName(*cacheFile); err != nil {
		return err
	}
	if *buffer < 1 {
		return usagef("--buffer %d: want at least 1 row", *buffer)
	}
	if *readers < 1 {
		return usagef("--readers %d: want at least 1", *readers)
	}
	ckf.maxMemory = mem.v()
	if *trainPath == "" && *modelIn != "" {
		if *testPath == "" {
			return usagef("-m MODEL needs -c TEST")
		}
		if err := checkInputs([2]string{"-m", *modelIn}, [2]string{"-c", *testPath}); err != nil {
			return err
		}
		if err := checkOutputs(outputPath{flag: "-s", path: *scoresOut, stdout: true, inputs: []string{*modelIn, *testPath}}); err != nil {
			return err
		}
		return scoreWithModel(ctx, stdout, *modelIn, *testPath, *scoresOut, false, mem.v(), lim.opts(ctx)...)
	}
	if *trainPath == "" {
		return usagef("no training data: give -t FILE")
	}
	if *modelIn != "" {
		return usagef("-m MODEL with -t: -m only tests a model; to continue training it (warm start) use --init MODEL")
	}
	if *modelOut == "" && *testPath == "" {
		return usagef("nothing to do: give -o MODEL and/or -c TEST")
	}
	if *scoresOut != "" && *testPath == "" {
		return usagef("-s needs -c TEST")
	}
	spec, err := lf.build()
	if err != nil {
		return err
	}
	// cpm is the CPM trainer's config; for other learners a scratch value
	// nothing reads.
	cpm := spec.CPM()
	if cpm == nil {
		cpm = &learner.CPMConfig{}
	}
	spec.MaxMemory, cpm.MaxMemory = mem.v(), mem.v()
	if len(lf.k) > 1 && *stream {
		return usagef("choosing K from a list needs the data in memory; drop --stream or give one K")
	}
	if len(lf.k) > 1 && *selectFolds < 2 {
		return usagef("--select-folds %d: want at least 2", *selectFolds)
	}
	if *stream && (spec.Name != learner.CPM || cpm.OvO) {
		return usagef("--stream is for binary cpm training; %s needs the data in memory", lf.describe())
	}
	if err := vf.check(spec, *stream); err != nil {
		return err
	}
	if err := checkTrainFiles(*trainPath, *testPath, vf.file, ckf, *cacheFile, []outputPath{
		{flag: "-o", path: *modelOut},
		{flag: "-s", path: *scoresOut, stdout: true},
		{flag: "--json", path: *jsonOut, stdout: true},
		{flag: "--metrics-log", path: *metricsLogPath},
		{flag: "--cpuprofile", path: *cpuProfile},
	}); err != nil {
		return err
	}
	if err := ckf.apply(&spec, lf, *stream, stderr, *quiet); err != nil {
		return err
	}
	if !*quiet {
		cpm.Progress = progressPrinter(stderr)
	}
	if *progressEvery < 0 {
		return usagef("--progress-every %d: want >= 1 (or 0 for the default)", *progressEvery)
	}
	cpm.ProgressEvery = *progressEvery
	var mlog *metricsLog
	if *metricsLogPath != "" {
		if mlog, err = createMetricsLog(*metricsLogPath, spec.Name); err != nil {
			return err
		}
		defer mlog.abort()
		cpm.Progress = mlog.hook(cpm.Progress)
	}

	if *cpuProfile != "" {
		stopProfile, perr := startCPUProfile(*cpuProfile)
		if perr != nil {
			return perr
		}
		defer func() {
			if perr := stopProfile(); err == nil {
				err = perr // err is runTrain's result
			}
		}()
	}
	met := trainMetrics{Command: "train", Learner: spec.Name, Train: *trainPath, Test: *testPath, Model: *modelOut, Seed: lf.seed}
	var (
		m   *model.Model
		rep *learner.Report
	)
	if *stream {
		classes := [2]float32{1, -1}
		if spec.Label != nil {
			classes[0] = *spec.Label
		}
		if inner.set {
			classes[1] = inner.v
		}
		if classes[0] == classes[1] {
			return usagef("outer and inner labels are both %v", classes[0])
		}
		in, err := newInput(*trainPath, *cacheFile, *readers, stderr, *quiet, lim.opts(ctx)...)
		if err != nil {
			return err
		}
		defer in.close()
		if err := vf.load(&spec, nil, stderr, *quiet, lim.opts(ctx)...); err != nil {
			return err
		}
		sides := 1
		if cpm.DoubleSided {
			sides = 2
		}
		var r *sgd.Report
		m, r, err = sgd.TrainStream(ctx, cpm.Config, in.sgdInput(ctx, sides), *buffer, classes)
		if err != nil {
			return err
		}
		rep = &learner.Report{Learner: learner.CPM, Seconds: r.Seconds, CPM: r, Hyperplanes: len(m.Weights) * m.K}
		met.Input = in.metrics(r.Seconds)
		if !*quiet {
			in.printSplit(stderr, r.Seconds)
		}
	} else {
		if isShardInput(*trainPath) {
			return usagef("%s is a shard set (a directory or glob): train from it with --stream", *trainPath)
		}
		start := time.Now()
		data, err := loadTraining(*trainPath, *cacheFile, stderr, *quiet, lim.opts(ctx)...)
		if err != nil {
			return err
		}
		if data.Rows() == 0 {
			return fmt.Errorf("%s: %w to train on", *trainPath, sgd.ErrNoRows)
		}
		met.LoadSeconds = time.Since(start).Seconds()
		met.Rows, met.NNZ, met.Features = data.Rows(), data.NNZ(), max(data.Dim-1, 0)
		if !*quiet {
			fmt.Fprintf(stderr, "loaded %s: %d rows, %d nonzeros, %d features in %.2fs\n",
				*trainPath, data.Rows(), data.NNZ(), met.Features, met.LoadSeconds)
		}
		if len(lf.k) > 1 {
			mlog.pause() // keep only the final training's records
			k, choices, err := learner.SelectK(ctx, spec, data, lf.k, cv.Config{Reps: 1, Folds: *selectFolds, Seed: lf.seed})
			if err != nil {
				return err
			}
			for _, c := range choices {
				met.KSelection = append(met.KSelection, kChoiceMetrics{K: c.K, AccuracyMean: c.Result.AccuracyMean})
				if !*quiet {
					fmt.Fprintf(stderr, "K=%d: %d-fold CV accuracy %.2f%%\n", c.K, *selectFolds, c.Result.AccuracyMean)
				}
			}
			if !*quiet {
				fmt.Fprintf(stderr, "chose K=%d\n", k)
			}
			spec = spec.WithK(k)
			mlog.restart()
		}
		if err := vf.load(&spec, &data, stderr, *quiet, lim.opts(ctx)...); err != nil {
			return err
		}
		m, rep, err = learner.Train(ctx, spec, data)
		if err != nil {
			return ckf.interrupted(err, args, stderr)
		}
	}
	if mlog != nil {
		if rep.CPM == nil {
			mlog.history(rep, met.Rows)
		}
		if err := mlog.commit(); err != nil {
			return err
		}
	}
	met.TrainSeconds, met.Epochs, met.Converged, met.Mistakes = rep.Seconds, rep.Epochs, rep.Converged, rep.Mistakes
	met.Support, met.Hyperplanes = rep.Support, rep.Hyperplanes
	met.K, met.Lambda, met.Entropy = m.K, m.Lambda, m.Entropy
	if r := rep.CPM; r != nil {
		met.TrainSeconds, met.Steps, met.StepsPerSecond = r.Seconds, r.Steps, r.StepsPerSecond
		for _, p := range r.Polytopes {
			pm := polytopeMetrics{Task: p.Task, Steps: p.Steps, Entropy: p.Entropy, FaceCounts: p.Counts, ActiveFaces: active(p.Counts)}
			if vf.active() && !math.IsNaN(p.ValidError) {
				pm.ValidError, pm.ValidStep, pm.Stopped = &p.ValidError, p.ValidStep, p.Stopped
			}
			met.Polytopes = append(met.Polytopes, pm)
			if vf.active() && !*quiet {
				vf.printKept(stderr, p)
			}
		}
		if !*quiet {
			fmt.Fprintf(stderr, "trained %d polytope(s), %d steps in %.2fs (%.2fM steps/s)\n",
				len(r.Polytopes), r.Steps, r.Seconds, r.StepsPerSecond/1e6)
		}
		if vf.active() {
			e, err := modelError(m, cpm.Valid.Data)
			if err != nil {
				return err
			}
			met.ValidError = &e
			if !*quiet {
				fmt.Fprintf(stderr, "validation error of the model %.3f%% on %d rows\n", 100*e, cpm.Valid.Data.Rows())
			}
		}
	} else if !*quiet && len(rep.LogLik) > 0 {
		fmt.Fprintf(stderr, "trained %s: %d EM iterations, log-likelihood %.4f, converged %v in %.3fs\n",
			lf.describe(), rep.Epochs, rep.LogLik[len(rep.LogLik)-1], rep.Converged, rep.Seconds)
	} else if !*quiet {
		fmt.Fprintf(stderr, "trained %s: %d passes/iterations, %d updates, converged %v", lf.describe(), rep.Epochs, rep.Mistakes, rep.Converged)
		if spec.Name == learner.KernelPerceptron {
			fmt.Fprintf(stderr, ", %d support rows", rep.Support)
		}
		fmt.Fprintf(stderr, " in %.3fs\n", rep.Seconds)
	}
	if *modelOut != "" {
		if err := model.Save(*modelOut, m); err != nil {
			return err
		}
	}
	if *testPath != "" {
		start := time.Now()
		res, err := evaluate(ctx, m, *testPath, *scoresOut, false, lim.opts(ctx)...)
		if err != nil {
			return err
		}
		met.TestSeconds = time.Since(start).Seconds()
		e := res.errorRate()
		met.TestError = &e
		fmt.Fprintf(stdout, "test error %.4f%% (%d/%d) on %s\n", 100*e, res.wrong, res.rows, *testPath)
	}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, met)
	}
	return nil
}

func active(counts []int64) int {
	n := 0
	for _, c := range counts {
		if c > 0 {
			n++
		}
	}
	return n
}

// progressPrinter returns a sgd.Config.Progress callback printing one line
// per report, safe to call from several training goroutines.
func progressPrinter(w io.Writer) func(sgd.Progress) {
	type mark struct {
		step int64
		at   time.Time
	}
	var mu sync.Mutex
	start := time.Now()
	last := map[string]mark{}
	return func(p sgd.Progress) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		prev, ok := last[p.Task]
		if !ok {
			prev = mark{0, start}
		}
		last[p.Task] = mark{p.Step, now}
		rate := float64(p.Step-prev.step) / now.Sub(prev.at).Seconds()
		fmt.Fprintf(w, "%-14s step %6.2fM/%.2fM  %5.2fM rows/s  epoch %7.2f  neg-loss %.4f  pos-loss %.4f  updates %5.2f%%  H %.3f  %.1fs",
			p.Task, float64(p.Step)/1e6, float64(p.Of)/1e6, rate/1e6, p.Epoch, p.NegLoss, p.PosLoss, 100*p.Violation, p.Entropy, now.Sub(start).Seconds())
		if !math.IsNaN(p.ValidError) {
			fmt.Fprintf(w, "  val-err %.3f%%", 100*p.ValidError)
			if !math.IsNaN(p.BestValidError) {
				fmt.Fprintf(w, " (best %.3f%% at %.2fM)", 100*p.BestValidError, float64(p.BestStep)/1e6)
			}
			if p.Stopped {
				fmt.Fprint(w, "  early stop")
			}
		}
		fmt.Fprintln(w)
	}
}

// startCPUProfile starts writing a CPU profile to path (by the rules of
// package internal/atomicfile) and returns the function that stops it and
// puts the file in place.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Abort()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		return nil
	}, nil
}

// writeJSON writes v as indented JSON to path by the rules of package
// internal/atomicfile ("-" is standard output).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	err = atomicfile.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}, atomicfile.Stdout(os.Stdout))
	if err != nil {
		return fmt.Errorf("writing metrics: %w", err)
	}
	return nil
}

// checkTrainFiles checks, before train reads or trains anything, that its
// input files exist (-c TEST, --valid, --init, --resume, and -t when it is
// a file) and that its outputs may be written (checkOutputs): outs, plus
// --checkpoint and --cache (cache "auto" is TRAIN.cpmcache). No output may
// be a data input; -o may be the --init model and --checkpoint the
// --resume file, which they continue.
func checkTrainFiles(train, test, valid string, ckf *checkpointFlags, cache string, outs []outputPath) error {
	ins := [][2]string{{"-c", test}, {"--valid", valid}, {"--init", ckf.init}, {"--resume", ckf.resume}}
	if !isShardInput(train) {
		ins = append(ins, [2]string{"-t", train})
	}
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
	if cache == "auto" && !isShardInput(train) {
		cache = train + ".cpmcache"
	} else if cache == "auto" {
		cache = ""
	}
	outs = append(outs,
		outputPath{flag: "--checkpoint", path: ckf.checkpoint, inputs: append([]string{ckf.init}, data...)},
		outputPath{flag: "--cache", path: cache, inputs: all, opts: cacheRules()})
	return checkOutputs(outs...)
}

var _ flag.Value = (*labelFlag)(nil)
