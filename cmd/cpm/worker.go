package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/cluster/compute"
	"github.com/polyhedral/cpm/cluster/natsd"
)

const workerUsage = "cpm worker --nats URL [--concurrency N] [--cache-dir DIR] [--cache-size BYTES] [--max-data BYTES] [--data-root DIR] [--name NAME] [--max-memory BYTES] [connection flags]"

// runWorker implements cpm worker: it pulls tasks of train, cv and tune
// jobs from the cluster and runs them until interrupted. SIGINT or SIGTERM
// cancels ctx: the running tasks stop and go back to the queue for another
// worker, and the command exits with status 0.
func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("worker", stderr, workerUsage)
	url := fs.String("nats", "", "the NATS server(s), `URL` (comma-separated)")
	conc := fs.Int("concurrency", 1, "tasks run at once")
	cacheDir := fs.String("cache-dir", "", "keep fetched data sets in `DIR` across tasks and runs (default: a temporary directory removed at exit)")
	cacheSize := fs.Int64("cache-size", 8<<30, "bound on the --cache-dir size in `bytes`; least recently used data sets are evicted")
	maxData := fs.Int64("max-data", 64<<30, "refuse to fetch a data set larger than `bytes` (its size is checked before the download)")
	dataRoot := fs.String("data-root", "", "read the data files of jobs submitted with --data-root in place, from `DIR` (the submitters' --data-root on a shared file system); a task may name only a regular file inside DIR, symbolic links resolved, whose bytes have the task's SHA-256. Without it such tasks fail")
	name := fs.String("name", "", "worker `name` in cluster status (default HOST-PID)")
	replicas := fs.Int("nats-replicas", 0, "replicas of the streams and stores (3 on a 3-node cluster); default: those that exist keep theirs, missing ones get 1")
	ackWait := fs.Duration("ack-wait", 0, "set the task queue's ack deadline: a task whose worker died is redelivered this long after its last heartbeat (default: keep the queue's; 30s when created)")
	maxDeliver := fs.Int("max-deliver", 0, "set the deliveries of one task before its job fails (default: keep the queue's; 5 when created)")
	mem := addMemoryFlag(fs)
	client := natsd.AddClientFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkClusterArgs(fs, *url); err != nil {
		return err
	}
	switch {
	case *conc < 1:
		return usagef("--concurrency %d: want at least 1", *conc)
	case *maxData < 1<<20:
		return usagef("--max-data %d: want at least 1 MiB", *maxData)
	case *cacheSize < 1<<20:
		return usagef("--cache-size %d: want at least 1 MiB", *cacheSize)
	case *replicas < 0 || *replicas > 5:
		return usagef("--nats-replicas %d: want 1 to 5 (or 0: keep)", *replicas)
	case *ackWait != 0 && *ackWait < time.Second:
		return usagef("--ack-wait %v: want at least 1s", *ackWait)
	case *maxDeliver < 0:
		return usagef("--max-deliver %d: want at least 1", *maxDeliver)
	}
	if *name == "" {
		host, _ := os.Hostname()
		*name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	c, closeAll, err := connectCluster(ctx, *url, "cpm-worker-"+*name, *client, cluster.Options{Replicas: *replicas, AckWait: *ackWait, MaxDeliver: *maxDeliver})
	if err != nil {
		return err
	}
	defer closeAll()
	fmt.Fprintf(stderr, "cpm worker %s: %d task(s) at once from %s\n", *name, *conc, *url)
	if *dataRoot != "" {
		fmt.Fprintf(stderr, "cpm worker %s: reads data files in place from %s\n", *name, *dataRoot)
	}
	start := time.Now()
	err = c.Work(ctx, &compute.Executor{MaxMemory: mem.v()}, cluster.WorkerOptions{
		Name: *name, Concurrency: *conc, CacheDir: *cacheDir, CacheBytes: *cacheSize, MaxData: *maxData, DataRoot: *dataRoot, Log: stderr,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "cpm worker %s: stopped after %.1fs\n", *name, time.Since(start).Seconds())
	return nil
}

const clusterStatusUsage = "cpm cluster status --nats URL [connection flags]"

func init() { clusterStatus = runClusterStatus }

// runClusterStatus implements cpm cluster status: jobs, their tasks by
// state, and the workers seen with what each runs.
func runClusterStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cluster status", stderr, clusterStatusUsage)
	url := fs.String("nats", "", "the NATS server(s), `URL` (comma-separated)")
	client := natsd.AddClientFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkClusterArgs(fs, *url); err != nil {
		return err
	}
	c, closeAll, err := connectCluster(ctx, *url, "cpm-status", *client, cluster.Options{})
	if err != nil {
		return err
	}
	defer closeAll()
	st, err := c.Status(ctx)
	if err != nil {
		return err
	}
	st.Print(stdout)
	return nil
}
