package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const vowel = "../../testdata/uci/vowel.libsvm"

// Every distributed run below uses --nats embedded: a JetStream server and
// a worker in this process, the whole distributed path (task messages,
// the data and result object stores, the job records) on loopback.

// sameFile fails the test unless the two files have the same bytes.
func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Fatalf("%s and %s differ (%d and %d bytes)", a, b, len(x), len(y))
	}
}

// train --nats writes the model a local run writes, byte for byte, for
// every kind of job: one-vs-one double-sided (a task per polytope), a
// double-sided binary CPM (the default in memory), and a learner that
// trains as one task.
func TestTrainNATSMatchesLocal(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"ovo-double", []string{"-t", vowel, "--ovo", "--double-sided", "-k", "3", "-i", "4000", "-C", "1", "--seed", "3"}},
		{"default-double", []string{"-t", heart, "-k", "4", "-i", "20000", "--seed", "2"}},
		{"plume", []string{"-t", heart, "--learner", "plume", "-k", "2", "--seed", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, remote := filepath.Join(dir, tc.name+".local"), filepath.Join(dir, tc.name+".nats")
			mustRun(t, append([]string{"train", "-q", "-o", local}, tc.args...)...)
			mustRun(t, append([]string{"train", "-q", "-o", remote, "--nats", "embedded", "--embedded-workers", "2"}, tc.args...)...)
			sameFile(t, local, remote)
		})
	}
}

// cv --nats gives cpm cv's figures, fold for fold (times aside).
func TestCVNATSMatchesLocal(t *testing.T) {
	dir := t.TempDir()
	lj, nj := filepath.Join(dir, "local.json"), filepath.Join(dir, "nats.json")
	args := []string{"cv", "-q", "-i", "3000", "-k", "3", "--seed", "4", "-r", "2", "-f", "3", heart}
	mustRun(t, append(args, "--json", lj)...)
	mustRun(t, append(args, "--json", nj, "--nats", "embedded")...)
	if l, n := readJSON(t, lj), readJSON(t, nj); !reflect.DeepEqual(l, n) {
		t.Fatalf("cv --nats:\n%v\nlocal:\n%v", n, l)
	}
}

// tune --nats gives the local table and choice, for a grid scored by CV
// and for one scored on a holdout.
func TestTuneNATSMatchesLocal(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"cv", []string{"-r", "1", "-f", "3", "--grid", "C=1,0.01 k=2,3"}},
		{"holdout", []string{"--holdout", "0.3", "--seeds", "2", "--grid", "entropy=0,ln(0.5K)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lj, nj := filepath.Join(dir, tc.name+".local.json"), filepath.Join(dir, tc.name+".nats.json")
			base := append([]string{"tune", "-q", "-i", "2000", "-k", "3", "--seed", "5", heart}, tc.args...)
			lout := mustRun(t, append(base, "--json", lj)...)
			nout := mustRun(t, append(base, "--json", nj, "--nats", "embedded")...)
			if l, n := readJSON(t, lj), readJSON(t, nj); !reflect.DeepEqual(l, n) {
				t.Fatalf("tune --nats:\n%v\nlocal:\n%v", n, l)
			}
			if chosen := func(s string) string {
				for _, line := range strings.Split(s, "\n") {
					if strings.Contains(line, "chosen") {
						return line
					}
				}
				return ""
			}; chosen(lout) != chosen(nout) || chosen(lout) == "" {
				t.Fatalf("chosen: local %q, nats %q", chosen(lout), chosen(nout))
			}
		})
	}
}

// Flags a distributed run does not take are usage errors before any work.
func TestNATSUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"train", "-t", heart, "-o", filepath.Join(dir, "m"), "--nats", "embedded", "--stream"},
		{"train", "-t", heart, "-o", filepath.Join(dir, "m"), "--nats", "embedded", "--holdout", "0.2"},
		{"train", "-t", heart, "-o", filepath.Join(dir, "m"), "--job", "abc"},
		{"train", "-t", heart, "-o", filepath.Join(dir, "m"), "--nats", "embedded", "--job", "a/b"},
		{"cv", "--nats", "embedded", "--nats-replicas", "7", heart},
		{"worker"},
		{"worker", "--nats", "embedded"},
	} {
		if code, _, stderr := cpm(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %q", args, code, stderr)
		}
	}
}
