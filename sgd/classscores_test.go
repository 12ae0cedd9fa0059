package sgd

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// One-vs-one class scores are the votes plus m/(3(|m|+1)) of the summed
// pairwise margins, each pair's score counting for its first class when
// positive; the binary class score is Predict's score.
func TestClassScoresOvO(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	var data sparsevec.CSR
	centers := [][2]float64{{0, 1}, {1, -0.5}, {-1, -0.5}, {0, 0}}
	for i := 0; i < 400; i++ {
		c := i % 4
		data.Append(float32(c+1), vec([]uint32{1, 2}, []float32{float32(centers[c][0] + rng.NormFloat64()), float32(centers[c][1] + rng.NormFloat64())}))
	}
	m, _, err := TrainOvO(context.Background(), Config{K: 2, Iterations: 20_000, Seed: 3, DoubleSided: true}, &data)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := NewClassifier(m)
	ref, _ := NewClassifier(m)
	got := make([]float32, 4)
	split := 0
	for r := range data.Rows() {
		x := data.Row(r)
		c.ClassScores(x, got)
		votes, sums := make([]float64, 4), make([]float64, 4)
		for pi, p := range Pairs(4) {
			s, _ := ref.binary(pi*m.Sides, x)
			if s > 0 {
				votes[p[0]]++
			} else {
				votes[p[1]]++
			}
			sums[p[0]] += float64(s)
			sums[p[1]] -= float64(s)
		}
		for k := range 4 {
			want := float32(votes[k] + sums[k]/(3*(math.Abs(sums[k])+1)))
			if got[k] != want {
				t.Fatalf("row %d class %d: %v, want %v (votes %v, margins %v)", r, k, got[k], want, votes, sums)
			}
		}
		y, score, _ := c.Predict(x)
		best := 0
		for k := range got {
			if got[k] > got[best] {
				best = k
			}
		}
		if m.Classes[best] != y || float32(votes[best]) != score {
			t.Fatalf("row %d: label %v (votes %v), class scores %v", r, y, score, got)
		}
		if votes[0] == votes[1] || votes[1] == votes[2] || votes[0] == votes[2] {
			split++
		}
	}
	if split == 0 {
		t.Error("no row with tied votes: the tie-break went untested")
	}
	var two sparsevec.CSR
	for r := range data.Rows() {
		two.Append(float32(1-2*min(int(data.Labels[r])-1, 1)), data.Row(r))
	}
	b, _, err := Train(context.Background(), Config{K: 2, Iterations: 20_000, Seed: 1}, &two, nil)
	if err != nil {
		t.Fatal(err)
	}
	bc, _ := NewClassifier(b)
	for r := range 20 {
		_, s, _ := bc.Predict(two.Row(r))
		bc.ClassScores(two.Row(r), got[:1])
		if got[0] != s {
			t.Fatalf("binary row %d: class score %v, Predict score %v", r, got[0], s)
		}
	}
}
