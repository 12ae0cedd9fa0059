package compute_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/cluster/compute"
	"github.com/polyhedral/cpm/cluster/natsd"
	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/sparsevec"
	"github.com/polyhedral/cpm/tune"
)

// countingExec counts the Execute calls per task (job/index).
type countingExec struct {
	e *compute.Executor

	mu    sync.Mutex
	calls map[string]int
}

func (c *countingExec) Execute(ctx context.Context, t *cluster.Task, data func(context.Context, string) (string, error), progress func(cluster.Progress)) ([]byte, error) {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[t.Job+"/"+strconv.Itoa(t.Index)]++
	c.mu.Unlock()
	return c.e.Execute(ctx, t, data, progress)
}

func (c *countingExec) count(job string, index int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[job+"/"+strconv.Itoa(index)]
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// engine is an embedded JetStream server on loopback, a cluster on it
// and one worker running a compute.Executor two tasks at a time.
type engine struct {
	c    *cluster.Cluster
	exec *countingExec
}

func startEngine(t *testing.T) *engine {
	t.Helper()
	srv, err := natsd.StartEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	if !strings.Contains(srv.ClientURL(), "127.0.0.1") {
		t.Fatalf("the embedded server is not on loopback: %s", srv.ClientURL())
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c, err := cluster.Open(testCtx(t), nc, cluster.Options{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	exec := &countingExec{e: &compute.Executor{}}
	wctx, stop := context.WithCancel(context.Background())
	werr := make(chan error, 1)
	cache := t.TempDir()
	go func() {
		werr <- c.Work(wctx, exec, cluster.WorkerOptions{Name: "test-worker", Concurrency: 2, CacheDir: cache})
	}()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-werr:
			if err != nil {
				t.Errorf("Work: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("the worker did not stop 20s after its context was cancelled")
		}
	})
	return &engine{c: c, exec: exec}
}

// put stores data as its WriteData file and returns its digest.
func (g *engine) put(t *testing.T, data *sparsevec.CSR) string {
	t.Helper()
	path, want := writeData(t, data)
	d, err := g.c.PutData(testCtx(t), path)
	if err != nil {
		t.Fatal(err)
	}
	if d != want {
		t.Fatalf("PutData digest %s, the file's SHA-256 is %s", d, want)
	}
	return d
}

// remote submits job id of count tasks and returns its Remote over base.
func (g *engine) remote(t *testing.T, id, kind string, count int, base cluster.Task) (*compute.Remote, *cluster.Job) {
	t.Helper()
	job, err := g.c.Submit(testCtx(t), cluster.JobSpec{ID: id, Kind: kind, Count: count, Digest: sha(id)})
	if err != nil {
		t.Fatal(err)
	}
	base.Job = id
	return &compute.Remote{Job: job, Base: base}, job
}

// Through NATS JetStream and a worker, Remote's runs give the local
// runs' outputs, a task that cannot run fails its job at once, and a task
// whose data was never stored fails promptly.
func TestEngine(t *testing.T) {
	t.Parallel() // mostly waiting: on the worker's pulls, AckWait
	g := startEngine(t)
	heart := load(t, "heart_scale.libsvm")
	heartDigest := g.put(t, heart)

	t.Run("train-parts", func(t *testing.T) {
		ctx := testCtx(t)
		f := flagsOf(t) // cpm train's defaults: λ = 1/n, double-sided
		spec := buildSpec(t, learner.CPM, f, nil, 4)
		local, _, err := learner.Train(ctx, spec, heart)
		if err != nil {
			t.Fatal(err)
		}
		n, err := learner.Parts(spec, heart)
		if err != nil {
			t.Fatal(err)
		}
		r, job := g.remote(t, "train-parts", cluster.JobTrain, n, baseOf("", learner.CPM, f, nil, 4, heartDigest, ""))
		defer job.Finish(nil)
		spec = buildSpec(t, learner.CPM, f, nil, 4)
		spec.CPM().Runner = r.Runner()
		got, _, err := learner.Train(ctx, spec, heart)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(modelBytes(t, got), modelBytes(t, local)) {
			t.Fatal("the model trained on the cluster differs from the local model")
		}
		for i := range n {
			if c := g.exec.count("train-parts", i); c < 1 {
				t.Errorf("part %d was not executed", i)
			}
		}
	})

	t.Run("train-model", func(t *testing.T) {
		ctx := testCtx(t)
		f := flagsOf(t, "k", "2")
		local, _, err := learner.Train(ctx, buildSpec(t, learner.PLUME, f, nil, 4), heart)
		if err != nil {
			t.Fatal(err)
		}
		r, job := g.remote(t, "train-model", cluster.JobTrain, 1, baseOf("", learner.PLUME, f, nil, 4, heartDigest, ""))
		defer job.Finish(nil)
		got, err := r.TrainModel(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(modelBytes(t, got), modelBytes(t, local)) {
			t.Fatal("the model trained on the cluster differs from the local model")
		}
	})

	t.Run("cv", func(t *testing.T) {
		ctx := testCtx(t)
		f := flagsOf(t, "k", "2", "i", "5000")
		spec := buildSpec(t, learner.CPM, f, nil, 6)
		cfg := cv.Config{Reps: 2, Folds: 3, Seed: 6}
		local, err := cv.Run(ctx, cfg, heart, spec.Fit())
		if err != nil {
			t.Fatal(err)
		}
		r, job := g.remote(t, "cv", cluster.JobCV, cfg.Reps*cfg.Folds, baseOf("", learner.CPM, f, nil, 6, heartDigest, ""))
		defer job.Finish(nil)
		cfg.Exec = r.CVExec(cfg.Reps, cfg.Folds, cfg.Seed)
		got, err := cv.Run(ctx, cfg, heart, spec.Fit())
		if err != nil {
			t.Fatal(err)
		}
		if a, b := jsonWithoutSeconds(t, got), jsonWithoutSeconds(t, local); a != b {
			t.Errorf("on the cluster\n%s\nlocal\n%s", a, b)
		}
	})

	t.Run("tune-holdout", func(t *testing.T) {
		ctx := testCtx(t)
		fit, valid, err := cv.Holdout(heart, 0.3, 2)
		if err != nil {
			t.Fatal(err)
		}
		base := flagsOf(t, "i", "3000", "k", "2")
		build := func(f *learner.Flags) (learner.Spec, error) {
			s, err := learner.Build(learner.CPM, f)
			return s.WithSeed(2), err
		}
		grid, err := tune.ParseGrid("C=0.1,1,10", learner.CPM, base)
		if err != nil {
			t.Fatal(err)
		}
		cands, err := tune.Candidates(grid, 0, build)
		if err != nil {
			t.Fatal(err)
		}
		cfg := tune.Config{Seed: 2, Seeds: 2, Valid: valid}
		local, err := tune.Search(ctx, cfg, fit, cands)
		if err != nil {
			t.Fatal(err)
		}
		r, job := g.remote(t, "tune", cluster.JobTune, 2*len(cands), baseOf("", learner.CPM, base, nil, 2, g.put(t, fit), g.put(t, valid)))
		defer job.Finish(nil)
		cfg.Exec = r.TuneExec(cfg, 2, len(cands))
		got, err := tune.Search(ctx, cfg, fit, cands)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := jsonWithoutSeconds(t, got), jsonWithoutSeconds(t, local); a != b {
			t.Errorf("on the cluster\n%s\nlocal\n%s", a, b)
		}
	})

	// A task whose learner cannot be built fails its job after one
	// attempt, with the worker's error naming the flag.
	t.Run("bad-task", func(t *testing.T) {
		ctx := testCtx(t)
		for _, tc := range []struct {
			id    string
			flags map[string]string
			names string
		}{
			{"bad-k", map[string]string{"k": "0"}, "--k"},
			{"bad-flag", map[string]string{"no-such-flag": "1"}, "no-such-flag"},
		} {
			base := baseOf("", learner.CPM, learner.NewFlags(), nil, 1, heartDigest, "")
			base.Flags = tc.flags
			r, job := g.remote(t, tc.id, cluster.JobTrain, 2, base)
			start := time.Now()
			_, err := r.Runner().Run(ctx, 0, 2, "outer")
			job.Finish(err)
			var te *cluster.TaskError
			switch {
			case !errors.Is(err, cluster.ErrTaskFailed) || !errors.As(err, &te):
				t.Fatalf("%v: %v, want a *TaskError", tc.flags, err)
			case !strings.Contains(err.Error(), tc.names):
				t.Errorf("%v: %q does not name %s", tc.flags, err, tc.names)
			case !strings.Contains(err.Error(), cluster.ErrInvalidTask.Error()):
				t.Errorf("%v: %q does not say the task is invalid", tc.flags, err)
			case te.Index != 0 || te.Worker != "test-worker":
				t.Errorf("%v: task %d on worker %q", tc.flags, te.Index, te.Worker)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%v: the failure took %v", tc.flags, d)
			}
		}
		// Past AckWait (1s) a retried task would have been redelivered.
		time.Sleep(1500 * time.Millisecond)
		for _, id := range []string{"bad-k", "bad-flag"} {
			if c := g.exec.count(id, 0); c != 1 {
				t.Errorf("job %s: the bad task was executed %d times, want once", id, c)
			}
		}
	})

	// A task naming data that was never stored fails (ErrDataNotFound on
	// the worker) at once, not after redeliveries.
	t.Run("data-not-found", func(t *testing.T) {
		ctx := testCtx(t)
		missing := sha("rows nobody stored")
		r, job := g.remote(t, "no-data", cluster.JobTrain, 1, baseOf("", learner.PLUME, flagsOf(t, "k", "2"), nil, 1, missing, ""))
		start := time.Now()
		_, err := r.TrainModel(ctx)
		job.Finish(err)
		if !errors.Is(err, cluster.ErrTaskFailed) {
			t.Fatalf("%v, want ErrTaskFailed", err)
		}
		if !strings.Contains(err.Error(), cluster.ErrDataNotFound.Error()) || !strings.Contains(err.Error(), missing) {
			t.Errorf("%q does not say that data %s was not found", err, missing)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the failure took %v", d)
		}
		if c := g.exec.count("no-data", 0); c != 1 {
			t.Errorf("executed %d times, want once", c)
		}
	})
}
