package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestMain(m *testing.M) {
	fetchWait = 200 * time.Millisecond // idle workers notice a cancelled context fast
	heartbeatEvery, workerTTL = 500*time.Millisecond, 1500*time.Millisecond
	os.Exit(m.Run())
}

// startServer runs an embedded JetStream server on loopback for one test.
func startServer(t *testing.T) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

func connect(t *testing.T, s *server.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func openCluster(t *testing.T, nc *nats.Conn, o Options) *Cluster {
	t.Helper()
	c, err := Open(testCtx(t), nc, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// testCtx is a context that bounds one test's waits.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// setup starts a server and opens a cluster with a 1s AckWait.
func setup(t *testing.T, o Options) (*server.Server, *Cluster) {
	s := startServer(t)
	if o.AckWait == 0 {
		o.AckWait = time.Second
	}
	return s, openCluster(t, connect(t, s), o)
}

// putData stores a small file and returns its digest and bytes.
func putData(t *testing.T, c *Cluster, content string) (string, []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rows.svm")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := c.PutData(testCtx(t), p)
	if err != nil {
		t.Fatal(err)
	}
	return d, []byte(content)
}

func testTask(job string, i, n int, data string) *Task {
	return &Task{
		Version: SchemaVersion, Job: job, Index: i, Count: n, Kind: KindTrainModel,
		Name: fmt.Sprintf("t%d", i), Learner: "cpm", Flags: map[string]string{"k": "3"},
		Seed: uint64(i), Data: data,
	}
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// want is the fake executor's result: the SHA-256 of the index and the
// data file's bytes.
func want(i int, data []byte) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d:", i)
	h.Write(data)
	return h.Sum(nil)
}

// fakeExec reads the task's data file and returns want(index, bytes),
// counting its calls per task; fn, when set, runs first and may replace
// the outcome.
type fakeExec struct {
	fn func(ctx context.Context, t *Task) (handled bool, res []byte, err error)

	mu    sync.Mutex
	calls map[int]int
}

func (f *fakeExec) Execute(ctx context.Context, t *Task, data func(context.Context, string) (string, error), progress func(Progress)) ([]byte, error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = make(map[int]int)
	}
	f.calls[t.Index]++
	f.mu.Unlock()
	if f.fn != nil {
		if handled, b, err := f.fn(ctx, t); handled {
			return b, err
		}
	}
	p, err := data(ctx, t.Data)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	progress(Progress{Rows: int64(len(b))})
	return want(t.Index, b), nil
}

func (f *fakeExec) count(i int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[i]
}

func (f *fakeExec) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

// syncBuffer is a log writer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWorker runs Work until the returned stop (or the test's end) and
// returns Work's error from stop.
func startWorker(t *testing.T, c *Cluster, e Executor, o WorkerOptions) (stop func() error) {
	t.Helper()
	if o.CacheDir == "" {
		o.CacheDir = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Work(ctx, e, o) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-errc:
			case <-time.After(15 * time.Second):
				err = errors.New("worker did not stop")
			}
		})
		return err
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("worker %s: %v", o.Name, err)
		}
	})
	return stop
}

func submit(t *testing.T, c *Cluster, id string, n int) *Job {
	t.Helper()
	j, err := c.Submit(testCtx(t), JobSpec{ID: id, Kind: JobCV, Describe: "test job", Count: n, Digest: digestOf(id)})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// doAll runs Do for tasks [from, to) concurrently and returns results and
// errors by index.
func doAll(ctx context.Context, j *Job, data string, from, to int) ([][]byte, []error) {
	n := j.spec.Count
	res, errs := make([][]byte, n), make([]error, n)
	var wg sync.WaitGroup
	for i := from; i < to; i++ {
		wg.Go(func() { res[i], errs[i] = j.Do(ctx, testTask(j.spec.ID, i, n, data)) })
	}
	wg.Wait()
	return res, errs
}

// waitFor polls cond every 20ms for at most d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func streamMsgs(t *testing.T, c *Cluster) uint64 {
	t.Helper()
	info, err := c.stream.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// Processes that open a fresh server at the same moment (workers started
// together) all end with handles that read their buckets: Open turns off
// direct gets and binds the buckets anew, so no handle asks a stream for
// direct gets it no longer answers ("no responders").
func TestConcurrentOpen(t *testing.T) {
	s := startServer(t)
	const n = 6
	cs := make([]*Cluster, n)
	errs := make(chan error, n)
	for i := range cs {
		nc := connect(t, s)
		go func() {
			c, err := Open(testCtx(t), nc, Options{})
			cs[i] = c
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	digest, _ := putData(t, cs[0], "1 1:1\n")
	for i, c := range cs {
		t.Cleanup(c.Close)
		if _, err := c.data.GetInfo(testCtx(t), digest); err != nil {
			t.Errorf("cluster %d: data: %v", i, err)
		}
		if _, err := c.jobs.Get(testCtx(t), "no-such-key"); !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Errorf("cluster %d: jobs: %v", i, err)
		}
	}
}

// noneLeft fails the test unless the task stream empties within 5 s: a
// worker acknowledges a task after recording its result, so the last ack
// may still be on its way when Do returns.
func noneLeft(t *testing.T, c *Cluster) {
	t.Helper()
	end := time.Now().Add(5 * time.Second)
	for m := streamMsgs(t, c); m != 0; m = streamMsgs(t, c) {
		if time.Now().After(end) {
			t.Errorf("%d messages left in the stream", m)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
