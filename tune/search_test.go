package tune

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

const heart = "../testdata/uci/heart_scale.libsvm"

func loadHeart(t *testing.T) *sparsevec.CSR {
	t.Helper()
	data, err := reader.Load(heart)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// candidates returns the points of grid over the cpm flags base, each
// with seed 7.
func candidates(t *testing.T, grid string, base ...string) []Candidate {
	t.Helper()
	g, err := ParseGrid(grid, learner.CPM, baseFlags(t, base...))
	if err != nil {
		t.Fatal(err)
	}
	cands, err := Candidates(g, 0, func(f *learner.Flags) (learner.Spec, error) {
		s, err := learner.Build(learner.CPM, f)
		return s.WithSeed(7), err
	})
	if err != nil {
		t.Fatal(err)
	}
	return cands
}

// clearTimes zeroes the wall times of rows, which vary from run to run.
func clearTimes(rows []Row) {
	for i := range rows {
		r := &rows[i]
		r.TrainSecondsMean, r.Seconds = 0, 0
		if r.CV != nil {
			r.CV.TrainSecondsMean, r.CV.TrainSecondsStd = 0, 0
			for j := range r.CV.PerRep {
				r.CV.PerRep[j].TrainSeconds = 0
			}
		}
		for j := range r.Runs {
			r.Runs[j].TrainSeconds = 0
		}
		r.Point.Flags = nil
	}
}

// Each point's figures are cv.Run's for the same configuration, and the
// rows do not depend on the number of workers.
func TestSearchCVMatchesRunAnyWorkers(t *testing.T) {
	data := loadHeart(t)
	cfg := cv.Config{Reps: 2, Folds: 3, Seed: 5}
	var want []Row
	for _, w := range []int{1, 2, 5} {
		cands := candidates(t, "C=1,0.1 k=2,4", "-i", "3000")
		rows, err := Search(context.Background(), Config{CV: &cfg, Workers: w}, data, cands)
		if err != nil {
			t.Fatal(err)
		}
		if w == 1 {
			for i, c := range cands {
				res, err := cv.Run(context.Background(), cv.Config{Reps: 2, Folds: 3, Seed: 5, Workers: 2}, data, c.Spec.Fit())
				if err != nil {
					t.Fatal(err)
				}
				if res.AccuracyMean != rows[i].AccuracyMean || res.FoldErrorStd != rows[i].CV.FoldErrorStd ||
					!reflect.DeepEqual(res.PerRep[0].Accuracy, rows[i].CV.PerRep[0].Accuracy) || res.TrainErrorMean != rows[i].CV.TrainErrorMean {
					t.Errorf("point %d: search %+v, cv.Run %+v", i, rows[i].CV, res)
				}
			}
		}
		clearTimes(rows)
		if want == nil {
			want = rows
		} else if !reflect.DeepEqual(rows, want) {
			t.Errorf("workers %d: rows differ from workers 1", w)
		}
	}
}

// On a validation set, the seeds are replicates: one run per seed,
// Seed, Seed+1, ...
func TestSearchValidSeeds(t *testing.T) {
	data := loadHeart(t)
	train, valid, err := cv.Holdout(data, 0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	var want []Row
	for _, w := range []int{1, 3} {
		rows, err := Search(context.Background(), Config{Valid: valid, Seeds: 3, Seed: 10, Workers: w}, train, candidates(t, "entropy=0,0.5", "-i", "3000", "-k", "3"))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if len(r.Runs) != 3 || r.Runs[0].Seed != 10 || r.Runs[2].Seed != 12 || r.Fits != 3 {
				t.Fatalf("runs %+v", r.Runs)
			}
			if math.Abs(r.AccuracyMean+r.ErrorMean-100) > 1e-9 {
				t.Errorf("accuracy %v + error %v != 100", r.AccuracyMean, r.ErrorMean)
			}
		}
		clearTimes(rows)
		if want == nil {
			want = rows
		} else if !reflect.DeepEqual(rows, want) {
			t.Errorf("workers %d: rows differ", w)
		}
	}
}

func TestSearchErrors(t *testing.T) {
	data := loadHeart(t)
	cands := candidates(t, "C=1", "-i", "100")
	if _, err := Search(context.Background(), Config{}, data, cands); err == nil {
		t.Error("no CV and no validation set: no error")
	}
	if _, err := Search(context.Background(), Config{CV: &cv.Config{Folds: 1000}}, data, cands); err == nil {
		t.Error("more folds than rows: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Search(ctx, Config{CV: &cv.Config{Reps: 1, Folds: 2}}, data, cands); err == nil {
		t.Error("cancelled: no error")
	}
}

// row is a row for the choice tests: a point with its k, mean, standard
// error and hyperplanes.
func row(i int, k, mean, se, hyp float64) Row {
	return Row{Point: Point{Index: i, Settings: []Setting{{Flag: "k", Num: k}}}, AccuracyMean: mean, StdErr: se, HyperplanesMean: hyp}
}

func TestChoose(t *testing.T) {
	rows := []Row{
		row(0, 10, 80, 1, 20),
		row(1, 5, 81, 1.5, 10),
		row(2, 2, 80, 1, 4),
		row(3, 4, 81+1e-12, 1, 8), // ties with 1: fewer hyperplanes
		row(4, 3, 79.6, 1, 6),
	}
	if got := Choose(rows, Best, nil); got != 3 {
		t.Errorf("best: %d, want 3", got)
	}
	// One standard error of point 3 (1): 80 and above; the simplest is 2.
	if got := Choose(rows, OneSE, nil); got != 2 {
		t.Errorf("1se: %d, want 2", got)
	}
	if got := Choose(rows, Best, []int{0, 2, 4}); got != 2 {
		t.Errorf("best among 0, 2, 4: %d, want 2 (ties with 0, fewer hyperplanes)", got)
	}
	// Same hyperplanes: smaller k, then the earlier point.
	same := []Row{row(0, 5, 70, 0, 3), row(1, 3, 70, 0, 3), row(2, 3, 70, 0, 3)}
	if got := Choose(same, Best, nil); got != 1 {
		t.Errorf("ties: %d, want 1", got)
	}
	for _, s := range []string{"best", "1se"} {
		if r, err := ParseRule(s); err != nil || r.String() != s {
			t.Errorf("ParseRule(%s) = %v, %v", s, r, err)
		}
	}
	if _, err := ParseRule("worst"); err == nil {
		t.Error("ParseRule(worst): no error")
	}
}

func TestPaperH(t *testing.T) {
	if got := PaperH(10); len(got) != 8 || got[0] != math.Log(2) {
		t.Errorf("PaperH(10) = %v", got)
	}
	if got := PaperH(40); len(got) != 9 || got[0] != math.Log(4) || got[8] != math.Log(36) {
		t.Errorf("PaperH(40) = %v", got)
	}
}

// The paper's search: the C stage at h = 0, then h at the best C, the
// choice among the best C's h = 0 and the h stage.
func TestPaperSearch(t *testing.T) {
	data := loadHeart(t)
	base := baseFlags(t, "-i", "2000", "-k", "20")
	build := func(f *learner.Flags) (learner.Spec, error) { return learner.Build(learner.CPM, f) }
	p, err := PaperSearch(context.Background(), Config{CV: &cv.Config{Reps: 1, Folds: 3, Seed: 1}}, data, base, build)
	if err != nil {
		t.Fatal(err)
	}
	if p.Stage1 != 5 || len(p.Rows) != 5+len(PaperH(20)) {
		t.Fatalf("%d rows, stage 1 %d", len(p.Rows), p.Stage1)
	}
	best := Choose(p.Rows[:5], Best, nil)
	for i, r := range p.Rows {
		if r.Point.Index != i {
			t.Errorf("row %d numbered %d", i, r.Point.Index)
		}
		if i >= 5 && r.Point.Settings[0].Value != p.Rows[best].Point.Settings[0].Value {
			t.Errorf("h stage at %s, best C is %s", r.Point, p.Rows[best].Point)
		}
	}
	if p.Chosen != best && p.Chosen < 5 {
		t.Errorf("chose %d, a C-stage point other than the best %d", p.Chosen, best)
	}
	if _, err := PaperSearch(context.Background(), Config{CV: &cv.Config{Folds: 3}}, data, baseFlags(t, "--lambda", "1e-4"), build); err == nil {
		t.Error("--lambda: no error")
	}
}
