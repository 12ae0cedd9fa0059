package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/sparsevec"
	"github.com/polyhedral/cpm/tune"
)

const tuneUsage = `cpm tune [--learner NAME] [learner flags] (--grid 'NAME=V1,V2 ...' | --protocol paper)
       [-r REPS -f FOLDS | --holdout FRAC | --valid FILE] [--seeds N] [--seed S] [--workers W]
       [--rule best|1se] [--json FILE] [--csv FILE] [-o MODEL] DATA

Scores every point of a grid of learner flags and chooses one. A point is
the learner flags given here with each axis of the grid set to one of its
values, so it trains exactly as cpm train and cpm cv with those flags.

Grid: axes NAME=VALUES separated by spaces; NAME is any learner flag that
takes a number (or text); VALUES is a comma list of numbers or expressions
(+ - * / ( ) ln log10 exp sqrt, and other flags' names: entropy=0,ln(0.5K)
gives each k its own entropies), log-ranges LO..HIxN (N values evenly
spaced in log scale, LO and HI included), or for whole-number flags LO..HI.
Points go in grid order: the axes as given, the last fastest.

Scoring: REPS x FOLDS stratified cross-validation, fold for fold as cpm cv
does it with the same -r, -f and --seed; or, with --holdout FRAC (a
stratified split of DATA) or --valid FILE, training on the rest with the
learner seeds S, S+1, ..., S+N-1 (--seeds N) and scoring on the held-out
rows. --protocol paper is the CPM paper's section 5.1 search: C over
1, 0.1, ..., 0.0001 with h = 0, then h over ln(iK/10), i = 1..9, at the
best C.`

// tuneOptions is the command line of cpm tune.
type tuneOptions struct {
	lf                          *learnerFlags
	grid, protocol, ruleName    string
	valid, jsonOut, csvOut, out string
	reps, folds, seeds          int
	maxPoints, workers          int
	holdout                     float64
	quiet                       bool
	lim                         *inputLimits
	mem                         *memoryLimit
	nats                        *natsFlags
	data                        string
	rule                        tune.Rule
}

// parseTune parses and checks the command line of cpm tune.
func parseTune(args []string, stderr io.Writer) (*tuneOptions, error) {
	fs := newFlags("tune", stderr, tuneUsage)
	o := &tuneOptions{lf: addLearnerFlags(fs)}
	fs.Lookup("workers").Usage = "fits run at once over all points (default GOMAXPROCS); the results do not depend on it (cpm: also its polytopes trained at once)"
	fs.StringVar(&o.grid, "grid", "", "the `grid` to search: NAME=VALUES axes separated by spaces (see above)")
	fs.StringVar(&o.protocol, "protocol", "", "paper: the CPM paper's section 5.1 search (C, then h) instead of --grid")
	fs.StringVar(&o.ruleName, "rule", "best", "how to choose: best (best mean accuracy, ties to the simpler model) or 1se (the simplest within one standard error of the best)")
	fs.IntVar(&o.reps, "r", 1, "repetitions of k-fold cross-validation (with --holdout or --valid: seeds, as --seeds)")
	fs.IntVar(&o.folds, "f", 10, "folds per repetition (stratified by label)")
	fs.Float64Var(&o.holdout, "holdout", 0, "score on a stratified `fraction` of DATA held out (split with --seed) instead of cross-validation")
	fs.StringVar(&o.valid, "valid", "", "score on this validation `file` instead of cross-validation")
	fs.IntVar(&o.seeds, "seeds", 0, "with --holdout or --valid: trainings per point, learner seeds --seed, --seed+1, ... (default -r)")
	fs.IntVar(&o.maxPoints, "max-points", tune.MaxPoints, "refuse a grid of more `points`")
	fs.StringVar(&o.jsonOut, "json", "", "write the whole table as JSON to `file` (- for stdout)")
	fs.StringVar(&o.csvOut, "csv", "", "write the whole table as CSV to `file` (- for stdout)")
	fs.StringVar(&o.out, "o", "", "train the chosen point on all of DATA as cpm train does and write the model to `file` (- for standard output)")
	fs.BoolVar(&o.quiet, "q", false, "quiet: no progress lines")
	o.lim = addLimitFlags(fs)
	o.mem = addMemoryFlag(fs)
	o.nats = addNATSFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		return nil, usagef("want exactly one data file, got %d arguments", len(pos))
	}
	o.data = pos[0]
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.seeds == 0 {
		o.seeds = o.reps
	}
	o.workers = o.lf.flags.Int("workers")
	return o, o.check(set)
}

