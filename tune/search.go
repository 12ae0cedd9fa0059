package tune

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

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/internal/summary"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/sparsevec"
)

// Candidate is a point of a search and the learner it configures.
type Candidate struct {
	Point Point
	Spec  learner.Spec
}

// Config sets up a search. With CV set, every point is scored by
// repeated stratified k-fold cross-validation exactly as cv.Run scores it;
// otherwise by training on the whole data with Seeds seeds and scoring on
// Valid.
type Config struct {
	// CV, if set, is the cross-validation of every point (Reps, Folds,
	// Seed; its Workers and Progress are not used).
	CV *cv.Config
	// Valid is the validation set when CV is nil.
	Valid *sparsevec.CSR
	// Seeds is the number of trainings per point on Valid, with learner
	// seeds Seed, Seed+1, ... If 0, it defaults to 1.
	Seeds int
	Seed  uint64
	// Workers bounds the fits run at once, over every point. If 0, it
	// defaults to runtime.GOMAXPROCS(0). The results do not depend on it.
	Workers int
	// MaxMemory, if > 0, is the memory budget of the fits run at once; each
	// fit's Spec.MaxMemory is its share.
	MaxMemory int64
	// Progress, if set, is called once per point when its last fit ends,
	// with the point's row and the number of points done. Calls are
	// serialised; points may finish out of grid order.
	Progress func(r *Row, done, total int)
	// Exec, if set, computes fit fit of a candidate somewhere else
	// (package cluster: on a worker, with RunFit) instead of here; Search
	// then asks for up to 4096 fits at once, whatever Workers says.
	Exec func(ctx context.Context, c Candidate, fit int) (FitResult, error)
}

// Row is the score of one point. Percentages are in [0,100].
type Row struct {
	Point Point
	// Fits is the number of trainings behind the row.
	Fits int
	// AccuracyMean and AccuracyStd are over repetitions (CV) or seeds
	// (validation set); ErrorMean is 100 - accuracy likewise.
	AccuracyMean, AccuracyStd, ErrorMean float64
	// StdErr is the standard error of AccuracyMean for the one-standard-
	// error rule: the standard deviation of the accuracy of the
	// Reps×Folds folds over √(Reps×Folds) for CV, AccuracyStd over
	// √Seeds for a validation set.
	StdErr float64
	// TrainSecondsMean is the mean wall time of one fit; Seconds the sum
	// over the row's fits.
	TrainSecondsMean, Seconds float64
	HyperplanesMean           float64
	// CV is cross-validation's own result (CV runs only).
	CV *cv.Result
	// Runs are the runs on the validation set, one per seed.
	Runs []Run
}

// Run is one training on the whole data scored on the validation set.
type Run struct {
	Seed         uint64
	Accuracy     float64
	Error        float64 // 100·mistakes/rows, computed as such
	TrainSeconds float64
	Hyperplanes  float64
}

// FitResult is what one fit of a point gives: a fold's stats (CV) or a
// run on the validation set. It encodes as JSON.
type FitResult struct {
	Fold *cv.FoldStats `json:"fold,omitempty"`
	Run  *Run          `json:"run,omitempty"`
}

// fitResult is FitResult without pointers, as Search keeps it.
type fitResult struct {
	fold cv.FoldStats
	run  Run
}

// search is the state of one Search.
type search struct {
	cfg   Config
	data  *sparsevec.CSR
	cands []Candidate
	plan  *cv.Plan
	fits  int // fits per point
}

// maxInFlight bounds the fits Search asks Config.Exec for at once: enough
// to keep a large fleet of workers busy, few enough goroutines for a grid
// of any size.
const maxInFlight = 4096

