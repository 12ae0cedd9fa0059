package plume

import (
	"fmt"
	"math"
	"slices"

	"github.com/polyhedral/cpm/sparsevec"
)

// checkData checks that data is a well-formed CSR with finite values,
// feature indices >= 1 (index 0 is the bias row) strictly ascending and
// below Dim, and exactly two distinct finite labels. It returns the label
// map [inside, outside]: inside is *inside if given, else the larger label.
func checkData(data *sparsevec.CSR, inside *float32) ([]float32, error) {
	if data == nil || data.Rows() == 0 {
		return nil, fmt.Errorf("%w: no training rows", ErrData)
	}
	n := data.Rows()
	if len(data.Ptr) != n+1 || data.Ptr[0] != 0 || data.Ptr[n] != len(data.Idx) || len(data.Val) != len(data.Idx) {
		return nil, fmt.Errorf("%w: malformed CSR: %d rows, %d row pointers, %d indices, %d values", ErrData, n, len(data.Ptr), len(data.Idx), len(data.Val))
	}
	if data.Dim < 0 {
		return nil, fmt.Errorf("%w: malformed CSR: Dim = %d", ErrData, data.Dim)
	}
	var labels []float32
	for r, y := range data.Labels {
		if math.IsNaN(float64(y)) || math.IsInf(float64(y), 0) {
			return nil, fmt.Errorf("%w: row %d has label %v", ErrData, r, y)
		}
		if !slices.Contains(labels, y) {
			if len(labels) == 2 {
				return nil, fmt.Errorf("%w: more than two labels (%v, %v, %v, ...); PLUME is binary", ErrData, labels[0], labels[1], y)
			}
			labels = append(labels, y)
		}
		lo, hi := data.Ptr[r], data.Ptr[r+1]
		if lo > hi || hi > len(data.Idx) {
			return nil, fmt.Errorf("%w: malformed CSR: row %d spans [%d, %d)", ErrData, r, lo, hi)
		}
		prev := uint32(0)
		for i := lo; i < hi; i++ {
			j, v := data.Idx[i], data.Val[i]
			switch {
			case j <= prev:
				return nil, fmt.Errorf("%w: row %d: feature index %d is 0 or not ascending (1-based, strictly ascending)", ErrData, r, j)
			case int64(j) >= int64(data.Dim):
				return nil, fmt.Errorf("%w: row %d: feature index %d not below Dim = %d", ErrData, r, j, data.Dim)
			case math.IsNaN(float64(v)) || math.IsInf(float64(v), 0):
				return nil, fmt.Errorf("%w: row %d: feature %d is %v", ErrData, r, j, v)
			}
			prev = j
		}
	}
	if len(labels) < 2 {
		return nil, fmt.Errorf("%w: only the label %v; need two", ErrData, labels[0])
	}
	classes := []float32{max(labels[0], labels[1]), min(labels[0], labels[1])}
	if inside != nil {
		switch *inside {
		case classes[0]:
		case classes[1]:
			classes[0], classes[1] = classes[1], classes[0]
		default:
			return nil, fmt.Errorf("%w: inside label %v is not in the data (labels %v and %v)", ErrData, *inside, classes[1], classes[0])
		}
	}
	return classes, nil
}

// signs returns y = +1 for rows labelled classes[0] and −1 otherwise.
func signs(data *sparsevec.CSR, classes []float32) []float64 {
	ys := make([]float64, data.Rows())
	for r, y := range data.Labels {
		ys[r] = -1
		if y == classes[0] {
			ys[r] = 1
		}
	}
	return ys
}
