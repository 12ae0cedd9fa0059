package cv

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/polyhedral/cpm/internal/summary"
	"github.com/polyhedral/cpm/sparsevec"
)

// Predictor predicts the label of one row. Run uses a Predictor from one
// goroutine at a time.
type Predictor interface {
	Predict(x sparsevec.Vector) float32
}

// Fit trains on one training fold and returns a predictor and the size of
// the fitted model. seed is FitSeed(Config.Seed, rep, fold).
//
// train belongs to Run: its Dim is the Dim of the whole data set (so a model
// sized from train.Dim can score every test row), and its memory is reused
// for a later fold once the returned Predictor has labelled the test and
// training rows, so neither Fit nor the Predictor may keep it beyond that.
// Fit should return promptly with ctx.Err() once ctx is cancelled. Fits of
// different folds run concurrently.
type Fit func(ctx context.Context, train *sparsevec.CSR, seed uint64) (Predictor, FitInfo, error)

// FitInfo describes a fitted model.
type FitInfo struct {
	// Hyperplanes is the number of hyperplanes of the model, or another
	// size measure; Run averages it.
	Hyperplanes float64
}

// Config sets up a cross-validation run. The zero value runs 10×10-fold
// cross-validation with seed 0.
type Config struct {
	// Reps is the number of repetitions. If 0, it defaults to 10.
	Reps int
	// Folds is the number of folds per repetition, at least 2 and at most
	// the number of rows. If 0, it defaults to 10.
	Folds int
	// Seed seeds the splits (SplitSeed) and the per-fit seeds (FitSeed).
	Seed uint64
	// Workers bounds the number of folds trained at once. If 0, it defaults
	// to runtime.GOMAXPROCS(0). Each worker holds one copy of the data
	// while it trains a fold.
	Workers int
	// Progress, if set, is called after each fit with the number of fits
	// done and the total Reps×Folds. Calls are serialised (never two at
	// once, done increasing) but come from any goroutine.
	Progress func(done, total int)
	// Exec, if set, computes the stats of fold fold of repetition rep
	// somewhere else (package cluster: on a worker, with Plan.RunFold)
	// instead of running the Fit here; Run then asks for up to 4096 fits
	// at once, whatever Workers says.
	Exec func(ctx context.Context, rep, fold int) (FoldStats, error)
}

// Result holds the statistics of a run. Percentages are in [0,100]. A
// standard deviation is the sample standard deviation (divisor n-1), and 0
// when there is a single value.
type Result struct {
	Reps  int `json:"reps"`
	Folds int `json:"folds"`
	Rows  int `json:"rows"`

	// The accuracy of a repetition is the number of correctly predicted
	// test rows over all its folds divided by Rows. Mean and Std are over
	// repetitions (the Polyceptron paper's Table 2).
	AccuracyMean float64 `json:"accuracy_mean"`
	AccuracyStd  float64 `json:"accuracy_std"`
	// Error is 100 - accuracy, per repetition.
	ErrorMean float64 `json:"error_mean"`
	ErrorStd  float64 `json:"error_std"`
	// FoldErrorStd is the standard deviation of the test error of the
	// Reps×Folds folds, each fold's error being its own (the kernel
	// perceptron paper's Tables II and III).
	FoldErrorStd float64 `json:"fold_error_std"`

	// The training error of a repetition is the number of training rows
	// its fitted models mislabel, over all its folds, divided by the number
	// of training rows over all its folds (Folds-1 times Rows). Mean and
	// Std are over repetitions; FoldTrainErrorStd is over folds.
	TrainErrorMean    float64 `json:"train_error_mean"`
	TrainErrorStd     float64 `json:"train_error_std"`
	FoldTrainErrorStd float64 `json:"fold_train_error_std"`

	// TrainSeconds is the wall time of one Fit call (not scaling or
	// prediction). Mean is over all fits; Std is over repetitions of the
	// per-repetition mean.
	TrainSecondsMean float64 `json:"train_seconds_mean"`
	TrainSecondsStd  float64 `json:"train_seconds_std"`
	// Hyperplanes is FitInfo.Hyperplanes; Mean is over all fits, Std over
	// repetitions of the per-repetition mean.
	HyperplanesMean float64 `json:"hyperplanes_mean"`
	HyperplanesStd  float64 `json:"hyperplanes_std"`

	// Seconds is the wall time of the whole run.
	Seconds float64 `json:"seconds"`

	PerRep []RepResult `json:"per_rep"`

	// The rates above as fractions in [0, 1]: each X_fraction is the
	// percent field X divided by 100. The percent fields stay beside them
	// for one release.
	AccuracyMeanFraction      float64 `json:"accuracy_mean_fraction"`
	AccuracyStdFraction       float64 `json:"accuracy_std_fraction"`
	ErrorMeanFraction         float64 `json:"error_mean_fraction"`
	ErrorStdFraction          float64 `json:"error_std_fraction"`
	FoldErrorStdFraction      float64 `json:"fold_error_std_fraction"`
	TrainErrorMeanFraction    float64 `json:"train_error_mean_fraction"`
	TrainErrorStdFraction     float64 `json:"train_error_std_fraction"`
	FoldTrainErrorStdFraction float64 `json:"fold_train_error_std_fraction"`
}

