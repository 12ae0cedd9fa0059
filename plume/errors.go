package plume

import "errors"

// Kinds of failure. Every error of this package starts with "plume: " and
// wraps one of them (or a context error); test with errors.Is.
var (
	// ErrConfig means a Config field is out of range.
	ErrConfig = errors.New("bad config")
	// ErrData means the training data is unusable: no rows, not exactly
	// two distinct labels, a malformed CSR or a non-finite value.
	ErrData = errors.New("bad training data")
	// ErrTooLarge means the problem needs a dense matrix beyond a
	// documented cap: the Newton Hessian (Config.MaxNewtonParams), the
	// BFGS inverse-Hessian estimate (MaxBFGSParams) or the weights
	// themselves (MaxWeights).
	ErrTooLarge = errors.New("problem too large")
	// ErrDiverged means the weights or the log-likelihood became
	// non-finite during training.
	ErrDiverged = errors.New("training diverged")
	// ErrModel means a model.Model is not a valid PLUME or SPLA1 model.
	ErrModel = errors.New("not a valid plume model")
)
