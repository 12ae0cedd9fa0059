package compute_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/cluster/compute"
	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
	"github.com/polyhedral/cpm/tune"
)

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// partsRunner hands learner.Train the parts a worker computed.
type partsRunner struct{ parts []*sgd.Part }

func (r partsRunner) Run(_ context.Context, i, n int, name string) (*sgd.Part, error) {
	if n != len(r.parts) {
		return nil, fmt.Errorf("part %d of %d (%s): the worker computed %d parts", i, n, name, len(r.parts))
	}
	return r.parts[i], nil
}

// trainCase is a CPM run split into tasks: the learner flags of a cpm
// train command line and the data.
type trainCase struct {
	name  string
	file  string
	args  []string
	label *float32
	parts int
}

func trainCases(t *testing.T) []trainCase {
	minus := float32(-1)
	cases := []trainCase{
		// One-vs-one, double-sided: 3 pairs x 2 sides.
		{name: "iris-ovo-double", file: "iris.libsvm", args: []string{"ovo", "true", "double-sided", "true", "k", "3", "i", "20000"}, parts: 6},
		// Binary with an outer label and -C: one polytope.
		{name: "heart-C-label", file: "heart_scale.libsvm", args: []string{"k", "4", "i", "30000", "C", "10"}, label: &minus, parts: 1},
	}
	if !testing.Short() {
		// One-vs-one over 11 classes, single-sided by -C: 55 parts.
		cases = append(cases, trainCase{name: "vowel-ovo", file: "vowel.libsvm", args: []string{"ovo", "true", "k", "2", "i", "3000", "C", "1"}, parts: 55})
	}
	// cpm train's defaults: λ = 1/n, double-sided, 1 M steps per polytope.
	return append(cases, trainCase{name: "heart-defaults", file: "heart_scale.libsvm", parts: 2})
}

// Every polytope of a CPM run computed by Execute (train-part), all at
// once on one executor, assembled by learner.Train through a Runner, gives
// the model bytes of a local learner.Train; the same tasks run one after
// the other on another executor give the same parts and fetch the data
// once. Progress reaches the task's hook.
func TestTrainPartsGiveTheLocalModel(t *testing.T) {
	for _, tc := range trainCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			data := load(t, tc.file)
			f := flagsOf(t, tc.args...)
			const seed = 7
			local, _, err := learner.Train(ctx, buildSpec(t, learner.CPM, f, tc.label, seed), data)
			if err != nil {
				t.Fatal(err)
			}
			if len(local.Weights) != tc.parts {
				t.Fatalf("the local model has %d polytopes, want %d", len(local.Weights), tc.parts)
			}
			n, err := learner.Parts(buildSpec(t, learner.CPM, f, tc.label, seed), data)
			if err != nil || n != tc.parts {
				t.Fatalf("learner.Parts: %d, %v; want %d", n, err, tc.parts)
			}

			st := newStore(t)
			base := baseOf("job-"+tc.name, learner.CPM, f, tc.label, seed, st.add(data), "")
			run := func(e *compute.Executor, i int, progress func(cluster.Progress)) []byte {
				task := newTask(base, cluster.KindTrainPart, i, n)
				task.Part, task.Parts = i, n
				if err := task.Validate(); err != nil {
					t.Error(err) // Fatal only on the test's goroutine
					return nil
				}
				b, err := e.Execute(ctx, task, st.fetch, progress)
				if err != nil {
					t.Errorf("part %d: %v", i, err)
				}
				return b
			}

			// All at once, on one executor, as a worker running several
			// tasks of the job does.
			conc := make([][]byte, n)
			var progressed atomic.Int64
			e := &compute.Executor{}
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					conc[i] = run(e, i, func(p cluster.Progress) {
						if p.Rows <= 0 {
							t.Errorf("part %d: progress of %d rows", i, p.Rows)
						}
						progressed.Add(1)
					})
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			if got := st.count(base.Data); got < 1 || got > n {
				t.Errorf("%d fetches of the data for %d tasks", got, n)
			}
			if tc.name == "heart-defaults" && progressed.Load() == 0 {
				t.Error("1 M steps per polytope reported no progress")
			}
			parts := make([]*sgd.Part, n)
			for i := range n {
				parts[i] = new(sgd.Part)
				if err := parts[i].UnmarshalBinary(conc[i]); err != nil {
					t.Fatal(err)
				}
			}
			spec := buildSpec(t, learner.CPM, f, tc.label, seed)
			spec.CPM().Runner = partsRunner{parts: parts}
			remote, _, err := learner.Train(ctx, spec, data)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(modelBytes(t, remote), modelBytes(t, local)) {
				t.Fatal("the model assembled from the executor's parts differs from the local model")
			}

			// One after the other, on a fresh executor: the same parts,
			// and one fetch of the data for all of them.
			if testing.Short() && tc.name == "heart-defaults" {
				return
			}
			e2 := &compute.Executor{}
			before := st.count(base.Data)
			for i := range n {
				if t.Failed() {
					return
				}
				if b := run(e2, i, nil); !bytes.Equal(b, conc[i]) {
					t.Errorf("part %d run alone differs from part %d run with the others", i, i)
				}
			}
			if got := st.count(base.Data) - before; got != 1 {
				t.Errorf("%d fetches of the data for %d tasks in a row, want 1", got, n)
			}
		})
	}
}

