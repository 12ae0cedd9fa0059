package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/shard"
	"github.com/polyhedral/cpm/synth"
)

// Every exit status of the table in cpm help and the README, through run.
func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unsorted := write("unsorted.libsvm", []byte("1 1:0.5 2:1\n-1 3:1 2:4\n"))
	badZstd := write("bad.libsvm.zst", append([]byte{0x28, 0xb5, 0x2f, 0xfd}, bytes.Repeat([]byte{0xff}, 64)...))
	notModel := write("not.model", []byte("hello, this is not a model file at all"))
	good := filepath.Join(dir, "good.model")
	mustRun(t, "train", "-q", "-k", "2", "-i", "2000", "-t", heart, "-o", good)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := write("truncated.model", b[:len(b)/2])
	badLog := write("bad.jsonl", []byte("{\"task\":\"outer\",\"step\":1}\nnot json\n"))
	missing := filepath.Join(dir, "missing.libsvm")
	empty := write("empty.libsvm", nil)
	glued := write("glued.libsvm", []byte("1 1:2#c\n-1 1:-1 #c\n1#c\n-1 2:1#x:y\n"))
	noValue := write("novalue.libsvm", []byte("1 1:2\n1 1:#\n"))
	brokenSet := t.TempDir()
	if err := os.WriteFile(filepath.Join(brokenSet, "SHARDS"), []byte("not a manifest\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nanArgs, nanCk := nanWeightCheckpoint(t, dir)
	set, editedShard := editedShardSet(t, dir)

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"help", []string{"help"}, exitOK, ""},
		{"flag help", []string{"train", "-h"}, exitOK, "usage"},
		{"no command", nil, exitUsage, "usage"},
		{"unknown command", []string{"frobnicate"}, exitUsage, "unknown command"},
		{"bad flag value", []string{"train", "-k", "x"}, exitUsage, "-k"},
		{"missing -t", []string{"train", "-o", "x"}, exitUsage, "no training data"},
		{"unsorted indices", []string{"train", "-q", "-t", unsorted, "-o", filepath.Join(dir, "m")}, exitBadInput, unsorted + ":2:"},
		{"corrupt zstd", []string{"eval", "-m", good, badZstd}, exitBadInput, "corrupt"},
		{"foreign model", []string{"eval", "-m", notModel, heart}, exitBadInput, notModel},
		{"truncated model", []string{"inspect", truncated}, exitBadInput, "truncated"},
		{"bad metrics log", []string{"plot", "curve", "--log", badLog, "-o", filepath.Join(dir, "c.png")}, exitBadInput, badLog + ":2:"},
		{"empty data", []string{"train", "-q", "-t", empty, "-o", filepath.Join(dir, "m")}, exitBadInput, "no rows to train on"},
		{"directory of files, one of them bad", []string{"train", "-q", "-t", dir, "-o", filepath.Join(dir, "m")}, exitBadInput, filepath.Join(dir, "bad.jsonl") + ":1:1: missing label"},
		{"glob matching nothing", []string{"train", "-q", "--stream", "-t", filepath.Join(dir, "none-*.libsvm.zst"), "-o", filepath.Join(dir, "m")}, exitIO, "matches no data file"},
		{"shard directory with a damaged manifest", []string{"train", "-q", "--stream", "-t", brokenSet, "-o", filepath.Join(dir, "m")}, exitBadInput, "SHARDS"},
		{"missing data", []string{"train", "-q", "-t", missing, "-o", filepath.Join(dir, "m")}, exitIO, "no such file"},
		{"missing model", []string{"eval", "-m", filepath.Join(dir, "none.model"), heart}, exitIO, "no such file"},
		{"unwritable model", []string{"train", "-q", "-k", "2", "-i", "2000", "-t", heart, "-o", filepath.Join(dir, "no", "dir", "m")}, exitIO, "no such file"},
		{"gen without the MNIST files", []string{"gen", "mnist8m-2", "--rows", "10", "--mnist", filepath.Join(dir, "no-mnist"), "-o", filepath.Join(dir, "g.libsvm")}, exitIO, "MNIST training files not found"},
		{"comment glued to a value", []string{"train", "-q", "-k", "2", "-i", "200", "-t", glued, "-o", filepath.Join(dir, "glued.model")}, exitOK, ""},
		{"comment where a value is due", []string{"train", "-q", "-t", noValue, "-o", filepath.Join(dir, "m")}, exitBadInput, noValue + ":2:3: "},
		{"convert to the cache format", []string{"convert", heart, "-o", filepath.Join(dir, "h.cpmcache")}, exitOK, ""},
		{"CRC-valid checkpoint with a NaN weight", append(nanArgs, "--resume", nanCk), exitBadInput, "is NaN"},
		{"shard disagreeing with its manifest", []string{"train", "-q", "--stream", "-k", "2", "-i", "2000", "-t", set, "-o", filepath.Join(dir, "m")}, exitBadInput, editedShard},
		{"training refuses", []string{"train", "-q", "-t", iris, "-o", filepath.Join(dir, "m")}, exitError, "one-vs-one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := cpm(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Errorf("cpm %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, errs, tc.code, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "m")); err == nil {
		t.Error("a failed train left a model file")
	}

	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errb bytes.Buffer
		code := run(ctx, []string{"train", "-q", "-k", "2", "-i", "100000", "-t", heart, "-o", filepath.Join(dir, "m")}, &out, &errb)
		if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted") {
			t.Errorf("cancelled train: exit %d, stderr %q; want 130", code, errb.String())
		}
	})
}

