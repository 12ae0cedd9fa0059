package cv

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// Every fold of a Plan run with RunFold and summarised gives Run's
// result, in any order of the folds.
func TestPlanMatchesRun(t *testing.T) {
	data := blobs(120, 4, 3)
	cfg := Config{Reps: 3, Folds: 4, Seed: 9}
	want, err := Run(context.Background(), cfg, data, centroidFit)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	stats := make([]FoldStats, 12)
	var s Scratch
	for t0 := len(stats) - 1; t0 >= 0; t0-- {
		if stats[t0], err = p.RunFold(context.Background(), data, t0/4, t0%4, centroidFit, &s); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.Summarize(stats, data.Rows()); !reflect.DeepEqual(untimed(got), untimed(want)) {
		t.Errorf("plan %+v, Run %+v", untimed(got), untimed(want))
	}
}

func TestPlanErrors(t *testing.T) {
	if _, err := NewPlan(Config{}, nil); !errors.Is(err, ErrNoData) {
		t.Errorf("no data: %v", err)
	}
	if _, err := NewPlan(Config{Folds: 1}, blobs(10, 2, 1)); !errors.Is(err, ErrConfig) {
		t.Errorf("one fold: %v", err)
	}
	p, err := NewPlan(Config{Reps: 1, Folds: 2}, blobs(10, 2, 1))
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	fail := func(context.Context, *sparsevec.CSR, uint64) (Predictor, FitInfo, error) { return nil, FitInfo{}, boom }
	var fe *FitError
	if _, err := p.RunFold(context.Background(), blobs(10, 2, 1), 0, 1, fail, &Scratch{}); !errors.As(err, &fe) || fe.Fold != 1 || !errors.Is(err, boom) {
		t.Errorf("failing fit: %v", err)
	}
}
