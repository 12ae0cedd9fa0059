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

// A one-vs-one model of many classes whose faces have zero weights but
// for one weight of the last polytope is inspected in one pass over its
// polytopes: every polytope is listed. (Asking every polytope whether any
// polytope has top features made this quadratic: a 1,000-class model took
// minutes.) The one weight makes the file store feature row 1 (format
// version 2 stores the rows with a weight): a file of the bias row alone,
// 4 bytes per polytope, would be refused as too large for its memory.
func TestInspectManyZeroPolytopes(t *testing.T) {
	const classes = 400 // 79,800 polytopes
	defer watchdog(t, 2*time.Minute)()
	mp := filepath.Join(t.TempDir(), "zero.model")
	m := zeroOvOModel(classes)
	m.Weights[len(m.Weights)-1].Set(1, 0, 0.5)
	if err := model.Save(mp, m); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "inspect", mp)
	if got, want := strings.Count(out, "\npolytope "), classes*(classes-1)/2; got != want {
		t.Errorf("%d polytopes listed, want %d", got, want)
	}
	if !strings.Contains(out, "polytope 79798: 397 vs 399/outer (label 397 outside): 0 of 1 faces active") ||
		!strings.Contains(out, "polytope 79799: 398 vs 399/outer (label 398 outside): 1 of 1 faces active") {
		t.Errorf("last polytopes missing or wrong; output ends\n%s", out[max(0, len(out)-400):])
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
