package synth

import (
	"context"
	"math"
	"testing"

	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

func newTestURL(t testing.TB, seed uint64, split Split) *URL {
	t.Helper()
	u, err := NewURL(seed, URLConfig{Split: split})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// shapeStats summarises rows lo..hi-1 of src.
type shapeStats struct {
	rows, nnz, pos int
	maxIdx         uint32
}

func (s shapeStats) meanNNZ() float64 { return float64(s.nnz) / float64(s.rows) }
func (s shapeStats) posRate() float64 { return float64(s.pos) / float64(s.rows) }

// checkRow fails t unless y is ±1 and x has ascending indices in 1..dim with
// positive finite values.
func checkRow(t testing.TB, i int64, y float32, x sparsevec.Vector, dim int) {
	t.Helper()
	if y != 1 && y != -1 {
		t.Fatalf("row %d: label %v", i, y)
	}
	for k, j := range x.Idx {
		if j < 1 || int(j) > dim || (k > 0 && j <= x.Idx[k-1]) {
			t.Fatalf("row %d: index %d at %d (dim %d, previous %v)", i, j, k, dim, x.Idx[:k])
		}
		if v := x.Val[k]; !(v > 0) || math.IsInf(float64(v), 0) {
			t.Fatalf("row %d: value %v at index %d", i, v, j)
		}
	}
}

// sample checks rows lo..hi-1 of src with checkRow and summarises them.
func sample(t testing.TB, src Source, lo, hi int64) shapeStats {
	t.Helper()
	w := src.NewWorker()
	var s shapeStats
	for i := lo; i < hi; i++ {
		y, x := w.Row(i)
		checkRow(t, i, y, x, src.Dim())
		s.rows++
		s.nnz += len(x.Idx)
		if y > 0 {
			s.pos++
		}
		if len(x.Idx) > 0 {
			s.maxIdx = max(s.maxIdx, x.Idx[len(x.Idx)-1])
		}
	}
	return s
}

func TestURLShape(t *testing.T) {
	most, last := 0, URLReal
	for _, g := range urlGroups {
		most += g.drawLo + g.draw - 1
		last += g.size
	}
	if most != urlMaxBinary || last != URLDim {
		t.Errorf("the blocks draw up to %d features (urlMaxBinary %d) and end at %d (URLDim %d)", most, urlMaxBinary, last, URLDim)
	}
	for _, split := range []Split{Train, Test} {
		u := newTestURL(t, 1, split)
		if u.Dim() != URLDim {
			t.Errorf("Dim() = %d", u.Dim())
		}
		w := u.NewWorker()
		const n = 20000
		var nnz, pos, real, realRows int
		var maxIdx uint32
		for i := range int64(n) {
			y, x := w.Row(i)
			checkRow(t, i, y, x, URLDim)
			nnz += len(x.Idx)
			if y > 0 {
				pos++
			}
			maxIdx = max(maxIdx, x.Idx[len(x.Idx)-1])
			r := 0
			for k, j := range x.Idx {
				if j <= URLReal {
					r++
				} else if x.Val[k] != 1 {
					t.Fatalf("row %d: binary feature %d has value %v", i, j, x.Val[k])
				}
			}
			real += r
			if r > 0 {
				realRows++
			}
		}
		mean, rate := float64(nnz)/n, float64(pos)/n
		t.Logf("%v: %.1f nonzeros per row (%.1f real-valued), %.3f positive, largest index %d", split, mean, float64(real)/n, rate, maxIdx)
		if mean < 100 || mean > 125 {
			t.Errorf("%v: %.1f nonzeros per row, want 100..125", split, mean)
		}
		if r := float64(real) / n; r < 30 || r > 64 {
			t.Errorf("%v: %.1f real-valued features per row", split, r)
		}
		if math.Abs(rate-URLPositive) > 0.02 {
			t.Errorf("%v: %.3f positive, want %.2f ± 0.02", split, rate, URLPositive)
		}
		if maxIdx < URLDim*9/10 {
			t.Errorf("%v: largest index %d, the tail of the feature range is unused", split, maxIdx)
		}
	}
}

// Labels follow the planted rule outside the margin, except for the rows
// whose label the noise flipped, about 1%.
func TestURLRuleAndNoise(t *testing.T) {
	u := newTestURL(t, 2, Train)
	w := u.newWorker()
	const n = 40000
	flips := 0
	for i := range int64(n) {
		y, x := w.Row(i)
		s := u.scores(x)
		m := u.margin(&s)
		if math.Abs(m) < URLMargin {
			t.Fatalf("row %d: margin %v inside ±%v", i, m, URLMargin)
		}
		clean := float32(-1)
		if m > 0 {
			clean = 1
		}
		if (y != clean) != w.flipped {
			t.Fatalf("row %d: label %v, rule %v, flipped %v", i, y, clean, w.flipped)
		}
		if w.flipped {
			flips++
		}
	}
	rate := float64(flips) / n
	if sd := math.Sqrt(URLNoise * (1 - URLNoise) / n); math.Abs(rate-URLNoise) > 4*sd {
		t.Errorf("noise rate %.4f, want %v ± %.4f", rate, URLNoise, 4*sd)
	}
	if r := float64(w.redrawn) / n; r > 1 {
		t.Errorf("%.2f rows redrawn per row", r)
	}
}

// The rule depends on the seed only; the splits draw different rows.
func TestURLSplitsAndSeeds(t *testing.T) {
	tr, te, other := newTestURL(t, 3, Train), newTestURL(t, 3, Test), newTestURL(t, 4, Train)
	if tr.realW != te.realW || tr.bias != te.bias || !equalU32(tr.binIx, te.binIx) {
		t.Error("the train and test splits of one seed have different rules")
	}
	if tr.realW == other.realW || tr.bias == other.bias {
		t.Error("two seeds have the same rule")
	}
	a, b := textOf(t, tr, 0, 50), textOf(t, te, 0, 50)
	if string(a) == string(b) {
		t.Error("the train and test splits have the same rows")
	}
	if string(a) != string(textOf(t, newTestURL(t, 3, Train), 0, 50)) {
		t.Error("NewURL with the same seed gives other rows")
	}
	if _, err := NewURL(1, URLConfig{Split: 2}); err == nil {
		t.Error("NewURL with split 2: no error")
	}
}

// A CPM with K = 10 learns the planted rule to a few percent of test error
// (the noise alone costs 1%). Skipped with -short: it trains for a few
// seconds.
func TestURLLearnable(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CPM")
	}
	load := func(split Split, n int) *sparsevec.CSR {
		u := newTestURL(t, 1, split)
		w := u.NewWorker()
		m := &sparsevec.CSR{}
		for i := range int64(n) {
			y, x := w.Row(i)
			m.Append(y, x)
		}
		return m
	}
	train, test := load(Train, 200_000), load(Test, 20_000)
	outer := float32(1)
	model, _, err := sgd.Train(context.Background(), sgd.Config{K: 10, Iterations: 5_000_000, C: 100, Seed: 1}, train, &outer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sgd.NewClassifier(model)
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for r := range test.Rows() {
		if y, _, _ := c.Predict(test.Row(r)); y != test.Labels[r] {
			wrong++
		}
	}
	rate := float64(wrong) / float64(test.Rows())
	t.Logf("CPM K=10 on 200,000 rows: test error %.2f%%", 100*rate)
	if rate > 0.05 {
		t.Errorf("CPM test error %.2f%%, want a few percent", 100*rate)
	}
}
