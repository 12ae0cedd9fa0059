package perceptron

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/learner/learnertest"
	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// separable draws n points in the unit ball of R^d whose margin
// |w·x + b|/‖(w, b)‖ against a random unit hyperplane is at least gamma0,
// labelled by its side. It returns the data and the exact geometry the
// mistake bound needs: R = max ‖x̃‖ and γ = min y·ŵ·x̃ for x̃ = (bias, x)
// and the unit normal ŵ of (b, w).
func separable(rng *rand.Rand, n, d int, gamma0, bias float64) (*sparsevec.CSR, float64, float64) {
	w := make([]float64, d+1) // w[0] multiplies the bias feature
	norm := 0.0
	for j := range w {
		if j == 0 && bias == 0 {
			continue
		}
		w[j] = rng.NormFloat64()
		norm += w[j] * w[j]
	}
	for j := range w {
		w[j] /= math.Sqrt(norm)
	}
	var pts [][]float64
	var ys []float32
	R, gamma := 0.0, math.Inf(1)
	for len(pts) < n {
		// A random direction scaled to a random radius in [0, 1).
		x := make([]float64, d)
		n2 := 0.0
		for j := range x {
			x[j] = rng.NormFloat64()
			n2 += x[j] * x[j]
		}
		radius := rng.Float64() / math.Sqrt(n2)
		for j := range x {
			x[j] *= radius
		}
		// Use the float32 values the learner sees.
		s, r2 := w[0]*bias, 0.0
		for j := range x {
			x[j] = float64(float32(x[j]))
			s += w[j+1] * x[j]
			r2 += x[j] * x[j]
		}
		if math.Abs(s) < gamma0 {
			continue
		}
		y := float32(1)
		if s < 0 {
			y = -1
		}
		pts, ys = append(pts, x), append(ys, y)
		R = max(R, math.Sqrt(r2+bias*bias))
		gamma = min(gamma, math.Abs(s))
	}
	return learnertest.DenseCSR(pts, ys), R, gamma
}

func TestPerceptronMistakeBound(t *testing.T) {
	for _, tc := range []struct {
		name      string
		d         int
		gamma0    float64
		bias      float64
		seed      uint64
		noBiasCfg bool
	}{
		{"2-D through origin", 2, 0.1, 0, 1, true},
		{"10-D through origin", 10, 0.05, 0, 2, true},
		{"5-D with bias", 5, 0.05, 1, 3, false},
		{"30-D with bias 0.5", 30, 0.03, 0.5, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 9))
			data, R, gamma := separable(rng, 2000, tc.d, tc.gamma0, tc.bias)
			bound := (R / gamma) * (R / gamma)
			for seed := range uint64(5) {
				cfg := Config{Epochs: int(bound) + 2, Seed: seed, Bias: tc.bias, NoBias: tc.noBiasCfg}
				_, rep, err := Train(context.Background(), cfg, data)
				if err != nil {
					t.Fatal(err)
				}
				if seed == 0 {
					t.Logf("R = %.3f, γ = %.4f, bound %.0f, mistakes %d, passes %d", R, gamma, bound, rep.TotalMistakes(), rep.Epochs)
				}
				if got := rep.TotalMistakes(); float64(got) > bound {
					t.Errorf("seed %d: %d mistakes, more than (R/γ)² = %.1f", seed, got, bound)
				}
				if !rep.Converged {
					t.Errorf("seed %d: did not converge in %d passes", seed, rep.Epochs)
				}
			}
		})
	}
}

// circleData labels points of [-2,2]² by whether they lie inside the
// circle of centre (0.3, -0.2) and radius 1, keeping a band of width 0.1
// around the circle empty.
func circleData(rng *rand.Rand, n int) *sparsevec.CSR {
	var pts [][]float64
	var ys []float32
	for len(pts) < n {
		x, y := 4*rng.Float64()-2, 4*rng.Float64()-2
		r := math.Hypot(x-0.3, y+0.2)
		if math.Abs(r-1) < 0.05 {
			continue
		}
		l := float32(-1)
		if r < 1 {
			l = 1
		}
		pts, ys = append(pts, []float64{x, y}), append(ys, l)
	}
	return learnertest.DenseCSR(pts, ys)
}

func TestPerceptronLearnsCircleWithLift(t *testing.T) {
	data := circleData(rand.New(rand.NewPCG(5, 5)), 1000)
	p, rep, err := Train(context.Background(), Config{Epochs: 10000, Lift: linear.LiftQuadratic, Seed: 1}, data)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Converged {
		t.Fatalf("lifted perceptron did not converge in %d passes (last pass %d mistakes)", rep.Epochs, rep.Mistakes[len(rep.Mistakes)-1])
	}
	if got := modelErrors(t, p.Model(), data); got != 0 {
		t.Errorf("lifted perceptron: %d training errors, want 0", got)
	}
	if p.Weights.D != 4 || p.LiftIndex != 3 {
		t.Errorf("lifted weights have D = %d and lift index %d, want 4 and 3 (bias, x, y, x²+y²)", p.Weights.D, p.LiftIndex)
	}
	// Without the lift no line separates a disc from its surroundings.
	p, _, err = Train(context.Background(), Config{Epochs: 50, Seed: 1}, data)
	if err != nil {
		t.Fatal(err)
	}
	if got := modelErrors(t, p.Model(), data); got < 50 {
		t.Errorf("unlifted perceptron: %d training errors; a line cannot separate a disc", got)
	}
}

