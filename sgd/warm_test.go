package sgd

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// maxAbsDiff returns max |a - b| over the weights of two D×K matrices and
// max |a|.
func maxAbsDiff(a, b *sparsevec.Matrix) (diff, size float64) {
	for j := range a.D {
		for k := range a.K {
			x := float64(a.At(j, k))
			diff = math.Max(diff, math.Abs(x-float64(b.At(j, k))))
			size = math.Max(size, math.Abs(x))
		}
	}
	return diff, size
}

// A warm start continues the Pegasos step counter: one more step after T
// steps moves the weights by about 1/T of their size (shrink 1 - 1/(T+1)
// plus a step of η = 1/(λ(T+1))), and the model records T+1 steps. Had the
// counter restarted at 1, the shrink 1 - η_1λ = 0 would have wiped the
// weights, which the same check catches for an initial model that claims 0
// steps.
func TestWarmStartContinuesStepCounter(t *testing.T) {
	data := ckData(21, 300, 30, 2)
	const T = 20_000
	lambda := 1e-3
	m1, _, err := Train(context.Background(), Config{K: 3, Iterations: T, Lambda: lambda, Seed: 1}, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m1.Steps != nil || m1.StepsOf(0) != T {
		t.Fatalf("fresh model records steps %v", m1.Steps)
	}
	m2, rep, err := Train(context.Background(), Config{K: 3, Iterations: 1, Lambda: lambda, Seed: 2, Init: m1}, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m2.Steps, []int64{T + 1}) || m2.Iterations != 1 || rep.Polytopes[0].Steps != T+1 || rep.Steps != 1 {
		t.Fatalf("warm-started model: steps %v, iterations %d, report %+v", m2.Steps, m2.Iterations, rep)
	}
	diff, size := maxAbsDiff(m1.Weights[0], m2.Weights[0])
	t.Logf("one warm step: max change %g, max weight %g", diff, size)
	if size == 0 || diff > 0.05*size {
		t.Fatalf("one warm step moved the weights by %g (size %g)", diff, size)
	}

	// The same with the step counter restarted.
	restart := *m1
	restart.Steps = []int64{0}
	m3, _, err := Train(context.Background(), Config{K: 3, Iterations: 1, Lambda: lambda, Seed: 2, Init: &restart}, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff, size := maxAbsDiff(m1.Weights[0], m3.Weights[0]); diff <= 0.05*size {
		t.Logf("restarted t: max change %g, max weight %g", diff, size)
		t.Fatalf("restarting t did not disturb the weights (%g of %g): the check above proves nothing", diff, size)
	}

	// Steps accumulate over warm starts and survive the model file.
	m4, _, err := Train(context.Background(), Config{K: 3, Iterations: 10, Lambda: lambda, Init: m2}, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	m5, err := model.Read(bytes.NewReader(modelBytes(t, m4)), "m4")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m5.Steps, []int64{T + 11}) {
		t.Fatalf("after two warm starts: steps %v, want [%d]", m5.Steps, T+11)
	}
}

// New features of the data extend the initial weights with zero rows; the
// initial model's rows are kept.
func TestWarmStartNewFeatures(t *testing.T) {
	small := ckData(22, 200, 10, 2)
	big := ckData(23, 200, 25, 2)
	m1, _, err := Train(context.Background(), Config{K: 2, Iterations: 5000, Lambda: 1e-3}, small, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2, _, err := Train(context.Background(), Config{K: 2, Iterations: 3000, Lambda: 1e-3, Init: m1, DoubleSided: false}, big, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m2.D != big.Dim || m1.D != small.Dim {
		t.Fatalf("D = %d, want %d (initial %d)", m2.D, big.Dim, m1.D)
	}
	// Warm start from the larger model onto the smaller data keeps its
	// rows too.
	m3, _, err := Train(context.Background(), Config{K: 2, Iterations: 10, Lambda: 1e-3, Init: m2}, small, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m3.D != m2.D {
		t.Fatalf("D = %d, want the initial model's %d", m3.D, m2.D)
	}
}

// A warm start from a model of another shape fails and names both sides.
func TestWarmStartMismatch(t *testing.T) {
	bin := ckData(24, 100, 10, 2)
	multi := ckData(25, 120, 10, 3)
	ctx := context.Background()
	single, _, err := Train(ctx, Config{K: 2, Iterations: 100}, bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	ovo, _, err := TrainOvO(ctx, Config{K: 2, Iterations: 100}, multi)
	if err != nil {
		t.Fatal(err)
	}
	perc := *single
	perc.Learner = "perceptron"
	neg := float32(-1)
	tests := []struct {
		name  string
		train func() error
		want  string
	}{
		{"K", func() error {
			_, _, err := Train(ctx, Config{K: 3, Iterations: 10, Init: single}, bin, nil)
			return err
		}, "K: initial model 2, this run 3"},
		{"sides", func() error {
			_, _, err := Train(ctx, Config{K: 2, Iterations: 10, DoubleSided: true, Init: single}, bin, nil)
			return err
		}, "initial model is single-sided, this run double-sided"},
		{"label map", func() error {
			_, _, err := Train(ctx, Config{K: 2, Iterations: 10, Init: single}, bin, &neg)
			return err
		}, "label map [outer inner]: initial model [1 -1], this run [-1 1]"},
		{"bias", func() error {
			_, _, err := Train(ctx, Config{K: 2, Iterations: 10, NoBias: true, Init: single}, bin, nil)
			return err
		}, "bias: initial model 1, this run 0"},
		{"binary from ovo", func() error { _, _, err := Train(ctx, Config{K: 2, Iterations: 10, Init: ovo}, bin, nil); return err }, "initial model is one-vs-one, this run binary"},
		{"ovo labels", func() error {
			_, _, err := TrainOvO(ctx, Config{K: 2, Iterations: 10, Init: ovo}, ckData(26, 120, 10, 4))
			return err
		}, "labels: initial model [1 2 3], this run [1 2 3 4]"},
		{"learner", func() error { _, _, err := Train(ctx, Config{K: 2, Iterations: 10, Init: &perc}, bin, nil); return err }, "trained by perceptron"},
		{"stream", func() error {
			_, _, err := TrainStream(ctx, Config{K: 2, Iterations: 10, Init: single}, OpenFunc(func() (Blocks, error) { return nil, errors.New("unused") }), 10, [2]float32{-1, 1})
			return err
		}, "label map [outer inner]: initial model [1 -1], this run [-1 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.train()
			if !errors.Is(err, ErrInitMismatch) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrInitMismatch with %q", err, tt.want)
			}
		})
	}
}

// A warm-started run resumes exactly from its checkpoint, and the
// checkpoint refuses a resume with another initial model.
func TestWarmStartCheckpointResume(t *testing.T) {
	data := ckData(27, 150, 30, 3)
	base := Config{K: 2, Iterations: 3000, DoubleSided: true, Lambda: 1e-3, Seed: 8}
	m1, _, err := TrainOvO(context.Background(), base, data)
	if err != nil {
		t.Fatal(err)
	}
	cfg := base
	cfg.Init, cfg.Seed = m1, 9
	want, _, err := TrainOvO(context.Background(), cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	c := ckCase{name: "warm", cfg: cfg, ovo: true, data: data}
	cfg.Checkpoint.Every = 500
	path := filepath.Join(t.TempDir(), "ck")
	ck := c.trainUntil(t, cfg, path, 1000)
	cfg.Checkpoint = Checkpointing{Resume: ck}
	got, _, err := TrainOvO(context.Background(), cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(modelBytes(t, got), modelBytes(t, want)) {
		t.Fatal("resumed warm start differs from the uninterrupted one")
	}
	cfg.Init = want
	if _, _, err := TrainOvO(context.Background(), cfg, data); !errors.Is(err, ErrCheckpointMismatch) || !strings.Contains(err.Error(), "initial model") {
		t.Fatalf("resume with another initial model: %v", err)
	}
}
