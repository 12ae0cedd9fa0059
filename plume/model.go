package plume

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// Model is a trained PLUME or SPLA1 classifier:
//
//	p(y = +1 | x) = Σ_k g_k(x)·σ(w̃_k·x̃),  g = softmax(−γ·(w̃_k·x̃)_k),
//
// x̃ = (Bias, x), with label Classes[0] (inside the polyhedron) when
// p(y = +1 | x) > 1/2. For SPLA1 (Hard, Gamma = +Inf) the gate is one-hot
// at r = argmin_k w̃_k·x̃ and p(y = +1 | x) = σ(w̃_r·x̃), so the label is the
// sign of h(x) = min_k w̃_k·x̃ (eq. 1-2).
type Model struct {
	K       int
	Gamma   float64 // γ; +Inf when Hard
	Hard    bool    // SPLA1
	Bias    float32
	Classes []float32         // [inside (y = +1), outside]
	W       *sparsevec.Matrix // D×K, feature-major, row 0 the bias weights

	// Training settings recorded in the model file (not needed to
	// predict).
	MStep      MStep
	Lambda     float64
	Iterations int // EM iterations of the kept restart
}

// Name returns the learner name: "plume", or "spla1" for a hard model.
func (m *Model) Name() string {
	if m.Hard {
		return "spla1"
	}
	return "plume"
}

// Model converts m to the shared model file: learner "plume" or "spla1",
// one D×K matrix (shared with m, not copied), Classes [inside, outside],
// and Params "gamma" (strconv 'g' format; "+Inf" for SPLA1) and "m_step".
func (m *Model) Model() *model.Model {
	return &model.Model{
		Learner: m.Name(), Sides: 1, K: m.K, D: m.W.D,
		Lambda: m.Lambda, Bias: float64(m.Bias), Iterations: int64(m.Iterations),
		Classes: slices.Clone(m.Classes),
		Params: map[string]string{
			"gamma":  strconv.FormatFloat(m.Gamma, 'g', -1, 64),
			"m_step": m.MStep.String(),
		},
		Weights: []*sparsevec.Matrix{m.W},
	}
}

// FromModel returns the PLUME or SPLA1 classifier stored in mm, sharing its
// weight matrix. It checks everything, as for a hostile file: mm.Validate,
// learner "plume" or "spla1", a single-sided binary model with exactly one
// matrix, no Counts or Extra, zero Entropy and CostRatio, a finite Lambda
// >= 0, a Bias that is a finite float32, and exactly the params "gamma"
// (finite > 0 for plume, +Inf for spla1) and "m_step". Errors wrap
// ErrModel (and model.ErrInvalid when Validate fails).
func FromModel(mm *model.Model) (*Model, error) {
	if mm == nil {
		return nil, fmt.Errorf("plume: %w: nil model", ErrModel)
	}
	if err := mm.Validate(); err != nil {
		return nil, fmt.Errorf("plume: %w: %w", ErrModel, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("plume: %w: "+format, append([]any{ErrModel}, args...)...)
	}
	var hard bool
	switch mm.Learner {
	case "plume":
	case "spla1":
		hard = true
	default:
		return nil, bad("learner %q, want plume or spla1", mm.Learner)
	}
	switch {
	case mm.Sides != 1 || mm.OvO || mm.Multiclass:
		return nil, bad("want a single-sided binary model (sides %d, ovo %v, multiclass %v)", mm.Sides, mm.OvO, mm.Multiclass)
	case len(mm.Weights) != 1:
		return nil, bad("%d weight matrices, want 1", len(mm.Weights))
	case mm.Counts != nil || len(mm.Extra) != 0:
		return nil, bad("unexpected counts or extra blobs")
	case mm.Entropy != 0 || mm.CostRatio != 0:
		return nil, bad("entropy %v and cost ratio %v, want 0", mm.Entropy, mm.CostRatio)
	case !(mm.Lambda >= 0) || math.IsInf(mm.Lambda, 0):
		return nil, bad("lambda %v, want a finite value >= 0", mm.Lambda)
	case float64(float32(mm.Bias)) != mm.Bias || math.IsInf(mm.Bias, 0) || math.IsNaN(mm.Bias):
		return nil, bad("bias %v is not a finite float32", mm.Bias)
	case mm.Iterations > math.MaxInt32:
		return nil, bad("%d iterations", mm.Iterations)
	}
	for key := range mm.Params {
		if key != "gamma" && key != "m_step" {
			return nil, bad("unknown param %q", key)
		}
	}
	gs, ok := mm.Params["gamma"]
	if !ok {
		return nil, bad("missing param gamma")
	}
	gamma, err := strconv.ParseFloat(gs, 64)
	switch {
	case err != nil:
		return nil, bad("param gamma %q: %w", gs, err)
	case hard && !math.IsInf(gamma, 1):
		return nil, bad("spla1 model has gamma %v, want +Inf", gamma)
	case !hard && (!(gamma > 0) || math.IsInf(gamma, 0)):
		return nil, bad("gamma %v, want a finite value > 0", gamma)
	}
	ms, ok := mm.Params["m_step"]
	if !ok {
		return nil, bad("missing param m_step")
	}
	step, err := ParseMStep(ms)
	if err != nil {
		return nil, bad("param m_step: %w", err)
	}
	return &Model{
		K: mm.K, Gamma: gamma, Hard: hard, Bias: float32(mm.Bias),
		Classes: slices.Clone(mm.Classes), W: mm.Weights[0],
		MStep: step, Lambda: mm.Lambda, Iterations: int(mm.Iterations),
	}, nil
}
