//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
)

// checkpointEnv makes the test binary run cpm, with main's signal
// handling, on the arguments after "--" (see TestCheckpointHelper).
const checkpointEnv = "CPM_CHECKPOINT_HELPER"

// TestCheckpointHelper is not a test: in a child process started by
// startCPM it runs cpm as main does (SIGINT and SIGTERM cancel the
// context) and exits with its status.
func TestCheckpointHelper(t *testing.T) {
	if os.Getenv(checkpointEnv) != "1" {
		return
	}
	args := os.Args
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[i+1:]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, args, os.Stdout, os.Stderr))
}

// syncBuffer is a bytes.Buffer safe for a child process's output goroutine
// and the test; seen is closed when a line containing mark is written.
type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	mark string
	seen chan struct{}
}

func newSyncBuffer(mark string) *syncBuffer {
	return &syncBuffer{mark: mark, seen: make(chan struct{})}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	had := strings.Contains(s.b.String(), s.mark)
	n, err := s.b.Write(p)
	if !had && s.mark != "" && strings.Contains(s.b.String(), s.mark) {
		close(s.seen)
	}
	return n, err
}

// marked reports whether the mark has been written.
func (s *syncBuffer) marked() bool {
	select {
	case <-s.seen:
		return true
	default:
		return false
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startCPM starts cpm with args in a child process; its stderr goes to
// errb.
func startCPM(t *testing.T, errb *syncBuffer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestCheckpointHelper$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), checkpointEnv+"=1")
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// waitFor waits until ready returns true or cmd exits, and fails in the
// second case. It returns a channel that receives cmd's exit.
func waitFor(t *testing.T, cmd *exec.Cmd, what string, ready func() bool, errb *syncBuffer) chan error {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for !ready() {
		select {
		case err := <-exited:
			t.Fatalf("cpm exited (%v) before %s; stderr:\n%s", err, what, errb)
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("no %s after 60s", what)
		case <-time.After(2 * time.Millisecond):
		}
	}
	return exited
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeSynth writes rows of random sparse LIBSVM data with labels
// 1..classes (binary: ±1) and returns its path.
func writeSynth(t *testing.T, dir string, rows, dim, nnz, classes int, seed uint64) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("synth%d.libsvm", classes))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(seed, 1))
	for range rows {
		y := 1 + rng.IntN(classes)
		if classes == 2 {
			y = 2*y - 3
		}
		fmt.Fprint(w, y)
		for j := 1 + rng.IntN(dim/nnz); j <= dim; j += 1 + rng.IntN(2*dim/nnz) {
			// The label shifts the values, so there is something to learn.
			fmt.Fprintf(w, " %d:%.3g", j, rng.NormFloat64()+0.3*float64(y*(j%3-1)))
		}
		fmt.Fprintln(w)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkpointCases are the runs of the process-level tests: each trains
// for about half a second on two cores.
func checkpointCases(t *testing.T, dir string) []struct {
	name string
	args []string
} {
	bin := writeSynth(t, dir, 2000, 400, 40, 2, 1)
	multi := writeSynth(t, dir, 2000, 400, 40, 3, 2)
	return []struct {
		name string
		args []string
	}{
		{"single", []string{"-t", bin, "-k", "4", "-i", "1500000", "--entropy", "0.5", "--reshuffle"}},
		{"double", []string{"-t", bin, "-k", "3", "-i", "800000", "--double-sided", "--cost_ratio", "0.8", "--lambda", "1e-5"}},
		{"ovo", []string{"-t", multi, "-k", "2", "-i", "300000", "--ovo", "--double-sided", "--reshuffle", "--entropy", "0.3"}},
	}
}

// The acceptance test of checkpoints: a cpm training process killed with
// SIGKILL after its first checkpoint and resumed with --resume writes a
// model byte-identical to an uninterrupted run, for single-sided,
// double-sided and one-vs-one CPM.
func TestCheckpointKillResume(t *testing.T) {
	dir := t.TempDir()
	for _, c := range checkpointCases(t, dir) {
		t.Run(c.name, func(t *testing.T) {
			base := append([]string{"train", "-q", "--seed", "7"}, c.args...)
			want := filepath.Join(dir, c.name+".want.model")
			mustRun(t, append(base, "-o", want)...)

			ck := filepath.Join(dir, c.name+".ck")
			out := filepath.Join(dir, c.name+".resumed.model")
			args := append(base, "-o", out, "--checkpoint", ck, "--checkpoint-every", "20000")
			errb := newSyncBuffer("")
			cmd := startCPM(t, errb, args...)
			exited := waitFor(t, cmd, "the first checkpoint", func() bool { return exists(ck) }, errb)
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-exited
			if exists(out) {
				t.Fatal("the killed run wrote its model: the test interrupted nothing")
			}
			saved, err := sgd.LoadCheckpoint(ck)
			if err != nil {
				t.Fatal(err)
			}
			done, total := saved.Progress()
			t.Logf("killed with %d of %d steps checkpointed", done, total)
			if done >= total {
				t.Fatal("every polytope had finished: the test interrupted nothing")
			}

			mustRun(t, append(args, "--resume", ck)...)
			if !bytes.Equal(readFile(t, out), readFile(t, want)) {
				t.Fatal("resumed model differs from the uninterrupted run's")
			}
		})
	}
}

// SIGINT (and SIGTERM) write a final checkpoint, exit with status 130 and
// say on stderr how to resume; the command printed resumes to the same
// model as an uninterrupted run. Snapshots are an hour apart, so the
// checkpoint is the one written on the signal.
func TestCheckpointSignalResume(t *testing.T) {
	dir := t.TempDir()
	cases := checkpointCases(t, dir)
	for i, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		c := cases[1+i]
		t.Run(sig.String(), func(t *testing.T) {
			base := append([]string{"train", "--seed", "3", "--progress-every", "20000"}, c.args...)
			want := filepath.Join(dir, c.name+".want.model")
			mustRun(t, append(base, "-q", "-o", want)...)

			ck := filepath.Join(dir, c.name+".ck")
			out := filepath.Join(dir, c.name+".resumed.model")
			args := append(base, "-o", out, "--checkpoint", ck, "--checkpoint-every", "1h")
			errb := newSyncBuffer(" step ") // a progress line: training has started
			cmd := startCPM(t, errb, args...)
			exited := waitFor(t, cmd, "a progress line", errb.marked, errb)
			if exists(ck) {
				t.Fatal("a checkpoint was written before the signal")
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-exited
			msg := errb.String()
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Fatalf("exit status %d after %v, want 130; stderr:\n%s", code, sig, msg)
			}
			i := strings.Index(msg, "\n  cpm train ")
			if i < 0 || !strings.Contains(msg, "--resume "+ck) {
				t.Fatalf("stderr does not say how to resume:\n%s", msg)
			}
			line, _, _ := strings.Cut(msg[i+3:], "\n")
			t.Logf("stderr ends: %s", msg[strings.LastIndex(msg[:i], "cpm train: interrupted"):])
			if exists(out) {
				t.Fatal("the interrupted run wrote its model")
			}
			saved, err := sgd.LoadCheckpoint(ck)
			if err != nil {
				t.Fatal(err)
			}
			if done, total := saved.Progress(); done == 0 || done >= total {
				t.Fatalf("checkpoint written on %v holds %d of %d steps", sig, done, total)
			}
			resume := strings.Fields(line)[1:] // drop "cpm"; the test's paths need no quoting
			mustRun(t, resume...)
			if !bytes.Equal(readFile(t, out), readFile(t, want)) {
				t.Fatal("resumed model differs from the uninterrupted run's")
			}
		})
	}
}