// A train-part task whose polytope count is not the run's is invalid.
func TestTrainPartCountMismatch(t *testing.T) {
	ctx := testCtx(t)
	data := load(t, "iris.libsvm")
	st := newStore(t)
	f := flagsOf(t, "ovo", "true", "k", "2", "i", "1000", "C", "1")
	base := baseOf("mismatch", learner.CPM, f, nil, 1, st.add(data), "")
	e := &compute.Executor{}
	for _, parts := range []int{1, 2, 6} { // the run has 3 polytopes
		task := newTask(base, cluster.KindTrainPart, 0, parts)
		task.Parts = parts
		_, err := e.Execute(ctx, task, st.fetch, nil)
		if !errors.Is(err, cluster.ErrInvalidTask) {
			t.Errorf("a task of %d parts of a 3-polytope run: %v, want ErrInvalidTask", parts, err)
		}
	}
	task := newTask(base, cluster.KindTrainPart, 2, 3)
	task.Part, task.Parts = 2, 3
	if _, err := e.Execute(ctx, task, st.fetch, nil); err != nil {
		t.Errorf("the right count after wrong ones: %v", err)
	}

	// A learner that does not train in parts.
	pb := baseOf("noparts", learner.PLUME, flagsOf(t, "k", "2"), nil, 1, base.Data, "")
	task = newTask(pb, cluster.KindTrainPart, 0, 1)
	task.Parts = 1
	if _, err := e.Execute(ctx, task, st.fetch, nil); !errors.Is(err, learner.ErrNoParts) {
		t.Errorf("train-part of PLUME: %v, want ErrNoParts", err)
	}
}

