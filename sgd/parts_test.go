package sgd

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// planRunner trains each part from its own plan, as a worker process
// would, and passes it through its encoding.
type planRunner struct {
	t     *testing.T
	cfg   Config
	data  *sparsevec.CSR
	outer *float32
	ovo   bool
}

func (r planRunner) Run(ctx context.Context, i, n int, name string) (*Part, error) {
	cfg := r.cfg
	cfg.Runner = nil
	p, err := NewPlan(cfg, r.data, r.outer, r.ovo)
	if err != nil {
		return nil, err
	}
	if p.Len() != n || p.Name(i) != name {
		r.t.Errorf("part %d: plan has %d parts, part named %q; the run asked for %d, %q", i, p.Len(), p.Name(i), n, name)
	}
	part, err := p.TrainPart(ctx, i)
	if err != nil {
		return nil, err
	}
	b, err := part.MarshalBinary()
	if err != nil {
		return nil, err
	}
	var back Part
	if err := back.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return &back, nil
}

// TestRunnerGivesTheSameModel checks that training every polytope as a
// separate part, from its own plan, gives the model Train and TrainOvO
// give, byte for byte: single-sided, double-sided and one-vs-one.
func TestRunnerGivesTheSameModel(t *testing.T) {
	bin := polytopeData(rand.New(rand.NewPCG(3, 4)), 300)
	var multi sparsevec.CSR
	rng := rand.New(rand.NewPCG(8, 9))
	for i := range 240 {
		c := float32(i%4 + 1)
		multi.Append(c, vec([]uint32{1, 2, 3}, []float32{float32(rng.NormFloat64()) + c, float32(rng.NormFloat64()) - c, float32(rng.NormFloat64())}))
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		data *sparsevec.CSR
		ovo  bool
	}{
		{"single", Config{K: 4, Iterations: 20_000, C: 10, Seed: 5}, bin, false},
		{"double", Config{K: 4, Iterations: 20_000, C: 10, Seed: 5, DoubleSided: true, Entropy: 0.5}, bin, false},
		{"ovo-double", Config{K: 3, Iterations: 5_000, Seed: 7, DoubleSided: true}, &multi, true},
		{"ovo-reshuffle", Config{K: 2, Iterations: 5_000, Seed: 7, Reshuffle: true}, &multi, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			train := func(cfg Config) (*model.Model, *Report) {
				var (
					m   *model.Model
					rep *Report
					err error
				)
				if tc.ovo {
					m, rep, err = TrainOvO(context.Background(), cfg, tc.data)
				} else {
					m, rep, err = Train(context.Background(), cfg, tc.data, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				return m, rep
			}
			local, lrep := train(tc.cfg)
			cfg := tc.cfg
			cfg.Runner = planRunner{t: t, cfg: tc.cfg, data: tc.data, ovo: tc.ovo}
			remote, rrep := train(cfg)
			if !bytes.Equal(modelBytes(t, local), modelBytes(t, remote)) {
				t.Fatal("the model assembled from parts differs from the local one")
			}
			for i := range lrep.Polytopes {
				l, r := lrep.Polytopes[i], rrep.Polytopes[i]
				if l.Task != r.Task || l.Steps != r.Steps || l.Entropy != r.Entropy {
					t.Fatalf("polytope %d: report %+v, from parts %+v", i, l, r)
				}
			}
		})
	}
}

// failingRunner returns err for every part.
type failingRunner struct{ err error }

func (f failingRunner) Run(context.Context, int, int, string) (*Part, error) { return nil, f.err }

func TestRunnerErrors(t *testing.T) {
	data := polytopeData(rand.New(rand.NewPCG(3, 4)), 100)
	boom := errors.New("boom")
	_, _, err := Train(context.Background(), Config{K: 2, Iterations: 100, Runner: failingRunner{boom}}, data, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("runner error: got %v", err)
	}
	// A part of the wrong shape is refused, not built into a model.
	wrong := &Part{W: sparsevec.NewMatrix(3, 5), Counts: make([]int64, 5)}
	_, _, err = Train(context.Background(), Config{K: 2, Iterations: 100, Runner: constRunner{wrong}}, data, nil)
	if !errors.Is(err, ErrBadPart) {
		t.Fatalf("misshapen part: got %v, want ErrBadPart", err)
	}
	_, _, err = Train(context.Background(), Config{K: 2, Iterations: 100, Runner: failingRunner{boom}, Checkpoint: Checkpointing{Path: "x"}}, data, nil)
	if err == nil {
		t.Fatal("a Runner with checkpoints was accepted")
	}
}

type constRunner struct{ p *Part }

func (c constRunner) Run(context.Context, int, int, string) (*Part, error) { return c.p, nil }

// TestPartDecodeRefusesDamage checks that every truncation and a few
// corrupted headers of an encoded part are errors, never a panic or an
// allocation beyond the input's size.
func TestPartDecodeRefusesDamage(t *testing.T) {
	p := &Part{W: sparsevec.NewMatrix(3, 2), Counts: []int64{4, 5}, T: 9, Entropy: 0.5}
	p.W.Data[0] = 1.5
	b, _ := p.MarshalBinary()
	var back Part
	if err := back.UnmarshalBinary(b); err != nil || back.W.Data[0] != 1.5 || back.T != 9 || back.Counts[1] != 5 {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	for n := range len(b) {
		if err := back.UnmarshalBinary(b[:n]); !errors.Is(err, ErrBadPart) {
			t.Fatalf("truncated to %d bytes: got %v", n, err)
		}
	}
	huge := bytes.Clone(b)
	huge[len(partMagic)] = 0xff // D
	huge[len(partMagic)+3] = 0x7f
	if err := back.UnmarshalBinary(huge); !errors.Is(err, ErrBadPart) {
		t.Fatalf("huge D: got %v", err)
	}
}
