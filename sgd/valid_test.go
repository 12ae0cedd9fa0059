package sgd

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// progressLog collects the progress reports of a run, per task.
type progressLog struct {
	mu  sync.Mutex
	got map[string][]Progress
}

func (l *progressLog) hook(p Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.got == nil {
		l.got = map[string][]Progress{}
	}
	l.got[p.Task] = append(l.got[p.Task], p)
}

// evaluated returns the reports of task that follow an evaluation.
func (l *progressLog) evaluated(task string) []Progress {
	var out []Progress
	for _, p := range l.got[task] {
		if !math.IsNaN(p.ValidError) {
			out = append(out, p)
		}
	}
	return out
}

// relabel returns a copy of data with every label y replaced by f(y).
func relabel(data *sparsevec.CSR, f func(float32) float32) *sparsevec.CSR {
	out := new(sparsevec.CSR)
	for r, y := range data.Labels {
		out.Append(f(y), data.Row(r))
	}
	out.Dim = data.Dim
	return out
}

func TestValidationErrorIsReportedAndMatchesTheModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	train, valid := polytopeData(rng, 600), polytopeData(rng, 300)
	var log progressLog
	cfg := Config{K: 8, Iterations: 50_000, C: 100, Seed: 1, Progress: log.hook, ProgressEvery: 1 << 20,
		Valid: Validation{Data: valid, Every: 10_000}}
	m, rep, err := Train(context.Background(), cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := log.evaluated("outer")
	var steps []int64
	for _, p := range ev {
		steps = append(steps, p.Step)
	}
	if want := []int64{10_000, 20_000, 30_000, 40_000, 50_000}; !slices.Equal(steps, want) {
		t.Fatalf("evaluated after steps %v, want %v", steps, want)
	}
	// Without patience the last weights are kept, and a single-sided
	// polytope's error is the model's.
	last := ev[len(ev)-1].ValidError
	want := float64(countErrors(t, m, valid)) / float64(valid.Rows())
	pr := rep.Polytopes[0]
	if pr.ValidError != last || last != want || pr.ValidStep != 50_000 || pr.Stopped {
		t.Fatalf("report %v at %d (stopped %v), last evaluation %v, model error %v", pr.ValidError, pr.ValidStep, pr.Stopped, last, want)
	}
	best := math.Inf(1)
	for _, p := range ev {
		best = math.Min(best, p.ValidError)
		if p.BestValidError != best {
			t.Fatalf("step %d: best %v, want %v", p.Step, p.BestValidError, best)
		}
	}
	// Validation only reads: the weights are those of a run without it.
	cfg.Valid, cfg.Progress = Validation{}, nil
	plain, _, err := Train(context.Background(), cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(modelBytes(t, m), modelBytes(t, plain)) {
		t.Fatal("validation changed the model")
	}
}

// TestEarlyStopKeepsTheBestWeights validates on the training rows with
// their labels swapped, so that learning makes the validation error worse
// and early stopping must fire.
func TestEarlyStopKeepsTheBestWeights(t *testing.T) {
	train := polytopeData(rand.New(rand.NewPCG(3, 4)), 600)
	swapped := relabel(train, func(y float32) float32 { return -y })
	for _, double := range []bool{false, true} {
		var log progressLog
		cfg := Config{K: 8, Iterations: 200_000, Lambda: 1e-4, Seed: 5, DoubleSided: double,
			Progress: log.hook, ProgressEvery: 1 << 20,
			Valid: Validation{Data: swapped, Every: 5_000, Patience: 3}}
		m, rep, err := Train(context.Background(), cfg, train, nil)
		if err != nil {
			t.Fatal(err)
		}
		again, _, err := Train(context.Background(), cfg, train, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(modelBytes(t, m), modelBytes(t, again)) {
			t.Fatalf("double-sided %v: early stopping is not deterministic", double)
		}
		for i, pr := range rep.Polytopes {
			ev := log.evaluated(pr.Task)
			if len(ev) == 0 {
				t.Fatalf("%s: no evaluations", pr.Task)
			}
			lastEv := ev[len(ev)-1]
			if !pr.Stopped || !lastEv.Stopped || lastEv.Step >= cfg.Iterations {
				t.Fatalf("%s: stopped %v after %d of %d steps", pr.Task, pr.Stopped, lastEv.Step, cfg.Iterations)
			}
			bestErr, bestStep := math.Inf(1), int64(0)
			for _, p := range ev {
				if p.ValidError < bestErr {
					bestErr, bestStep = p.ValidError, p.Step
				}
			}
			if lastEv.Step != bestStep+3*5_000 {
				t.Fatalf("%s: stopped after step %d, best at %d: want patience 3 x 5000 steps", pr.Task, lastEv.Step, bestStep)
			}
			if pr.ValidError != bestErr || pr.ValidStep != bestStep || m.StepsOf(i) != bestStep {
				t.Fatalf("%s: kept error %v at %d (model steps %d), best %v at %d", pr.Task, pr.ValidError, pr.ValidStep, m.StepsOf(i), bestErr, bestStep)
			}
			// The kept weights are those of a run of bestStep steps.
			short := cfg
			short.Iterations, short.Valid, short.Progress = bestStep, Validation{}, nil
			sm, _, err := Train(context.Background(), short, train, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(m.Weights[i].Data[:m.Weights[i].D*m.Weights[i].Stride], sm.Weights[i].Data[:sm.Weights[i].D*sm.Weights[i].Stride]) {
				t.Fatalf("%s: kept weights differ from a %d-step run", pr.Task, bestStep)
			}
		}
	}
}

func TestValidationOvOUsesEachPairsRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	data := new(sparsevec.CSR)
	for range 900 {
		c := rng.IntN(3)
		x, y := rng.NormFloat64()*0.3+float64(c), rng.NormFloat64()*0.3+float64(c%2)
		data.Append(float32(c), vec([]uint32{1, 2}, []float32{float32(x), float32(y)}))
	}
	train, valid := new(sparsevec.CSR), new(sparsevec.CSR)
	for r, y := range data.Labels {
		if r%3 == 0 {
			valid.Append(y, data.Row(r))
		} else {
			train.Append(y, data.Row(r))
		}
	}
	var log progressLog
	cfg := Config{K: 2, Iterations: 20_000, C: 10, Seed: 3, Progress: log.hook, Valid: Validation{Data: valid, Every: 20_000}}
	m, rep, err := TrainOvO(context.Background(), cfg, train)
	if err != nil {
		t.Fatal(err)
	}
	for i, pr := range rep.Polytopes {
		// Score the pair's polytope on its own rows by hand.
		a, b := m.Classes[Pairs(3)[i][0]], m.Classes[Pairs(3)[i][1]]
		w := m.Weights[i]
		n, wrong := 0, 0
		for r, y := range valid.Labels {
			if y != a && y != b {
				continue
			}
			n++
			x := valid.Row(r)
			best := math.Inf(-1)
			for k := range w.K {
				s := float64(w.At(0, k)) * m.Bias
				for j, idx := range x.Idx {
					s += float64(w.At(int(idx), k)) * float64(x.Val[j])
				}
				best = math.Max(best, s)
			}
			if (best > 0) != (y == a) {
				wrong++
			}
		}
		if want := float64(wrong) / float64(n); math.Abs(pr.ValidError-want) > 1e-12 {
			t.Errorf("%s: validation error %v, by hand %v on %d rows", pr.Task, pr.ValidError, want, n)
		}
	}
}

func TestValidationConfigErrors(t *testing.T) {
	data := polytopeData(rand.New(rand.NewPCG(1, 2)), 100)
	three := relabel(data, func(y float32) float32 { return y + 1 }) // labels 0 and 2
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Valid: Validation{Patience: 2}}, "no validation data"},
		{Config{Valid: Validation{Data: new(sparsevec.CSR)}}, "no rows"},
		{Config{Valid: Validation{Data: data, Every: -1}}, "want >= 0"},
		{Config{Valid: Validation{Data: three}}, "validation row 1 has label"},
	}
	for _, c := range cases {
		c.cfg.Iterations = 1000
		_, _, err := Train(context.Background(), c.cfg, data, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.cfg.Valid, err, c.want)
		}
	}
}

func TestValidationErrorDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	valid := randomRows(rng, 200, 50, 8)
	cfg, err := Config{K: 6}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	p := mustPolytope(t, cfg, 20) // validation rows reach beyond the weights
	p.Step(vec([]uint32{1, 5}, []float32{1, -2}), true, 0)
	v := newValidSet(valid, 1, &[2]float32{1, -1})
	if allocs := testing.AllocsPerRun(10, func() { v.errorOf(p) }); allocs != 0 {
		t.Fatalf("errorOf allocates %v times", allocs)
	}
}

// Early stopping resumes exactly: a run interrupted before its polytopes
// stop and resumed from the checkpoint writes the model of an
// uninterrupted run, and resuming from the checkpoint of a finished run,
// whose polytopes stopped early, takes no step.
func TestResumeWithEarlyStopping(t *testing.T) {
	for _, c := range ckCases() {
		t.Run(c.name, func(t *testing.T) {
			// Validate on the training rows with rotated labels, so that
			// learning makes the error worse and the polytopes stop.
			labels := c.data.DistinctLabels()
			rot := relabel(c.data, func(y float32) float32 {
				return labels[(slices.Index(labels, y)+1)%len(labels)]
			})
			cfg := c.cfg
			cfg.Valid = Validation{Data: rot, Every: 250, Patience: 3}
			want, wrep, err := c.train(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			stopped := 0
			for _, p := range wrep.Polytopes {
				if p.Stopped {
					stopped++
				}
			}
			if stopped == 0 {
				t.Fatal("no polytope stopped early; the test resumes nothing of early stopping")
			}
			path := filepath.Join(t.TempDir(), "ck")
			icfg := cfg
			icfg.Checkpoint.Every = 400
			ck := c.trainUntil(t, icfg, path, 500)
			if done, total := ck.Progress(); done == 0 || done >= total {
				t.Fatalf("interrupted after %d of %d steps", done, total)
			}
			rcfg := cfg
			rcfg.Checkpoint = Checkpointing{Path: path, Every: 400, Resume: ck}
			got, _, err := c.train(context.Background(), rcfg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(modelBytes(t, got), modelBytes(t, want)) {
				t.Fatal("resumed model differs from the uninterrupted one")
			}
			final, err := LoadCheckpoint(path)
			if err != nil {
				t.Fatal(err)
			}
			rcfg.Checkpoint = Checkpointing{Resume: final}
			again, rep, err := c.train(context.Background(), rcfg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(modelBytes(t, again), modelBytes(t, want)) || rep.Steps != 0 {
				t.Fatalf("model from the finished checkpoint differs (or took %d steps)", rep.Steps)
			}
			// Other validation settings do not match the checkpoint.
			rcfg.Valid.Patience = 4
			if _, _, err := c.train(context.Background(), rcfg); !errors.Is(err, ErrCheckpointMismatch) {
				t.Fatalf("resume with another patience: %v, want ErrCheckpointMismatch", err)
			}
		})
	}
}
