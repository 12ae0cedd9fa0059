package cv

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/polyhedral/cpm/sparsevec"
)

// FoldStats is what one fit of a cross-validation contributes to its
// Result: test and training mistakes, the fit's time and size. It
// encodes as JSON (a worker's result in package cluster).
type FoldStats struct{ s foldStats }

// foldStatsJSON is the JSON form of FoldStats.
type foldStatsJSON struct {
	TestErrors  int     `json:"test_errors"`
	TestRows    int     `json:"test_rows"`
	TrainErrors int     `json:"train_errors"`
	TrainRows   int     `json:"train_rows"`
	Seconds     float64 `json:"seconds"`
	Hyperplanes float64 `json:"hyperplanes"`
}

// MarshalJSON implements json.Marshaler.
func (f FoldStats) MarshalJSON() ([]byte, error) {
	s := f.s
	return json.Marshal(foldStatsJSON{s.testErr, s.testN, s.trainErr, s.trainN, s.seconds, s.hyperplanes})
}

// UnmarshalJSON implements json.Unmarshaler. Counts must be
// non-negative, errors at most the rows they are of, and the numbers finite.
func (f *FoldStats) UnmarshalJSON(b []byte) error {
	var j foldStatsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.TestErrors < 0 || j.TestRows < j.TestErrors || j.TrainErrors < 0 || j.TrainRows < j.TrainErrors ||
		math.IsNaN(j.Seconds) || math.IsNaN(j.Hyperplanes) || j.Seconds < 0 || j.Hyperplanes < 0 {
		return fmt.Errorf("cv: fold stats out of range: %+v", j)
	}
	f.s = foldStats{j.TestErrors, j.TestRows, j.TrainErrors, j.TrainRows, j.Seconds, j.Hyperplanes}
	return nil
}

// Scratch holds the reusable fold buffers of one goroutine running folds
// with RunFold. The zero value is ready to use.
type Scratch struct{ s scratch }

// Plan is the fold assignment of every repetition of a cross-validation
// run: Assign[rep][row] is the fold of row in repetition rep, as Run
// draws it (Splits with SplitSeed).
type Plan struct {
	Config Config // with its defaults filled in
	Assign [][]int
}

// NewPlan checks cfg against data as Run does and draws the folds of
// every repetition. Running every (rep, fold) of the plan with RunFold and
// passing the stats in (rep, fold) order to Summarize gives the figures
// Run gives (all but Seconds).
func NewPlan(cfg Config, data *sparsevec.CSR) (*Plan, error) {
	cfg, err := cfg.check(data)
	if err != nil {
		return nil, err
	}
	p := &Plan{Config: cfg, Assign: make([][]int, cfg.Reps)}
	for r := range p.Assign {
		p.Assign[r] = Splits(data.Labels, cfg.Folds, SplitSeed(cfg.Seed, r))
	}
	return p, nil
}

// RunFold trains fit on every fold of repetition rep but fold, with seed
// FitSeed(Config.Seed, rep, fold), and scores it on fold, exactly as Run
// does. s is the caller's scratch space: RunFold calls from several
// goroutines need one each. An error of fit is returned as a *FitError.
func (p *Plan) RunFold(ctx context.Context, data *sparsevec.CSR, rep, fold int, fit Fit, s *Scratch) (FoldStats, error) {
	st, err := runFold(ctx, p.Config, data, p.Assign[rep], rep, fold, fit, &s.s)
	if err != nil {
		return FoldStats{}, &FitError{Rep: rep, Fold: fold, Err: err}
	}
	return FoldStats{st}, nil
}

// Summarize returns the Result of the stats of every fold of the plan in
// (rep, fold) order; Seconds is left 0.
func (p *Plan) Summarize(stats []FoldStats, rows int) *Result {
	in := make([]foldStats, len(stats))
	for i, s := range stats {
		in[i] = s.s
	}
	return summarize(in, p.Config.Reps, p.Config.Folds, rows)
}