// A train-part task is defined by its message alone: two jobs that share
// an ID and data but not their learner flags or seed (a job ID reused,
// e.g. after its record was deleted or on a new server with a worker that
// stayed up) get the parts of their own definitions.
func TestTrainPartFollowsTheTask(t *testing.T) {
	ctx := testCtx(t)
	data := load(t, "heart_scale.libsvm")
	st := newStore(t)
	digest := st.add(data)
	e := &compute.Executor{}
	for _, def := range []struct {
		seed uint64
		args []string
	}{
		{1, []string{"k", "3", "i", "5000", "C", "1"}},
		{2, []string{"k", "3", "i", "5000", "C", "1"}},
		{2, []string{"k", "3", "i", "5000", "C", "100"}},
	} {
		f := flagsOf(t, def.args...)
		task := newTask(baseOf("reused", learner.CPM, f, nil, def.seed, digest, ""), cluster.KindTrainPart, 0, 1)
		task.Parts = 1
		b, err := e.Execute(ctx, task, st.fetch, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := learner.Plan(buildSpec(t, learner.CPM, f, nil, def.seed), data)
		if err != nil {
			t.Fatal(err)
		}
		want, err := p.TrainPart(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		wb, err := want.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, wb) {
			t.Errorf("seed %d, flags %v: the part is not the one the task describes", def.seed, def.args)
		}
	}
}

// A learner that trains as one piece: train-model gives learner.Train's
// model bytes.
func TestTrainModel(t *testing.T) {
	ctx := testCtx(t)
	data := load(t, "heart_scale.libsvm")
	iris := load(t, "iris.libsvm")
	st := newStore(t)
	label := float32(-1)
	for _, tc := range []struct {
		name  string
		data  *sparsevec.CSR
		args  []string
		label *float32
	}{
		{learner.PLUME, data, []string{"k", "2"}, nil},
		{learner.PLUME, data, []string{"k", "3", "m-step", "newton", "scale", "standard"}, &label},
		{learner.KernelPerceptron, data, nil, nil},
		{learner.KernelPerceptron, iris, []string{"kernel", "poly", "degree", "2", "epochs", "5"}, nil},
		{learner.Perceptron, iris, []string{"epochs", "5", "lift", "quadratic"}, nil},
		{learner.SPLA1, data, []string{"k", "2"}, &label},
		{learner.PolyceptronBatch, data, []string{"k", "2"}, nil},
	} {
		f := flagsOf(t, tc.args...)
		want, _, err := learner.Train(ctx, buildSpec(t, tc.name, f, tc.label, 3), tc.data)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.name, tc.args, err)
		}
		task := newTask(baseOf("model", tc.name, f, tc.label, 3, st.add(tc.data), ""), cluster.KindTrainModel, 0, 1)
		got, err := (&compute.Executor{}).Execute(ctx, task, st.fetch, nil)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.name, tc.args, err)
		}
		if !bytes.Equal(got, modelBytes(t, want)) {
			t.Errorf("%s %v: the executor's model differs from learner.Train's", tc.name, tc.args)
		}
	}
}

// Every fold of a cross-validation computed by Execute (cv-fold) has the
// stats cv.Plan.RunFold gives locally, and together they summarise to the
// Result of cv.Run.
func TestCVFold(t *testing.T) {
	ctx := testCtx(t)
	for _, tc := range []struct {
		name, file string
		learner    string
		args       []string
	}{
		{"cpm-heart", "heart_scale.libsvm", learner.CPM, []string{"k", "2", "i", "4000"}},
		{"perceptron-iris", "iris.libsvm", learner.Perceptron, []string{"epochs", "3"}},
		{"cpm-iris-ovo", "iris.libsvm", learner.CPM, []string{"ovo", "true", "k", "2", "i", "2000", "C", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := load(t, tc.file)
			f := flagsOf(t, tc.args...)
			spec := buildSpec(t, tc.learner, f, nil, 11)
			const reps, folds, cvSeed = 2, 3, 5
			cfg := cv.Config{Reps: reps, Folds: folds, Seed: cvSeed}
			plan, err := cv.NewPlan(cfg, data)
			if err != nil {
				t.Fatal(err)
			}
			st := newStore(t)
			base := baseOf("cv", tc.learner, f, nil, 11, st.add(data), "")
			e := &compute.Executor{}
			var stats []cv.FoldStats
			for rep := range reps {
				for fold := range folds {
					i := rep*folds + fold
					task := newTask(base, cluster.KindCVFold, i, reps*folds)
					task.Part, task.Reps, task.Folds, task.CVSeed = i, reps, folds, cvSeed
					if err := task.Validate(); err != nil {
						t.Fatal(err)
					}
					b, err := e.Execute(ctx, task, st.fetch, nil)
					if err != nil {
						t.Fatalf("fold %d: %v", i, err)
					}
					var s cv.Scratch
					want, err := plan.RunFold(ctx, data, rep, fold, spec.Fit(), &s)
					if err != nil {
						t.Fatal(err)
					}
					if got, w := withoutSeconds(t, b), jsonWithoutSeconds(t, want); got != w {
						t.Errorf("rep %d fold %d: %s, want %s", rep, fold, got, w)
					}
					var fs cv.FoldStats
					if err := json.Unmarshal(b, &fs); err != nil {
						t.Fatal(err)
					}
					stats = append(stats, fs)
				}
			}
			local, err := cv.Run(ctx, cfg, data, spec.Fit())
			if err != nil {
				t.Fatal(err)
			}
			if got, w := jsonWithoutSeconds(t, plan.Summarize(stats, data.Rows())), jsonWithoutSeconds(t, local); got != w {
				t.Errorf("summary of the executor's folds:\n%s\ncv.Run:\n%s", got, w)
			}
		})
	}
}

