package cv

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

func TestHoldoutIsAStratifiedSeededPartition(t *testing.T) {
	data := new(sparsevec.CSR)
	counts := map[float32]int{}
	for r := range 1000 {
		y := float32(r % 7 % 3) // labels 0, 1, 2 in uneven shares
		counts[y]++
		data.Append(y, sparsevec.Vector{Idx: []uint32{uint32(r%50 + 1)}, Val: []float32{float32(r)}})
	}
	data.Dim = 51
	train, valid, err := Holdout(data, 0.2, 9)
	if err != nil {
		t.Fatal(err)
	}
	if train.Dim != data.Dim || valid.Dim != data.Dim {
		t.Fatalf("Dim %d and %d, want %d", train.Dim, valid.Dim, data.Dim)
	}
	// Every row lands in exactly one set (the value identifies it), in
	// its original order, and each label gives round(0.2·n) rows.
	seen := make([]int, data.Rows())
	held := map[float32]int{}
	for _, set := range []*sparsevec.CSR{train, valid} {
		prev := -1
		for r := range set.Rows() {
			id := int(set.Row(r).Val[0])
			if id <= prev {
				t.Fatalf("row %d after row %d: order not kept", id, prev)
			}
			prev = id
			seen[id]++
			if set.Labels[r] != data.Labels[id] {
				t.Fatalf("row %d: label %v, want %v", id, set.Labels[r], data.Labels[id])
			}
			if set == valid {
				held[set.Labels[r]]++
			}
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("row %d is in %d sets", id, n)
		}
	}
	for y, n := range counts {
		if want := int(math.Round(0.2 * float64(n))); held[y] != want {
			t.Errorf("label %v: %d of %d rows held out, want %d", y, held[y], n, want)
		}
	}
	_, again, _ := Holdout(data, 0.2, 9)
	_, other, _ := Holdout(data, 0.2, 10)
	if !reflect.DeepEqual(valid, again) {
		t.Error("the same seed gave another split")
	}
	if reflect.DeepEqual(valid, other) {
		t.Error("another seed gave the same split")
	}
}

func TestHoldoutErrors(t *testing.T) {
	data := new(sparsevec.CSR)
	data.Append(1, sparsevec.Vector{})
	data.Append(-1, sparsevec.Vector{})
	for _, c := range []struct {
		data *sparsevec.CSR
		frac float64
		want error
	}{
		{new(sparsevec.CSR), 0.5, ErrNoData},
		{data, 0, ErrConfig},
		{data, 1, ErrConfig},
		{data, math.NaN(), ErrConfig},
		{data, 0.1, ErrConfig}, // rounds to no validation rows
	} {
		if _, _, err := Holdout(c.data, c.frac, 1); !errors.Is(err, c.want) {
			t.Errorf("%d rows, fraction %v: error %v, want %v", c.data.Rows(), c.frac, err, c.want)
		}
	}
}
