package plume

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

var allSteps = []MStep{GradientAscent, Newton, BFGS}

// TestLogLikMonotone runs EM well past the default stopping point on the
// two UCI sets, for every M-step with the soft gate and SPLA1, and checks
// that no iteration lowers the log-likelihood by more than rounding.
func TestLogLikMonotone(t *testing.T) {
	for _, name := range []string{"ionosphere", "heart_scale"} {
		data := loadUCI(t, name)
		for _, hard := range []bool{false, true} {
			for _, ms := range allSteps {
				cfg := Config{MStep: ms, Hard: hard, Seed: 5, MaxIter: 150, Epsilon: 1e-9}
				if ms == Newton && testing.Short() {
					cfg.MaxIter = 30
				}
				m, rep, err := Train(context.Background(), cfg, data)
				if err != nil {
					t.Fatalf("%s %s hard=%v: %v", name, ms, hard, err)
				}
				ll := rep.LogLik
				if len(ll) != rep.Iterations+1 {
					t.Errorf("%s %s: %d log-likelihoods for %d iterations", name, m.Name(), len(ll), rep.Iterations)
				}
				for i := 1; i < len(ll); i++ {
					if ll[i] < ll[i-1]-1e-9*(1+math.Abs(ll[i-1])) {
						t.Errorf("%s %s %s: L fell from %.12g to %.12g at iteration %d", name, m.Name(), ms, ll[i-1], ll[i], i)
					}
				}
				if !(ll[len(ll)-1] > ll[0]) {
					t.Errorf("%s %s %s: L did not rise: %v → %v", name, m.Name(), ms, ll[0], ll[len(ll)-1])
				}
				t.Logf("%-11s %-5s %-6s %3d iterations, L %.2f → %.4f, training error %.4f", name, m.Name(), ms, rep.Iterations, ll[0], ll[len(ll)-1], rep.TrainError)
			}
		}
	}
}

// wedgeData labels points of [-1,1]² +1 inside the wedge
// {x + y >= -0.2, x - y >= -0.2} (two faces), leaving a band of 0.05 empty
// around its boundary (as in the sgd Polyceptron tests).
func wedgeData(rng *rand.Rand, n int) *sparsevec.CSR {
	data := &sparsevec.CSR{}
	for data.Rows() < n {
		x, y := 2*rng.Float64()-1, 2*rng.Float64()-1
		a, b := (x+y+0.2)/math.Sqrt2, (x-y+0.2)/math.Sqrt2
		if math.Abs(min(a, b)) < 0.05 {
			continue
		}
		l := float32(-1)
		if a > 0 && b > 0 {
			l = 1
		}
		data.Append(l, sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{float32(x), float32(y)}})
	}
	return data
}