// --init continues training a model: the step counts add up in the model
// file, and shape mismatches and other learners are clear errors.
func TestTrainInit(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first.model")
	second := filepath.Join(dir, "second.model")
	mustRun(t, "train", "-q", "-t", heart, "-k", "3", "-i", "20000", "--double-sided", "--lambda", "1e-3", "-o", first)
	_, _, errs := cpm(t, "train", "-q", "-t", heart, "-k", "3", "-i", "10000", "--double-sided", "-C", "1", "--init", first, "-o", second)
	if !strings.Contains(errs, "lambda = 1/(C*T) = 0.0001, the initial model was trained with 0.001; add --lambda 0.001") {
		t.Errorf("--init without --lambda: no note about lambda:\n%s", errs)
	}
	mustRun(t, "train", "-q", "-t", heart, "-k", "3", "-i", "10000", "--double-sided", "--lambda", "1e-3", "--init", first, "-o", second)
	m, err := model.Load(second)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Steps, []int64{30000, 30000}) || m.Iterations != 10000 {
		t.Fatalf("steps %v, iterations %d; want [30000 30000], 10000", m.Steps, m.Iterations)
	}
	out := mustRun(t, "export", "-m", second)
	if !strings.Contains(out, "\nsteps: 30000 30000\n") {
		t.Errorf("export does not show the steps")
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-k", "4", "--double-sided", "--init", first}, exitUsage, "K: initial model 3, this run 4"},
		{[]string{"-k", "3", "--single-sided", "--init", first}, exitUsage, "initial model is double-sided, this run single-sided"},
		{[]string{"-k", "3", "--double-sided", "--outer_label", "-1", "--init", first}, exitUsage, "label map [outer inner]: initial model [1 -1], this run [-1 1]"},
		{[]string{"--learner", "perceptron", "--init", first}, 2, "--init: supported for --learner cpm only"},
		{[]string{"-k", "3", "--double-sided", "--init", filepath.Join(dir, "missing")}, exitIO, "--init"},
		{[]string{"-k", "2,3", "--init", first}, 2, "give one K"},
		{[]string{"--stream", "--checkpoint", filepath.Join(dir, "ck")}, 2, "--checkpoint and --resume need the data in memory"},
		{[]string{"--learner", "perceptron", "--checkpoint", filepath.Join(dir, "ck")}, 2, "--checkpoint: supported for --learner cpm only"},
		{[]string{"--checkpoint", filepath.Join(dir, "ck"), "--checkpoint-every", "0"}, 2, "want >= 1"},
		{[]string{"--checkpoint", filepath.Join(dir, "ck"), "--checkpoint-every", "soon"}, 2, "neither a number of steps nor a positive duration"},
		{[]string{"--resume", first}, exitBadInput, "not a cpm checkpoint file"},
	} {
		args := append([]string{"train", "-q", "-t", heart, "-i", "1000", "-o", filepath.Join(dir, "x.model")}, tt.args...)
		code, _, errs := cpm(t, args...)
		if code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("cpm %s: exit %d, want %d with %q; stderr:\n%s", strings.Join(args, " "), code, tt.code, tt.want, errs)
		}
	}
}

