package plume

import (
	"cmp"
	"fmt"
	"math"
)

// MStep selects how the M-step ascends Q(Θ, Θᶜ) (paper section 4).
type MStep int

const (
	// GradientAscent steps along the gradient of Q (eq. 7-8).
	GradientAscent MStep = iota
	// Newton steps along (−H)⁻¹g with the exact (dK)×(dK) Hessian of Q
	// (eq. 9, sign corrected; see the package documentation).
	Newton
	// BFGS steps along B·g with the BFGS estimate B of (−H)⁻¹ (eq. 10).
	BFGS
)

// String returns "ga", "newton" or "bfgs".
func (s MStep) String() string {
	switch s {
	case GradientAscent:
		return "ga"
	case Newton:
		return "newton"
	case BFGS:
		return "bfgs"
	}
	return fmt.Sprintf("MStep(%d)", int(s))
}

// ParseMStep is the inverse of MStep.String.
func ParseMStep(s string) (MStep, error) {
	switch s {
	case "ga":
		return GradientAscent, nil
	case "newton":
		return Newton, nil
	case "bfgs":
		return BFGS, nil
	}
	return 0, fmt.Errorf("plume: %w: unknown M-step %q (want ga, newton or bfgs)", ErrConfig, s)
}

// Caps on the dense matrices of training; see ErrTooLarge.
const (
	// DefaultMaxNewtonParams is the default of Config.MaxNewtonParams. At
	// 4096 parameters the Newton M-step holds two dense 4096² float64
	// arrays (the Hessian and its per-expert-pair accumulator, 256 MiB in
	// all) and factorises one in about 2·10¹⁰ flops per step.
	DefaultMaxNewtonParams = 4096
	// MaxBFGSParams caps dK for the BFGS M-step, whose dense inverse-
	// Hessian estimate then takes 512 MiB; use GradientAscent beyond.
	MaxBFGSParams = 8192
	// MaxWeights caps D·Stride, the size of one weight matrix (training
	// keeps a few matrices of this size and float64 accumulators).
	MaxWeights = 1 << 28
)

// Config holds the hyperparameters of Train. The zero value is usable:
// every field documents its default. The defaults are the settings of the
// cross-validation table in the package documentation.
type Config struct {
	// K is the number of experts, that is of hyperplanes. If 0, it
	// defaults to 2 (the paper's cross-validated choice for most data
	// sets of Table 1).
	K int
	// Gamma is the gate sharpness γ > 0 of eq. 4. The paper leaves it "user
	// defined" and does not report its value. If 0, it defaults to 1.
	// Ignored when Hard is set.
	Gamma float64
	// Hard trains SPLA1 (Manwani & Sastry 2010), the γ → ∞ limit: every
	// row is gated to the expert r = argmin_k w̃_k·x̃ (ties to the lowest
	// k). See the package documentation.
	Hard bool
	// MStep is the ascent method of the M-step (default GradientAscent).
	MStep MStep
	// MaxIter bounds the EM iterations (E-step plus M-step). If 0, it
	// defaults to 100.
	MaxIter int
	// Epsilon is the stopping threshold ε of Algorithm 1: EM stops when an
	// iteration raises the log-likelihood L (a sum over rows) by less than
	// Epsilon. If 0, it defaults to 5e-4 × the number of rows, a gain of
	// 5e-4 nats per row. Without Lambda this early stop is what keeps the
	// weights finite on (nearly) separable data.
	Epsilon float64
	// InnerIter is the number of ascent steps (each with its own line
	// search) on Q(·, Θᶜ) per M-step. If 0, it defaults to 1: a
	// generalised EM whose one step per E-step is the EM gradient
	// algorithm (Lange 1995); more steps approach the exact M-step.
	InnerIter int
	// Restarts is the number of seeded initialisations; the run with the
	// highest final log-likelihood is kept (ties to the earliest). If 0,
	// it defaults to 1. More restarts fit the training data better but, with
	// the default early stop and no Lambda, did not cross-validate better.
	Restarts int
	// Lambda is an optional L2 penalty: EM then ascends
	// L(Θ) − (λ/2)·Σ_{j≥1,k} W[j][k]², the bias row not penalised (MAP-EM;
	// the monotonicity argument is unchanged). The paper has none, and
	// the default is 0. It keeps the weights bounded on separable data,
	// and with it the three M-steps reach the same optimum (Lambda = 1
	// cross-validates as well as the default early stop).
	Lambda float64
	// Bias is the value of the constant feature of x̃ = (b, x). If 0, it
	// defaults to 1. NoBias sets it to 0: hyperplanes through the origin.
	Bias   float64
	NoBias bool
	// Seed seeds the initial weights (a math/rand/v2 PCG).
	Seed uint64
	// Inside, if set, is the label of the class inside the polyhedron
	// (y = +1); by default it is the larger label.
	Inside *float32
	// MaxNewtonParams caps dK for the Newton M-step, whose dense
	// (dK)×(dK) Hessian is built and factorised every step (d = D,
	// features plus bias). If 0, it defaults to DefaultMaxNewtonParams.
	MaxNewtonParams int
}

