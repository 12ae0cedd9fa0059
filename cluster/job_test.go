package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A job's results come back by index from several workers, the job and
// worker records show in Status, and Progress prints lines.
func TestJobResultsInOrder(t *testing.T) {
	_, c := setup(t, Options{})
	data, rows := putData(t, c, "1 1:0.5\n-1 2:1.5\n")
	exec := &fakeExec{}
	var log syncBuffer
	startWorker(t, c, exec, WorkerOptions{Name: "w1", Concurrency: 2, Log: &log})
	startWorker(t, c, exec, WorkerOptions{Name: "w2", Concurrency: 2})

	const n = 24
	j := submit(t, c, "order", n)
	var progress syncBuffer
	stop := j.Progress(&progress, 50*time.Millisecond)
	res, errs := doAll(testCtx(t), j, data, 0, n)
	time.Sleep(120 * time.Millisecond)
	stop()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("task %d: %v", i, errs[i])
		}
		if !bytes.Equal(res[i], want(i, rows)) {
			t.Fatalf("task %d: result %x, want %x", i, res[i], want(i, rows))
		}
	}
	if got := exec.total(); got != n {
		t.Errorf("%d executions, want %d", got, n)
	}
	if !strings.Contains(progress.String(), fmt.Sprintf("job order: %d/%d tasks done", n, n)) {
		t.Errorf("progress lines:\n%s", progress.String())
	}
	if !strings.Contains(log.String(), "worker w1: finished order/") {
		t.Errorf("worker log:\n%s", log.String())
	}

	j.Finish(nil)
	if _, err := j.Do(testCtx(t), testTask("order", 0, n, data)); !errors.Is(err, ErrJobClosed) {
		t.Errorf("Do after Finish: %v, want ErrJobClosed", err)
	}
	var st *Status
	waitFor(t, 5*time.Second, "the workers' heartbeats to count every task", func() bool {
		var err error
		if st, err = c.Status(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		return len(st.Workers) == 2 && st.Workers[0].Done+st.Workers[1].Done == n
	})
	if len(st.Jobs) != 1 || st.Jobs[0].State != JobDone || st.Jobs[0].Done != n || st.Jobs[0].Queued != 0 || st.Jobs[0].Failed != 0 {
		t.Errorf("status jobs: %+v", st.Jobs)
	}
	if len(st.Workers) != 2 || st.Workers[0].Name != "w1" || st.Workers[1].Name != "w2" ||
		st.Workers[0].Done+st.Workers[1].Done != n {
		t.Errorf("status workers: %+v", st.Workers)
	}
	var out bytes.Buffer
	st.Print(&out)
	if !strings.Contains(out.String(), "order") || !strings.Contains(out.String(), "24/24") {
		t.Errorf("status print:\n%s", out.String())
	}
}

// A deterministic failure fails the task once: no redelivery.
func TestDeterministicFailure(t *testing.T) {
	_, c := setup(t, Options{})
	data, _ := putData(t, c, "1 1:1\n")
	var fixed atomic.Bool
	exec := &fakeExec{fn: func(ctx context.Context, t *Task) (bool, []byte, error) {
		if t.Index == 1 && !fixed.Load() {
			return true, nil, errors.New("bad flag -k: boom")
		}
		return false, nil, nil
	}}
	startWorker(t, c, exec, WorkerOptions{Name: "w1"})
	startWorker(t, c, exec, WorkerOptions{Name: "w2"})
	j := submit(t, c, "fails", 3)
	_, errs := doAll(testCtx(t), j, data, 0, 3)
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("tasks 0, 2: %v, %v", errs[0], errs[2])
	}
	var te *TaskError
	if !errors.As(errs[1], &te) || !errors.Is(errs[1], ErrTaskFailed) {
		t.Fatalf("task 1: %v, want a *TaskError", errs[1])
	}
	if te.Index != 1 || te.Name != "t1" || (te.Worker != "w1" && te.Worker != "w2") || te.Msg != "bad flag -k: boom" {
		t.Errorf("task error %+v", te)
	}
	j.Finish(errs[1])
	time.Sleep(1500 * time.Millisecond) // beyond AckWait: a redelivery would have run
	if got := exec.count(1); got != 1 {
		t.Errorf("failing task ran %d times, want 1", got)
	}
	noneLeft(t, c)
	st, err := c.Status(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if js := st.Jobs[0]; js.State != JobFailed || js.Failed != 1 || js.Done != 2 || !strings.Contains(js.Error, "boom") {
		t.Errorf("status %+v", js)
	}

	// Submitted again, the failed task runs again and the others do not.
	fixed.Store(true)
	j = submit(t, c, "fails", 3)
	if _, errs = doAll(testCtx(t), j, data, 0, 3); errors.Join(errs...) != nil {
		t.Fatal(errors.Join(errs...))
	}
	if exec.count(0) != 1 || exec.count(1) != 2 || exec.count(2) != 1 {
		t.Errorf("executions after resubmission: %d, %d, %d", exec.count(0), exec.count(1), exec.count(2))
	}
}