// Search scores every candidate on data as cfg says and returns their rows
// in candidate order. Fits of all points share one pool of cfg.Workers
// goroutines; each fit's result depends only on its point and its number,
// so the rows (but for the times) are the same for any Workers. The first
// failing fit cancels the others; its error names the point.
func Search(ctx context.Context, cfg Config, data *sparsevec.CSR, cands []Candidate) ([]Row, error) {
	s := &search{cfg: cfg, data: data, cands: cands}
	if err := s.setup(); err != nil {
		return nil, err
	}
	total := len(cands) * s.fits
	atOnce := min(cmp.Or(cfg.Workers, runtime.GOMAXPROCS(0)), max(total, 1))
	if cfg.Exec != nil {
		atOnce = min(max(total, 1), maxInFlight)
	}
	if cfg.MaxMemory > 0 {
		for i := range s.cands {
			s.cands[i].Spec.MaxMemory = max(cfg.MaxMemory/int64(atOnce), 1)
		}
	}
	results := make([]fitResult, total)
	left := make([]atomic.Int32, len(cands))
	for i := range left {
		left[i].Store(int32(s.fits))
	}
	rows := make([]Row, len(cands))
	var (
		next   atomic.Int64
		progMu sync.Mutex
		done   int
	)
	g, gctx := errgroup.WithContext(ctx)
	for range atOnce {
		g.Go(func() error {
			var scratch cv.Scratch
			for {
				t := int(next.Add(1) - 1)
				if t >= total {
					return nil
				}
				if err := gctx.Err(); err != nil {
					return err
				}
				p, f := t/s.fits, t%s.fits
				var (
					r   fitResult
					err error
				)
				if cfg.Exec != nil {
					r, err = s.exec(gctx, p, f)
				} else {
					r, err = s.fit(gctx, p, f, &scratch)
				}
				if err != nil {
					return fmt.Errorf("point %d (%s): %w", p+1, cands[p].Point, err)
				}
				results[t] = r
				if left[p].Add(-1) == 0 {
					rows[p] = s.row(p, results[p*s.fits:(p+1)*s.fits])
					progMu.Lock()
					done++
					if cfg.Progress != nil {
						cfg.Progress(&rows[p], done, len(cands))
					}
					progMu.Unlock()
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return rows, nil
}

// setup checks the configuration and draws the folds.
func (s *search) setup() error {
	if s.data == nil || s.data.Rows() == 0 {
		return cv.ErrNoData
	}
	if s.cfg.CV != nil {
		plan, err := cv.NewPlan(*s.cfg.CV, s.data)
		if err != nil {
			return err
		}
		s.plan, s.fits = plan, plan.Config.Reps*plan.Config.Folds
		return nil
	}
	if s.cfg.Valid == nil || s.cfg.Valid.Rows() == 0 {
		return fmt.Errorf("tune: no validation rows: %w", cv.ErrNoData)
	}
	if s.cfg.Seeds < 0 {
		return fmt.Errorf("tune: Seeds %d: %w", s.cfg.Seeds, cv.ErrConfig)
	}
	s.fits = cmp.Or(s.cfg.Seeds, 1)
	return nil
}

// exec has fit f of point p computed by cfg.Exec and checks that its
// result is of the search's kind.
func (s *search) exec(ctx context.Context, p, f int) (fitResult, error) {
	r, err := s.cfg.Exec(ctx, s.cands[p], f)
	switch {
	case err != nil:
		return fitResult{}, err
	case s.plan != nil && (r.Fold == nil || r.Run != nil):
		return fitResult{}, fmt.Errorf("tune: fit %d of point %d: a cross-validation fit returned no fold stats", f, p)
	case s.plan == nil && (r.Run == nil || r.Fold != nil):
		return fitResult{}, fmt.Errorf("tune: fit %d of point %d: a validation fit returned no run", f, p)
	}
	if r.Fold != nil {
		return fitResult{fold: *r.Fold}, nil
	}
	return fitResult{run: *r.Run}, nil
}

// RunFit computes fit f of cand as Search with cfg on data computes it
// (cfg.Exec, Workers, MaxMemory and Progress are not used; cand.Spec's
// MaxMemory is): fold f of the cross-validation, or the run with learner
// seed cfg.Seed+f scored on cfg.Valid. A worker process of package
// cluster computes one fit of a search with it.
func RunFit(ctx context.Context, cfg Config, data *sparsevec.CSR, cand Candidate, f int) (FitResult, error) {
	s := &search{cfg: cfg, data: data, cands: []Candidate{cand}}
	if err := s.setup(); err != nil {
		return FitResult{}, err
	}
	if f < 0 || f >= s.fits {
		return FitResult{}, fmt.Errorf("tune: fit %d of %d: %w", f, s.fits, cv.ErrConfig)
	}
	var scratch cv.Scratch
	r, err := s.fit(ctx, 0, f, &scratch)
	if err != nil {
		return FitResult{}, err
	}
	if s.plan != nil {
		return FitResult{Fold: &r.fold}, nil
	}
	return FitResult{Run: &r.run}, nil
}

// fit runs fit f of point p.
func (s *search) fit(ctx context.Context, p, f int, scratch *cv.Scratch) (fitResult, error) {
	spec := s.cands[p].Spec
	if s.plan != nil {
		c := s.plan.Config
		st, err := s.plan.RunFold(ctx, s.data, f/c.Folds, f%c.Folds, spec.Fit(), scratch)
		return fitResult{fold: st}, err
	}
	seed := s.cfg.Seed + uint64(f)
	t0 := time.Now()
	m, rep, err := learner.Train(ctx, spec.WithSeed(seed), s.data)
	secs := time.Since(t0).Seconds()
	if err != nil {
		return fitResult{}, err
	}
	pr, err := learner.NewPredictor(m)
	if err != nil {
		return fitResult{}, err
	}
	wrong, n := 0, s.cfg.Valid.Rows()
	for r, y := range s.cfg.Valid.Labels {
		if got, _, _ := pr.Predict(s.cfg.Valid.Row(r)); got != y {
			wrong++
		}
	}
	return fitResult{run: Run{Seed: seed, Accuracy: 100 * float64(n-wrong) / float64(n),
		Error: float64(wrong) / float64(n) * 100, TrainSeconds: secs, Hyperplanes: float64(rep.Hyperplanes)}}, nil
}

// row summarises the fits of point p.
func (s *search) row(p int, fits []fitResult) Row {
	r := Row{Point: s.cands[p].Point, Fits: len(fits)}
	if s.plan != nil {
		stats := make([]cv.FoldStats, len(fits))
		for i, f := range fits {
			stats[i] = f.fold
		}
		res := s.plan.Summarize(stats, s.data.Rows())
		res.Seconds = 0
		r.CV = res
		r.AccuracyMean, r.AccuracyStd, r.ErrorMean = res.AccuracyMean, res.AccuracyStd, res.ErrorMean
		r.StdErr = res.FoldErrorStd / math.Sqrt(float64(len(fits)))
		r.TrainSecondsMean, r.HyperplanesMean = res.TrainSecondsMean, res.HyperplanesMean
		r.Seconds = res.TrainSecondsMean * float64(len(fits))
		return r
	}
	var acc, errs, secs, hyp []float64
	for _, f := range fits {
		r.Runs = append(r.Runs, f.run)
		acc = append(acc, f.run.Accuracy)
		errs = append(errs, f.run.Error)
		secs = append(secs, f.run.TrainSeconds)
		hyp = append(hyp, f.run.Hyperplanes)
		r.Seconds += f.run.TrainSeconds
	}
	r.AccuracyMean, r.AccuracyStd = summary.MeanStd(acc)
	r.ErrorMean, _ = summary.MeanStd(errs)
	r.StdErr = r.AccuracyStd / math.Sqrt(float64(len(fits)))
	r.TrainSecondsMean, _ = summary.MeanStd(secs)
	r.HyperplanesMean, _ = summary.MeanStd(hyp)
	return r
}
