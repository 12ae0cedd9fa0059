package cv

import (
	"errors"
	"fmt"
)

// Sentinel errors name the kind of failure; test for them with errors.Is.
var (
	// ErrNoData: the data set is nil or has no rows.
	ErrNoData = errors.New("cv: no rows")
	// ErrConfig: a Config that cannot be run on the data, such as
	// Folds == 1 or more folds than rows.
	ErrConfig = errors.New("cv: invalid config")
	// ErrLabel: a NaN or infinite label, which no prediction can match.
	ErrLabel = errors.New("cv: non-finite label")
	// ErrNilPredictor: a Fit returned a nil Predictor and a nil error.
	ErrNilPredictor = errors.New("cv: Fit returned a nil Predictor")
)

// FitError reports the fit that failed: Rep and Fold are 0-based, and Err is
// the error Fit returned (or ErrNilPredictor).
type FitError struct {
	Rep, Fold int
	Err       error
}

func (e *FitError) Error() string {
	return fmt.Sprintf("cv: repetition %d, fold %d: %v", e.Rep, e.Fold, e.Err)
}

func (e *FitError) Unwrap() error { return e.Err }