func TestLearnsWedge(t *testing.T) {
	data := wedgeData(rand.New(rand.NewPCG(2, 2)), 600)
	for _, hard := range []bool{false, true} {
		for _, ms := range allSteps {
			m, rep, err := Train(context.Background(), Config{MStep: ms, Hard: hard, Seed: 3, Restarts: 3}, data)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: %d iterations, training error %.4f, %.3fs", m.Name(), ms, rep.Iterations, rep.TrainError, rep.Seconds)
			if rep.TrainError > 0.02 {
				t.Errorf("%s %s: training error %.4f on a 2-face wedge, want <= 0.02", m.Name(), ms, rep.TrainError)
			}
			if m.Classes[0] != 1 || m.K != 2 {
				t.Errorf("%s %s: inside label %v, K %d; want 1 and 2", m.Name(), ms, m.Classes[0], m.K)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	data := loadUCI(t, "heart_scale")
	for _, ms := range allSteps {
		cfg := Config{MStep: ms, K: 3, Restarts: 2, Seed: 9}
		a, ra, err := Train(context.Background(), cfg, data)
		if err != nil {
			t.Fatal(err)
		}
		b, rb, err := Train(context.Background(), cfg, data)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.W.Data, b.W.Data) || !slices.Equal(ra.LogLik, rb.LogLik) {
			t.Errorf("%s: two runs with the same seed differ", ms)
		}
		cfg.Seed++
		c, _, err := Train(context.Background(), cfg, data)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(a.W.Data, c.W.Data) {
			t.Errorf("%s: seeds 9 and 10 give the same weights", ms)
		}
	}
}

func TestRestartsKeepBest(t *testing.T) {
	data := loadUCI(t, "heart_scale")
	_, rep, err := Train(context.Background(), Config{Restarts: 4, Seed: 1}, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Finals) != 4 {
		t.Fatalf("%d finals, want 4", len(rep.Finals))
	}
	best := slices.Index(rep.Finals, slices.Max(rep.Finals))
	if rep.Restart != best || rep.LogLik[len(rep.LogLik)-1] != rep.Finals[best] {
		t.Errorf("kept restart %d of finals %v, want %d", rep.Restart, rep.Finals, best)
	}
}

func TestNewtonTooLarge(t *testing.T) {
	data := loadUCI(t, "ionosphere") // D = 35
	_, _, err := Train(context.Background(), Config{MStep: Newton, K: 3, MaxNewtonParams: 100}, data)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	for _, want := range []string{"plume: ", "105", "MaxNewtonParams = 100", "BFGS"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, _, err := Train(context.Background(), Config{MStep: BFGS, K: 3, MaxNewtonParams: 100, MaxIter: 2}, data); err != nil {
		t.Errorf("BFGS refused the same problem: %v", err)
	}
	if _, _, err := Train(context.Background(), Config{MStep: Newton, K: 2, MaxNewtonParams: 70, MaxIter: 2}, data); err != nil {
		t.Errorf("Newton refused dK = 70 = MaxNewtonParams: %v", err)
	}
}

func TestTrainErrors(t *testing.T) {
	good := func() *sparsevec.CSR {
		d := &sparsevec.CSR{}
		d.Append(1, sparsevec.Vector{Idx: []uint32{1}, Val: []float32{0.5}})
		d.Append(-1, sparsevec.Vector{Idx: []uint32{2}, Val: []float32{-0.5}})
		return d
	}
	two := float32(2)
	for _, tc := range []struct {
		name string
		cfg  Config
		data func() *sparsevec.CSR
		kind error
	}{
		{"nil data", Config{}, func() *sparsevec.CSR { return nil }, ErrData},
		{"no rows", Config{}, func() *sparsevec.CSR { return &sparsevec.CSR{} }, ErrData},
		{"one label", Config{}, func() *sparsevec.CSR {
			d := good()
			d.Labels[1] = 1
			return d
		}, ErrData},
		{"three labels", Config{}, func() *sparsevec.CSR {
			d := good()
			d.Append(3, sparsevec.Vector{})
			return d
		}, ErrData},
		{"NaN label", Config{}, func() *sparsevec.CSR {
			d := good()
			d.Labels[0] = float32(math.NaN())
			return d
		}, ErrData},
		{"Inf value", Config{}, func() *sparsevec.CSR {
			d := good()
			d.Val[0] = float32(math.Inf(1))
			return d
		}, ErrData},
		{"index 0", Config{}, func() *sparsevec.CSR {
			d := good()
			d.Idx[0] = 0
			return d
		}, ErrData},
		{"unsorted", Config{}, func() *sparsevec.CSR {
			d := &sparsevec.CSR{}
			d.Append(1, sparsevec.Vector{Idx: []uint32{2, 1}, Val: []float32{1, 1}})
			d.Append(-1, sparsevec.Vector{})
			return d
		}, ErrData},
		{"index beyond Dim", Config{}, func() *sparsevec.CSR {
			d := good()
			d.Dim = 2
			return d
		}, ErrData},
		{"bad Ptr", Config{}, func() *sparsevec.CSR {
			d := good()
			d.Ptr[1] = 5
			return d
		}, ErrData},
		{"short Ptr", Config{}, func() *sparsevec.CSR {
			d := good()
			d.Ptr = d.Ptr[:2]
			return d
		}, ErrData},
		{"inside not a label", Config{Inside: &two}, good, ErrData},
		{"negative K", Config{K: -1}, good, ErrConfig},
		{"huge K", Config{K: 1 << 17}, good, ErrConfig},
		{"negative gamma", Config{Gamma: -1}, good, ErrConfig},
		{"NaN gamma", Config{Gamma: math.NaN()}, good, ErrConfig},
		{"Inf gamma", Config{Gamma: math.Inf(1)}, good, ErrConfig},
		{"unknown M-step", Config{MStep: 7}, good, ErrConfig},
		{"negative MaxIter", Config{MaxIter: -1}, good, ErrConfig},
		{"negative epsilon", Config{Epsilon: -1}, good, ErrConfig},
		{"negative InnerIter", Config{InnerIter: -2}, good, ErrConfig},
		{"negative restarts", Config{Restarts: -1}, good, ErrConfig},
		{"negative lambda", Config{Lambda: -1}, good, ErrConfig},
		{"NaN bias", Config{Bias: math.NaN()}, good, ErrConfig},
		{"float32-overflowing bias", Config{Bias: 1e300}, good, ErrConfig},
		{"negative MaxNewtonParams", Config{MaxNewtonParams: -1}, good, ErrConfig},
		{"too many weights", Config{K: 1 << 16}, func() *sparsevec.CSR {
			d := good()
			d.Dim = 1 << 20
			return d
		}, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Train(context.Background(), tc.cfg, tc.data())
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			if !strings.HasPrefix(err.Error(), "plume: ") {
				t.Errorf("error %q lacks the plume: prefix", err)
			}
		})
	}
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := Train(ctx, Config{}, loadUCI(t, "heart_scale"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestInsideAndNoBias(t *testing.T) {
	data := loadUCI(t, "heart_scale")
	minus := float32(-1)
	m, _, err := Train(context.Background(), Config{Inside: &minus, NoBias: true, MaxIter: 5}, data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Classes, []float32{-1, 1}) || m.Bias != 0 {
		t.Errorf("classes %v, bias %v; want [-1 1] and 0", m.Classes, m.Bias)
	}
	for k := range m.K {
		if v := m.W.At(0, k); math.Abs(float64(v)) > 1 {
			t.Errorf("bias weight of face %d moved to %v without a bias feature", k, v)
		}
	}
}

func TestParseMStep(t *testing.T) {
	for _, ms := range allSteps {
		got, err := ParseMStep(ms.String())
		if err != nil || got != ms {
			t.Errorf("ParseMStep(%q) = %v, %v", ms.String(), got, err)
		}
	}
	if _, err := ParseMStep("lbfgs"); !errors.Is(err, ErrConfig) {
		t.Errorf("ParseMStep(lbfgs): err = %v, want ErrConfig", err)
	}
	if s := MStep(9).String(); s != "MStep(9)" {
		t.Errorf("MStep(9).String() = %q", s)
	}
}

// TestAllocs pins the passes over the rows (E-step with gradient and
// Hessian, line-search values) and prediction at zero allocations.
func TestAllocs(t *testing.T) {
	data := loadUCI(t, "ionosphere")
	for _, hard := range []bool{false, true} {
		o, w := testObjective(data, 3, 1, hard, 0.1)
		grad := make([]float64, o.p)
		h := make([]float64, o.p*o.p)
		for _, tc := range []struct {
			name string
			f    func()
		}{
			{"E-step", func() { o.pass(w, eStep, nil, nil) }},
			{"E-step+gradient", func() { o.pass(w, eStep, grad, nil) }},
			{"gradient+Hessian", func() { o.pass(w, atPi, grad, h) }},
			{"line value", func() { o.lineValue(w) }},
		} {
			if n := testing.AllocsPerRun(5, tc.f); n != 0 {
				t.Errorf("hard=%v %s: %v allocations per pass, want 0", hard, tc.name, n)
			}
		}
	}
	m, _, err := Train(context.Background(), Config{MaxIter: 3}, data)
	if err != nil {
		t.Fatal(err)
	}
	p := m.NewPredictor()
	x := data.Row(7)
	long := sparsevec.Vector{Idx: append(slices.Clone(x.Idx), 100, 200), Val: append(slices.Clone(x.Val), 1, 1)}
	if n := testing.AllocsPerRun(100, func() { p.Predict(x); p.Proba(x); p.Predict(long) }); n != 0 {
		t.Errorf("Predict and Proba: %v allocations, want 0", n)
	}
}
