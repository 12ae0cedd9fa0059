package cv

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polyhedral/cpm/internal/summary"
	"github.com/polyhedral/cpm/sparsevec"
)

// constant predicts one label for every row.
type constant float32

func (c constant) Predict(sparsevec.Vector) float32 { return float32(c) }

// majority is a Fit that predicts the most frequent training label (the
// larger label on a tie) and reports the number of training rows labelled
// +1 as its size.
func majority(_ context.Context, train *sparsevec.CSR, _ uint64) (Predictor, FitInfo, error) {
	count := map[float32]int{}
	for _, y := range train.Labels {
		count[y]++
	}
	var best float32
	n := -1
	for y, c := range count {
		if c > n || c == n && y > best {
			best, n = y, c
		}
	}
	return constant(best), FitInfo{Hyperplanes: float64(count[1])}, nil
}

// centroids is a nearest class mean classifier on dense float64 vectors;
// ties go to the smaller label.
type centroids struct {
	labels []float32
	means  [][]float64
	x      []float64
}

func (c *centroids) Predict(v sparsevec.Vector) float32 {
	clear(c.x)
	for i, j := range v.Idx {
		if int(j) < len(c.x) {
			c.x[j] = float64(v.Val[i])
		}
	}
	return c.nearest(c.x)
}

func (c *centroids) nearest(x []float64) float32 {
	best, bestD := float32(0), math.Inf(1)
	for k, m := range c.means {
		d := 0.0
		for j := range m {
			d += (x[j] - m[j]) * (x[j] - m[j])
		}
		if d < bestD || d == bestD && c.labels[k] < best {
			best, bestD = c.labels[k], d
		}
	}
	return best
}

// fitCentroids computes the class means of dense rows.
func fitCentroids(labels []float32, rows [][]float64, dim int) *centroids {
	c := &centroids{x: make([]float64, dim)}
	idx := map[float32]int{}
	var n []int
	for r, y := range labels {
		k, ok := idx[y]
		if !ok {
			k = len(c.labels)
			idx[y] = k
			c.labels = append(c.labels, y)
			c.means = append(c.means, make([]float64, dim))
			n = append(n, 0)
		}
		for j, v := range rows[r] {
			c.means[k][j] += v
		}
		n[k]++
	}
	for k := range c.means {
		for j := range c.means[k] {
			c.means[k][j] /= float64(n[k])
		}
	}
	return c
}

// toDense expands the rows of m to dim columns (index j in column j).
func toDense(m *sparsevec.CSR, dim int) [][]float64 {
	out := make([][]float64, m.Rows())
	for r := range out {
		out[r] = make([]float64, dim)
		x := m.Row(r)
		for i, j := range x.Idx {
			out[r][j] = float64(x.Val[i])
		}
	}
	return out
}

func centroidFit(_ context.Context, train *sparsevec.CSR, _ uint64) (Predictor, FitInfo, error) {
	c := fitCentroids(train.Labels, toDense(train, train.Dim), train.Dim)
	return c, FitInfo{Hyperplanes: float64(len(c.labels))}, nil
}

// blobs returns n rows in dim dimensions from three overlapping classes
// (labels 1, 2, 3) with a few exact zeros, drawn from a seeded PCG.
func blobs(n, dim int, seed uint64) *sparsevec.CSR {
	rng := rand.New(rand.NewPCG(seed, 1))
	labels := make([]float32, n)
	rows := make([][]float32, n)
	for r := range rows {
		y := 1 + rng.IntN(3)
		labels[r] = float32(y)
		rows[r] = make([]float32, dim)
		for j := range rows[r] {
			if rng.IntN(5) == 0 {
				continue
			}
			rows[r][j] = float32(rng.NormFloat64()*2 + float64(y*(j%2)))
		}
	}
	return denseCSR(labels, rows)
}

