package cluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// benchCluster starts a JetStream server on 127.0.0.1 and opens a cluster
// on it for a benchmark.
func benchCluster(b *testing.B) *Cluster {
	b.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: b.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		b.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		b.Fatal("nats server not ready")
	}
	b.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	c, err := Open(context.Background(), nc, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// constExec returns the same result for every task at once.
type constExec struct{ res []byte }

func (e constExec) Execute(ctx context.Context, t *Task, data func(context.Context, string) (string, error), progress func(Progress)) ([]byte, error) {
	if _, err := data(ctx, t.Data); err != nil {
		return nil, err
	}
	return e.res, nil
}

// BenchmarkJobTask measures what the engine adds to each task of a job:
// publish, delivery, ack, the result object and record, and the
// submitter's fetch and digest check, for tasks that compute nothing and
// return 50,125 bytes (one K = 10 polytope over MNIST's 785 feature rows),
// with one worker of 2 slots on the same machine. ns/op is the wall time
// per task of a job of b.N tasks.
func BenchmarkJobTask(b *testing.B) {
	c := benchCluster(b)
	res := make([]byte, 50125)
	rand.Read(res)
	p := filepath.Join(b.TempDir(), "rows")
	if err := os.WriteFile(p, []byte("1 1:1\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	digest, err := c.PutData(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Work(ctx, constExec{res}, WorkerOptions{Concurrency: 2, CacheDir: b.TempDir()}) }()
	defer func() { cancel(); <-done }()
	job, err := c.Submit(context.Background(), JobSpec{ID: "bench", Kind: JobTrain, Count: max(b.N, 1), Digest: digestOf(fmt.Sprint(b.N))})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	_, errs := doAll(context.Background(), job, digest, 0, b.N)
	b.StopTimer()
	for i, err := range errs {
		if err != nil {
			b.Fatalf("task %d: %v", i, err)
		}
	}
	b.SetBytes(int64(len(res)))
}

// BenchmarkPutData measures storing a 64 MB data file in the object store
// (hash, chunked upload) and a worker's fetch of it (download, SHA-256
// check, rename into its cache); MB/s is of the file.
func BenchmarkPutData(b *testing.B) {
	c := benchCluster(b)
	dir := b.TempDir()
	buf := make([]byte, 64<<20)
	b.SetBytes(int64(len(buf)))
	for i := range b.N {
		rand.Read(buf)
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, buf, 0o600); err != nil {
			b.Fatal(err)
		}
		digest, err := c.PutData(context.Background(), p)
		if err != nil {
			b.Fatal(err)
		}
		cache, err := openCache(filepath.Join(dir, "cache"), 1<<30, 1<<30, c.data)
		if err != nil {
			b.Fatal(err)
		}
		f, _, err := cache.acquire(context.Background(), digest)
		if err != nil {
			b.Fatal(err)
		}
		cache.release(f)
		os.Remove(p)
	}
}