// Finishing a job cancels its tasks running on workers, which stay
// available for other jobs.
func TestFinishCancelsRunningTasks(t *testing.T) {
	_, c := setup(t, Options{})
	data, rows := putData(t, c, "1 1:1\n")
	cancelled := make(chan error, 1)
	exec := &fakeExec{fn: func(ctx context.Context, t *Task) (bool, []byte, error) {
		switch {
		case t.Job != "fin":
			return false, nil, nil
		case t.Index == 0:
			return true, nil, errors.New("boom")
		}
		<-ctx.Done()
		cancelled <- context.Cause(ctx)
		return true, nil, ctx.Err()
	}}
	startWorker(t, c, exec, WorkerOptions{Name: "w1", Concurrency: 2})
	j := submit(t, c, "fin", 2)
	go j.Do(testCtx(t), testTask("fin", 1, 2, data))
	waitFor(t, 5*time.Second, "task 1 to start", func() bool { return exec.count(1) == 1 })
	_, err := j.Do(testCtx(t), testTask("fin", 0, 2, data))
	if !errors.Is(err, ErrTaskFailed) {
		t.Fatalf("task 0: %v", err)
	}
	j.Finish(err)
	select {
	case cause := <-cancelled:
		if !errors.Is(cause, errJobEnded) {
			t.Errorf("task 1 cancelled by %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("task 1 of the failed job still runs")
	}
	j2 := submit(t, c, "next", 1)
	if b, err := j2.Do(testCtx(t), testTask("next", 0, 1, data)); err != nil || !bytes.Equal(b, want(0, rows)) {
		t.Fatalf("next job: %x, %v", b, err)
	}
	waitFor(t, 5*time.Second, "the stream to empty", func() bool { return streamMsgs(t, c) == 0 })
	if _, err := c.jobs.Get(testCtx(t), taskKey("fin", keyFail, 1)); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("abandoned task recorded as failed: %v", err)
	}
}

// A worker cut off mid-task (connection closed, no ack) loses the task to
// another worker after AckWait.
func TestKilledWorkerRedelivered(t *testing.T) {
	s, c := setup(t, Options{})
	data, rows := putData(t, c, "1 1:1\n")
	ncA := connect(t, s)
	cA := openCluster(t, ncA, Options{})
	started := make(chan struct{})
	var once sync.Once
	hang := &fakeExec{fn: func(ctx context.Context, t *Task) (bool, []byte, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		return true, nil, ctx.Err()
	}}
	startWorker(t, cA, hang, WorkerOptions{Name: "doomed"})
	j := submit(t, c, "killed", 1)
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := j.Do(testCtx(t), testTask("killed", 0, 1, data))
		done <- result{b, err}
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("task never started")
	}
	ncA.Close()
	killed := time.Now()
	exec := &fakeExec{}
	startWorker(t, c, exec, WorkerOptions{Name: "rescuer"})
	r := <-done
	if r.err != nil || !bytes.Equal(r.b, want(0, rows)) {
		t.Fatalf("Do: %x, %v", r.b, r.err)
	}
	if d := time.Since(killed); d > 5*time.Second {
		t.Errorf("redelivered after %v, AckWait is 1s", d)
	}
	if exec.count(0) != 1 || hang.count(0) != 1 {
		t.Errorf("executions: rescuer %d, doomed %d", exec.count(0), hang.count(0))
	}
}