// untimed returns res without its timing fields.
func untimed(res *Result) Result {
	r := *res
	r.TrainSecondsMean, r.TrainSecondsStd, r.Seconds = 0, 0, 0
	r.PerRep = append([]RepResult(nil), r.PerRep...)
	for i := range r.PerRep {
		r.PerRep[i].TrainSeconds = 0
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestRunMajority: with 3 rows of -1 and 7 of +1 in 5 folds, the deal puts
// one -1 in each of folds 0-2 and two +1 in folds 3-4 whatever the seed, so
// majority voting always predicts +1: fold test errors 50,50,50,0,0 %,
// accuracy 70 %, training error 12/40 = 30 %, and 6,6,6,5,5 positive
// training rows (mean 5.6).
func TestRunMajority(t *testing.T) {
	labels := []float32{1, -1, 1, 1, -1, 1, 1, -1, 1, 1}
	rows := make([][]float32, len(labels))
	for r := range rows {
		rows[r] = []float32{float32(r + 1)}
	}
	data := denseCSR(labels, rows)
	for _, reps := range []int{1, 3} {
		for _, workers := range []int{1, 2, 7} {
			res, err := Run(context.Background(), Config{Reps: reps, Folds: 5, Seed: 11, Workers: workers}, data, majority)
			if err != nil {
				t.Fatal(err)
			}
			// Fold errors: per repetition squares of deviations from 30
			// sum to 3·20² + 2·30² = 3000.
			foldStd := math.Sqrt(3000 * float64(reps) / float64(5*reps-1))
			checks := []struct {
				name      string
				got, want float64
			}{
				{"Reps", float64(res.Reps), float64(reps)},
				{"Folds", float64(res.Folds), 5},
				{"Rows", float64(res.Rows), 10},
				{"AccuracyMean", res.AccuracyMean, 70},
				{"AccuracyStd", res.AccuracyStd, 0},
				{"ErrorMean", res.ErrorMean, 30},
				{"ErrorStd", res.ErrorStd, 0},
				{"FoldErrorStd", res.FoldErrorStd, foldStd},
				{"TrainErrorMean", res.TrainErrorMean, 30},
				{"TrainErrorStd", res.TrainErrorStd, 0},
				// Training errors per fold: 2/8 ×3, 3/8 ×2.
				{"FoldTrainErrorStd", res.FoldTrainErrorStd, math.Sqrt((3*5*5 + 2*7.5*7.5) * float64(reps) / float64(5*reps-1))},
				{"HyperplanesMean", res.HyperplanesMean, 5.6},
				{"HyperplanesStd", res.HyperplanesStd, 0},
				{"len(PerRep)", float64(len(res.PerRep)), float64(reps)},
			}
			for _, c := range checks {
				if !near(c.got, c.want) {
					t.Errorf("reps %d workers %d: %s = %v, want %v", reps, workers, c.name, c.got, c.want)
				}
			}
			for i, pr := range res.PerRep {
				if pr.Accuracy != 70 || pr.TrainError != 30 || !near(pr.Hyperplanes, 5.6) {
					t.Errorf("PerRep[%d] = %+v", i, pr)
				}
			}
			if res.TrainSecondsMean < 0 || res.Seconds <= 0 {
				t.Errorf("timings %v, %v", res.TrainSecondsMean, res.Seconds)
			}
		}
	}
}

// TestRunCentroids redoes the cross-validation of a nearest class mean
// classifier by hand, from Splits and SplitSeed, on dense copies of the
// data, and checks every figure of the Result against it.
func TestRunCentroids(t *testing.T) {
	const reps, folds, dim = 4, 5, 3
	data := blobs(83, dim, 5)
	cfg := Config{Reps: reps, Folds: folds, Seed: 99, Workers: 2}
	res, err := Run(context.Background(), cfg, data, centroidFit)
	if err != nil {
		t.Fatal(err)
	}
	dense := toDense(data, data.Dim)
	var acc, trainErr, foldErr []float64
	for rep := range reps {
		assign := Splits(data.Labels, folds, SplitSeed(cfg.Seed, rep))
		testWrong, trainWrong, trainN := 0, 0, 0
		for fold := range folds {
			var trL []float32
			var trX [][]float64
			for r, f := range assign {
				if f != fold {
					trL = append(trL, data.Labels[r])
					trX = append(trX, dense[r])
				}
			}
			c := fitCentroids(trL, trX, data.Dim)
			wrong, n := 0, 0
			for r, f := range assign {
				miss := c.nearest(dense[r]) != data.Labels[r]
				if f == fold {
					n++
					if miss {
						wrong++
					}
				} else {
					trainN++
					if miss {
						trainWrong++
					}
				}
			}
			testWrong += wrong
			foldErr = append(foldErr, 100*float64(wrong)/float64(n))
		}
		acc = append(acc, 100*float64(data.Rows()-testWrong)/float64(data.Rows()))
		trainErr = append(trainErr, 100*float64(trainWrong)/float64(trainN))
	}
	accMean, accStd := summary.MeanStd(acc)
	trMean, trStd := summary.MeanStd(trainErr)
	_, foldStd := summary.MeanStd(foldErr)
	if accStd == 0 || foldStd == 0 {
		t.Fatalf("degenerate test data: accuracy std %v, fold std %v", accStd, foldStd)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"AccuracyMean", res.AccuracyMean, accMean},
		{"AccuracyStd", res.AccuracyStd, accStd},
		{"ErrorMean", res.ErrorMean, 100 - accMean},
		{"ErrorStd", res.ErrorStd, accStd},
		{"FoldErrorStd", res.FoldErrorStd, foldStd},
		{"TrainErrorMean", res.TrainErrorMean, trMean},
		{"TrainErrorStd", res.TrainErrorStd, trStd},
		{"HyperplanesMean", res.HyperplanesMean, 3},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	for i := range acc {
		if !near(res.PerRep[i].Accuracy, acc[i]) {
			t.Errorf("PerRep[%d].Accuracy = %v, want %v", i, res.PerRep[i].Accuracy, acc[i])
		}
	}
}

// TestRunWorkersDeterministic: everything but the timings is the same for
// any number of workers.
func TestRunWorkersDeterministic(t *testing.T) {
	data := blobs(120, 6, 9)
	var first Result
	for i, workers := range []int{1, 2, 3} {
		res, err := Run(context.Background(), Config{Reps: 3, Folds: 4, Seed: 3, Workers: workers}, data, centroidFit)
		if err != nil {
			t.Fatal(err)
		}
		u := untimed(res)
		if i == 0 {
			first = u
			continue
		}
		if !reflect.DeepEqual(u, first) {
			t.Errorf("workers %d gives\n%+v\nworkers 1 gives\n%+v", workers, u, first)
		}
	}
}

// TestRunSeedsAndData: Fit sees the documented seed, a training set of the
// right size and Dim, and every row in exactly one test fold.
func TestRunSeedsAndData(t *testing.T) {
	data := blobs(47, 4, 2)
	data.Dim = 9 // wider than the rows: folds must inherit it
	const reps, folds, seed = 2, 3, 77
	var mu sync.Mutex
	seen := map[uint64]int{}
	fit := func(ctx context.Context, train *sparsevec.CSR, s uint64) (Predictor, FitInfo, error) {
		mu.Lock()
		seen[s] = train.Rows()
		mu.Unlock()
		if train.Dim != 9 {
			t.Errorf("train.Dim = %d, want 9", train.Dim)
		}
		return constant(0), FitInfo{}, nil
	}
	if _, err := Run(context.Background(), Config{Reps: reps, Folds: folds, Seed: seed}, data, fit); err != nil {
		t.Fatal(err)
	}
	if len(seen) != reps*folds {
		t.Fatalf("%d distinct seeds, want %d", len(seen), reps*folds)
	}
	for rep := range reps {
		assign := Splits(data.Labels, folds, SplitSeed(seed, rep))
		for fold := range folds {
			test := 0
			for _, f := range assign {
				if f == fold {
					test++
				}
			}
			got, ok := seen[FitSeed(seed, rep, fold)]
			if !ok || got != data.Rows()-test {
				t.Errorf("rep %d fold %d: training rows %d (seen %v), want %d", rep, fold, got, ok, data.Rows()-test)
			}
		}
	}
}

func TestRunFitError(t *testing.T) {
	data := blobs(30, 2, 1)
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		ret     error
		nilPred bool
		want    error
	}{
		{"error", errBoom, false, errBoom},
		{"nil predictor", nil, true, ErrNilPredictor},
	}
	for _, tc := range tests {
		for _, workers := range []int{1, 2} {
			t.Run(tc.name, func(t *testing.T) {
				fit := func(ctx context.Context, train *sparsevec.CSR, s uint64) (Predictor, FitInfo, error) {
					if s == FitSeed(4, 1, 2) {
						if tc.nilPred {
							return nil, FitInfo{}, nil
						}
						return nil, FitInfo{}, tc.ret
					}
					return constant(1), FitInfo{}, nil
				}
				res, err := Run(context.Background(), Config{Reps: 3, Folds: 3, Seed: 4, Workers: workers}, data, fit)
				if res != nil || !errors.Is(err, tc.want) {
					t.Fatalf("Run = %v, %v; want an error wrapping %v", res, err, tc.want)
				}
				var fe *FitError
				if !errors.As(err, &fe) || fe.Rep != 1 || fe.Fold != 2 {
					t.Errorf("error %v: want a *FitError for rep 1 fold 2", err)
				}
				if !strings.Contains(err.Error(), "repetition 1, fold 2") {
					t.Errorf("message %q does not name the fold", err)
				}
			})
		}
	}
}

// TestRunCancelsOthers: the first error cancels the context of the fits
// still running, so Run returns instead of waiting for them.
func TestRunCancelsOthers(t *testing.T) {
	data := blobs(40, 2, 1)
	errBoom := errors.New("boom")
	fit := func(ctx context.Context, train *sparsevec.CSR, s uint64) (Predictor, FitInfo, error) {
		if s == FitSeed(0, 0, 1) {
			return nil, FitInfo{}, errBoom
		}
		select {
		case <-ctx.Done():
			return nil, FitInfo{}, ctx.Err()
		case <-time.After(20 * time.Second):
			return nil, FitInfo{}, errors.New("not cancelled")
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{Reps: 2, Folds: 4, Workers: 2}, data, fit)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errBoom) {
			t.Errorf("Run error %v, want boom", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not cancel the other fits")
	}
}

func TestRunContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Config{}, blobs(30, 2, 1), majority)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context: %v", err)
	}
}

