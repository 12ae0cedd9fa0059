package polyceptron

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/learner/learnertest"
	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/sparsevec"
	"github.com/polyhedral/cpm/synth"
)

// wedgeData labels points of [-1,1]² positive inside the wedge
// {x + y >= -0.2, x - y >= -0.2} (two faces), leaving a band of 0.05 empty
// around its boundary.
func wedgeData(rng *rand.Rand, n int) *sparsevec.CSR {
	var pts [][]float64
	var ys []float32
	for len(pts) < n {
		x, y := 2*rng.Float64()-1, 2*rng.Float64()-1
		a, b := (x+y+0.2)/math.Sqrt2, (x-y+0.2)/math.Sqrt2
		if m := min(a, b); math.Abs(m) < 0.05 {
			continue
		}
		l := float32(-1)
		if a > 0 && b > 0 {
			l = 1
		}
		pts, ys = append(pts, []float64{x, y}), append(ys, l)
	}
	return learnertest.DenseCSR(pts, ys)
}

func TestPolyceptronLearnsWedge(t *testing.T) {
	data := wedgeData(rand.New(rand.NewPCG(2, 2)), 600)
	cfg := Config{K: 2, Epochs: 500, Gamma: 0.5, MaxIter: 5000, Seed: 3}
	on, onRep, err := TrainOnline(context.Background(), cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	ba, baRep, err := TrainBatch(context.Background(), cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("online: %d passes, train error %.4f; batch: %d iterations, train error %.4f", onRep.Epochs, onRep.TrainError, baRep.Epochs, baRep.TrainError)
	for _, tc := range []struct {
		name string
		p    *Polyceptron
		rep  *Report
	}{{"online", on, onRep}, {"batch", ba, baRep}} {
		if tc.rep.TrainError > 0.02 {
			t.Errorf("%s: training error %.4f on a 2-face wedge, want <= 0.02", tc.name, tc.rep.TrainError)
		}
		if got := learnertest.ModelErrors(t, tc.p.Model(), data, NewPredictor); float64(got) != tc.rep.TrainError*float64(data.Rows()) {
			t.Errorf("%s: the model file predicts %d errors, the report says %.4f", tc.name, got, tc.rep.TrainError)
		}
		if tc.p.Classes[0] != 1 {
			t.Errorf("%s: inside label %v, want the larger label 1", tc.name, tc.p.Classes[0])
		}
	}
}

// naiveBatch is a float64 transcription of Algorithm 1 with the gradient of
// eq. 4, for a differential test: W[k][j] with j = 0 the bias.
func naiveBatch(w [][]float64, data *sparsevec.CSR, ys []float32, bias, eta, gamma float64, maxIter int) (iters int) {
	dense := func(r int) []float64 {
		x := make([]float64, len(w[0]))
		x[0] = bias
		row := data.Row(r)
		for i, j := range row.Idx {
			x[j] = float64(row.Val[i])
		}
		return x
	}
	for iters < maxIter {
		g := make([][]float64, len(w))
		for k := range g {
			g[k] = make([]float64, len(w[k]))
		}
		for r := range data.Rows() {
			x := dense(r)
			best, bs := 0, math.Inf(1)
			for k := range w {
				s := 0.0
				for j := range x {
					s += w[k][j] * x[j]
				}
				if s < bs {
					best, bs = k, s
				}
			}
			if float64(ys[r])*bs <= 0 {
				for j := range x {
					g[best][j] += float64(ys[r]) * x[j]
				}
			}
		}
		total := 0.0
		for k := range g {
			n := 0.0
			for _, v := range g[k] {
				n += v * v
			}
			total += math.Sqrt(n)
		}
		if total < gamma {
			return iters
		}
		for k := range w {
			for j := range w[k] {
				w[k][j] += eta * g[k][j]
			}
		}
		iters++
	}
	return iters
}

func TestBatchPolyceptronMatchesNaive(t *testing.T) {
	data := wedgeData(rand.New(rand.NewPCG(4, 4)), 200)
	ys := signs(data, []float32{1, -1})
	cfg, err := Config{K: 3, MaxIter: 15, Gamma: 1e-9, Seed: 1}.withDefaults(true)
	if err != nil {
		t.Fatal(err)
	}
	m, rep, err := batchRun(context.Background(), cfg, data, ys, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	// Same initial weights: redraw them from the same seed.
	init := linear.New(data.Dim, 3, 1, linear.NoLift)
	initWeights(init.W, rand.New(rand.NewPCG(1, 1)), cfg.InitScale)
	w := make([][]float64, 3)
	for k := range w {
		w[k] = make([]float64, init.W.D)
		for j := range w[k] {
			w[k][j] = float64(init.W.At(j, k))
		}
	}
	iters := naiveBatch(w, data, ys, 1, 0.1, 1e-9, 15)
	if iters != rep.Epochs {
		t.Fatalf("naive ran %d iterations, batchRun %d", iters, rep.Epochs)
	}
	for k := range w {
		for j := range w[k] {
			if got := float64(m.W.At(j, k)); math.Abs(got-w[k][j]) > 1e-4*math.Max(1, math.Abs(w[k][j])) {
				t.Errorf("W[%d][%d] = %v, naive %v", j, k, got, w[k][j])
			}
		}
	}
}

func TestBatchPolyceptronStopsBelowGamma(t *testing.T) {
	data := wedgeData(rand.New(rand.NewPCG(5, 5)), 200)
	// A huge γ stops before the first step: the initial gradient is below it.
	_, rep, err := TrainBatch(context.Background(), Config{Gamma: 1e12, Seed: 1}, data)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Epochs != 0 || !rep.Converged {
		t.Errorf("γ = 1e12: %d iterations, converged %v; want 0 and true", rep.Epochs, rep.Converged)
	}
	// A tiny γ is never reached: it runs MaxIter. (γ = 0 means the default 50.)
	_, rep, err = TrainBatch(context.Background(), Config{Gamma: 1e-300, MaxIter: 7, Seed: 1}, data)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Epochs != 7 || rep.Converged {
		t.Errorf("γ = 1e-300: %d iterations, converged %v; want 7 and false", rep.Epochs, rep.Converged)
	}
	for i, g := range rep.GradNorm {
		if !(g >= 1e-300) {
			t.Errorf("iteration %d: gradient norm %v below γ but training went on", i, g)
		}
	}
}

func TestBatchPolyceptronRestartsKeepBest(t *testing.T) {
	data := wedgeData(rand.New(rand.NewPCG(6, 6)), 300)
	_, rep, err := TrainBatch(context.Background(), Config{K: 2, Restarts: 5, MaxIter: 20, Seed: 9}, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Criteria) != 5 || len(rep.Errors) != 5 {
		t.Fatalf("%d criteria and %d errors for 5 restarts", len(rep.Criteria), len(rep.Errors))
	}
	for i, e := range rep.Errors {
		if e < rep.TrainError || (e == rep.TrainError && rep.Criteria[i] < rep.Criterion) {
			t.Errorf("restart %d (error %v, E_P %v) beats the kept one (error %v, E_P %v)", i, e, rep.Criteria[i], rep.TrainError, rep.Criterion)
		}
	}
	if rep.Errors[rep.Restart] != rep.TrainError || rep.Criteria[rep.Restart] != rep.Criterion {
		t.Errorf("kept restart %d has error %v and E_P %v, report says %v and %v", rep.Restart, rep.Errors[rep.Restart], rep.Criteria[rep.Restart], rep.TrainError, rep.Criterion)
	}
	if slices.Min(rep.Errors) == slices.Max(rep.Errors) {
		t.Log("all restarts tied on training error; the test only checks the tie-break")
	}
}

func TestBatchPolyceptronPocket(t *testing.T) {
	// Noisy labels: the batch algorithm never meets a tiny γ, so it stops
	// at MaxIter; the pocket returns the iterate with the fewest mistakes.
	data := wedgeData(rand.New(rand.NewPCG(7, 7)), 300)
	rng := rand.New(rand.NewPCG(8, 8))
	for r := range data.Labels {
		if rng.Float64() < 0.1 {
			data.Labels[r] = -data.Labels[r]
		}
	}
	cfg := Config{K: 2, Gamma: 1e-9, MaxIter: 60, Seed: 2}
	_, last, err := TrainBatch(context.Background(), cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pocket = true
	_, pocket, err := TrainBatch(context.Background(), cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	fewest := slices.Min(pocket.Mistakes)
	got := int(math.Round(pocket.TrainError * float64(data.Rows())))
	if got > fewest {
		t.Errorf("pocket weights make %d mistakes, an iterate made %d", got, fewest)
	}
	if pocket.Pocket < len(pocket.Mistakes) && pocket.Mistakes[pocket.Pocket] != got {
		t.Errorf("pocket iteration %d made %d mistakes, the returned weights %d", pocket.Pocket, pocket.Mistakes[pocket.Pocket], got)
	}
	if pocket.Pocket == last.Epochs {
		t.Log("the last iterate was the best; the pocket kept it")
	}
	if pocket.TrainError > last.TrainError {
		t.Errorf("pocket training error %v above the last iterate's %v", pocket.TrainError, last.TrainError)
	}
}

func TestPolyceptronOnSyntheticDataset1(t *testing.T) {
	ds, err := synth.Lookup("polyceptron-d1")
	if err != nil {
		t.Fatal(err)
	}
	data := &sparsevec.CSR{Ptr: []int{0}}
	ds.Generate(data, 1000, 1)
	p, rep, err := TrainBatch(context.Background(), Config{K: 3, Restarts: 3, Seed: 1}, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("batch on D1: %d iterations, training error %.4f", rep.Epochs, rep.TrainError)
	if rep.TrainError > 0.08 {
		t.Errorf("batch Polyceptron training error %.4f on Dataset 1 (3 halfspaces), want <= 0.08", rep.TrainError)
	}
	if p.Weights.K != 3 {
		t.Errorf("K = %d, want 3", p.Weights.K)
	}
}

func TestPolyceptronErrors(t *testing.T) {
	multi := learnertest.DenseCSR([][]float64{{1}, {2}, {3}}, []float32{1, 2, 3})
	data := wedgeData(rand.New(rand.NewPCG(1, 1)), 20)
	for _, tc := range []struct {
		name string
		cfg  Config
		data *sparsevec.CSR
		want string
	}{
		{"multiclass", Config{}, multi, "3 labels"},
		{"K", Config{K: -1}, data, "K = -1"},
		{"step", Config{Step: -1}, data, "step"},
		{"NaN gamma", Config{Gamma: math.NaN()}, data, "gamma"},
		{"inside", Config{Inside: new(float32(5))}, data, "label 5"},
	} {
		for _, train := range []func(context.Context, Config, *sparsevec.CSR) (*Polyceptron, *Report, error){TrainOnline, TrainBatch} {
			_, _, err := train(context.Background(), tc.cfg, tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
			}
		}
	}
	// Inside = the smaller label flips the convention.
	p, _, err := TrainOnline(context.Background(), Config{Inside: new(float32(-1)), Epochs: 3}, data)
	if err != nil {
		t.Fatal(err)
	}
	if p.Classes[0] != -1 || p.Classes[1] != 1 {
		t.Errorf("Inside -1: classes %v, want [-1 1]", p.Classes)
	}
}
