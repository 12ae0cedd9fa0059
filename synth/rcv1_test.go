package synth

import (
	"math"
	"testing"
)

func newTestRCV1(t testing.TB, seed uint64, split Split) *RCV1 {
	t.Helper()
	d, err := NewRCV1(seed, RCV1Config{Split: split})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRCV1Shape(t *testing.T) {
	for _, split := range []Split{Train, Test} {
		d := newTestRCV1(t, 1, split)
		if d.Dim() != RCV1Dim {
			t.Errorf("Dim() = %d", d.Dim())
		}
		w := d.NewWorker()
		const n = 20000
		for i := range int64(n) {
			_, x := w.Row(i)
			if nrm := x.SqNorm(); math.Abs(nrm-1) > 1e-5 {
				t.Fatalf("%v row %d: squared norm %v", split, i, nrm)
			}
		}
		s := sample(t, d, 0, n)
		t.Logf("%v: %.1f nonzeros per row, %.3f positive, largest index %d", split, s.meanNNZ(), s.posRate(), s.maxIdx)
		if m := s.meanNNZ(); m < 68 || m > 84 {
			t.Errorf("%v: %.1f nonzeros per row, want about 76", split, m)
		}
		if r := s.posRate(); math.Abs(r-0.52) > 0.015 {
			t.Errorf("%v: %.3f positive, want 0.52 ± 0.015", split, r)
		}
		if s.maxIdx < RCV1Dim-100 {
			t.Errorf("%v: largest index %d of %d", split, s.maxIdx, RCV1Dim)
		}
	}
}

// The label is the topic's class, flipped for about 2.5% of the rows; the
// topics follow their priors; a document weighs its own topic's words.
func TestRCV1LabelsAndNoise(t *testing.T) {
	d := newTestRCV1(t, 2, Train)
	w := d.newWorker()
	const n = 40000
	var flips int
	var topics [4]int
	var own float64 // share of the L2 mass on the topic's own vocabulary
	inTopic := make([][]bool, 4)
	for k := range inTopic {
		inTopic[k] = make([]bool, RCV1Dim+1)
		for _, j := range d.topic[k] {
			inTopic[k][j] = true
		}
	}
	var other float64
	for i := range int64(n) {
		y, x := w.Row(i)
		clean := float32(-1)
		if rcv1Topics[w.topic].positive {
			clean = 1
		}
		if (y != clean) != w.flipped {
			t.Fatalf("row %d: label %v, topic %s, flipped %v", i, y, rcv1Topics[w.topic].name, w.flipped)
		}
		if w.flipped {
			flips++
		}
		topics[w.topic]++
		o := (w.topic + 1) % 4
		for k, j := range x.Idx {
			v := float64(x.Val[k]) * float64(x.Val[k])
			if inTopic[w.topic][j] {
				own += v
			}
			if inTopic[o][j] {
				other += v
			}
		}
	}
	rate := float64(flips) / n
	if sd := math.Sqrt(RCV1Noise * (1 - RCV1Noise) / n); math.Abs(rate-RCV1Noise) > 4*sd {
		t.Errorf("noise rate %.4f, want %v ± %.4f", rate, RCV1Noise, 4*sd)
	}
	for k, c := range topics {
		if p := float64(c) / n; math.Abs(p-rcv1Topics[k].prior) > 0.015 {
			t.Errorf("topic %s: frequency %.3f, prior %v", rcv1Topics[k].name, p, rcv1Topics[k].prior)
		}
	}
	t.Logf("mean share of the squared norm on the own topic's words %.3f, on another topic's %.3f", own/n, other/n)
	if own < 2*other {
		t.Errorf("documents weigh their topic's words %.3f, another topic's %.3f", own/n, other/n)
	}
}

func TestRCV1SplitsAndSeeds(t *testing.T) {
	tr, te, other := newTestRCV1(t, 3, Train), newTestRCV1(t, 3, Test), newTestRCV1(t, 4, Train)
	if !equalU32(tr.back, te.back) || !equalU32(tr.topic[0], te.topic[0]) {
		t.Error("the train and test splits of one seed have different vocabularies")
	}
	if equalU32(tr.topic[0], other.topic[0]) {
		t.Error("two seeds have the same vocabularies")
	}
	a := textOf(t, tr, 0, 50)
	if string(a) == string(textOf(t, te, 0, 50)) {
		t.Error("the train and test splits have the same rows")
	}
	if string(a) != string(textOf(t, newTestRCV1(t, 3, Train), 0, 50)) {
		t.Error("NewRCV1 with the same seed gives other rows")
	}
	if _, err := NewRCV1(1, RCV1Config{Split: -1}); err == nil {
		t.Error("NewRCV1 with split -1: no error")
	}
	for w := 1; w <= RCV1Dim; w++ {
		if v := tr.idf[w]; !(v >= math.Ln2) || math.IsInf(v, 0) {
			t.Fatalf("idf of word %d is %v", w, v)
		}
	}
}