// A flag value out of range is a usage error naming the flag, found before
// any data is read: the data file named here does not exist, so reading it
// first would exit 4.
func TestBadFlagValues(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.libsvm")
	for _, tc := range []struct {
		flags []string
		want  string // in stderr
	}{
		{[]string{"-k", "65535"}, "-k 65535"},
		{[]string{"-k", "2,70000"}, "-k 70000"},
		{[]string{"-i", "-5"}, "-i -5"},
		{[]string{"--iterations", "-1"}, "-i -1"},
		{[]string{"--lambda", "-1"}, "--lambda -1"},
		{[]string{"--lambda", "NaN"}, "--lambda NaN"},
		{[]string{"--lambda", "Inf"}, "--lambda +Inf"},
		{[]string{"-C", "-1"}, "-C -1"},
		{[]string{"-C", "NaN"}, "-C NaN"},
		{[]string{"-C", "0x1p1024"}, "-C"}, // out of float64's range: the flag package refuses it
		{[]string{"--bias", "NaN"}, "--bias NaN"},
		{[]string{"--bias", "-Inf"}, "--bias -Inf"},
		{[]string{"--cost_ratio", "NaN"}, "--cost_ratio NaN"},
		{[]string{"--cost_ratio", "-2"}, "--cost_ratio -2"},
		{[]string{"--entropy", "-1"}, "--entropy -1"},
		{[]string{"--entropy", "NaN"}, "--entropy NaN"},
		{[]string{"--workers", "-3"}, "--workers -3"},
		{[]string{"--learner", "polyceptron-batch", "-k", "65537"}, "-k 65537"},
		{[]string{"--learner", "polyceptron-online", "--step", "NaN"}, "--step NaN"},
		{[]string{"--learner", "plume", "--gamma", "-1"}, "--gamma -1"},
		{[]string{"--learner", "plume", "--epsilon", "Inf"}, "--epsilon +Inf"},
		{[]string{"--learner", "plume", "--inner-iter", "-1"}, "--inner-iter -1"},
		{[]string{"--learner", "plume", "--max-iter", "-1"}, "--max-iter -1"},
		{[]string{"--learner", "polyceptron-batch", "--restarts", "-2"}, "--restarts -2"},
		{[]string{"--learner", "kperceptron", "--sigma", "-1"}, "--sigma -1"},
		{[]string{"--learner", "kperceptron", "--coef0", "NaN"}, "--coef0 NaN"},
		{[]string{"--learner", "kperceptron", "--degree", "-2"}, "--degree -2"},
		{[]string{"--learner", "kperceptron", "--cache-mb", "-1"}, "--cache-mb -1"},
	} {
		for _, cmd := range []string{"train", "cv"} {
			args := append([]string{cmd, "-q"}, tc.flags...)
			if cmd == "train" {
				args = append(args, "-t", missing, "-o", missing+".model")
			} else {
				args = append(args, missing)
			}
			t.Run(strings.Join(args[:len(tc.flags)+2], " "), func(t *testing.T) {
				code, _, errs := cpm(t, args...)
				if code != exitUsage || !strings.Contains(errs, tc.want) {
					t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, exitUsage, tc.want)
				}
			})
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "-q", "--cache", "x.gz", "-t", missing, "-o", missing + ".model"}, "--cache x.gz"},
		{[]string{"train", "-q", "--stream", "--cache", "x.cpmcache.ZST", "-t", missing, "-o", missing + ".model"}, "--cache x.cpmcache.ZST"},
		{[]string{"cv", "-q", "--cv-workers", "-1", missing}, "--cv-workers -1"},
		{[]string{"train", "-q", "--stream", "--buffer", "0", "-t", missing, "-o", missing + ".model"}, "--buffer 0"},
		{[]string{"train", "-q", "--stream", "--readers", "-2", "-t", missing, "-o", missing + ".model"}, "--readers -2"},
	} {
		code, _, errs := cpm(t, tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("cpm %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, errs, exitUsage, tc.want)
		}
	}
}