// check refuses contradictory or out-of-range flags.
func (o *tuneOptions) check(set map[string]bool) error {
	rule, err := tune.ParseRule(o.ruleName)
	if err != nil {
		return usagef("--rule: %w", err)
	}
	o.rule = rule
	byValid := o.holdout != 0 || o.valid != ""
	switch {
	case (o.grid == "") == (o.protocol == ""):
		return usagef("give one of --grid 'NAME=V1,V2 ...' and --protocol paper")
	case o.protocol != "" && o.protocol != "paper":
		return usagef("--protocol %s: the one protocol is paper", o.protocol)
	case o.protocol != "" && o.lf.name != learner.CPM:
		return usagef("--protocol paper is the CPM paper's search; give --learner cpm or a --grid")
	case o.holdout != 0 && o.valid != "":
		return usagef("give --holdout or --valid, not both")
	case o.holdout != 0 && !(o.holdout > 0 && o.holdout < 1):
		return usagef("--holdout %v: want a fraction in (0, 1)", o.holdout)
	case byValid && set["f"]:
		return usagef("-f is for cross-validation; --holdout and --valid score on one split")
	case !byValid && set["seeds"]:
		return usagef("--seeds is for --holdout and --valid; cross-validation repeats with -r")
	case o.reps < 1 || o.seeds < 1 || !byValid && o.folds < 2:
		return usagef("-r %d -f %d --seeds %d: want at least 1 repetition or seed and 2 folds", o.reps, o.folds, o.seeds)
	case o.maxPoints < 1:
		return usagef("--max-points %d: want at least 1", o.maxPoints)
	case len(o.lf.flags.Ints("k")) > 1:
		return usagef("-k %s: in tune, K is an axis: --grid 'k=%s'", o.lf.flags.Get("k"), o.lf.flags.Get("k"))
	}
	if _, err := o.lf.build(); err != nil {
		return err
	}
	if err := o.nats.check(); err != nil {
		return err
	}
	if o.nats.dataRoot != "" && o.holdout != 0 {
		return usagef("--holdout splits DATA, and with --data-root the workers train on DATA as it is in the file: score by cross-validation (-r, -f) or on --valid FILE, or drop --data-root")
	}
	if err := o.nats.checkData("DATA", o.data, o.lim); err != nil {
		return err
	}
	return checkInputs([2]string{"DATA", o.data}, [2]string{"--valid", o.valid})
}

// runTune implements cpm tune.
func runTune(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseTune(args, stderr)
	if err != nil {
		return err
	}
	defer o.lim.annotate(&err)
	defer o.mem.annotate(&err)
	var cands []tune.Candidate
	if o.grid != "" {
		if cands, err = o.candidates(); err != nil {
			return err
		}
	}
	ins := []string{o.data, o.valid}
	if err := checkOutputs(
		outputPath{flag: "--json", path: o.jsonOut, stdout: true, inputs: ins},
		outputPath{flag: "--csv", path: o.csvOut, stdout: true, inputs: ins},
		outputPath{flag: "-o", path: o.out, stdout: true, inputs: ins}); err != nil {
		return err
	}
	data, cfg, err := o.load(ctx, stderr)
	if err != nil {
		return err
	}
	if o.nats.on() {
		var s *natsSession
		if s, ctx, err = o.nats.open(ctx, o.quiet, stderr); err != nil {
			return err
		}
		defer s.close(&err)
		var finish func(error)
		if finish, err = s.tuneExec(ctx, &cfg, o, data, len(cands)); err != nil {
			return err
		}
		defer func() { finish(err) }()
	}
	start := time.Now()
	res := &tuneResult{}
	if o.grid != "" {
		res.Rows, err = tune.Search(ctx, cfg, data.fit, cands)
		res.Chosen = tune.Choose(res.Rows, o.rule, nil)
	} else {
		var p *tune.Paper
		if p, err = tune.PaperSearch(ctx, cfg, data.fit, o.lf.flags, o.lf.buildWith); err == nil {
			res.Rows, res.Chosen, res.Stage1 = p.Rows, p.Chosen, p.Stage1
		}
	}
	if err != nil {
		return err
	}
	res.Seconds = time.Since(start).Seconds()
	o.print(reportTo(stdout, stderr, o.jsonOut, o.csvOut, o.out), data, res)
	if err := o.writeTables(res, data); err != nil {
		return err
	}
	if o.out != "" {
		return o.trainChosen(ctx, stdout, stderr, data.all, res.Rows[res.Chosen].Point)
	}
	return nil
}

