package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/internal/testfiles"
)

// The liveness tests: every training mode, side and worker count finishes
// under GOMAXPROCS 1 and 2 (TestLivenessMatrix), a cancelled command ends
// with status 130 and leaves no output, no temporary file and no goroutine
// (TestCancelAtRandomMoments), and SIGTERM or SIGINT ends a process that
// is training or waiting on a pipe within seconds with status 130
// (TestSignalEndsProcess, in signal_unix_test.go). Every run has a
// watchdog that fails with a goroutine dump instead of hanging CI.

// synthRows writes n seeded rows of sparse LIBSVM data to path: eight
// nonzeros in 1..100 per row, labelled by the argmax of classes random
// linear scores (classes 2: labels +1 and -1; more: 1..classes).
func synthRows(t testing.TB, path string, n, classes int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 77))
	const dim, nnz = 100, 8
	w := make([][]float64, classes)
	for c := range w {
		w[c] = make([]float64, dim+1)
		for j := range w[c] {
			w[c][j] = rng.NormFloat64()
		}
	}
	var b bytes.Buffer
	idx := make([]int, 0, nnz)
	for range n {
		idx = idx[:0]
		for len(idx) < nnz {
			if j := 1 + rng.IntN(dim); !slices.Contains(idx, j) {
				idx = append(idx, j)
			}
		}
		slices.Sort(idx)
		vals := make([]float64, nnz)
		score := make([]float64, classes)
		for i, j := range idx {
			vals[i] = float64(1+rng.IntN(1000)) / 1000
			for c := range score {
				score[c] += w[c][j] * vals[i]
			}
		}
		best := 0
		for c := range score {
			if score[c] > score[best] {
				best = c
			}
		}
		label := strconv.Itoa(best + 1)
		if classes == 2 {
			label = []string{"+1", "-1"}[best]
		}
		b.WriteString(label)
		for i, j := range idx {
			fmt.Fprintf(&b, " %d:%g", j, vals[i])
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// liveData is the data of the liveness tests: 20,000 rows (five blocks of
// a streamed pass, more than a shared pass's window), binary and 3-class,
// and a shard set of the binary rows.
type liveData struct {
	dir, bin, multi, shards string
}

func newLiveData(t *testing.T) liveData {
	t.Helper()
	dir := t.TempDir()
	d := liveData{
		dir:    dir,
		bin:    synthRows(t, filepath.Join(dir, "bin.libsvm"), 20000, 2, 1),
		multi:  synthRows(t, filepath.Join(dir, "multi.libsvm"), 20000, 3, 2),
		shards: filepath.Join(dir, "shards"),
	}
	if code, _, errs := cpm(t, "shard", "-n", "3", "--shuffle", d.bin, d.shards); code != 0 {
		t.Fatalf("cpm shard: exit %d\n%s", code, errs)
	}
	return d
}

// trainMode is one way of feeding training data.
type trainMode struct {
	name  string
	args  func(d liveData, sides string) []string // training flags, without -o and sides
	sides []string                                // "single", "double", "ovo"
	stdin bool                                    // the data comes on standard input
}

var trainModes = []trainMode{
	{name: "memory", sides: []string{"single", "double", "ovo"}, args: func(d liveData, s string) []string {
		return []string{"-t", dataFor(d, s)}
	}},
	{name: "stream", sides: []string{"single", "double"}, args: func(d liveData, s string) []string {
		return []string{"--stream", "--buffer", "4096", "--cache", "none", "-t", d.bin}
	}},
	{name: "default-cache", sides: []string{"single", "double"}, args: func(d liveData, s string) []string {
		return []string{"--stream", "--buffer", "4096", "-t", d.bin} // bin.libsvm.cpmcache
	}},
	{name: "shards", sides: []string{"single", "double"}, args: func(d liveData, s string) []string {
		return []string{"--stream", "--buffer", "4096", "-t", d.shards}
	}},
	{name: "cache", sides: []string{"single", "double"}, args: func(d liveData, s string) []string {
		return []string{"--stream", "--buffer", "4096", "--cache", filepath.Join(d.dir, "bin.cpmcache"), "-t", d.bin}
	}},
	{name: "stdin", stdin: true, sides: []string{"single", "double", "ovo"}, args: func(d liveData, s string) []string {
		return []string{"-t", "-"}
	}},
}

func dataFor(d liveData, sides string) string {
	if sides == "ovo" {
		return d.multi
	}
	return d.bin
}

func sideFlags(sides string) []string {
	switch sides {
	case "double":
		return []string{"--double-sided"}
	case "ovo":
		return []string{"--ovo"}
	}
	return nil
}

// Every training mode × sides × --workers 1..3 × GOMAXPROCS 1, 2 trains to
// the end (several passes of five blocks when streamed), and the model of
// a mode and sides does not depend on workers or GOMAXPROCS. In-process
// runs set GOMAXPROCS with runtime.GOMAXPROCS; standard input runs are
// subprocesses with GOMAXPROCS in their environment. With -short (the race
// run of CI) --workers 2 is left out.
func TestLivenessMatrix(t *testing.T) {
	d := newLiveData(t)
	out := t.TempDir()
	for _, mode := range trainModes {
		for _, sides := range mode.sides {
			var want [32]byte
			for workers := 1; workers <= 3; workers++ {
				if workers == 2 && testing.Short() {
					continue
				}
				for procs := 1; procs <= 2; procs++ {
					name := fmt.Sprintf("%s/%s/workers=%d/procs=%d", mode.name, sides, workers, procs)
					t.Run(name, func(t *testing.T) {
						m := filepath.Join(out, "m.model")
						os.Remove(m)
						args := append([]string{"train", "-q", "-k", "2", "-i", "50000", "--seed", "3", "--workers", strconv.Itoa(workers), "-o", m}, sideFlags(sides)...)
						args = append(args, mode.args(d, sides)...)
						defer watchdog(t, 60*time.Second)()
						var code int
						var errs string
						if mode.stdin {
							code, errs = execMain(t, args, dataFor(d, sides), procs)
						} else {
							code, errs = runWithProcs(args, procs)
						}
						if code != 0 {
							t.Fatalf("exit %d\n%s", code, errs)
						}
						b, err := os.ReadFile(m)
						if err != nil {
							t.Fatal(err)
						}
						sum := sha256.Sum256(b)
						if workers == 1 && procs == 1 {
							want = sum
						} else if sum != want {
							t.Errorf("model differs from the one of --workers 1, GOMAXPROCS 1")
						}
					})
				}
			}
		}
	}
}

// runWithProcs runs cpm in-process with GOMAXPROCS set to procs.
func runWithProcs(args []string, procs int) (int, string) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, errb.String()
}

// A command cancelled at a seeded random moment either finished first
// (status 0, its outputs complete) or ends with status 130, leaving no
// output and no temporary file; either way no goroutine of the run is left.
// Delay 0 cancels before the command starts.
func TestCancelAtRandomMoments(t *testing.T) {
	d := newLiveData(t)
	model := filepath.Join(d.dir, "ref.model")
	mustRun(t, "train", "-q", "-k", "2", "-i", "20000", "-t", d.multi, "--ovo", "-o", model)
	rng := rand.New(rand.NewPCG(15, 15))
	endless := []string{"-q", "-k", "2", "-i", "1000000000000"}
	type command struct {
		name    string
		args    func(out string) []string
		outputs []string // relative to out
	}
	var cmds []command
	for _, mode := range trainModes {
		if mode.stdin {
			continue // TestSignalEndsProcess covers standard input
		}
		for _, sides := range mode.sides {
			cmds = append(cmds, command{name: "train/" + mode.name + "/" + sides, outputs: []string{"m.model", "m.json"},
				args: func(out string) []string {
					a := append([]string{"train"}, endless...)
					a = append(a, "--workers", strconv.Itoa(1+rng.IntN(3)), "-o", filepath.Join(out, "m.model"), "--json", filepath.Join(out, "m.json"))
					return append(append(a, sideFlags(sides)...), mode.args(d, sides)...)
				}})
		}
	}
	cmds = append(cmds,
		command{name: "convert", outputs: []string{"x.parquet"}, args: func(out string) []string {
			return []string{"convert", d.multi, "-o", filepath.Join(out, "x.parquet")}
		}},
		command{name: "shard", outputs: []string{"set"}, args: func(out string) []string {
			return []string{"shard", "-n", "4", "--shuffle", d.multi, filepath.Join(out, "set")}
		}},
		command{name: "cv", outputs: []string{"cv.json"}, args: func(out string) []string {
			return []string{"cv", "-r", "50", "-f", "5", "--json", filepath.Join(out, "cv.json"), "-k", "2", "-i", "20000", d.bin}
		}},
		command{name: "eval", outputs: []string{"e.json"}, args: func(out string) []string {
			return []string{"eval", "-m", model, "--json", filepath.Join(out, "e.json"), d.multi}
		}},
		command{name: "predict", outputs: []string{"scores"}, args: func(out string) []string {
			return []string{"predict", "-m", model, "-c", d.multi, "-s", filepath.Join(out, "scores")}
		}},
		command{name: "inspect", outputs: []string{"i.json"}, args: func(out string) []string {
			return []string{"inspect", model, "--data", d.multi, "--json", filepath.Join(out, "i.json")}
		}},
	)
	for _, c := range cmds {
		for trial := range 3 {
			delay := time.Duration(0)
			if trial > 0 {
				// Training runs until cancelled; the other commands take
				// some 50 ms on this data.
				window := 300 * time.Millisecond
				if !strings.HasPrefix(c.name, "train/") {
					window = 40 * time.Millisecond
				}
				delay = 1 + time.Duration(rng.Int64N(int64(window)))
			}
			procs := 1 + rng.IntN(2)
			t.Run(fmt.Sprintf("%s/%v/procs=%d", c.name, delay.Round(time.Millisecond), procs), func(t *testing.T) {
				out := t.TempDir()
				args := c.args(out)
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				defer watchdog(t, 30*time.Second)()
				before := runtime.NumGoroutine()
				ctx, cancel := context.WithCancel(context.Background())
				if delay == 0 {
					cancel()
				} else {
					time.AfterFunc(delay, cancel)
				}
				var stdout, stderr bytes.Buffer
				code := run(ctx, args, &stdout, &stderr)
				cancel()
				t.Logf("exit %d", code)
				left := testfiles.ListDir(t, out)
				switch code {
				case exitInterrupted:
					if len(left) > 0 {
						t.Errorf("interrupted run left %v", treeOf(t, out))
					}
				case exitOK:
					if delay == 0 {
						t.Errorf("a run cancelled before it started succeeded")
					}
					for _, o := range c.outputs {
						if !slices.Contains(left, o) {
							t.Errorf("successful run left no %s (left %v)", o, left)
						}
					}
					for _, f := range left {
						if !slices.Contains(c.outputs, f) {
							t.Errorf("successful run left %s", f)
						}
					}
				default:
					t.Errorf("exit %d, want 130 (or 0)\n%s", code, stderr.String())
				}
				if n := settledGoroutines(before); n > before {
					t.Errorf("%d goroutines after the run, %d before", n, before)
				}
			})
		}
	}
	// The caches of the cache modes are built, or not, under their names
	// only.
	for _, name := range testfiles.ListDir(t, d.dir) {
		if !slices.Contains([]string{"bin.libsvm", "multi.libsvm", "shards", "ref.model", "bin.cpmcache", "bin.libsvm.cpmcache"}, name) {
			t.Errorf("left %s in the data directory", name)
		}
	}
}

// treeOf lists the files under dir, relative to it.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if rel, _ := filepath.Rel(dir, path); rel != "." {
			names = append(names, rel)
		}
		return err
	})
	return names
}