// A task running longer than AckWait keeps its message with InProgress
// heartbeats: it is not redelivered.
func TestHeartbeatsKeepLongTask(t *testing.T) {
	_, c := setup(t, Options{})
	data, rows := putData(t, c, "1 1:1\n")
	exec := &fakeExec{fn: func(ctx context.Context, t *Task) (bool, []byte, error) {
		select {
		case <-time.After(2500 * time.Millisecond):
		case <-ctx.Done():
			return true, nil, ctx.Err()
		}
		return false, nil, nil
	}}
	startWorker(t, c, exec, WorkerOptions{Name: "w1"})
	startWorker(t, c, exec, WorkerOptions{Name: "w2"})
	j := submit(t, c, "long", 1)
	b, err := j.Do(testCtx(t), testTask("long", 0, 1, data))
	if err != nil || !bytes.Equal(b, want(0, rows)) {
		t.Fatalf("Do: %x, %v", b, err)
	}
	if got := exec.count(0); got != 1 {
		t.Errorf("long task ran %d times, want 1", got)
	}
}

// Two workers racing on one task (published twice) and a second Do give
// one result: the first recorded.
func TestDuplicateResult(t *testing.T) {
	_, c := setup(t, Options{})
	data, _ := putData(t, c, "1 1:1\n")
	var started sync.WaitGroup
	started.Add(2)
	exec := &fakeExec{fn: func(ctx context.Context, t *Task) (bool, []byte, error) {
		started.Done()
		started.Wait() // both copies run at once
		return false, nil, nil
	}}
	var logA, logB syncBuffer
	startWorker(t, c, exec, WorkerOptions{Name: "a", Log: &logA})
	startWorker(t, c, exec, WorkerOptions{Name: "b", Log: &logB})
	j := submit(t, c, "dup", 1)
	task := testTask("dup", 0, 1, data)
	body, err := task.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.js.Publish(testCtx(t), taskSubject("dup"), body); err != nil { // the copy
		t.Fatal(err)
	}
	b1, err := j.Do(testCtx(t), task)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "both copies to finish", func() bool {
		return strings.Contains(logA.String()+logB.String(), "dropped") && streamMsgs(t, c) == 0
	})
	b2, err := j.Do(testCtx(t), task)
	if err != nil || !bytes.Equal(b1, b2) {
		t.Fatalf("second Do: %x, %v; first %x", b2, err, b1)
	}
	if got := exec.count(0); got != 2 {
		t.Errorf("%d executions, want 2", got)
	}
	objs, err := c.results.List(testCtx(t))
	if err != nil || len(objs) != 1 {
		t.Errorf("result objects %d, %v; want 1", len(objs), err)
	}
}

// A coordinator that dies and submits again reuses the results recorded,
// keeps the tasks still queued, and runs every task once.
func TestReattach(t *testing.T) {
	s, c := setup(t, Options{})
	data, rows := putData(t, c, "1 1:1\n")
	exec := &fakeExec{}
	stopW := startWorker(t, c, exec, WorkerOptions{Name: "w1"})
	const n = 6
	nc1 := connect(t, s)
	c1 := openCluster(t, nc1, Options{})
	j1 := submit(t, c1, "again", n)
	if _, errs := doAll(testCtx(t), j1, data, 0, 3); errors.Join(errs...) != nil {
		t.Fatal(errors.Join(errs...))
	}
	if err := stopW(); err != nil {
		t.Fatal(err)
	}
	// Tasks 3..5 are published while no worker runs, then the coordinator dies.
	ctx, cancel := context.WithCancel(testCtx(t))
	go doAll(ctx, j1, data, 3, n)
	waitFor(t, 10*time.Second, "3 queued tasks", func() bool {
		for i := 3; i < n; i++ {
			if _, err := c.jobs.Get(testCtx(t), taskKey("again", keyPub, i)); err != nil {
				return false
			}
		}
		return streamMsgs(t, c) == 3
	})
	cancel()
	nc1.Close()

	j2 := submit(t, c, "again", n)
	startWorker(t, c, exec, WorkerOptions{Name: "w2"})
	res, errs := doAll(testCtx(t), j2, data, 0, n)
	for i := range n {
		if errs[i] != nil || !bytes.Equal(res[i], want(i, rows)) {
			t.Fatalf("task %d: %x, %v", i, res[i], errs[i])
		}
		if got := exec.count(i); got != 1 {
			t.Errorf("task %d ran %d times, want 1", i, got)
		}
	}
	noneLeft(t, c)
}

