package synth

// Halfspace is the set {x : W·x + B ≥ 0}.
type Halfspace struct {
	W []float64
	B float64
}

// Value returns W·x + B, summing W_i·x_i in order of i and adding B last.
// It panics if len(x) != len(h.W).
func (h Halfspace) Value(x []float64) float64 {
	if len(x) != len(h.W) {
		panic("synth: Halfspace.Value: dimension mismatch")
	}
	var s float64
	for i, w := range h.W {
		s += w * x[i]
	}
	return s + h.B
}

// Contains reports whether W·x + B ≥ 0. It panics if len(x) != len(h.W).
func (h Halfspace) Contains(x []float64) bool { return h.Value(x) >= 0 }

// Polyhedron is the intersection of its halfspaces.
type Polyhedron []Halfspace

// Contains reports whether x lies in every halfspace of p (points on a
// boundary are inside). It panics if len(x) differs from the dimension of a
// halfspace.
func (p Polyhedron) Contains(x []float64) bool {
	for _, h := range p {
		if !h.Contains(x) {
			return false
		}
	}
	return true
}

// PolyceptronD1 is the polyhedron of the Polyceptron paper's Dataset 1, in
// [-1,1]^10 (section 4.1):
//
//	(a) x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + 1 ≥ 0
//	(b) x1 - x2 + x3 - x4 + x5 - x6 + x7 - x8 + x9 - x10 + 1 ≥ 0
//	(c) x1 + x3 + x5 + x7 + x9 + 0.5 ≥ 0
//
// Lookup returns a fresh copy; do not modify this variable.
var PolyceptronD1 = polyceptronD1()

// PolyceptronD2 is the polyhedron of the Polyceptron paper's Dataset 2, in
// [-1,1]^20 (section 4.1):
//
//	(a) x1 + 2x2 + 3x3 + 4x4 + 5x5 + 6x6 + 7x7 + 8x8 + 8x9 + 8x10 + 20x11
//	    + 8x12 + 7x13 + 6x14 + 5x15 + 4x16 + 3x17 + 2x18 + x19 + x20 + 20 ≥ 0
//	(b) -x1 + 2x2 - 3x3 + 4x4 - 5x5 + 6x6 - 7x7 + 8x8 - 9x9 + 15x10 - 11x11
//	    + 10x12 - 9x13 + 8x14 - 7x15 + 6x16 - 5x17 + 4x18 - 3x19 + 2x20 + 15 ≥ 0
//	(c) x1 + x3 + x5 + x7 + 2x8 + 8x10 + 2x12 + 3x13 + 3x15 + 3x16 + 4x18
//	    + 4x20 + 8 ≥ 0
//	(d) x1 - x2 + 2x5 - 2x6 + 6x9 - 3x10 + 4x13 - 4x14 + 5x17 - 5x18 + 6 ≥ 0
//
// The paper's text lost several minus signs: it prints (b) as
// "-x1 + 2x2 3x3 + 4x4 5x5 + ... + 15x10 11x11 + ..." and (d) as
// "x1 x2 + 2x5 2x6 + 6x9 3x10 + ...". Where an operator is missing we
// restore a minus, which makes (b) alternate in sign like Dataset 1's (b):
// in (b) before 3x3, 5x5, 7x7, 9x9, 11x11, 9x13, 7x15, 5x17 and 3x19, and
// in (d) before x2, 2x6, 3x10, 4x14 and 5x18. The coefficients that were
// printed (15x10, 10x12 in (b), for instance) are kept as printed; (a) and
// (c) are as printed.
//
// Lookup returns a fresh copy; do not modify this variable.
var PolyceptronD2 = polyceptronD2()

func polyceptronD1() Polyhedron {
	return Polyhedron{
		{W: []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, B: 1},
		{W: []float64{1, -1, 1, -1, 1, -1, 1, -1, 1, -1}, B: 1},
		{W: []float64{1, 0, 1, 0, 1, 0, 1, 0, 1, 0}, B: 0.5},
	}
}

func polyceptronD2() Polyhedron {
	return Polyhedron{
		{W: []float64{1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 20, 8, 7, 6, 5, 4, 3, 2, 1, 1}, B: 20},
		{W: []float64{-1, 2, -3, 4, -5, 6, -7, 8, -9, 15, -11, 10, -9, 8, -7, 6, -5, 4, -3, 2}, B: 15},
		{W: []float64{1, 0, 1, 0, 1, 0, 1, 2, 0, 8, 0, 2, 3, 0, 3, 3, 0, 4, 0, 4}, B: 8},
		{W: []float64{1, -1, 0, 0, 2, -2, 0, 0, 6, -3, 0, 0, 4, -4, 0, 0, 5, -5, 0, 0}, B: 6},
	}
}
