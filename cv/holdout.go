package cv

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/polyhedral/cpm/sparsevec"
)

// holdoutStream is the PCG stream (its second seed word) of Holdout.
const holdoutStream = 0x686f6c646f7574 // "holdout"

// Holdout splits data into a training set and a validation set holding
// about fraction of its rows, stratified by label: the rows of each label
// (labels in ascending cmp.Compare order) are shuffled by a Fisher–Yates
// shuffle driven by rand.NewPCG(seed, 0x686f6c646f7574), one generator for
// the whole split, and the first round(fraction·n_label) of them go to the
// validation set. Both sets keep the rows in their order in data. The same
// data, fraction and seed give the same split on every machine.
//
// fraction must be in (0, 1); a split that leaves either set empty is an
// error wrapping ErrConfig, as is data without rows (ErrNoData).
func Holdout(data *sparsevec.CSR, fraction float64, seed uint64) (train, valid *sparsevec.CSR, err error) {
	if data == nil || data.Rows() == 0 {
		return nil, nil, ErrNoData
	}
	if !(fraction > 0 && fraction < 1) {
		return nil, nil, fmt.Errorf("%w: holdout fraction %v, want in (0, 1)", ErrConfig, fraction)
	}
	n := data.Rows()
	labels := data.Labels
	held := make([]bool, n)
	nv := 0
	shuffledGroups(labels, rand.NewPCG(seed, holdoutStream), func(group []int) {
		for _, r := range group[:int(math.Round(fraction*float64(len(group))))] {
			held[r] = true
			nv++
		}
	})
	if nv == 0 || nv == n {
		return nil, nil, fmt.Errorf("%w: holdout fraction %v of %d rows leaves %d for training and %d for validation", ErrConfig, fraction, n, n-nv, nv)
	}
	train, valid = new(sparsevec.CSR), new(sparsevec.CSR)
	for r, h := range held {
		if h {
			valid.Append(labels[r], data.Row(r))
		} else {
			train.Append(labels[r], data.Row(r))
		}
	}
	train.Dim, valid.Dim = data.Dim, data.Dim
	return train, valid, nil
}