// modelErrors counts the rows of data a model mispredicts, after a trip
// through the model file.
func modelErrors(t *testing.T, m *model.Model, data *sparsevec.CSR) int {
	return learnertest.ModelErrors(t, m, data, NewPredictor)
}

func TestMulticlassPerceptronUpdate(t *testing.T) {
	// Kesler's update on zero weights: all scores tie at 0, so the first
	// row (class index 2) is a mistake against class 0, the lowest index.
	m := linear.New(4, 3, 1, linear.NoLift)
	x := learnertest.Vec([]uint32{1, 3}, []float32{2, -1})
	if !step(m, x, 2, true) {
		t.Fatal("tied scores must count as a mistake")
	}
	want := map[[2]int]float32{{0, 2}: 1, {1, 2}: 2, {3, 2}: -1, {0, 0}: -1, {1, 0}: -2, {3, 0}: 1}
	for j := range 4 {
		for k := range 3 {
			if got := m.W.At(j, k); got != want[[2]int{j, k}] {
				t.Errorf("W[%d][%d] = %v, want %v", j, k, got, want[[2]int{j, k}])
			}
		}
	}
	// Now class 2 wins on x: no further update.
	if step(m, x, 2, true) {
		t.Error("a correctly classified row was updated")
	}
}

func TestMulticlassPerceptronSeparable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	centres := [][]float64{{0, 3}, {3, 0}, {-3, -3}, {3, 3}}
	var pts [][]float64
	var ys []float32
	for i := range 400 {
		c := i % len(centres)
		pts = append(pts, []float64{centres[c][0] + rng.NormFloat64()*0.5, centres[c][1] + rng.NormFloat64()*0.5})
		ys = append(ys, float32(c+1))
	}
	data := learnertest.DenseCSR(pts, ys)
	p, rep, err := Train(context.Background(), Config{Epochs: 1000, Seed: 2}, data)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Multiclass || p.Weights.K != 4 || len(p.Classes) != 4 {
		t.Fatalf("got multiclass=%v K=%d classes=%v, want the 4-class form", p.Multiclass, p.Weights.K, p.Classes)
	}
	if !rep.Converged {
		t.Errorf("did not converge on separable clusters in %d passes", rep.Epochs)
	}
	if got := modelErrors(t, p.Model(), data); got != 0 {
		t.Errorf("%d training errors on separable clusters", got)
	}
}

func TestPerceptronDeterministicAndErrors(t *testing.T) {
	data := circleData(rand.New(rand.NewPCG(8, 8)), 300)
	train := func(seed uint64) []byte {
		p, _, err := Train(context.Background(), Config{Epochs: 20, Seed: seed, Lift: linear.LiftQuadratic}, data)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := model.Write(&buf, p.Model()); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	if !bytes.Equal(train(4), train(4)) {
		t.Error("same seed gave different models")
	}
	if bytes.Equal(train(4), train(5)) {
		t.Error("different seeds gave the same model (row order ignored?)")
	}
	one := &sparsevec.CSR{Ptr: []int{0}, Dim: 1}
	one.Append(1, learnertest.Vec([]uint32{1}, []float32{1}))
	for _, tc := range []struct {
		name string
		cfg  Config
		data *sparsevec.CSR
		want string
	}{
		{"one label", Config{}, one, "only the label 1"},
		{"empty", Config{}, &sparsevec.CSR{Ptr: []int{0}}, "no training rows"},
		{"negative epochs", Config{Epochs: -1}, data, "epochs"},
		{"NaN bias", Config{Bias: math.NaN()}, data, "bias"},
		{"bad positive", Config{Positive: new(float32(7))}, data, "positive label 7"},
	} {
		_, _, err := Train(context.Background(), tc.cfg, tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Train(ctx, Config{}, data); err == nil {
		t.Error("cancelled context: no error")
	}
}

func TestPerceptronStepDoesNotAllocate(t *testing.T) {
	data := circleData(rand.New(rand.NewPCG(1, 2)), 100)
	for _, lift := range []linear.Lift{linear.NoLift, linear.LiftQuadratic} {
		m := linear.New(data.Dim, 1, 1, lift)
		step(m, data.Row(0), 0, false) // grow the lift scratch
		r := 0
		allocs := testing.AllocsPerRun(1000, func() {
			step(m, data.Row(r%data.Rows()), r%2, false)
			r++
		})
		if allocs != 0 {
			t.Errorf("lift %v: %v allocations per step", lift, allocs)
		}
	}
}

func TestPredictorRefusesOtherModels(t *testing.T) {
	data := circleData(rand.New(rand.NewPCG(1, 3)), 50)
	p, _, err := Train(context.Background(), Config{Epochs: 2, Lift: linear.LiftQuadratic}, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(m *model.Model)
		want   string
	}{
		{"cpm", func(m *model.Model) { m.Learner = "cpm" }, `is not "perceptron"`},
		{"bad lift", func(m *model.Model) { m.Params["lift"] = "cubic" }, "unknown lift"},
		{"lift index", func(m *model.Model) { m.Params["lift_index"] = "1" }, "lift_index"},
		{"double-sided", func(m *model.Model) { m.Sides = 2; m.Weights = append(m.Weights, m.Weights[0]) }, "single-sided"},
	} {
		m := p.Model()
		tc.change(m)
		if _, err := NewPredictor(m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}
