package assign

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// stateVersion is the first byte of the encoding of AppendBinary.
const stateVersion = 1

// stateFixed is the size of the encoding without counts and dictionary:
// version, K, h, n, S and the dictionary length.
const stateFixed = 1 + 4 + 8 + 8 + 8 + 8

// ErrState is wrapped by the errors of UnmarshalBinary.
var ErrState = errors.New("assign: bad state encoding")

// AppendBinary appends the complete state of a to b and returns the
// extended slice; UnmarshalBinary restores it exactly, so that training
// resumed from a checkpoint assigns as the uninterrupted run would. It
// implements encoding.BinaryAppender and allocates only if b lacks room.
//
// The encoding, little-endian:
//
//	1 byte   version = 1
//	uint32   K (faces)
//	float64  h (target entropy), as IEEE-754 bits
//	int64    n = Σ_k n_k (distinct positive instances in UNADJ)
//	float64  S = Σ_k n_k ln n_k as accumulated (bits, not recomputed)
//	uint64   L, the dictionary length (instance ids reserved)
//	K int64  counts n_k
//	L uint16 UNADJ: 1 + face of each instance id's last unadjusted
//	         assignment, 0 = unseen
func (a *Assigner) AppendBinary(b []byte) ([]byte, error) {
	le := binary.LittleEndian
	b = append(b, stateVersion)
	b = le.AppendUint32(b, uint32(len(a.counts)))
	b = le.AppendUint64(b, math.Float64bits(a.h))
	b = le.AppendUint64(b, uint64(a.n))
	b = le.AppendUint64(b, math.Float64bits(a.s))
	b = le.AppendUint64(b, uint64(len(a.unadj)))
	for _, c := range a.counts {
		b = le.AppendUint64(b, uint64(c))
	}
	for _, u := range a.unadj {
		b = le.AppendUint16(b, u)
	}
	return b, nil
}

// MarshalBinary returns the encoding of AppendBinary.
func (a *Assigner) MarshalBinary() ([]byte, error) {
	return a.AppendBinary(make([]byte, 0, stateFixed+8*len(a.counts)+2*len(a.unadj)))
}

// UnmarshalBinary replaces a's state by the one encoded in data by
// AppendBinary. It never panics and allocates only what data holds (sizes
// are checked against its length first); it refuses, with an error
// wrapping ErrState, any encoding AppendBinary cannot produce: a bad
// version, K out of range, h negative or not finite, a dictionary entry
// beyond K, counts that disagree with the dictionary or n, S not finite,
// or trailing bytes. On error a is unchanged.
func (a *Assigner) UnmarshalBinary(data []byte) error {
	le := binary.LittleEndian
	if len(data) < stateFixed {
		return fmt.Errorf("%w: %d bytes, want at least %d", ErrState, len(data), stateFixed)
	}
	if data[0] != stateVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrState, data[0], stateVersion)
	}
	k := uint64(le.Uint32(data[1:]))
	h := math.Float64frombits(le.Uint64(data[5:]))
	n := int64(le.Uint64(data[13:]))
	s := math.Float64frombits(le.Uint64(data[21:]))
	l := le.Uint64(data[29:])
	rest := data[stateFixed:]
	switch {
	case k < 1 || k > MaxFaces:
		return fmt.Errorf("%w: K = %d, want 1 to %d", ErrState, k, MaxFaces)
	case h < 0 || math.IsNaN(h) || math.IsInf(h, 0):
		return fmt.Errorf("%w: target entropy %v", ErrState, h)
	case math.IsNaN(s) || math.IsInf(s, 0):
		return fmt.Errorf("%w: entropy accumulator S = %v", ErrState, s)
	case l > uint64(len(rest))/2 || 8*k+2*l != uint64(len(rest)):
		return fmt.Errorf("%w: %d bytes of counts and dictionary do not match K = %d and %d ids", ErrState, len(rest), k, l)
	}
	counts := make([]int64, k)
	for i := range counts {
		counts[i] = int64(le.Uint64(rest[8*i:]))
	}
	rest = rest[8*k:]
	unadj := make([]uint16, l)
	seen := make([]int64, k)
	var total int64
	for i := range unadj {
		u := le.Uint16(rest[2*i:])
		if uint64(u) > k {
			return fmt.Errorf("%w: instance %d assigned to face %d of %d", ErrState, i, int(u)-1, k)
		}
		if u > 0 {
			seen[u-1]++
			total++
		}
		unadj[i] = u
	}
	for i, c := range counts {
		if c != seen[i] {
			return fmt.Errorf("%w: count of face %d is %d, the dictionary holds %d", ErrState, i, c, seen[i])
		}
	}
	if n != total {
		return fmt.Errorf("%w: n = %d, the dictionary holds %d instances", ErrState, n, total)
	}
	a.h, a.counts, a.n, a.s, a.unadj = h, counts, n, s, unadj
	return nil
}
