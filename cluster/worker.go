package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Progress is what a running task has done so far.
type Progress struct {
	Rows int64 // rows processed (SGD steps, or rows read) so far
}

// Executor computes tasks on a worker.
type Executor interface {
	// Execute computes task t and returns its result. data(ctx, digest)
	// returns the path of a local file holding the data object of that
	// digest (fetched into the worker's cache and verified; the file stays
	// until Execute returns); for t.Data of a task with a Path, it is the
	// file in the worker's data root, verified against the digest.
	// progress may be called at any time from any goroutine. Execute
	// returns ctx.Err() soon after ctx is cancelled.
	//
	// An error wrapping ErrDataUnavailable sends the task back to the
	// queue; any other error fails the task, and with it the job.
	Execute(ctx context.Context, t *Task, data func(ctx context.Context, digest string) (string, error), progress func(Progress)) ([]byte, error)
}

// WorkerOptions configures Work. The zero value works.
type WorkerOptions struct {
	// Name names the worker in heartbeats, logs and failure records: 1 to
	// 64 letters, digits, '-', '_' and inner dots. Default: hostname-pid.
	Name string
	// Concurrency is the number of tasks run at once. Default 1.
	Concurrency int
	// CacheDir is the data cache directory; "" makes a temporary one,
	// removed when Work returns. One worker process owns a cache directory.
	CacheDir string
	// CacheBytes bounds the size of the cache directory; the least
	// recently used files no task is using are evicted. Default 8 GiB.
	CacheBytes int64
	// MaxData is the largest data object the worker fetches (checked on the
	// object's info before fetching). Default 64 GiB.
	MaxData int64
	// MaxResult is the largest result the worker stores; a larger one
	// fails the task. Default 4 GiB.
	MaxResult int64
	// Log receives one line per task started, finished, failed, retried or
	// refused. Default: discarded.
	Log io.Writer
	// DataRoot is a directory whose files tasks may name by a path
	// (Task.Path) instead of by a data object: the worker reads such a
	// file in place after checking that the path, with its symbolic links
	// resolved, stays inside DataRoot, that it is a regular file and that
	// its bytes have the task's digest (see "Data-root mode" in the
	// package documentation). "" (the default): a task with a Path fails.
	DataRoot string
}

const (
	defaultCacheBytes = 8 << 30
	defaultMaxData    = 64 << 30
	defaultMaxResult  = 4 << 30
	maxConcurrency    = 1024
)

// fetchWait is how long one pull request waits for a task; it bounds how
// long Work takes to notice its context is done while idle.
var fetchWait = 2 * time.Second

