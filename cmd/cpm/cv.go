package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/scale"
)

const cvUsage = "cpm cv [--learner NAME] [learner flags] [-r REPS] [-f FOLDS] [--scale01] [--seed S] [--json FILE] [--cpuprofile FILE] DATA"

// cvMetrics is the JSON report of cpm cv: the harness's figures plus what
// was run.
type cvMetrics struct {
	Command string `json:"command"`
	Learner string `json:"learner"`
	Data    string `json:"data"`
	Scale01 bool   `json:"scale01"` // the scaling is minmax (--scale01 or --scale minmax)
	Scale   string `json:"scale"`   // --scale as given (auto is resolved per fold, on its training rows)
	Seed    uint64 `json:"seed"`
	*cv.Result
}

func runCV(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("cv", stderr, cvUsage)
	var (
		lf      = addLearnerFlags(fs)
		reps    = fs.Int("r", 10, "repetitions of k-fold cross-validation")
		folds   = fs.Int("f", 10, "folds per repetition (stratified by label)")
		scale01 = fs.Bool("scale01", false, "same as --scale minmax")
		workers = fs.Int("cv-workers", 0, "folds trained at once (default GOMAXPROCS)")
		jsonOut = fs.String("json", "", "write the results as JSON to `file` (- for stdout)")
		quiet   = fs.Bool("q", false, "quiet: no progress line")
		prof    = fs.String("cpuprofile", "", "write a CPU profile of the cross-validation (the fits and their scoring) to `file` (go tool pprof)")
	)
	lim := addLimitFlags(fs)
	defer lim.annotate(&err)
	mem := addMemoryFlag(fs)
	defer mem.annotate(&err)
	nf := addNATSFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one data file, got %d arguments", len(pos))
	}
	spec, err := lf.build()
	if err != nil {
		return err
	}
	if *scale01 {
		if spec.Scale != scale.MinMax && flagSet(fs, "scale") {
			return usagef("--scale01 is --scale minmax; drop one of --scale01 and --scale %s", spec.Scale)
		}
		spec.Scale = scale.MinMax
		if err := lf.flags.Set("scale", string(scale.MinMax)); err != nil {
			return err
		}
	}
	if len(lf.k) > 1 {
		return usagef("cv takes one K; give a list to train (-k 2,3,4) to choose K by cross-validation")
	}
	if *reps < 1 || *folds < 2 {
		return usagef("-r %d -f %d: want at least 1 repetition and 2 folds", *reps, *folds)
	}
	if *workers < 0 {
		return usagef("--cv-workers %d: want at least 1 (or 0 for GOMAXPROCS)", *workers)
	}
	if err := nf.check(); err != nil {
		return err
	}
	path := pos[0]
	if err := nf.checkData("DATA", path, lim); err != nil {
		return err
	}
	if err := checkOutputs(outputPath{flag: "--json", path: *jsonOut, stdout: true, inputs: []string{path}},
		outputPath{flag: "--cpuprofile", path: *prof, inputs: []string{path}}); err != nil {
		return err
	}
	if !*quiet {
		noteData(stderr, "", path, lim.opts(ctx))
	}
	data, err := loadData(path, lim.opts(ctx)...)
	if err != nil {
		return err
	}
	cfg := cv.Config{Reps: *reps, Folds: *folds, Seed: lf.seed, Workers: *workers}
	// The folds trained at once share the budget.
	atOnce := min(cmp.Or(*workers, runtime.GOMAXPROCS(0)), *reps**folds)
	spec.MaxMemory = max(mem.v()/int64(max(atOnce, 1)), 1)
	if !*quiet {
		cfg.Progress = cvProgress(stderr, lf.describe())
	}
	if nf.on() {
		var s *natsSession
		if s, ctx, err = nf.open(ctx, *quiet, stderr); err != nil {
			return err
		}
		defer s.close(&err)
		var finish func(error)
		if finish, err = s.cvExec(ctx, &cfg, lf, spec, data); err != nil {
			return err
		}
		defer func() { finish(err) }()
	}
	var res *cv.Result
	err = withCPUProfile(*prof, func() (err error) {
		res, err = cv.Run(ctx, cfg, data, spec.Fit())
		return err
	})
	if err != nil {
		return err
	}
	printCV(reportTo(stdout, stderr, *jsonOut), fmt.Sprintf("%s on %s", lf.describe(), path), scaleNote(spec.Scale), res)
	if *jsonOut != "" {
		return writeJSON(*jsonOut, cvMetrics{Command: "cv", Learner: spec.Name, Data: path, Scale01: spec.Scale == scale.MinMax, Scale: string(cmp.Or(spec.Scale, scale.None)), Seed: lf.seed, Result: res})
	}
	return nil
}

// cvProgress returns the progress callback of cpm cv: a line on w,
// rewritten after each fit, with the fits done and the time since the
// callback was made.
func cvProgress(w io.Writer, what string) func(done, total int) {
	var mu sync.Mutex
	start := time.Now()
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "\rcv %s: %d/%d fits, %.1fs", what, done, total, time.Since(start).Seconds())
		if done == total {
			fmt.Fprintln(w)
		}
	}
}

// printCV writes the figures of a cross-validation of what under its
// heading, note ending the heading.
func printCV(w io.Writer, what, note string, res *cv.Result) {
	fmt.Fprintf(w, "%s (%d rows), %d x %d-fold CV%s\n", what, res.Rows, res.Reps, res.Folds, note)
	fmt.Fprintf(w, "  accuracy    %6.2f ± %.2f %%   (std over repetitions)\n", res.AccuracyMean, res.AccuracyStd)
	fmt.Fprintf(w, "  test error  %6.2f ± %.2f %%   (std over folds)\n", res.ErrorMean, res.FoldErrorStd)
	fmt.Fprintf(w, "  train error %6.2f ± %.2f %%   (std over folds)\n", res.TrainErrorMean, res.FoldTrainErrorStd)
	fmt.Fprintf(w, "  train time  %.4f ± %.4f s per fit\n", res.TrainSecondsMean, res.TrainSecondsStd)
	fmt.Fprintf(w, "  hyperplanes %.2f ± %.2f\n", res.HyperplanesMean, res.HyperplanesStd)
	fmt.Fprintf(w, "  wall time   %.2fs\n", res.Seconds)
}

// scaleNote describes a --scale mode in a results heading.
func scaleNote(m scale.Mode) string {
	switch m {
	case scale.MinMax:
		return ", features scaled to [0,1]"
	case "", scale.None:
		return ""
	}
	return ", --scale " + string(m)
}