// Internal constants of the optimiser.
const (
	// armijo is the sufficient-increase constant c₁ of the backtracking
	// line search: accept α when f(Θ+αd) ≥ f(Θ) + c₁·α·gᵀd.
	armijo = 1e-4
	// shrink is the backtracking factor.
	shrink = 0.5
	// maxBacktrack bounds the step halvings of one line search; a search
	// that fails leaves the weights unchanged and ends the M-step.
	maxBacktrack = 60
)

// withDefaults fills in the defaults of c and checks it.
func (c Config) withDefaults() (Config, error) {
	c.K = cmp.Or(c.K, 2)
	c.Gamma = cmp.Or(c.Gamma, 1)
	c.MaxIter = cmp.Or(c.MaxIter, 100)
	c.InnerIter = cmp.Or(c.InnerIter, 1)
	c.Restarts = cmp.Or(c.Restarts, 1)
	c.Bias = cmp.Or(c.Bias, 1)
	if c.NoBias {
		c.Bias = 0
	}
	c.MaxNewtonParams = cmp.Or(c.MaxNewtonParams, DefaultMaxNewtonParams)
	var err error
	switch {
	case c.K < 1 || c.K > 1<<16:
		err = fmt.Errorf("K = %d, want 1 to 65536", c.K)
	case !(c.Gamma > 0) || math.IsInf(c.Gamma, 0):
		err = fmt.Errorf("gamma = %v, want a finite value > 0", c.Gamma)
	case c.MStep < GradientAscent || c.MStep > BFGS:
		err = fmt.Errorf("unknown M-step %d", int(c.MStep))
	case c.MaxIter < 0:
		err = fmt.Errorf("MaxIter = %d, want >= 0", c.MaxIter)
	case !(c.Epsilon >= 0) || math.IsInf(c.Epsilon, 0):
		err = fmt.Errorf("epsilon = %v, want a finite value >= 0", c.Epsilon)
	case c.InnerIter < 0:
		err = fmt.Errorf("InnerIter = %d, want >= 0", c.InnerIter)
	case c.Restarts < 0:
		err = fmt.Errorf("restarts = %d, want >= 0", c.Restarts)
	case !(c.Lambda >= 0) || math.IsInf(c.Lambda, 0):
		err = fmt.Errorf("lambda = %v, want a finite value >= 0", c.Lambda)
	case math.IsNaN(c.Bias) || math.IsInf(float64(float32(c.Bias)), 0):
		err = fmt.Errorf("bias = %v, want a finite float32 value", c.Bias)
	case c.MaxNewtonParams < 0:
		err = fmt.Errorf("MaxNewtonParams = %d, want >= 0", c.MaxNewtonParams)
	}
	if err != nil {
		return c, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return c, nil
}
