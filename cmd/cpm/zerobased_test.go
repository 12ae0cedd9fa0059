package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
)

// writeZeroBased writes the rows of the LIBSVM file src to dst with every
// feature index lowered by 1, as a 0-based tool writes them, and returns
// the text.
func writeZeroBased(t *testing.T, src, dst string) []byte {
	t.Helper()
	m, err := reader.Load(src, reader.WithZeroBased(reader.ZeroBasedNo))
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	for r := range m.Rows() {
		b = strconv.AppendFloat(b, float64(m.Labels[r]), 'g', -1, 32)
		x := m.Row(r)
		for k, j := range x.Idx {
			b = append(b, ' ')
			b = strconv.AppendUint(b, uint64(j-1), 10)
			b = append(b, ':')
			b = strconv.AppendFloat(b, float64(x.Val[k]), 'g', -1, 32)
		}
		b = append(b, '\n')
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// A model trained from a 0-based file (auto, or yes) is byte-identical to
// the one trained from the same rows written 1-based; auto says on stderr
// that it shifted the file, no refuses it with the flag to pass.
func TestZeroBasedTrain(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one", "d.libsvm")
	zero := filepath.Join(dir, "zero", "d.libsvm")
	if err := os.MkdirAll(filepath.Dir(one), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(zero), 0o755); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(heart)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(one, text, 0o644); err != nil {
		t.Fatal(err)
	}
	writeZeroBased(t, heart, zero)

	train := func(data, model string, extra ...string) string {
		t.Helper()
		args := append([]string{"train", "-q", "--seed", "3", "-k", "3", "-i", "4000", "-t", data, "-o", model}, extra...)
		code, out, errs := cpm(t, args...)
		if code != 0 {
			t.Fatalf("cpm %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		return errs
	}
	readModel := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	m1 := filepath.Join(dir, "one.model")
	if errs := train(one, m1); strings.Contains(errs, "0-based") {
		t.Errorf("1-based file: stderr says 0-based:\n%s", errs)
	}
	for _, mode := range []string{"auto", "yes"} {
		m0 := filepath.Join(dir, mode+".model")
		errs := train(zero, m0, "--zero-based", mode)
		if got := readModel(m0); !bytes.Equal(got, readModel(m1)) {
			t.Errorf("--zero-based %s: model of the 0-based file differs from the 1-based one's", mode)
		}
		notice := zeroBasedNotice(zero)
		if mode == "auto" && strings.Count(errs, notice) != 1 {
			t.Errorf("--zero-based auto: stderr does not say %q once:\n%s", notice, errs)
		}
	}

	// Streamed through the row cache: the run that writes it and the run
	// that reads it train the 1-based model; another --zero-based makes
	// the cache stale, not wrong.
	cache := filepath.Join(dir, "zero.cpmcache")
	for i, mode := range []string{"auto", "auto", "yes"} {
		mc := filepath.Join(dir, "cached.model")
		train(zero, mc, "--stream", "--cache", cache, "--zero-based", mode)
		ms := filepath.Join(dir, "stream.model")
		train(one, ms, "--stream")
		if !bytes.Equal(readModel(mc), readModel(ms)) {
			t.Errorf("run %d (--zero-based %s) with the cache: model differs from the 1-based file's", i, mode)
		}
	}

	code, _, errs := cpm(t, "train", "-q", "-k", "2", "-i", "100", "-t", zero, "-o", filepath.Join(dir, "no.model"), "--zero-based", "no")
	wantFailure(t, []string{"train", "--zero-based", "no"}, code, errs, "d.libsvm:1:", "feature index 0", "pass --zero-based yes or auto")
	if code != 3 {
		t.Errorf("--zero-based no on a 0-based file: exit %d, want 3", code)
	}
	code, _, errs = cpm(t, "train", "-t", one, "--zero-based", "maybe")
	if code != 2 || !strings.Contains(errs, "want yes, no or auto") {
		t.Errorf("--zero-based maybe: exit %d, stderr %q", code, errs)
	}
}

// Standard input cannot be scanned ahead: auto reads it as 1-based and an
// index 0 is an error that names --zero-based yes, which reads it.
func TestZeroBasedStdin(t *testing.T) {
	dir := t.TempDir()
	zero := writeZeroBased(t, heart, filepath.Join(dir, "zero.libsvm"))
	out := filepath.Join(dir, "x.libsvm")
	r := cpmProcess(t, bytes.NewReader(zero), "convert", "-", "-o", out)
	wantFailure(t, []string{"convert", "-"}, r.code, r.stderr, "-:1:", "feature index 0", "pass --zero-based yes")
	r = cpmProcess(t, bytes.NewReader(zero), "convert", "--zero-based", "yes", "-", "-o", out)
	if r.code != 0 {
		t.Fatalf("convert --zero-based yes -: exit %d\n%s", r.code, r.stderr)
	}
	got, err := reader.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := reader.Load(heart)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rows() != want.Rows() || !slices.Equal(got.Ptr, want.Ptr) || !slices.Equal(got.Idx, want.Idx) {
		t.Errorf("convert --zero-based yes of the 0-based rows does not give the 1-based rows back")
	}
}
