//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/polyhedral/cpm/internal/atomicfile"
)

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if syscall.Kill(pid, 0) != syscall.ESRCH {
		t.Skipf("pid %d already reused", pid)
	}
	return strconv.Itoa(pid)
}

// TestStaleTemporaryRemoved checks that a run removes the temporary file a
// killed run (a dead process) left for the same output.
func TestStaleTemporaryRemoved(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.model")
	stale := filepath.Join(dir, ".m.model.tmp-"+deadPID(t)+"-x1")
	if err := os.WriteFile(stale, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := atomicfile.TempOwner(filepath.Base(stale)); !ok {
		t.Fatalf("%s is not a temporary name", stale)
	}
	mustRun(t, "train", "-q", "-k", "2", "-i", "2000", "-t", heart, "-o", model)
	dirHolds(t, dir, "m.model")
}

// TestTrainOutputFIFO checks that -o naming a FIFO streams the model to its
// reader (the same bytes as a file) and leaves the FIFO in place.
func TestTrainOutputFIFO(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.model")
	args := []string{"train", "-q", "-k", "2", "-i", "2000", "-t", heart}
	mustRun(t, append(args, "-o", plain)...)
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	mustRun(t, append(args, "-o", fifo)...)
	select {
	case b := <-got:
		if !bytes.Equal(b, mustRead(t, plain)) {
			t.Errorf("the FIFO's reader got %d bytes, want the %d of the model", len(b), len(mustRead(t, plain)))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the FIFO's reader saw no end of file")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO (%v)", fifo, err)
	}
	dirHolds(t, dir, "pipe", "plain.model")
}

// fsizeEnv names the environment variable that makes TestOutputsHelper
// run cpm under a file size limit.
const fsizeEnv = "CPM_OUTPUTS_FSIZE"

// TestOutputsHelper is not a test: run by cpmLimited in a child process,
// it sets RLIMIT_FSIZE to $CPM_OUTPUTS_FSIZE bytes, so that any write
// extending a file past it fails with EFBIG (Go ignores SIGXFSZ), and runs
// cpm with the arguments after "--".
func TestOutputsHelper(t *testing.T) {
	limit, err := strconv.ParseUint(os.Getenv(fsizeEnv), 10, 64)
	if err != nil {
		t.Skip("helper process only")
	}
	lim := syscall.Rlimit{Cur: limit, Max: limit}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(99)
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(context.Background(), args, os.Stdout, os.Stderr))
}

// cpmLimited runs cpm with args in a child process whose files may not
// grow past limit bytes (standing for a full disk; ^uint64(0) for no
// limit), and returns its exit status, standard output and standard error.
func cpmLimited(t *testing.T, limit uint64, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestOutputsHelper$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), fsizeEnv+"="+strconv.FormatUint(limit, 10))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && !errors.As(err, new(*exec.ExitError)) {
		t.Fatal(err)
	}
	if cmd.ProcessState.ExitCode() == 99 {
		t.Skip(errb.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestTrainOutputDevStdout checks that -o /dev/stdout writes the model to
// standard output (through the descriptor, here a pipe) instead of
// replacing the link.
func TestTrainOutputDevStdout(t *testing.T) {
	if _, err := os.Stat("/dev/stdout"); err != nil {
		t.Skip("no /dev/stdout")
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.model")
	args := []string{"train", "-q", "-k", "2", "-i", "2000", "-t", heart}
	mustRun(t, append(args, "-o", plain)...)
	code, stdout, stderr := cpmLimited(t, ^uint64(0), append(args, "-o", "/dev/stdout")...)
	if code != 0 || stdout != string(mustRead(t, plain)) {
		t.Errorf("exit %d, %d bytes on stdout, want 0 and the %d bytes of the model; stderr %q", code, len(stdout), len(mustRead(t, plain)), stderr)
	}
	if fi, err := os.Lstat("/dev/stdout"); err != nil || fi.Mode()&os.ModeSymlink == 0 && fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("/dev/stdout is now %v (%v)", fi.Mode(), err)
	}
}

// TestOutputWriteFailure checks that outputs whose writing fails (a file
// size limit standing for a full disk) leave the old file, or none, and no
// temporary: --json, -o, export -o and convert -o, each with status 4.
func TestOutputWriteFailure(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.model")
	mustRun(t, "train", "-q", "-k", "2", "-i", "2000", "-t", heart, "-o", model)
	modelBytes := mustRead(t, model)
	text := filepath.Join(dir, "m.txt")
	if err := os.WriteFile(text, []byte("old text"), 0o644); err != nil {
		t.Fatal(err)
	}
	conv := filepath.Join(dir, "c.libsvm")
	if err := os.WriteFile(conv, []byte("1 1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	metrics := filepath.Join(dir, "metrics.json")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"--json", []string{"train", "-q", "-k", "2", "-i", "2000", "-t", heart, "-c", heart, "--json", metrics}},
		{"-o", []string{"train", "-q", "-k", "2", "-i", "2000", "-t", heart, "-o", model}},
		{"export -o", []string{"export", "-m", model, "-o", text}},
		{"convert -o", []string{"convert", heart, "-o", conv}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cpmLimited(t, 100, tc.args...)
			if code != exitIO {
				t.Errorf("exit %d, want %d (I/O error); stderr %q", code, exitIO, stderr)
			}
		})
	}
	if !bytes.Equal(mustRead(t, model), modelBytes) {
		t.Error("the model changed")
	}
	if string(mustRead(t, text)) != "old text" || string(mustRead(t, conv)) != "1 1:1\n" {
		t.Error("export or convert output changed")
	}
	dirHolds(t, dir, "c.libsvm", "m.model", "m.txt")
}