// candidates parses the grid and builds the learner of every point.
func (o *tuneOptions) candidates() ([]tune.Candidate, error) {
	g, err := tune.ParseGrid(o.grid, o.lf.name, o.lf.flags)
	if err != nil {
		return nil, usageError{fmt.Errorf("--grid: %w", err)}
	}
	cands, err := tune.Candidates(g, o.maxPoints, o.lf.buildWith)
	if err != nil {
		return nil, usageError{fmt.Errorf("--grid: %w", err)}
	}
	return cands, nil
}

// tuneData is the data of a search: all of DATA, the rows that train
// (all but a holdout) and the validation rows (nil for cross-validation).
type tuneData struct {
	all, fit, valid *sparsevec.CSR
	method          string
}

// load reads DATA (and --valid) and sets up the scoring.
func (o *tuneOptions) load(ctx context.Context, stderr io.Writer) (*tuneData, tune.Config, error) {
	cfg := tune.Config{Workers: o.workers, MaxMemory: o.mem.v(), Seed: o.lf.seed, Seeds: o.seeds}
	if !o.quiet {
		noteData(stderr, "", o.data, o.lim.opts(ctx))
	}
	all, err := loadData(o.data, o.lim.opts(ctx)...)
	if err != nil {
		return nil, cfg, err
	}
	d := &tuneData{all: all, fit: all}
	switch {
	case o.holdout != 0:
		if d.fit, d.valid, err = cv.Holdout(all, o.holdout, o.lf.seed); err != nil {
			return nil, cfg, usagef("--holdout: %w", err)
		}
		d.method = fmt.Sprintf("holdout %g (%d rows) x %d seed(s)", o.holdout, d.valid.Rows(), o.seeds)
	case o.valid != "":
		if !o.quiet {
			noteData(stderr, "--valid", o.valid, o.lim.opts(ctx))
		}
		if d.valid, err = loadData(o.valid, o.lim.opts(ctx)...); err != nil {
			return nil, cfg, fmt.Errorf("--valid: %w", err)
		}
		d.method = fmt.Sprintf("validation file %s (%d rows) x %d seed(s)", o.valid, d.valid.Rows(), o.seeds)
	default:
		cfg.CV = &cv.Config{Reps: o.reps, Folds: o.folds, Seed: o.lf.seed}
		d.method = fmt.Sprintf("%d x %d-fold CV", o.reps, o.folds)
	}
	cfg.Valid = d.valid
	if !o.quiet {
		cfg.Progress = progressLine(stderr)
	}
	return d, cfg, nil
}

// progressLine returns a tune.Config.Progress printing one line per
// finished point: its number, values and score, the elapsed time and an
// estimate of the time left.
func progressLine(stderr io.Writer) func(r *tune.Row, done, total int) {
	var mu sync.Mutex
	start := time.Now()
	return func(r *tune.Row, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		el := time.Since(start).Seconds()
		fmt.Fprintf(stderr, "tune %d/%d: point %d %s: accuracy %.2f ± %.2f %%, %.1fs elapsed, ETA %.1fs\n",
			done, total, r.Point.Index+1, r.Point, r.AccuracyMean, r.AccuracyStd, el, el/float64(done)*float64(total-done))
	}
}

// trainChosen trains the chosen point on all the data as cpm train with
// its flags does, and writes the model.
func (o *tuneOptions) trainChosen(ctx context.Context, stdout, stderr io.Writer, data *sparsevec.CSR, p tune.Point) error {
	spec, err := o.lf.buildWith(p.Flags)
	if err != nil {
		return err
	}
	spec.MaxMemory = o.mem.v()
	if c := spec.CPM(); c != nil {
		c.MaxMemory = o.mem.v()
	}
	m, _, err := learner.Train(ctx, spec, data)
	if err != nil {
		return err
	}
	if err := saveModel(o.out, m, stdout); err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "trained %s on all %d rows: wrote %s\n", p, data.Rows(), o.out)
	}
	return nil
}