// exitStatus classifies errors by what they wrap, bad input before I/O.
func TestExitStatusClassification(t *testing.T) {
	pathErr := &fs.PathError{Op: "read", Path: "x", Err: syscall.EIO}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{fmt.Errorf("wrapped: %w", usagef("bad")), exitUsage},
		{fmt.Errorf("step 3: %w", context.Canceled), exitInterrupted},
		{&reader.ParseError{Path: "x", Line: 2, Col: 3, Err: reader.ErrSyntax}, exitBadInput},
		{&reader.ParseError{Path: "x", Err: fmt.Errorf("%w: zstd stream: bad", reader.ErrCorrupt)}, exitBadInput},
		{&reader.ParseError{Path: "x", Line: 9, Err: pathErr}, exitIO}, // a read error positioned at a line
		{&reader.RowError{Path: "x", Row: 3, Column: "features", Err: reader.ErrUnsorted}, exitBadInput},
		{&reader.SchemaError{Path: "x", Column: "label", Msg: "type int64"}, exitBadInput},
		{&rowcache.Error{Path: "x", Offset: 8, Err: reader.ErrCorrupt}, exitBadInput},
		{&rowcache.Error{Path: "x", Offset: 8, Err: pathErr}, exitIO},
		{&reader.RowError{Path: "x", Row: 1, Column: "label", Err: fmt.Errorf("%w: label", reader.ErrNull)}, exitBadInput},
		{fmt.Errorf("shard 2: %w", &reader.ParseError{Path: "x", Line: 1, Col: 9, Err: reader.ErrIndexRange}), exitBadInput},
		{fmt.Errorf("x.parquet: row group 1: %w: %w", reader.ErrCorrupt, pathErr), exitBadInput}, // corrupt before I/O
		{fmt.Errorf("load: %w", &model.FormatError{Name: "m", Offset: 4, Err: model.ErrChecksum}), exitBadInput},
		{fmt.Errorf("predict: %w", model.ErrInvalid), exitBadInput},
		{&fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}, exitIO},
		{fmt.Errorf("save model m: %w", &fs.PathError{Op: "write", Path: "m", Err: syscall.ENOSPC}), exitIO},
		{&os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EXDEV}, exitIO},
		{fmt.Errorf("writing: %w", syscall.EACCES), exitIO},
		{io.ErrShortWrite, exitIO},
		{fmt.Errorf("x.libsvm: %w to train on", sgd.ErrNoRows), exitBadInput},
		{fmt.Errorf("shard: dir: %w: no manifest", shard.ErrIncomplete), exitBadInput},
		{fmt.Errorf("shard: %q: %w", "d/*.zst", shard.ErrNoMatch), exitIO},
		{fmt.Errorf("shard 1 of 2: p: %w: read 1 rows", shard.ErrManifestMismatch), exitBadInput},
		{fmt.Errorf("x: %w: 5 bytes, 4 when training started", input.ErrInputChanged), exitBadInput},
		{fmt.Errorf("outer: %w", &sgd.CheckpointError{Name: "ck", Offset: -1, Err: sgd.ErrCheckpointCorrupt}), exitBadInput},
		{fmt.Errorf("%w in d: %w", synth.ErrNoMNIST, fs.ErrNotExist), exitIO},
		{errors.New("sgd: 3 labels"), exitError},
	} {
		if got := exitStatus(tc.err); got != tc.want {
			t.Errorf("exitStatus(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}, {"-version"}} {
		out := mustRun(t, args...)
		// A test binary has build info; its main module is this one.
		if !strings.HasPrefix(out, "cpm github.com/polyhedral/cpm ") || !strings.Contains(out, "\ngo ") {
			t.Errorf("cpm %s printed %q", args[0], out)
		}
	}
	if code, _, _ := cpm(t, "version", "extra"); code != exitUsage {
		t.Errorf("version with an argument: exit %d, want 2", code)
	}
	info := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "github.com/polyhedral/cpm/cmd/cpm",
		Main:      debug.Module{Path: "github.com/polyhedral/cpm", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "GOARCH", Value: "amd64"}, {Key: "GOOS", Value: "linux"},
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abc"},
			{Key: "vcs.time", Value: "2026-11-21T16:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		},
	}
	want := `cpm github.com/polyhedral/cpm v1.2.3
go            go1.26.8 linux/amd64
vcs           git
vcs.revision  0123abc
vcs.time      2026-11-21T16:00:00Z
vcs.modified  true
`
	if got := versionText(info, true); got != want {
		t.Errorf("versionText:\n%s\nwant:\n%s", got, want)
	}
	info.Main.Version, info.Settings = "", nil
	if got := versionText(info, true); got != "cpm github.com/polyhedral/cpm (devel)\ngo            go1.26.8\n" {
		t.Errorf("versionText without settings: %q", got)
	}
	if got := versionText(nil, false); !strings.Contains(got, "no build information") {
		t.Errorf("versionText without info: %q", got)
	}
}
