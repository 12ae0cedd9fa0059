package main

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// zeroOvOModel is a valid one-vs-one CPM over classes 0..c-1, K = 1, whose
// weights are all zero: no face lists top features.
func zeroOvOModel(c int) *model.Model {
	m := &model.Model{
		Learner: "cpm", Sides: 1, K: 1, D: 2, Lambda: 0.001, CostRatio: 1, Bias: 1, Seed: 1, Iterations: 10,
		OvO: true,
	}
	for i := range c {
		m.Classes = append(m.Classes, float32(i))
	}
	for range c * (c - 1) / 2 {
		m.Weights = append(m.Weights, sparsevec.NewMatrix(2, 1))
	}
	return m
}

// A one-vs-one model of many classes whose faces all have zero weights is
// inspected in one pass over its polytopes: every polytope is listed, and
// no header announces top features. (Asking every polytope whether any
// polytope has top features made this quadratic: a 1,000-class model took
// minutes.)
func TestInspectManyZeroPolytopes(t *testing.T) {
	const classes = 400 // 79,800 polytopes
	defer watchdog(t, 2*time.Minute)()
	mp := filepath.Join(t.TempDir(), "zero.model")
	if err := model.Save(mp, zeroOvOModel(classes)); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "inspect", mp)
	if got, want := strings.Count(out, "\npolytope "), classes*(classes-1)/2; got != want {
		t.Errorf("%d polytopes listed, want %d", got, want)
	}
	if strings.Contains(out, "top features") {
		t.Error("top features announced for a model without nonzero weights")
	}
	if !strings.Contains(out, "polytope 79799: 398 vs 399/outer (label 398 outside): 0 of 1 faces active") {
		t.Errorf("last polytope missing or wrong; output ends\n%s", out[max(0, len(out)-400):])
	}
}

// BenchmarkInspectZeroOvO measures the report of a many-class one-vs-one
// model without nonzero weights (linear in the polytopes).
func BenchmarkInspectZeroOvO(b *testing.B) {
	m := zeroOvOModel(300)
	for b.Loop() {
		in, err := inspectModel(context.Background(), m, 5)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(io.Discard)
		in.print(w)
		w.Flush()
	}
}
