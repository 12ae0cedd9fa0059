package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/synth"
)

func TestGenDistort(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.libsvm")
	if err := os.WriteFile(in, []byte("+1 1:0.5 3:-2\n-1 2:250\n+1 1:18000 2:1 3:0.001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.libsvm")
	if code, _, errs := cpm(t, "gen", "distort", "--from", in, "--seed", "5", "-o", out); code != 0 {
		t.Fatalf("gen distort: exit %d: %s", code, errs)
	}
	got, err := reader.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	src, err := reader.Load(in)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := synth.Distort(src, 5)
	if !reflect.DeepEqual(got.Labels, src.Labels) || !reflect.DeepEqual(got.Idx, want.Idx) || !reflect.DeepEqual(got.Val, want.Val) {
		t.Fatalf("gen distort wrote\n%s\nwant the rows of synth.Distort(in, 5): %v %v", text(t, out), want.Idx, want.Val)
	}
	if got.NNZ() != 9 {
		t.Errorf("%d values stored, want every feature of every row (9)", got.NNZ())
	}
	again := filepath.Join(dir, "again.libsvm")
	cpm(t, "gen", "distort", "--from", in, "--seed", "5", "-o", again)
	if !bytes.Equal(text(t, out), text(t, again)) {
		t.Error("the same --from and --seed gave different files")
	}
}

func TestGenDistortErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.libsvm")
	if err := os.WriteFile(bad, []byte("+1 1:x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x.libsvm")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gen", "distort", "-o", out}, exitUsage, "give --from FILE"},
		{[]string{"gen", "distort", "--from", filepath.Join(dir, "nope"), "-o", out}, exitIO, "--from: open"},
		{[]string{"gen", "distort", "--from", bad, "-o", out}, exitBadInput, "bad.libsvm:1"},
		{[]string{"gen", "distort", "--from", bad, "--rows", "5", "-o", out}, exitUsage, "--rows and --split do not apply"},
		{[]string{"gen", "distort", "--from", bad, "-o", bad}, exitUsage, "-o"},
		{[]string{"gen", "polyceptron-d1", "--from", bad, "-o", out}, exitUsage, "--from is for distort only"},
	}
	for _, tc := range tests {
		code, _, errs := cpm(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("cpm %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, errs, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed gen distort left %s: %v", out, err)
	}
}
