package cv_test

import (
	"context"
	"fmt"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/sparsevec"
)

// always predicts one label.
type always float32

func (a always) Predict(sparsevec.Vector) float32 { return float32(a) }

// Cross-validate a majority-class learner on 7 positive and 3 negative rows.
func ExampleRun() {
	var data sparsevec.CSR
	for i, y := range []float32{1, -1, 1, 1, -1, 1, 1, -1, 1, 1} {
		data.Append(y, sparsevec.Vector{Idx: []uint32{1}, Val: []float32{float32(i + 1)}})
	}
	fit := func(_ context.Context, train *sparsevec.CSR, _ uint64) (cv.Predictor, cv.FitInfo, error) {
		pos := 0
		for _, y := range train.Labels {
			if y > 0 {
				pos++
			}
		}
		if 2*pos >= train.Rows() {
			return always(1), cv.FitInfo{}, nil
		}
		return always(-1), cv.FitInfo{}, nil
	}
	res, err := cv.Run(context.Background(), cv.Config{Reps: 3, Folds: 5, Seed: 1}, &data, fit)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d×%d-fold CV of %d rows\n", res.Reps, res.Folds, res.Rows)
	fmt.Printf("accuracy %.2f ± %.2f %%\n", res.AccuracyMean, res.AccuracyStd)
	fmt.Printf("test error over folds ± %.2f %%\n", res.FoldErrorStd)
	fmt.Printf("training error %.2f %%\n", res.TrainErrorMean)
	// Output:
	// 3×5-fold CV of 10 rows
	// accuracy 70.00 ± 0.00 %
	// test error over folds ± 25.35 %
	// training error 30.00 %
}

// The folds of one repetition of a Run with Config.Seed 1.
func ExampleSplits() {
	labels := []float32{1, 1, 1, -1, -1, 1}
	fmt.Println(cv.Splits(labels, 2, cv.SplitSeed(1, 0)))
	// Output:
	// [1 1 0 1 0 0]
}