// A fit of a search computed by Execute (tune-fit) is tune.RunFit's, both
// scored by cross-validation and on validation rows with several seeds.
func TestTuneFit(t *testing.T) {
	ctx := testCtx(t)
	all := load(t, "heart_scale.libsvm")
	fit, valid, err := cv.Holdout(all, 0.3, 4)
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	for _, tc := range []struct {
		learner string
		args    []string
	}{
		{learner.CPM, []string{"k", "2", "i", "3000", "C", "0.5", "entropy", "0.3"}},
		{learner.KernelPerceptron, []string{"epochs", "3"}},
	} {
		f := flagsOf(t, tc.args...)
		spec := buildSpec(t, tc.learner, f, nil, 21)
		e := &compute.Executor{}

		// Scored by 2 x 3-fold CV of all the rows.
		cvCfg := tune.Config{Seed: 21, CV: &cv.Config{Reps: 2, Folds: 3, Seed: 8}}
		base := baseOf("tune-cv", tc.learner, f, nil, 21, st.add(all), "")
		for fitIdx := range 6 {
			task := newTask(base, cluster.KindTuneFit, 3*6+fitIdx, 4*6)
			task.Part, task.Point, task.Reps, task.Folds, task.CVSeed = fitIdx, 3, 2, 3, 8
			if err := task.Validate(); err != nil {
				t.Fatal(err)
			}
			b, err := e.Execute(ctx, task, st.fetch, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tune.RunFit(ctx, cvCfg, all, tune.Candidate{Spec: spec}, fitIdx)
			if err != nil {
				t.Fatal(err)
			}
			if got, w := withoutSeconds(t, b), jsonWithoutSeconds(t, want); got != w {
				t.Errorf("%s CV fit %d: %s, want %s", tc.learner, fitIdx, got, w)
			}
		}

		// Scored on the validation rows, 3 seeds.
		vCfg := tune.Config{Seed: 21, Seeds: 3, Valid: valid}
		base = baseOf("tune-valid", tc.learner, f, nil, 21, st.add(fit), st.add(valid))
		for fitIdx := range 3 {
			task := newTask(base, cluster.KindTuneFit, fitIdx, 3)
			task.Part, task.Seeds = fitIdx, 3
			if err := task.Validate(); err != nil {
				t.Fatal(err)
			}
			b, err := e.Execute(ctx, task, st.fetch, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tune.RunFit(ctx, vCfg, fit, tune.Candidate{Spec: spec}, fitIdx)
			if err != nil {
				t.Fatal(err)
			}
			if want.Run == nil || want.Run.Seed != 21+uint64(fitIdx) {
				t.Fatalf("local fit %d: %+v", fitIdx, want)
			}
			if got, w := withoutSeconds(t, b), jsonWithoutSeconds(t, want); got != w {
				t.Errorf("%s validation fit %d: %s, want %s", tc.learner, fitIdx, got, w)
			}
		}
	}
}

// The executor keeps the rows of the last Keep data sets it loaded (least
// recently used out first) and fetches only the others.
func TestExecutorKeepsData(t *testing.T) {
	ctx := testCtx(t)
	st := newStore(t)
	heart := load(t, "heart_scale.libsvm")
	sets := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		// Distinct rows: heart_scale with a label flipped per set.
		d := heart.Permute(identity(heart.Rows()))
		d.Labels[len(name)+int(name[0])] *= -1
		sets[name] = st.add(d)
	}
	run := func(e *compute.Executor, name string) {
		t.Helper()
		task := newTask(baseOf("keep", learner.Perceptron, flagsOf(t, "epochs", "1"), nil, 1, sets[name], ""), cluster.KindTrainModel, 0, 1)
		if _, err := e.Execute(ctx, task, st.fetch, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		keep  int
		order string
		want  map[string]int
	}{
		// Keep 2 (the default): a a b a fetch each once; then c evicts b
		// (a was used last), b evicts c, c evicts a, a evicts b.
		{0, "aaba", map[string]int{"a": 1, "b": 1}},
		{0, "aabacab", map[string]int{"a": 1, "b": 2, "c": 1}},
		{0, "aabacabca", map[string]int{"a": 2, "b": 2, "c": 2}},
		{2, "aabacabca", map[string]int{"a": 2, "b": 2, "c": 2}},
		{1, "aabba", map[string]int{"a": 2, "b": 1}},
		{3, "abcabcabc", map[string]int{"a": 1, "b": 1, "c": 1}},
	} {
		st.mu.Lock()
		clear(st.calls)
		st.mu.Unlock()
		e := &compute.Executor{Keep: tc.keep}
		for _, c := range tc.order {
			run(e, string(c))
		}
		for name, d := range sets {
			if got := st.count(d); got != tc.want[name] {
				t.Errorf("Keep %d, order %s: %d fetches of %s, want %d", tc.keep, tc.order, got, name, tc.want[name])
			}
		}
	}
}

func identity(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	return p
}

// The data function's errors come back as they are (a worker tells a
// transient one, ErrDataUnavailable, from the others by errors.Is), and
// a task of an unknown kind is invalid.
func TestExecuteErrors(t *testing.T) {
	ctx := testCtx(t)
	st := newStore(t)
	digest := st.add(load(t, "iris.libsvm"))
	base := baseOf("errors", learner.Perceptron, flagsOf(t, "epochs", "1"), nil, 1, digest, "")
	e := &compute.Executor{}
	for _, sentinel := range []error{cluster.ErrDataUnavailable, cluster.ErrDataNotFound} {
		fetch := func(context.Context, string) (string, error) { return "", fmt.Errorf("data: %w", sentinel) }
		_, err := e.Execute(ctx, newTask(base, cluster.KindTrainModel, 0, 1), fetch, nil)
		if !errors.Is(err, sentinel) {
			t.Errorf("fetch failing with %v: Execute returned %v", sentinel, err)
		}
	}
	task := newTask(base, "train-everything", 0, 1)
	if _, err := e.Execute(ctx, task, st.fetch, nil); !errors.Is(err, cluster.ErrInvalidTask) {
		t.Errorf("unknown kind: %v, want ErrInvalidTask", err)
	}
	// A bad learner flag is refused before any data is fetched.
	bad := base
	bad.Flags = map[string]string{"epochs": "-3"}
	bad.Data = "0000000000000000000000000000000000000000000000000000000000000000"
	if _, err := e.Execute(ctx, newTask(bad, cluster.KindTrainModel, 0, 1), st.fetch, nil); !errors.Is(err, cluster.ErrInvalidTask) {
		t.Errorf("bad flag: %v, want ErrInvalidTask", err)
	}
	if n := st.count(bad.Data); n != 0 {
		t.Errorf("a task with a bad flag fetched its data %d times", n)
	}
}

// Execute returns soon after its context is cancelled, with its error.
func TestExecuteCancelled(t *testing.T) {
	data := load(t, "heart_scale.libsvm")
	st := newStore(t)
	digest := st.add(data)
	for _, tc := range []struct {
		kind    string
		learner string
		args    []string
		parts   int
	}{
		{cluster.KindTrainPart, learner.CPM, []string{"i", "100000000", "C", "1"}, 1},
		{cluster.KindTrainModel, learner.CPM, []string{"i", "100000000", "C", "1"}, 0},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		task := newTask(baseOf("cancel", tc.learner, flagsOf(t, tc.args...), nil, 1, digest, ""), tc.kind, 0, 1)
		task.Parts = tc.parts
		done := make(chan error, 1)
		go func() {
			_, err := (&compute.Executor{}).Execute(ctx, task, st.fetch, nil)
			done <- err
		}()
		time.Sleep(50 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s cancelled: %v, want context.Canceled", tc.kind, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Execute still running 10s after its context was cancelled", tc.kind)
		}
	}
}

// baseOf is compute.Base with the job and the rows set.
func baseOf(job, name string, f *learner.Flags, label *float32, seed uint64, data, valid string) cluster.Task {
	t := compute.Base(name, f, label, seed)
	t.Job, t.Data, t.Valid = job, data, valid
	return t
}
