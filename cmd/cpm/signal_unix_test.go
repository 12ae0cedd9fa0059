//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SIGTERM (or SIGINT) ends a cpm process within 5 s with status 130 and no
// output or temporary file, in every training mode (double-sided, one
// worker slot, GOMAXPROCS=1: the combination that once hung) and in
// convert reading a pipe that never ends; this is what
// `timeout --preserve-status -s TERM 3 cpm ...` does. The signal comes
// after 1 s: training has started, or is still loading, or the command is
// waiting for standard input.
func TestSignalEndsProcess(t *testing.T) {
	d := newLiveData(t)
	endless := []string{"train", "-q", "-k", "2", "-i", "1000000000000", "--double-sided", "--workers", "1"}
	cases := []struct {
		name  string
		args  []string // "OUT" is replaced by the output path
		stdin string   // data written to a pipe on standard input that stays open
		sig   syscall.Signal
	}{
		{"train/memory", append(endless, "-t", d.bin, "-o", "OUT"), "", syscall.SIGTERM},
		{"train/memory/sigint", append(endless, "-t", d.bin, "-o", "OUT"), "", syscall.SIGINT},
		{"train/stream", append(endless, "--stream", "-t", d.bin, "-o", "OUT"), "", syscall.SIGTERM},
		{"train/shards", append(endless, "--stream", "-t", d.shards, "-o", "OUT"), "", syscall.SIGTERM},
		{"train/cache", append(endless, "--stream", "--cache", filepath.Join(t.TempDir(), "c.cpmcache"), "-t", d.bin, "-o", "OUT"), "", syscall.SIGTERM},
		{"train/stdin", append(endless, "-t", "-", "-o", "OUT"), d.bin, syscall.SIGTERM},
		{"train/stdin-stream", append(endless, "--stream", "-t", "-", "-o", "OUT"), d.bin, syscall.SIGTERM},
		{"convert/stdin", []string{"convert", "-", "-o", "OUT"}, d.bin, syscall.SIGTERM},
		{"convert/stdin/sigint", []string{"convert", "-", "-o", "OUT"}, d.bin, syscall.SIGINT},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			defer watchdog(t, 60*time.Second)()
			out := t.TempDir()
			args := append([]string(nil), c.args...)
			for i, a := range args {
				if a == "OUT" {
					args[i] = filepath.Join(out, "out.model")
					if args[0] == "convert" {
						args[i] = filepath.Join(out, "out.parquet")
					}
				}
			}
			cmd := cpmCommand(args, 1)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if c.stdin != "" {
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer pw.Close() // only after the process ended: no EOF before
				data, err := os.ReadFile(c.stdin)
				if err != nil {
					t.Fatal(err)
				}
				go pw.Write(data) // the rest of the pipe's life it is silent
				cmd.Stdin = pr
				defer pr.Close()
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				t.Fatalf("ended before the signal: %v\n%s", err, stderr.String())
			case <-time.After(time.Second):
			}
			sent := time.Now()
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				took := time.Since(sent)
				if code := exitCode(t, err); code != exitInterrupted {
					t.Errorf("exit %d after %v, want %d\n%s", code, c.sig, exitInterrupted, stderr.String())
				}
				t.Logf("exit 130 %v after %v", took.Round(time.Millisecond), c.sig)
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running 5 s after %v\n%s", c.sig, stderr.String())
			}
			if left := treeOf(t, out); len(left) > 0 {
				t.Errorf("left %v", left)
			}
		})
	}
}

// A command blocked where its context does not reach, here opening a FIFO
// output that no process reads, ignores the first SIGTERM; a second one
// ends it with status 130 and leaves the FIFO a FIFO.
func TestSecondSignalExits(t *testing.T) {
	d := newLiveData(t)
	defer watchdog(t, 60*time.Second)()
	fifo := filepath.Join(t.TempDir(), "model.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	cmd := cpmCommand([]string{"train", "-q", "-k", "2", "-i", "1000", "-t", d.bin, "-o", fifo}, 0)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitFIFOOpen(cmd.Process.Pid, 30*time.Second)
	for i := range 2 {
		select {
		case err := <-done:
			t.Fatalf("ended before signal %d: %v\n%s", i+1, err, stderr.String())
		case <-time.After(time.Second):
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-done:
		if code := exitCode(t, err); code != exitInterrupted {
			t.Errorf("exit %d after two SIGTERMs, want %d\n%s", code, exitInterrupted, stderr.String())
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running 5 s after the second SIGTERM\n%s", stderr.String())
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is not a FIFO any more (%v)", fifo, err)
	}
}

// waitFIFOOpen waits until a thread of process pid sleeps in the kernel
// opening a FIFO that has no reader (wchan wait_for_partner), or until
// limit passes, or at once where /proc does not say: on a loaded machine
// loading and training can take longer than any fixed pause.
func waitFIFOOpen(pid int, limit time.Duration) {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		if err != nil || len(tasks) == 0 {
			return
		}
		for _, f := range tasks {
			if b, err := os.ReadFile(f); err == nil && string(b) == "wait_for_partner" {
				return
			}
		}
	}
}
