package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/cluster/compute"
	"github.com/polyhedral/cpm/cluster/natsd"
)

// gcCluster starts a JetStream server and a worker in this process for
// the test and returns the server's URL and a cluster handle on it.
func gcCluster(t *testing.T) (string, *cluster.Cluster) {
	t.Helper()
	srv, err := natsd.StartEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := natsd.Connect(srv.ClientURL(), natsd.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := cluster.Open(ctx, nc, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- c.Work(ctx, &compute.Executor{}, cluster.WorkerOptions{Name: "gc-test", Concurrency: 2, CacheDir: t.TempDir()})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("worker did not stop")
		}
		c.Close()
	})
	return srv.ClientURL(), c
}

func gcJobs(t *testing.T, c *cluster.Cluster) []string {
	t.Helper()
	st, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range st.Jobs {
		ids = append(ids, j.ID+":"+j.State.String())
	}
	return ids
}

// cpm cluster gc --dry-run lists a finished train job and deletes nothing;
// a job younger than --older-than stays; gc deletes the job and the data
// no job names; a running job goes only with --force.
func TestClusterGC(t *testing.T) {
	url, c := gcCluster(t)
	mustRun(t, "train", "-q", "--nats", url, "-t", heart, "-k", "2", "-i", "2000", "-C", "1", "--double-sided",
		"-o", filepath.Join(t.TempDir(), "m"))
	jobs := gcJobs(t, c)
	if len(jobs) != 1 || !strings.HasSuffix(jobs[0], ":done") {
		t.Fatalf("jobs after train: %v", jobs)
	}
	id := strings.TrimSuffix(jobs[0], ":done")

	out := mustRun(t, "cluster", "gc", "--nats", url, "--older-than", "0s", "--dry-run")
	line := regexp.MustCompile(`(?m)^would delete job ` + id + ` \(train done, updated [^)]+\): ([1-9][0-9]*) result objects, ([0-9]+) keys, 0 queued tasks, [0-9]+ bytes$`)
	if !line.MatchString(out) || !strings.Contains(out, "would delete 1 jobs, ") || !strings.Contains(out, "1 unused data") ||
		!strings.Contains(out, "dry run: nothing was deleted") {
		t.Fatalf("gc --dry-run printed:\n%s", out)
	}
	if got := gcJobs(t, c); len(got) != 1 {
		t.Fatalf("gc --dry-run deleted the job: %v", got)
	}
	out = mustRun(t, "cluster", "gc", "--nats", url)
	if !strings.Contains(out, "deleted 0 jobs, 0 objects") {
		t.Fatalf("gc of a new job with the default --older-than printed:\n%s", out)
	}

	m := line.FindStringSubmatch(mustRun(t, "cluster", "gc", "--nats", url, "--older-than", "0s", "--dry-run"))
	out = mustRun(t, "cluster", "gc", "--nats", url, "--older-than", "0s")
	if !strings.Contains(out, "deleted job "+id+" (train done") ||
		!strings.Contains(out, "deleted 1 jobs, ") || !strings.Contains(out, "("+m[1]+" results, 1 unused data), "+m[2]+" keys") {
		t.Fatalf("gc printed:\n%s\n(dry run: %s results, %s keys)", out, m[1], m[2])
	}
	t.Logf("cpm cluster gc --older-than 0s:\n%s", out)
	if got := gcJobs(t, c); len(got) != 0 {
		t.Fatalf("jobs after gc: %v", got)
	}
	if out := mustRun(t, "cluster", "gc", "--nats", url, "--older-than", "0s"); !strings.Contains(out, "deleted 0 jobs, 0 objects") {
		t.Fatalf("a second gc printed:\n%s", out)
	}

	sum := sha256.Sum256([]byte("running"))
	if _, err := c.Submit(context.Background(), cluster.JobSpec{ID: "run1", Kind: "train", Count: 1, Digest: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cpm(t, "cluster", "gc", "--nats", url, "--job", "run1", "--older-than", "0s"); code != 1 || !strings.Contains(stderr, "job is running") {
		t.Fatalf("gc --job of a running job: exit %d, stderr %q; want 1 and a refusal", code, stderr)
	}
	if out := mustRun(t, "cluster", "gc", "--nats", url, "--older-than", "0s"); strings.Contains(out, "run1") {
		t.Fatalf("gc without --force deleted a running job:\n%s", out)
	}
	out = mustRun(t, "cluster", "gc", "--nats", url, "--job", "run1", "--job", "no-such-job", "--force", "--older-than", "0s")
	if !strings.Contains(out, "deleted job run1 (train running") || !strings.Contains(out, "job no-such-job: nothing to delete") {
		t.Fatalf("gc --force --job printed:\n%s", out)
	}
	if got := gcJobs(t, c); len(got) != 0 {
		t.Fatalf("jobs after gc --force: %v", got)
	}
}

func TestClusterGCUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"cluster", "gc"},
		{"cluster", "gc", "--nats", "embedded"},
		{"cluster", "gc", "--nats", "nats://127.0.0.1:1", "--job", "a.b"},
		{"cluster", "gc", "--nats", "nats://127.0.0.1:1", "--older-than", "-1s"},
		{"cluster", "gc", "--nats", "nats://127.0.0.1:1", "--older-than", "week"},
		{"cluster", "gc", "--nats", "nats://127.0.0.1:1", "extra"},
	} {
		if code, _, stderr := cpm(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %q", args, code, stderr)
		}
	}
}