func TestRunConfigErrors(t *testing.T) {
	ok := blobs(12, 2, 1)
	nan := blobs(12, 2, 1)
	nan.Labels[4] = float32(math.NaN())
	tests := []struct {
		name string
		cfg  Config
		data *sparsevec.CSR
		want error
	}{
		{"nil data", Config{}, nil, ErrNoData},
		{"no rows", Config{}, new(sparsevec.CSR), ErrNoData},
		{"one fold", Config{Folds: 1}, ok, ErrConfig},
		{"more folds than rows", Config{Folds: 13}, ok, ErrConfig},
		{"default folds exceed rows", Config{}, blobs(9, 2, 1), ErrConfig},
		{"negative reps", Config{Reps: -1}, ok, ErrConfig},
		{"negative folds", Config{Folds: -2}, ok, ErrConfig},
		{"negative workers", Config{Workers: -1}, ok, ErrConfig},
		{"NaN label", Config{}, nan, ErrLabel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), tc.cfg, tc.data, majority)
			if res != nil || !errors.Is(err, tc.want) {
				t.Errorf("Run = %v, %v; want %v", res, err, tc.want)
			}
		})
	}
	// The edge cases that are allowed.
	for _, folds := range []int{2, 12} {
		if _, err := Run(context.Background(), Config{Reps: 1, Folds: folds}, ok, majority); err != nil {
			t.Errorf("Folds %d of 12 rows: %v", folds, err)
		}
	}
}