// workerNameRE matches a worker name (compiled on first use).
var workerNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`) })

func (o WorkerOptions) withDefaults() (WorkerOptions, error) {
	if o.Name == "" {
		host, _ := os.Hostname()
		host = regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(host, "-")
		host = host[:min(len(host), 48)]
		if host == "" {
			host = "worker"
		}
		o.Name = host + "-" + strconv.Itoa(os.Getpid())
	}
	if len(o.Name) > 64 || !workerNameRE().MatchString(o.Name) {
		return o, fmt.Errorf("cluster: worker name %q: 1 to 64 letters, digits, '-', '_' and inner dots", o.Name)
	}
	if o.Concurrency == 0 {
		o.Concurrency = 1
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = defaultCacheBytes
	}
	if o.MaxData == 0 {
		o.MaxData = defaultMaxData
	}
	if o.MaxResult == 0 {
		o.MaxResult = defaultMaxResult
	}
	switch {
	case o.Concurrency < 0 || o.Concurrency > maxConcurrency:
		return o, fmt.Errorf("cluster: worker concurrency %d out of [1, %d]", o.Concurrency, maxConcurrency)
	case o.CacheBytes < 0 || o.MaxData < 0 || o.MaxResult < 0:
		return o, fmt.Errorf("cluster: negative worker bound")
	case o.MaxResult > maxFetchResult:
		return o, fmt.Errorf("cluster: worker max result %d, at most %d", o.MaxResult, int64(maxFetchResult))
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o, nil
}

type worker struct {
	c       *Cluster
	exec    Executor
	o       WorkerOptions
	cache   *cache
	root    *dataRoot // nil without WorkerOptions.DataRoot
	ackWait time.Duration
	started time.Time
	poke    chan struct{} // asks for a heartbeat now
	logMu   sync.Mutex

	mu      sync.Mutex
	running map[*runningTask]struct{}
	rows    int64     // rows of the tasks that ended
	total   int64     // rows at the last heartbeat, ended and running
	totalAt time.Time // time of the last heartbeat
	rate    float64   // rows per second between the last two heartbeats
	done    int64
	failed  int64
}

// runningTask is a task in progress; rows is written by the executor's
// progress calls, the rest by the heartbeat under worker.mu.
type runningTask struct {
	t        *Task
	started  time.Time
	rows     atomic.Int64
	lastRows int64
	lastAt   time.Time
	rate     float64
}

// Work runs tasks from the queue until ctx is done. Each of Concurrency
// loops pulls one task message at a time from the durable consumer and:
// refuses (terminates) a message that does not decode or validate,
// recording a failure for its task if it names a task of a running job;
// acknowledges without running a task whose job is finished or that has a
// result already; runs the task with an InProgress heartbeat every
// AckWait/3; stores a result object and then creates its result record
// (the first result wins, a duplicate is dropped) and acknowledges; on an
// Execute error it records the failure and terminates the message, except
// a transient one (ErrDataUnavailable, NATS errors), which is retried
// after a delay, and one caused by ctx, which is requeued at once. A
// running task whose job ends (Finish, or its record deleted) has its
// context cancelled and its message acknowledged. The worker writes a
// heartbeat record in cpm-workers every 2s.
//
// When ctx is done Work stops pulling, waits for the running tasks (they
// see ctx cancelled; a task that still returns a result has it stored),
// and returns nil; it returns an error when it cannot start or when the
// NATS connection is closed.
func (c *Cluster) Work(ctx context.Context, exec Executor, o WorkerOptions) error {
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	dir := o.CacheDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "cpm-cache-"); err != nil {
			return fmt.Errorf("cluster: worker cache: %w", err)
		}
		defer os.RemoveAll(dir)
	}
	cache, err := openCache(dir, o.CacheBytes, o.MaxData, c.data)
	if err != nil {
		return fmt.Errorf("cluster: worker %w", err)
	}
	var root *dataRoot
	if o.DataRoot != "" {
		if root, err = openDataRoot(o.DataRoot, o.MaxData); err != nil {
			return fmt.Errorf("cluster: worker %w", err)
		}
		defer root.close()
	}
	info, err := c.cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("cluster: worker: consumer %s: %w", ConsumerName, err)
	}
	if err := c.watchMaxDeliveries(); err != nil {
		return err
	}
	w := &worker{
		c: c, exec: exec, o: o, cache: cache, root: root, ackWait: info.Config.AckWait,
		started: time.Now().UTC(), poke: make(chan struct{}, 1),
		running: make(map[*runningTask]struct{}),
	}
	hbCtx, stopBeats := context.WithCancel(context.Background())
	beatsDone := make(chan struct{})
	go func() {
		defer close(beatsDone)
		w.heartbeats(hbCtx)
	}()
	errs := make([]error, o.Concurrency)
	var wg sync.WaitGroup
	for i := range o.Concurrency {
		wg.Go(func() { errs[i] = w.pull(ctx) })
	}
	wg.Wait()
	stopBeats()
	<-beatsDone
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// pull fetches and handles one task at a time until ctx is done.
func (w *worker) pull(ctx context.Context) error {
	const minBackoff, maxBackoff = 50 * time.Millisecond, 5 * time.Second
	backoff := minBackoff
	for ctx.Err() == nil {
		if w.c.nc.IsClosed() {
			return fmt.Errorf("cluster: worker %s: %w", w.o.Name, nats.ErrConnectionClosed)
		}
		batch, err := w.c.cons.Fetch(1, jetstream.FetchMaxWait(fetchWait))
		if err == nil {
			for m := range batch.Messages() {
				w.handle(ctx, m)
			}
			err = batch.Error()
		}
		if err == nil || errors.Is(err, nats.ErrTimeout) || errors.Is(err, jetstream.ErrNoMessages) {
			backoff = minBackoff
			continue
		}
		select { // the server is unreachable or the consumer is gone: wait
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
	return nil
}

func taskName(t *Task) string {
	s := t.Job + "/" + strconv.Itoa(t.Index)
	if t.Name != "" {
		s += fmt.Sprintf(" %q", t.Name)
	}
	return s
}

func (w *worker) logf(format string, a ...any) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	fmt.Fprintf(w.o.Log, "worker %s: %s\n", w.o.Name, fmt.Sprintf(format, a...))
}

// handle decides what to do with one message and does it.
func (w *worker) handle(ctx context.Context, m jetstream.Msg) {
	var seq, deliveries uint64
	if md, err := m.Metadata(); err == nil {
		seq, deliveries = md.Sequence.Stream, md.NumDelivered
	}
	t, err := DecodeTask(m.Data())
	if err == nil && m.Subject() != taskSubject(t.Job) {
		err = fmt.Errorf("%w: task of job %s on subject %s", ErrInvalidTask, t.Job, m.Subject())
	}
	if err != nil {
		w.refuse(m, seq, err)
		return
	}
	if ctx.Err() != nil {
		_ = m.Nak()
		return
	}
	opCtx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var job jobRecord
	found, err := getRecord(opCtx, w.c.jobs, t.Job, &job)
	switch {
	case err != nil:
		w.requeue(ctx, m, t, err)
		return
	case !found:
		w.logf("refused %s: job %s has no record", taskName(t), t.Job)
		_ = m.TermWithReason("no job record")
		return
	case job.State != JobRunning:
		w.logf("skipped %s: job %s is %s", taskName(t), t.Job, job.State)
		_ = m.Ack()
		return
	case job.Count != t.Count:
		w.refuse(m, seq, fmt.Errorf("%w: task count %d, job %s has %d tasks", ErrInvalidTask, t.Count, t.Job, job.Count))
		return
	}
	if found, err := getRecord(opCtx, w.c.jobs, taskKey(t.Job, keyResult, t.Index), &resultRecord{}); err != nil {
		w.requeue(ctx, m, t, err)
		return
	} else if found {
		w.logf("skipped %s: it has a result", taskName(t))
		_ = m.Ack()
		return
	}
	if found, err := getRecord(opCtx, w.c.jobs, taskKey(t.Job, keyFail, t.Index), &failRecord{}); err != nil {
		w.requeue(ctx, m, t, err)
		return
	} else if found {
		w.logf("skipped %s: it failed already", taskName(t))
		_ = m.Term()
		return
	}
	w.run(ctx, m, t, deliveries)
}

// run executes t and settles its message.
func (w *worker) run(ctx context.Context, m jetstream.Msg, t *Task, deliveries uint64) {
	rt := w.begin(t)
	w.logf("started %s (delivery %d)", taskName(t), deliveries)
	taskCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := w.keepAlive(m, t, cancel)
	ds := &dataSession{c: w.cache, root: w.root, task: t}
	var res []byte
	var err error
	if t.Path != "" && w.root == nil {
		err = errNoDataRoot(t.Path)
	} else if res, err = w.execute(taskCtx, t, ds.get, func(p Progress) { rt.rows.Store(p.Rows) }); err == nil {
		err = ds.recheck()
	}
	ds.end()
	stop()
	elapsed := time.Since(rt.started)
	switch {
	case err == nil:
		w.complete(ctx, m, t, res, rt.rows.Load(), elapsed)
	case errors.Is(context.Cause(taskCtx), errJobEnded):
		w.logf("abandoned %s: its job ended", taskName(t))
		_ = m.Ack()
	case ctx.Err() != nil:
		w.logf("requeued %s: the worker is stopping", taskName(t))
		_ = m.Nak()
	case errors.Is(err, ErrDataUnavailable):
		w.requeue(ctx, m, t, err)
	default:
		w.fail(m, t, err)
	}
	w.end(rt, err == nil)
}

// execute calls the executor, turning a panic into an error.
func (w *worker) execute(ctx context.Context, t *Task, data func(context.Context, string) (string, error), progress func(Progress)) (res []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			w.logf("panic in %s: %v\n%s", taskName(t), r, debug.Stack())
			res, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return w.exec.Execute(ctx, t, data, progress)
}

// errJobEnded cancels a running task whose job is no longer running.
var errJobEnded = errors.New("job ended")

// keepAlive sends InProgress every AckWait/3, and checks every
// heartbeatEvery that t's job is still running (else it cancels the task
// with errJobEnded), until the returned function is called.
func (w *worker) keepAlive(m jetstream.Msg, t *Task, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(max(w.ackWait/3, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				_ = m.InProgress()
			case <-done:
				return
			}
		}
	})
	wg.Go(func() {
		tick := time.NewTicker(heartbeatEvery)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
			case <-done:
				return
			}
			ctx, stopGet := context.WithTimeout(context.Background(), heartbeatEvery)
			var job jobRecord
			found, err := getRecord(ctx, w.c.jobs, t.Job, &job)
			stopGet()
			if err == nil && (!found || job.State != JobRunning) {
				cancel(errJobEnded)
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// complete stores a result: the object, then the result record (created
// once: a later duplicate is dropped), then the ack. It works on after ctx
// is done, so that a result computed while the worker stops is kept.
func (w *worker) complete(ctx context.Context, m jetstream.Msg, t *Task, res []byte, rows int64, elapsed time.Duration) {
	if int64(len(res)) > w.o.MaxResult {
		w.fail(m, t, fmt.Errorf("result of %d bytes, this worker stores at most %d", len(res), w.o.MaxResult))
		return
	}
	opCtx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	sum := sha256.Sum256(res)
	sha := hex.EncodeToString(sum[:])
	key := taskKey(t.Job, keyResult, t.Index)
	if found, err := getRecord(opCtx, w.c.jobs, key, &resultRecord{}); err == nil && found {
		w.logf("finished %s in %.1fs; a result was recorded already, this one is dropped", taskName(t), elapsed.Seconds())
		_ = m.Ack()
		return
	}
	name := resultObject(t.Job, t.Index, sha)
	if err := w.putResult(opCtx, name, res); err != nil {
		w.requeue(ctx, m, t, fmt.Errorf("store result: %w", err))
		return
	}
	created, err := createRecord(opCtx, w.c.jobs, key, &resultRecord{
		Object: name, SHA256: sha, Size: int64(len(res)), Worker: w.o.Name,
		Seconds: elapsed.Seconds(), Rows: rows, At: time.Now().UTC(),
	})
	if err != nil {
		w.requeue(ctx, m, t, fmt.Errorf("record result: %w", err))
		return
	}
	if created {
		w.logf("finished %s in %.1fs, %d bytes", taskName(t), elapsed.Seconds(), len(res))
	} else {
		w.logf("finished %s in %.1fs; a result was recorded already, this one is dropped", taskName(t), elapsed.Seconds())
	}
	_ = m.DoubleAck(opCtx)
}

// putResult uploads res unless an object of its name (which holds its
// digest) and size exists.
func (w *worker) putResult(ctx context.Context, name string, res []byte) error {
	info, err := w.c.results.GetInfo(ctx, name)
	if err == nil && int64(info.Size) == int64(len(res)) {
		return nil
	}
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	_, err = w.c.results.Put(ctx, jetstream.ObjectMeta{Name: name}, bytes.NewReader(res))
	return err
}

// fail records a deterministic failure of t and terminates its message.
func (w *worker) fail(m jetstream.Msg, t *Task, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	msg := clip(err.Error(), maxText)
	if _, cerr := createRecord(ctx, w.c.jobs, taskKey(t.Job, keyFail, t.Index), &failRecord{
		Worker: w.o.Name, Msg: msg, At: time.Now().UTC(),
	}); cerr != nil {
		w.logf("failed %s: %s; recording the failure: %v", taskName(t), msg, cerr)
		_ = m.NakWithDelay(w.retryDelay())
		return
	}
	w.logf("failed %s: %s", taskName(t), msg)
	_ = m.TermWithReason(clip(msg, 200))
}

// requeue sends t back to the queue: at once when the worker is stopping,
// else after a delay, noting err as the task's last error.
func (w *worker) requeue(ctx context.Context, m jetstream.Msg, t *Task, err error) {
	if ctx.Err() != nil {
		w.logf("requeued %s: the worker is stopping", taskName(t))
		_ = m.Nak()
		return
	}
	msg := clip(err.Error(), maxText)
	opCtx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	_ = putRecord(opCtx, w.c.jobs, taskKey(t.Job, keyLast, t.Index), &failRecord{
		Worker: w.o.Name, Msg: msg, At: time.Now().UTC(),
	})
	w.logf("retrying %s later: %s", taskName(t), msg)
	_ = m.NakWithDelay(w.retryDelay())
}

func (w *worker) retryDelay() time.Duration {
	return min(max(w.ackWait/3, 100*time.Millisecond), 10*time.Second)
}

// refuse terminates a message that is not a valid task. If it names a
// task of a running job (job, index, on the job's subject), the task is
// recorded as failed, so that its coordinator does not wait for it.
func (w *worker) refuse(m jetstream.Msg, seq uint64, reason error) {
	w.logf("refused message %d on %s: %v", seq, m.Subject(), reason)
	var head struct {
		Job   string `json:"job"`
		Index *int   `json:"index"`
	}
	if json.Unmarshal(m.Data(), &head) == nil && ValidJobID(head.Job) && head.Index != nil && m.Subject() == taskSubject(head.Job) {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		var job jobRecord
		if found, err := getRecord(ctx, w.c.jobs, head.Job, &job); err == nil && found && job.State == JobRunning && *head.Index >= 0 && *head.Index < job.Count {
			_, _ = createRecord(ctx, w.c.jobs, taskKey(head.Job, keyFail, *head.Index), &failRecord{
				Worker: w.o.Name, Msg: clip("invalid task message: "+reason.Error(), maxText), At: time.Now().UTC(),
			})
		}
	}
	_ = m.TermWithReason(clip(reason.Error(), 200))
}

func (w *worker) begin(t *Task) *runningTask {
	now := time.Now()
	rt := &runningTask{t: t, started: now, lastAt: now}
	w.mu.Lock()
	w.running[rt] = struct{}{}
	w.mu.Unlock()
	w.beatSoon()
	return rt
}

func (w *worker) end(rt *runningTask, ok bool) {
	w.mu.Lock()
	delete(w.running, rt)
	w.rows += rt.rows.Load()
	if ok {
		w.done++
	} else {
		w.failed++
	}
	w.mu.Unlock()
	w.beatSoon()
}

func (w *worker) beatSoon() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// heartbeats writes the worker's record every heartbeatEvery (and soon
// after a task starts or ends) until ctx is done, then deletes it.
func (w *worker) heartbeats(ctx context.Context) {
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		rec := w.status()
		if b, err := encodeRecord(rec); err == nil {
			_, _ = w.c.workers.Put(ctx, w.o.Name, b)
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = w.c.workers.Delete(dctx, w.o.Name)
			cancel()
			return
		case <-tick.C:
		case <-w.poke:
		}
	}
}

// status is the worker's heartbeat record; it updates each task's rate.
func (w *worker) status() *WorkerStatus {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &WorkerStatus{
		Name: w.o.Name, Started: w.started, Updated: now.UTC(), Concurrency: w.o.Concurrency,
		Done: w.done, Failed: w.failed,
	}
	total := w.rows
	for rt := range w.running {
		total += rt.rows.Load()
	}
	if dt := now.Sub(w.totalAt).Seconds(); dt >= 0.5 {
		if !w.totalAt.IsZero() {
			w.rate = float64(total-w.total) / dt
		}
		w.total, w.totalAt = total, now
	}
	s.Rows, s.RowsPerSec = total, w.rate
	for rt := range w.running {
		rows := rt.rows.Load()
		if dt := now.Sub(rt.lastAt).Seconds(); dt >= 0.5 {
			rt.rate = float64(rows-rt.lastRows) / dt
			rt.lastRows, rt.lastAt = rows, now
		}
		s.Running = append(s.Running, TaskStatus{
			Job: rt.t.Job, Index: rt.t.Index, Name: rt.t.Name, Rows: rows, RowsPerSec: rt.rate, Started: rt.started.UTC(),
		})
	}
	return s
}
