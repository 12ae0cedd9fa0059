package sparsevec

import "math"

// Vector is one sparse row: Idx holds strictly ascending feature indices and
// Val the matching values. LIBSVM indices are 1-based and kept as they are;
// index 0 is reserved for the bias row of a Matrix.
//
// A Vector does not own its slices: vectors handed out by a CSR or a reader
// alias shared buffers and are valid only as long as their documentation says.
type Vector struct {
	Idx []uint32
	Val []float32
}

// Len returns the number of stored nonzeros.
func (v Vector) Len() int { return len(v.Idx) }

// MaxIndex returns the largest feature index in v, or 0 for an empty vector.
// Because indices are ascending it is O(1).
func (v Vector) MaxIndex() uint32 {
	if len(v.Idx) == 0 {
		return 0
	}
	return v.Idx[len(v.Idx)-1]
}

// Below returns the prefix of v whose indices are below d: the features a
// d-row weight matrix knows (features never seen in training have zero
// weight). Indices are ascending, so it trims from the end without
// copying. A v with fewer values than indices is returned unchanged, for
// the kernels to refuse.
func (v Vector) Below(d int) Vector {
	if len(v.Val) < len(v.Idx) {
		return v
	}
	n := len(v.Idx)
	for n > 0 && int64(v.Idx[n-1]) >= int64(d) {
		n--
	}
	return Vector{Idx: v.Idx[:n], Val: v.Val[:n]}
}

// SqNorm returns Σ v_i², accumulated in float64.
func (v Vector) SqNorm() float64 {
	var s float64
	for _, x := range v.Val {
		s += float64(x) * float64(x)
	}
	return s
}

// Dot returns the sparse–sparse inner product Σ_j u_j v_j by merging the two
// ascending index lists, accumulated in float64.
func Dot(u, v Vector) float64 {
	var s float64
	// Unsigned counters: the loop condition then proves every index in
	// range, and the loop has no bounds checks.
	var i, j uint
	ui, vi := u.Idx, v.Idx
	uv, vv := u.Val[:len(ui)], v.Val[:len(vi)]
	for i < uint(len(ui)) && j < uint(len(vi)) {
		switch a, b := ui[i], vi[j]; {
		case a == b:
			s += float64(uv[i]) * float64(vv[j])
			i++
			j++
		case a < b:
			i++
		default:
			j++
		}
	}
	return s
}

// DotDense returns Σ_i v.Val[i]·w[v.Idx[i]] in float64. It panics if an index
// is out of range of w.
func DotDense(v Vector, w []float64) float64 {
	var s float64
	val := v.Val[:len(v.Idx)]
	for i, j := range v.Idx {
		s += float64(val[i]) * w[j]
	}
	return s
}

// IsFinite reports whether every value of v is finite.
func (v Vector) IsFinite() bool {
	for _, x := range v.Val {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}
