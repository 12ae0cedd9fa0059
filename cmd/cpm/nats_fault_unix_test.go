//go:build unix

package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyhedral/cpm/cluster/natsd"
)

// Faults of a distributed run against a real JetStream server (in the
// test process, on 127.0.0.1) and cpm workers and submitters in processes
// of their own, killed with SIGKILL.

// natsServer starts a JetStream server for the test.
func natsServer(t *testing.T) string {
	t.Helper()
	srv, err := natsd.StartEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL()
}

// startWorker starts cpm worker in a process of its own; its stderr goes
// to a syncBuffer that marks the first started task. The worker is
// stopped with SIGTERM at the end of the test, and must then exit 0.
func startWorker(t *testing.T, url, name string, conc int) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	errb := newSyncBuffer("started ")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	c := cpmCommandContext(ctx, []string{"worker", "--nats", url, "--name", name, "--concurrency", fmt.Sprint(conc), "--ack-wait", "2s"}, 0)
	c.Stderr = errb
	if err := c.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer cancel()
		if c.ProcessState != nil {
			return // killed by the test
		}
		c.Process.Signal(syscall.SIGTERM)
		if err := c.Wait(); err != nil {
			t.Errorf("worker %s after SIGTERM: %v\n%s", name, err, errb.String())
		}
	})
	return c, errb
}

// waitUntil waits up to d for cond, polling.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
	}
}

// submit runs cpm in this process in the background; wait returns its
// exit status and stderr, failing the test after 90 s.
func submit(t *testing.T, args ...string) (wait func() (int, string)) {
	type res struct {
		code   int
		stderr string
	}
	ch := make(chan res, 1)
	go func() {
		code, _, stderr := cpm(t, args...)
		ch <- res{code, stderr}
	}()
	return func() (int, string) {
		select {
		case r := <-ch:
			return r.code, r.stderr
		case <-time.After(90 * time.Second):
			t.Fatalf("cpm %v still running after 90 s", args)
			return 0, ""
		}
	}
}

// A worker killed with SIGKILL in the middle of a task: the task is
// delivered again after its ack deadline, to the worker left, and the
// model is the local one, byte for byte.
func TestNATSWorkerKilledMidTask(t *testing.T) {
	url := natsServer(t)
	dir := t.TempDir()
	args := []string{"train", "-q", "-t", heart, "--double-sided", "-k", "5", "-i", "3000000", "-C", "1", "--seed", "7"}
	local, remote := filepath.Join(dir, "local"), filepath.Join(dir, "remote")
	mustRun(t, append(args, "-o", local)...)

	a, alog := startWorker(t, url, "A", 1)
	wait := submit(t, append(args, "-o", remote, "--nats", url)...)
	select {
	case <-alog.seen:
	case <-time.After(30 * time.Second):
		t.Fatalf("worker A started no task:\n%s", alog.String())
	}
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	a.Wait()
	if strings.Contains(alog.String(), "finished ") {
		t.Fatalf("worker A finished a task before it was killed; the test kills nothing mid-task:\n%s", alog.String())
	}
	_, blog := startWorker(t, url, "B", 2)
	if code, stderr := wait(); code != 0 {
		t.Fatalf("submit: exit %d\n%s\nworker B:\n%s", code, stderr, blog.String())
	}
	sameFile(t, local, remote)
	if !strings.Contains(blog.String(), "(delivery 2)") {
		t.Errorf("worker B got no redelivered task:\n%s", blog.String())
	}
}

// The submitter killed with SIGKILL and started again with --job: every
// task finished before (or after, while no submitter waited) is reused,
// none is computed twice, and the model is the local one.
func TestNATSSubmitterRestart(t *testing.T) {
	url := natsServer(t)
	dir := t.TempDir()
	args := []string{"train", "-t", vowel, "--ovo", "--double-sided", "-k", "3", "-i", "400000", "-C", "1", "--seed", "2"}
	local, remote := filepath.Join(dir, "local"), filepath.Join(dir, "remote")
	mustRun(t, append(args, "-q", "-o", local)...)

	_, wlog := startWorker(t, url, "W", 1)
	slog := newSyncBuffer("reattach with --job ")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := cpmCommandContext(ctx, append(args, "-o", remote, "--nats", url), 0)
	s.Stderr = slog
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	finished := regexp.MustCompile(`finished (\S+)/(\d+) `)
	waitUntil(t, 30*time.Second, "5 finished tasks", func() bool { return len(finished.FindAllString(wlog.String(), -1)) >= 5 })
	s.Process.Kill()
	s.Wait()
	m := regexp.MustCompile(`reattach with --job (\S+)`).FindStringSubmatch(slog.String())
	if m == nil {
		t.Fatalf("the submitter printed no job id:\n%s", slog.String())
	}
	before := len(finished.FindAllString(wlog.String(), -1))
	code, _, stderr := cpm(t, append(args, "-q", "-o", remote, "--nats", url, "--job", m[1])...)
	if code != 0 {
		t.Fatalf("reattach: exit %d\n%s", code, stderr)
	}
	sameFile(t, local, remote)
	seen := map[string]int{}
	for _, f := range finished.FindAllStringSubmatch(wlog.String(), -1) {
		if f[1] != m[1] {
			t.Fatalf("a task of another job: %q", f[0])
		}
		seen[f[2]]++
	}
	for i, n := range seen {
		if n != 1 {
			t.Errorf("task %s computed %d times", i, n)
		}
	}
	if len(seen) != 110 {
		t.Errorf("%d distinct tasks finished, the job has 110", len(seen))
	}
	t.Logf("%d of 110 tasks were done when the submitter was killed", before)

	// Reattaching with another job's definition is refused.
	code, _, stderr = cpm(t, append(args, "-q", "-o", remote, "--nats", url, "--job", m[1], "--seed", "3")...)
	if code == 0 || !strings.Contains(stderr, m[1]) {
		t.Errorf("reattach with another seed: exit %d, %q", code, stderr)
	}
}
