package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/featurehash"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// writeLIBSVM writes data as LIBSVM text, values exactly.
func writeLIBSVM(t *testing.T, path string, data *sparsevec.CSR) {
	t.Helper()
	var b strings.Builder
	for r := range data.Rows() {
		b.WriteString(strconv.FormatFloat(float64(data.Labels[r]), 'g', -1, 32))
		x := data.Row(r)
		for i, j := range x.Idx {
			fmt.Fprintf(&b, " %d:%s", j, strconv.FormatFloat(float64(x.Val[i]), 'g', -1, 32))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// spreadHeart writes heart_scale with feature j moved to j·100003 (to
// 1.3 million) and the same rows hashed into 2^10 rows, and returns their
// paths.
func spreadHeart(t *testing.T, dir string) (raw, hashed string) {
	data, err := reader.Load(heart)
	if err != nil {
		t.Fatal(err)
	}
	wide := &sparsevec.CSR{}
	for r := range data.Rows() {
		x := data.Row(r)
		y := sparsevec.Vector{Val: x.Val}
		for _, j := range x.Idx {
			y.Idx = append(y.Idx, j*100_003)
		}
		wide.Append(data.Labels[r], y)
	}
	h, err := featurehash.New(10, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw, hashed = filepath.Join(dir, "wide.libsvm"), filepath.Join(dir, "hashed.libsvm")
	writeLIBSVM(t, raw, wide)
	writeLIBSVM(t, hashed, h.Apply(wide))
	return raw, hashed
}

// TestHashBitsStream: streamed training with --hash-bits gives the model
// that streamed training on the rows hashed beforehand gives, plus the
// hashing; in memory likewise; and eval, inspect and export take the
// hashed model with raw rows.
func TestHashBitsStream(t *testing.T) {
	dir := t.TempDir()
	raw, hashed := spreadHeart(t, dir)
	for _, mode := range [][]string{{"--stream", "--buffer", "50"}, nil} {
		name := "memory"
		if mode != nil {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			train := func(data, out string, extra ...string) *model.Model {
				args := append([]string{"train", "-q", "-t", data, "-k", "3", "-i", "3000", "--seed", "3", "--double-sided", "-o", out}, mode...)
				mustRun(t, append(args, extra...)...)
				m, err := model.Load(out)
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			a := train(raw, filepath.Join(dir, name+"-a.model"), "--hash-bits", "10")
			b := train(hashed, filepath.Join(dir, name+"-b.model"))
			if a.Hash == nil || a.Hash.Bits != 10 || b.Hash != nil {
				t.Fatalf("hashing %+v and %+v", a.Hash, b.Hash)
			}
			b.Hash = a.Hash
			var ba, bb bytes.Buffer
			if err := model.Write(&ba, a); err != nil {
				t.Fatal(err)
			}
			if err := model.Write(&bb, b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ba.Bytes(), bb.Bytes()) {
				t.Fatal("--hash-bits trains another model than the rows hashed beforehand")
			}
			ea := mustRun(t, "eval", "-m", filepath.Join(dir, name+"-a.model"), raw)
			eb := mustRun(t, "eval", "-m", filepath.Join(dir, name+"-b.model"), hashed)
			if ea != strings.ReplaceAll(eb, hashed, raw) || !strings.Contains(ea, "error") {
				t.Fatalf("eval of the hashed model on raw rows:\n%s\nof the plain model on hashed rows:\n%s", ea, eb)
			}
		})
	}
	out := mustRun(t, "inspect", filepath.Join(dir, "memory-a.model"), "--data", raw)
	if !strings.Contains(out, "hashing   10 bits, seed 0") {
		t.Errorf("inspect does not show the hashing:\n%s", out)
	}
	exp := mustRun(t, "export", filepath.Join(dir, "memory-a.model"))
	if !strings.Contains(exp, "hash.bits: 10\nhash.seed: 0\n") || !strings.Contains(exp, "format: 2\n") {
		t.Errorf("export does not show the hashing:\n%s", exp[:min(len(exp), 600)])
	}
}

// TestWideModelIsSmall: two rows with a feature index of 10^6 train a
// model file of a few hundred bytes (version 2 stores the rows with
// weight), which predicts, inspects and exports like the dense model.
func TestWideModelIsSmall(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "wide.libsvm")
	if err := os.WriteFile(data, []byte("1 3:1 1000000:1\n-1 3:-1 1000000:0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "wide.model")
	mustRun(t, "train", "-q", "-t", data, "-k", "1", "--single-sided", "-i", "1000", "-o", out)
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 1024 {
		t.Fatalf("model file of %d bytes", fi.Size())
	}
	m, err := model.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.D != 1_000_001 || len(m.Rows) != 3 {
		t.Fatalf("D = %d, stored rows %v", m.D, m.Rows)
	}
	if ev := mustRun(t, "eval", "-m", out, data); !strings.Contains(ev, "rows 2  errors 0") {
		t.Errorf("eval: %s", ev)
	}
	if in := mustRun(t, "inspect", out, "--data", data); !strings.Contains(in, "stored    3 of the 1000001 weight rows") || !strings.Contains(in, "1000000") {
		t.Errorf("inspect:\n%s", in)
	}
	if exp := mustRun(t, "export", out); !strings.Contains(exp, "\n1000000:") {
		t.Errorf("export:\n%s", exp)
	}
}
