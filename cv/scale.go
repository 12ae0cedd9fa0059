package cv

import "github.com/polyhedral/cpm/sparsevec"

// Scaler is min-max scaling fitted on a training set (Xu and Zhang scale
// each attribute to [0,1]):
//
//	x'_j = (x_j - min_j) / (max_j - min_j)
//
// where min_j and max_j are taken over the training rows. An absent entry
// is a zero, so min_j and max_j include 0 for a feature that some training
// row lacks.
//
//   - A feature constant on the training set (max_j == min_j) maps to 0.
//   - A feature no training row stores ("unseen", including any index at or
//     above the training Dim) also maps to 0: it is dropped, since the
//     training set says nothing about its range.
//   - Values of other data are not clipped: a test value outside the
//     training range scales to below 0 or above 1.
//
// The division is done in float64 and rounded to float32 once, so the
// training minimum and maximum map to exactly 0 and 1.
//
// A Scaler is not modified by Apply and may be shared by goroutines.
type Scaler struct {
	lo  []float64 // min_j
	rng []float64 // max_j - min_j; 0 for constant and unseen features
	// fill lists, ascending, the features whose scaled zero is not zero
	// (min_j != 0 and not constant); fillVal holds -min_j/(max_j-min_j).
	fill    []uint32
	fillVal []float32
}

// FitScaler computes min_j and max_j of every feature of train. It panics
// if train is malformed (a Ptr entry out of range of Idx).
func FitScaler(train *sparsevec.CSR) *Scaler {
	rows := train.Rows()
	dim := train.Dim
	for r := range rows {
		if v := train.Row(r); len(v.Idx) > 0 {
			dim = max(dim, int(v.MaxIndex())+1)
		}
	}
	lo := make([]float64, dim)
	hi := make([]float64, dim)
	count := make([]int, dim)
	val := train.Val[:len(train.Idx)]
	for i, j := range train.Idx {
		v := float64(val[i])
		if count[j] == 0 || v < lo[j] {
			lo[j] = v
		}
		if count[j] == 0 || v > hi[j] {
			hi[j] = v
		}
		count[j]++
	}
	s := &Scaler{lo: lo, rng: hi} // hi becomes rng in place
	for j := range dim {
		if count[j] == 0 {
			lo[j], hi[j] = 0, 0
			continue
		}
		if count[j] < rows { // some row lacks j: a zero takes part
			lo[j] = min(lo[j], 0)
			hi[j] = max(hi[j], 0)
		}
		s.rng[j] = hi[j] - lo[j]
		if s.rng[j] == 0 {
			continue
		}
		if z := float32(-lo[j] / s.rng[j]); z != 0 {
			s.fill = append(s.fill, uint32(j))
			s.fillVal = append(s.fillVal, z)
		}
	}
	return s
}

// scale returns the scaled value of feature j, or 0 for a constant or
// unseen feature.
func (s *Scaler) scale(j uint32, v float32) float32 {
	if int(j) >= len(s.rng) || s.rng[j] == 0 {
		return 0
	}
	return float32((float64(v) - s.lo[j]) / s.rng[j])
}

// Apply writes the scaled rows of src into dst, which is Reset first; the
// labels are copied. Entries whose scaled value is 0 are omitted, and every
// feature with min_j != 0 (that is not constant) gets an entry in every row,
// its scaled zero -min_j/(max_j-min_j) where the row lacks it. So the output
// is sparse exactly where scaling keeps zeros at zero.
//
// dst.Dim is src.Dim, or more if an added scaled zero needs it (which cannot
// happen when the Scaler was fitted on rows with the same Dim).
// It panics if dst == src.
func (s *Scaler) Apply(dst, src *sparsevec.CSR) {
	if dst == src {
		panic("cv: Scaler.Apply with dst == src")
	}
	dst.Reset()
	dst.Ptr = append(dst.Ptr, 0)
	dst.Labels = append(dst.Labels, src.Labels...)
	fill, fillVal := s.fill, s.fillVal[:len(s.fill)]
	for r := range src.Rows() {
		x := src.Row(r)
		idx, val := x.Idx, x.Val[:len(x.Idx)]
		i, f := 0, 0
		for i < len(idx) || f < len(fill) {
			if f < len(fill) && (i == len(idx) || fill[f] < idx[i]) {
				dst.Idx = append(dst.Idx, fill[f])
				dst.Val = append(dst.Val, fillVal[f])
				f++
				continue
			}
			j := idx[i]
			if f < len(fill) && fill[f] == j {
				f++
			}
			if v := s.scale(j, val[i]); v != 0 {
				dst.Idx = append(dst.Idx, j)
				dst.Val = append(dst.Val, v)
			}
			i++
		}
		dst.Ptr = append(dst.Ptr, len(dst.Idx))
	}
	dst.Dim = src.Dim
	if len(fill) > 0 && src.Rows() > 0 {
		dst.Dim = max(dst.Dim, int(fill[len(fill)-1])+1)
	}
}
