package main

import "github.com/polyhedral/cpm/cv"

// cvFractions are cv --json's rates as fractions in [0, 1], beside the
// percentages of cv.Result (accuracy_mean and the others), which are kept
// for one release for the scripts that read them: each X_fraction is the
// percent field X divided by 100.
type cvFractions struct {
	AccuracyMean      float64        `json:"accuracy_mean_fraction"`
	AccuracyStd       float64        `json:"accuracy_std_fraction"`
	ErrorMean         float64        `json:"error_mean_fraction"`
	ErrorStd          float64        `json:"error_std_fraction"`
	FoldErrorStd      float64        `json:"fold_error_std_fraction"`
	TrainErrorMean    float64        `json:"train_error_mean_fraction"`
	TrainErrorStd     float64        `json:"train_error_std_fraction"`
	FoldTrainErrorStd float64        `json:"fold_train_error_std_fraction"`
	PerRep            []repFractions `json:"per_rep_fraction"` // per_rep's accuracy and train_error as fractions
}

type repFractions struct {
	Accuracy   float64 `json:"accuracy"`
	TrainError float64 `json:"train_error"`
}

// fractionsOf returns the rates of res as fractions.
func fractionsOf(res *cv.Result) cvFractions {
	f := cvFractions{
		AccuracyMean: res.AccuracyMean / 100, AccuracyStd: res.AccuracyStd / 100,
		ErrorMean: res.ErrorMean / 100, ErrorStd: res.ErrorStd / 100, FoldErrorStd: res.FoldErrorStd / 100,
		TrainErrorMean: res.TrainErrorMean / 100, TrainErrorStd: res.TrainErrorStd / 100,
		FoldTrainErrorStd: res.FoldTrainErrorStd / 100,
	}
	for _, r := range res.PerRep {
		f.PerRep = append(f.PerRep, repFractions{r.Accuracy / 100, r.TrainError / 100})
	}
	return f
}