// RepResult holds one repetition's figures, defined as in Result.
type RepResult struct {
	Accuracy     float64 `json:"accuracy"`
	TrainError   float64 `json:"train_error"`
	TrainSeconds float64 `json:"train_seconds"` // mean over the folds
	Hyperplanes  float64 `json:"hyperplanes"`   // mean over the folds

	AccuracyFraction   float64 `json:"accuracy_fraction"`    // Accuracy / 100
	TrainErrorFraction float64 `json:"train_error_fraction"` // TrainError / 100
}

// foldStats is what one fit contributes.
type foldStats struct {
	testErr, testN   int
	trainErr, trainN int
	seconds          float64
	hyperplanes      float64
}

// scratch is one worker's reusable fold buffers.
type scratch struct {
	train, test sparsevec.CSR
}

// maxInFlight bounds the fits Run asks Config.Exec for at once: enough to
// keep a large fleet of workers busy, few enough goroutines for any run.
const maxInFlight = 4096

// Run cross-validates fit on data as described in the package comment.
//
// It returns an error wrapping ErrNoData for an empty data set, ErrConfig
// for negative fields or Folds == 1 or Folds > data.Rows(), and ErrLabel for
// a non-finite label. The first failing fit cancels the context of the
// others and its error is returned as a *FitError naming the repetition and
// fold. If ctx is cancelled, Run returns ctx's error (possibly in a
// *FitError). Every goroutine has ended when Run returns.
//
// Run panics if fit is nil.
func Run(ctx context.Context, cfg Config, data *sparsevec.CSR, fit Fit) (*Result, error) {
	if fit == nil {
		panic("cv: Run with nil Fit")
	}
	start := time.Now()
	cfg, err := cfg.check(data)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	reps, folds := cfg.Reps, cfg.Folds
	total := reps * folds
	splits := make([]func() []int, reps)
	for r := range splits {
		splits[r] = sync.OnceValue(func() []int {
			return Splits(data.Labels, folds, SplitSeed(cfg.Seed, r))
		})
	}
	stats := make([]foldStats, total)

	var (
		next     atomic.Int64
		progMu   sync.Mutex
		progDone int
	)
	workers := min(cfg.Workers, total)
	if cfg.Exec != nil {
		workers = min(total, maxInFlight)
	}
	g, gctx := errgroup.WithContext(ctx)
	for range workers {
		g.Go(func() error {
			var s scratch
			for {
				t := int(next.Add(1) - 1)
				if t >= total {
					return nil
				}
				if err := gctx.Err(); err != nil {
					return err
				}
				rep, fold := t/folds, t%folds
				var (
					st  foldStats
					err error
				)
				if cfg.Exec != nil {
					var fs FoldStats
					fs, err = cfg.Exec(gctx, rep, fold)
					st = fs.s
				} else {
					st, err = runFold(gctx, cfg, data, splits[rep](), rep, fold, fit, &s)
				}
				if err != nil {
					return &FitError{Rep: rep, Fold: fold, Err: err}
				}
				stats[t] = st
				if cfg.Progress != nil {
					progMu.Lock()
					progDone++
					cfg.Progress(progDone, total)
					progMu.Unlock()
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	res := summarize(stats, reps, folds, data.Rows())
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// check returns cfg with its defaults, or an error if data is empty, has a
// label that is not finite, or does not fit cfg.
func (cfg Config) check(data *sparsevec.CSR) (Config, error) {
	if data == nil || data.Rows() == 0 {
		return cfg, ErrNoData
	}
	cfg, err := cfg.withDefaults(data.Rows())
	if err != nil {
		return cfg, err
	}
	for r, y := range data.Labels {
		if math.IsNaN(float64(y)) || math.IsInf(float64(y), 0) {
			return cfg, fmt.Errorf("%w: row %d has label %v", ErrLabel, r, y)
		}
	}
	return cfg, nil
}

// withDefaults fills in the defaults of cfg and checks it against a data
// set of n rows.
func (cfg Config) withDefaults(n int) (Config, error) {
	if cfg.Reps < 0 || cfg.Folds < 0 || cfg.Workers < 0 {
		return cfg, fmt.Errorf("%w: Reps %d, Folds %d, Workers %d: negative", ErrConfig, cfg.Reps, cfg.Folds, cfg.Workers)
	}
	cfg.Reps = cmp.Or(cfg.Reps, 10)
	cfg.Folds = cmp.Or(cfg.Folds, 10)
	cfg.Workers = cmp.Or(cfg.Workers, runtime.GOMAXPROCS(0))
	if cfg.Folds < 2 {
		return cfg, fmt.Errorf("%w: Folds %d: need at least 2 folds", ErrConfig, cfg.Folds)
	}
	if cfg.Folds > n {
		return cfg, fmt.Errorf("%w: Folds %d exceeds the %d rows", ErrConfig, cfg.Folds, n)
	}
	return cfg, nil
}

// runFold trains and scores fold fold of repetition rep, whose fold numbers
// are assign.
func runFold(ctx context.Context, cfg Config, data *sparsevec.CSR, assign []int, rep, fold int, fit Fit, s *scratch) (foldStats, error) {
	s.train.Reset()
	s.test.Reset()
	for r, f := range assign {
		if f == fold {
			s.test.Append(data.Labels[r], data.Row(r))
		} else {
			s.train.Append(data.Labels[r], data.Row(r))
		}
	}
	s.train.Dim, s.test.Dim = data.Dim, data.Dim
	train, test := &s.train, &s.test

	t0 := time.Now()
	p, info, err := fit(ctx, train, FitSeed(cfg.Seed, rep, fold))
	secs := time.Since(t0).Seconds()
	if err != nil {
		return foldStats{}, err
	}
	if p == nil {
		return foldStats{}, ErrNilPredictor
	}
	st := foldStats{
		testN: test.Rows(), trainN: train.Rows(),
		seconds: secs, hyperplanes: info.Hyperplanes,
	}
	st.testErr = mistakes(p, test)
	if err := ctx.Err(); err != nil {
		return foldStats{}, err
	}
	st.trainErr = mistakes(p, train)
	return st, nil
}

// mistakes counts the rows of m that p mislabels.
func mistakes(p Predictor, m *sparsevec.CSR) int {
	n := 0
	for r, y := range m.Labels {
		if p.Predict(m.Row(r)) != y {
			n++
		}
	}
	return n
}

// summarize turns the per-fit stats, in (rep, fold) order, into a Result.
func summarize(stats []foldStats, reps, folds, rows int) *Result {
	res := &Result{Reps: reps, Folds: folds, Rows: rows, PerRep: make([]RepResult, reps)}
	acc := make([]float64, reps)
	errs := make([]float64, reps)
	trainErr := make([]float64, reps)
	secs := make([]float64, reps)
	hyp := make([]float64, reps)
	foldErr := make([]float64, 0, len(stats))
	foldTrainErr := make([]float64, 0, len(stats))
	for r := range reps {
		var testErr, testN, trErr, trN int
		var sumSecs, sumHyp float64
		for _, st := range stats[r*folds : (r+1)*folds] {
			testErr += st.testErr
			testN += st.testN
			trErr += st.trainErr
			trN += st.trainN
			sumSecs += st.seconds
			sumHyp += st.hyperplanes
			foldErr = append(foldErr, percent(st.testErr, st.testN))
			foldTrainErr = append(foldTrainErr, percent(st.trainErr, st.trainN))
		}
		errs[r] = percent(testErr, testN)
		acc[r] = percent(testN-testErr, testN)
		trainErr[r] = percent(trErr, trN)
		secs[r] = sumSecs / float64(folds)
		hyp[r] = sumHyp / float64(folds)
		res.PerRep[r] = RepResult{Accuracy: acc[r], TrainError: trainErr[r], TrainSeconds: secs[r], Hyperplanes: hyp[r]}
	}
	res.AccuracyMean, res.AccuracyStd = summary.MeanStd(acc)
	res.ErrorMean, res.ErrorStd = summary.MeanStd(errs)
	_, res.FoldErrorStd = summary.MeanStd(foldErr)
	res.TrainErrorMean, res.TrainErrorStd = summary.MeanStd(trainErr)
	_, res.FoldTrainErrorStd = summary.MeanStd(foldTrainErr)
	// Every repetition has Folds fits, so the mean of the per-repetition
	// means is the mean over all fits.
	res.TrainSecondsMean, res.TrainSecondsStd = summary.MeanStd(secs)
	res.HyperplanesMean, res.HyperplanesStd = summary.MeanStd(hyp)
	res.setFractions()
	return res
}

// percent returns 100·a/b, or 0 when b is 0.
func percent(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
