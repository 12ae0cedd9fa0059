package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// execMainEnv makes the test binary run cpm's main instead of the tests,
// so that tests can run cpm as a process of its own (standard input,
// GOMAXPROCS from the environment, signals) without building it.
const execMainEnv = "CPM_TEST_EXEC_MAIN"

// testTmpEnv names the temporary directory of a test binary's run, which
// the processes it starts inherit as TMPDIR.
const testTmpEnv = "CPM_TEST_TMPDIR"

func TestMain(m *testing.M) {
	if os.Getenv(execMainEnv) == "1" {
		main() // exits
	}
	// The tests and the cpm processes they start keep their temporary
	// files (spilled caches, embedded NATS stores) in one directory,
	// removed at the end: a process a test kills with SIGKILL cannot
	// remove its own.
	tmp := ""
	if os.Getenv(testTmpEnv) == "" {
		var err error
		if tmp, err = os.MkdirTemp("", "cpm-test-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Setenv("TMPDIR", tmp)
		os.Setenv(testTmpEnv, tmp)
	}
	before := testdataCaches()
	code := m.Run()
	for _, p := range testdataCaches() {
		if !slices.Contains(before, p) {
			fmt.Fprintf(os.Stderr, "a test left row cache %s in testdata: a --stream test needs --cache none, or a copy of the data\n", p)
			code = 1
		}
	}
	if tmp != "" {
		os.RemoveAll(tmp)
	}
	os.Exit(code)
}

// testdataCaches lists the row caches under the repository's testdata,
// which the default cache of --stream writes beside a file it trains on.
func testdataCaches() []string {
	var found []string
	filepath.WalkDir("../../testdata", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".cpmcache") {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// cpmCommand returns the command running cpm with args in a process of
// its own, with GOMAXPROCS=procs (0: unset).
func cpmCommand(args []string, procs int) *exec.Cmd {
	return cpmCommandContext(context.Background(), args, procs)
}

// cpmCommandContext is cpmCommand whose process gets SIGQUIT when ctx is
// done, so that a hung cpm prints every goroutine's stack to its standard
// error before it exits (and is killed 5 s later if it does not).
func cpmCommandContext(ctx context.Context, args []string, procs int) *exec.Cmd {
	c := exec.CommandContext(ctx, os.Args[0], args...)
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGQUIT) }
	c.WaitDelay = 5 * time.Second
	c.Env = append(os.Environ(), execMainEnv+"=1")
	if procs > 0 {
		c.Env = append(c.Env, "GOMAXPROCS="+strconv.Itoa(procs))
	}
	return c
}

// execMain runs cpm with args as a process, standard input read from the
// file stdin, and returns its exit status and standard error.
func execMain(t *testing.T, args []string, stdin string, procs int) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	c := cpmCommandContext(ctx, args, procs)
	f, err := os.Open(stdin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var errb bytes.Buffer
	c.Stdin, c.Stderr = f, &errb
	err = c.Run()
	if ctx.Err() != nil {
		t.Fatalf("cpm %v still running after 45 s; its goroutines:\n%s", args, errb.String())
	}
	return exitCode(t, err), errb.String()
}

// exitCode is the exit status of a finished command.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}