func TestRunDefaultsAndProgress(t *testing.T) {
	var calls []int
	total := -1
	cfg := Config{Workers: 2, Progress: func(done, n int) {
		calls = append(calls, done) // serialised by Run
		total = n
	}}
	res, err := Run(context.Background(), cfg, blobs(25, 2, 1), majority)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reps != 10 || res.Folds != 10 || total != 100 || len(calls) != 100 {
		t.Fatalf("Reps %d Folds %d, %d progress calls of total %d; want 10, 10, 100, 100", res.Reps, res.Folds, len(calls), total)
	}
	for i, d := range calls {
		if d != i+1 {
			t.Fatalf("progress call %d reported %d done", i, d)
		}
	}
}

func TestResultJSON(t *testing.T) {
	res, err := Run(context.Background(), Config{Reps: 2, Folds: 2}, blobs(10, 2, 1), majority)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{
		"reps", "folds", "rows", "accuracy_mean", "accuracy_std", "error_mean", "error_std",
		"fold_error_std", "train_error_mean", "train_error_std", "fold_train_error_std",
		"train_seconds_mean", "train_seconds_std", "hyperplanes_mean", "hyperplanes_std",
		"seconds", "per_rep",
	} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	// Every rate also as a fraction, beside its percentage.
	for _, k := range []string{"accuracy_mean", "accuracy_std", "error_mean", "error_std",
		"fold_error_std", "train_error_mean", "train_error_std", "fold_train_error_std"} {
		if f, ok := m[k+"_fraction"].(float64); !ok || f != m[k].(float64)/100 {
			t.Errorf("%s_fraction %v, %s %v", k, m[k+"_fraction"], k, m[k])
		}
	}
	if r := res.PerRep[0]; r.AccuracyFraction != 0.4 || r.TrainErrorFraction != r.TrainError/100 {
		t.Errorf("per_rep fractions %+v", r)
	}
	if len(m) != 25 {
		t.Errorf("JSON has %d keys, want 25: %s", len(m), b)
	}
}
