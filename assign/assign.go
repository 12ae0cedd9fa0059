package assign

import (
	"fmt"
	"math"
)

// MaxFaces is the largest number of faces an Assigner supports (face
// indices are stored in 16 bits per instance).
const MaxFaces = math.MaxUint16 - 1

// Assigner holds the UNADJ dictionary and its assignment counts for one
// polytope. The zero value is not usable; call New. An Assigner is not safe
// for concurrent use: each polytope owns one.
type Assigner struct {
	h      float64
	counts []int64
	n      int64
	s      float64  // Σ_k n_k ln n_k
	unadj  []uint16 // instance id -> 1 + face of its last unadjusted assignment; 0 = unseen
}

// New returns an Assigner for k faces with target entropy h (nats; 0 means
// plain argmax). It returns an error if k is out of range or h is negative
// or not finite.
func New(k int, h float64) (*Assigner, error) {
	if k < 1 || k > MaxFaces {
		return nil, fmt.Errorf("assign: number of faces %d out of range [1, %d]", k, MaxFaces)
	}
	if h < 0 || math.IsNaN(h) || math.IsInf(h, 0) {
		return nil, fmt.Errorf("assign: target entropy %v must be finite and >= 0", h)
	}
	return &Assigner{h: h, counts: make([]int64, k)}, nil
}

// Reserve makes room for instance ids below n so that Assign does not grow
// the dictionary during training (ids at or above n still work; the
// dictionary then grows geometrically).
func (a *Assigner) Reserve(n int) {
	if n > len(a.unadj) {
		u := make([]uint16, n)
		copy(u, a.unadj)
		a.unadj = u
	}
}

func xlogx(n int64) float64 {
	if n <= 1 {
		return 0
	}
	f := float64(n)
	return f * math.Log(f)
}

func entropy(s float64, n int64) float64 {
	if n <= 1 {
		return 0
	}
	f := float64(n)
	h := math.Log(f) - s/f
	if h < 0 { // rounding
		return 0
	}
	return h
}

// Entropy returns the entropy, in nats, of the assignment distribution held
// in UNADJ.
func (a *Assigner) Entropy() float64 { return entropy(a.s, a.n) }

// Counts returns the number of distinct positive instances whose last
// unadjusted assignment is each face. The slice is owned by a; do not modify.
func (a *Assigner) Counts() []int64 { return a.counts }

// Target returns h.
func (a *Assigner) Target() float64 { return a.h }

// with returns (S', n') for UNADJ + (id -> k) given the previous face prev
// (-1 if id was unseen).
func (a *Assigner) with(prev, k int) (float64, int64) {
	if prev == k {
		return a.s, a.n
	}
	s := a.s - xlogx(a.counts[k]) + xlogx(a.counts[k]+1)
	n := a.n + 1
	if prev >= 0 {
		s += xlogx(a.counts[prev]-1) - xlogx(a.counts[prev])
		n--
	}
	return s, n
}

// Assign returns the face that positive instance id should update, given the
// K face scores of that instance (Algorithm 2), and records the instance's
// unadjusted assignment. Ties in scores go to the lowest face index. If no
// face would raise the entropy (possible only when h exceeds what the counts
// can reach), the unadjusted face is returned.
//
// It panics if len(scores) < K or id < 0. It allocates only when id is
// beyond the reserved dictionary.
func (a *Assigner) Assign(scores []float32, id int) int {
	k := len(a.counts)
	scores = scores[:k]
	unadj := 0
	for j := 1; j < k; j++ {
		if scores[j] > scores[unadj] {
			unadj = j
		}
	}
	if id >= len(a.unadj) {
		c := 2 * len(a.unadj)
		if c <= id {
			c = id + 1
		}
		a.Reserve(c)
	}
	prev := int(a.unadj[id]) - 1
	adj := unadj
	if a.h > 0 {
		if s, n := a.with(prev, unadj); entropy(s, n) < a.h {
			cur := a.Entropy()
			best := -1
			for j := 0; j < k; j++ {
				if a.raises(prev, j, cur) && (best < 0 || scores[j] > scores[best]) {
					best = j
				}
			}
			if best >= 0 {
				adj = best
			}
		}
	}
	a.record(id, prev, unadj)
	return adj
}

// raises reports whether ENTROPY(UNADJ + (id, k)) > ENTROPY(UNADJ) = cur,
// where prev is id's current face (-1 if unseen).
//
// For a re-seen instance n is unchanged and moving it from prev to k lowers
// S = Σ n_j ln n_j (raising H) exactly when g(n_k) < g(n_prev - 1) with
// g(c) = (c+1)ln(c+1) - c ln c increasing, i.e. when n_k < n_prev - 1: an
// exact integer test, so mathematically equal entropies never compare as
// "greater" through rounding. For a new instance the comparison is in
// floating point with a 1e-12 guard against rounding.
func (a *Assigner) raises(prev, k int, cur float64) bool {
	if prev >= 0 {
		return a.counts[k] < a.counts[prev]-1
	}
	s, n := a.with(prev, k)
	return entropy(s, n) > cur+1e-12
}

func (a *Assigner) record(id, prev, k int) {
	if prev == k {
		return
	}
	a.s, a.n = a.with(prev, k)
	a.counts[k]++
	if prev >= 0 {
		a.counts[prev]--
	}
	a.unadj[id] = uint16(k + 1)
}

// State returns the dictionary (1 + face per instance id, 0 = unseen) for
// checkpointing. The slice is owned by a.
func (a *Assigner) State() []uint16 { return a.unadj }