// Submitting a job ID again with another definition is refused.
func TestSubmitConflict(t *testing.T) {
	_, c := setup(t, Options{})
	ctx := testCtx(t)
	if _, err := c.Submit(ctx, JobSpec{ID: "x", Kind: JobTrain, Count: 2, Digest: digestOf("a")}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []JobSpec{
		{ID: "x", Kind: JobTrain, Count: 2, Digest: digestOf("b")},
		{ID: "x", Kind: JobTrain, Count: 3, Digest: digestOf("a")},
	} {
		if _, err := c.Submit(ctx, spec); !errors.Is(err, ErrJobConflict) {
			t.Errorf("Submit %+v: %v, want ErrJobConflict", spec, err)
		}
	}
	for _, spec := range []JobSpec{
		{ID: "a.b", Kind: JobTrain, Count: 2, Digest: digestOf("a")},
		{ID: "y", Kind: JobTrain, Count: 0, Digest: digestOf("a")},
		{ID: "y", Kind: JobTrain, Count: 2, Digest: "abc"},
	} {
		if _, err := c.Submit(ctx, spec); err == nil {
			t.Errorf("Submit %+v: no error", spec)
		}
	}
}

// A task that never gets a result (here: every attempt fails
// transiently) fails its job after MaxDeliver deliveries, quoting the
// last error, and its message leaves the stream.
func TestMaxDeliver(t *testing.T) {
	_, c := setup(t, Options{MaxDeliver: 3})
	data, _ := putData(t, c, "1 1:1\n")
	exec := &fakeExec{fn: func(ctx context.Context, t *Task) (bool, []byte, error) {
		return true, nil, fmt.Errorf("%w: disk on fire", ErrDataUnavailable)
	}}
	startWorker(t, c, exec, WorkerOptions{Name: "w1"})
	j := submit(t, c, "loop", 1)
	_, err := j.Do(testCtx(t), testTask("loop", 0, 1, data))
	var te *TaskError
	if !errors.As(err, &te) || !errors.Is(err, ErrTaskFailed) {
		t.Fatalf("Do: %v, want a *TaskError", err)
	}
	if !strings.Contains(te.Msg, "delivered 3 times without a result") || !strings.Contains(te.Msg, "disk on fire") {
		t.Errorf("message %q", te.Msg)
	}
	if got := exec.count(0); got != 3 {
		t.Errorf("%d executions, want 3", got)
	}
	waitFor(t, 5*time.Second, "the stuck message to be deleted", func() bool { return streamMsgs(t, c) == 0 })
}

// Messages that are not valid tasks are refused without stopping the
// worker; one that names a task of a running job fails that task.
func TestInvalidMessage(t *testing.T) {
	_, c := setup(t, Options{})
	data, rows := putData(t, c, "1 1:1\n")
	exec := &fakeExec{}
	var log syncBuffer
	startWorker(t, c, exec, WorkerOptions{Name: "w1", Log: &log})
	j := submit(t, c, "bad", 2)
	ctx := testCtx(t)
	newer := testTask("bad", 1, 2, data)
	newer.Version = SchemaVersion + 1
	body, _ := newer.Encode()
	pathy := testTask("bad", 1, 2, "../../etc/passwd")
	pathyBody, _ := pathy.Encode()
	for _, m := range []struct {
		subject string
		body    []byte
	}{
		{taskSubject("bad"), []byte("not json")},
		{taskSubject("bad"), []byte(`{"v":1,"job":"bad","index":5,"count":2,"unknown":true}`)},
		{taskSubject("nojob"), pathyBody},
		{taskSubject("other"), body}, // names job bad on another job's subject: no record
		{taskSubject("bad"), body},
	} {
		if _, err := c.js.Publish(ctx, m.subject, m.body); err != nil {
			t.Fatal(err)
		}
	}
	b, err := j.Do(ctx, testTask("bad", 0, 2, data))
	if err != nil || !bytes.Equal(b, want(0, rows)) {
		t.Fatalf("task 0: %x, %v", b, err)
	}
	_, err = j.Do(ctx, testTask("bad", 1, 2, data))
	var te *TaskError
	if !errors.As(err, &te) || !strings.Contains(te.Msg, "invalid task message") || !strings.Contains(te.Msg, "schema version") {
		t.Fatalf("task 1: %v", err)
	}
	waitFor(t, 5*time.Second, "the stream to empty", func() bool { return streamMsgs(t, c) == 0 })
	if got := strings.Count(log.String(), "refused message"); got != 5 {
		t.Errorf("%d refusals, want 5:\n%s", got, log.String())
	}
	if exec.count(1) != 0 {
		t.Errorf("invalid task executed")
	}
}

// A stopping worker requeues its running task at once (no AckWait), and
// Work returns nil.
func TestWorkerStopRequeues(t *testing.T) {
	_, c := setup(t, Options{AckWait: 20 * time.Second})
	data, rows := putData(t, c, "1 1:1\n")
	started := make(chan struct{})
	var once sync.Once
	var interrupted atomic.Bool
	first := &fakeExec{fn: func(ctx context.Context, t *Task) (bool, []byte, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		interrupted.Store(true)
		return true, nil, ctx.Err()
	}}
	stop := startWorker(t, c, first, WorkerOptions{Name: "stopping"})
	j := submit(t, c, "requeue", 1)
	done := make(chan error, 1)
	var got []byte
	go func() {
		var err error
		got, err = j.Do(testCtx(t), testTask("requeue", 0, 1, data))
		done <- err
	}()
	<-started
	if err := stop(); err != nil || !interrupted.Load() {
		t.Fatalf("Work: %v, interrupted %v", err, interrupted.Load())
	}
	begin := time.Now()
	startWorker(t, c, &fakeExec{}, WorkerOptions{Name: "next"})
	if err := <-done; err != nil || !bytes.Equal(got, want(0, rows)) {
		t.Fatalf("Do: %x, %v", got, err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("requeued task took %v (AckWait 20s)", d)
	}
}

// A worker whose connection closes returns an error instead of spinning.
func TestWorkConnectionClosed(t *testing.T) {
	s, _ := setup(t, Options{})
	nc := connect(t, s)
	c := openCluster(t, nc, Options{})
	errc := make(chan error, 1)
	o := WorkerOptions{Name: "w", CacheDir: t.TempDir()}
	go func() { errc <- c.Work(context.Background(), &fakeExec{}, o) }()
	time.Sleep(100 * time.Millisecond)
	nc.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, nats.ErrConnectionClosed) {
			t.Errorf("Work: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Work did not return")
	}
}

// Open binds to existing assets without changing them when its options
// are zero, and applies options that are set.
func TestOpenKeepsSettings(t *testing.T) {
	s, c := setup(t, Options{AckWait: 1500 * time.Millisecond, MaxDeliver: 7})
	ctx := testCtx(t)
	c2 := openCluster(t, connect(t, s), Options{})
	info, err := c2.cons.Info(ctx)
	if err != nil || info.Config.AckWait != 1500*time.Millisecond || info.Config.MaxDeliver != 7 {
		t.Fatalf("consumer after a zero Open: %+v, %v", info.Config, err)
	}
	if _, err := Open(ctx, c.nc, Options{MaxDeliver: 2}); err != nil {
		t.Fatal(err)
	}
	if info, err = c.cons.Info(ctx); err != nil || info.Config.MaxDeliver != 2 || info.Config.AckWait != 1500*time.Millisecond {
		t.Fatalf("consumer after Open MaxDeliver 2: %+v, %v", info.Config, err)
	}
	si, err := c.stream.Info(ctx)
	if err != nil || si.Config.Retention != jetstream.WorkQueuePolicy || si.Config.MaxMsgSize != MaxTaskBytes+taskHeaderBytes {
		t.Fatalf("stream %+v, %v", si.Config, err)
	}
	for _, o := range []Options{{Replicas: 6}, {AckWait: -1}, {MaxDeliver: -2}} {
		if _, err := Open(ctx, c.nc, o); err == nil {
			t.Errorf("Open %+v: no error", o)
		}
	}
}
