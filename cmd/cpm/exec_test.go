package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// execMainEnv makes the test binary run cpm's main instead of the tests,
// so that tests can run cpm as a process of its own (standard input,
// GOMAXPROCS from the environment, signals) without building it.
const execMainEnv = "CPM_TEST_EXEC_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(execMainEnv) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}

// cpmCommand returns the command running cpm with args in a process of
// its own, with GOMAXPROCS=procs (0: unset).
func cpmCommand(args []string, procs int) *exec.Cmd {
	c := exec.Command(os.Args[0], args...)
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
	c := cpmCommand(args, procs)
	f, err := os.Open(stdin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var errb bytes.Buffer
	c.Stdin, c.Stderr = f, &errb
	return exitCode(t, c.Run()), errb.String()
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