// Resuming with flags or data other than the checkpoint's is an error that
// names what differs.
func TestTrainResumeMismatch(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	base := []string{"train", "-q", "-t", heart, "-k", "3", "-i", "5000", "-o", filepath.Join(dir, "m"), "--checkpoint", ck, "--checkpoint-every", "1000"}
	mustRun(t, base...)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-k", "4"}, "K (faces per polytope): checkpoint 3, this run 4"},
		{[]string{"--seed", "2"}, "seed: checkpoint 1, this run 2"},
		{[]string{"-i", "6000"}, "iterations T: checkpoint 5000, this run 6000"},
		{[]string{"-t", iris, "--ovo"}, "training data"},
	} {
		args := append(slices.Clone(base), append(tt.args, "--resume", ck)...)
		code, _, errs := cpm(t, args...)
		if code != exitUsage || !strings.Contains(errs, tt.want) || !strings.Contains(errs, "does not match this run") {
			t.Errorf("cpm %s: exit %d, want %d with %q; stderr:\n%s", strings.Join(args, " "), code, exitUsage, tt.want, errs)
		}
	}
}

func TestResumeCommand(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-t", "a b", "--checkpoint", "ck"}, "cpm train -t 'a b' --checkpoint ck --resume ck"},
		{[]string{"--resume", "old", "-k", "3", "-resume=x", "--checkpoint", "ck"}, "cpm train -k 3 --checkpoint ck --resume ck"},
		{[]string{"-t", "it's"}, `cpm train -t 'it'\''s' --resume ck`},
	} {
		if got := resumeCommand(tt.args, "ck"); got != tt.want {
			t.Errorf("resumeCommand(%q) = %s, want %s", tt.args, got, tt.want)
		}
	}
}

// nanWeightCheckpoint trains heart_scale briefly with a checkpoint in dir,
// then sets the checkpoint's first weight to NaN and recomputes its
// checksum. It returns the train arguments (without --resume) and the
// checkpoint's path.
func nanWeightCheckpoint(t *testing.T, dir string) ([]string, string) {
	t.Helper()
	ck, out := filepath.Join(dir, "nan.ck"), filepath.Join(dir, "nan.model")
	args := []string{"train", "-q", "-k", "2", "-i", "3000", "-t", heart, "-o", out, "--checkpoint", ck}
	mustRun(t, args...)
	b := readFile(t, ck)
	// The first weight of a single-sided, two-label run without early
	// stopping (see go doc ./sgd Checkpointing): magic and version (12),
	// the fingerprint up to the labels (4+3+4+4+8+32+48 = 103), the two
	// labels (4+8), the task count (4), the task's state byte and length
	// (9), done, t, s and D (32), K (4).
	const off = 12 + 103 + 12 + 4 + 9 + 32 + 4
	if got := binary.LittleEndian.Uint32(b[off-4:]); got != 2 {
		t.Fatalf("K at byte %d is %d, want 2: the layout changed", off-4, got)
	}
	binary.LittleEndian.PutUint32(b[off:], math.Float32bits(float32(math.NaN())))
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(ck, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	return args, ck
}

// A checkpoint with a valid checksum but a NaN weight is bad input (status
// 3) at --resume, before any training, naming the weight.
func TestResumeRefusesNaNWeight(t *testing.T) {
	args, ck := nanWeightCheckpoint(t, t.TempDir())
	code, _, errs := cpm(t, append(args, "--resume", ck)...)
	if code != exitBadInput || !strings.Contains(errs, "weight of feature 0, face 0 is NaN") || !strings.Contains(errs, ck) {
		t.Errorf("resume from a NaN weight: exit %d, stderr %q; want %d naming the weight and the file", code, errs, exitBadInput)
	}
}
