// Package featurehash is feature hashing: murmur3 of the feature index.
// It maps the feature indices of sparse rows into a fixed space of 2^B
// rows, so that a model's size follows B rather than the largest index the
// data holds (the hashing trick of Weinberger et al., "Feature Hashing for
// Large Scale Multitask Learning", ICML 2009, as Vowpal Wabbit applies it
// with its -b bits).
//
// Feature j (a uint32, the index as read: LIBSVM indices are 1-based) goes
// to
//
//	h(j) = 1 + (murmur3_x86_32(j as 4 little-endian bytes, seed) & (2^B - 1))
//
// so hashed indices run from 1 to 2^B and row 0 stays the bias row: the
// hashed space has D = 2^B + 1 rows. murmur3_x86_32 is Austin Appleby's
// MurmurHash3 (the 32-bit x86 variant of SMHasher), written out here and
// checked against the published test vectors. Vowpal Wabbit hashes the
// feature's name where this package hashes its index; the map is the same
// kind, not the same numbers.
//
// The features of one row that hash to the same index (a collision) are
// summed: the value of hashed index i is the sum, in float64 in ascending
// order of the original indices and rounded to float32 once, of the values
// of the features j with h(j) = i; a sum of exactly 0 leaves no entry, and
// a sum beyond the float32 range saturates at ±math.MaxFloat32, so that
// hashed rows stay finite as every row must.
// Hashed rows are sorted by index, as every sparsevec.Vector is.
package featurehash

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/polyhedral/cpm/sparsevec"
)

// MaxBits is the largest number of hash bits: 2^31 + 1 rows still have
// uint32 indices.
const MaxBits = 31

// MurmurHash3 x86_32 constants.
const (
	c1 = 0xcc9e2d51
	c2 = 0x1b873593
)

// Murmur3 returns MurmurHash3_x86_32 of key with the given seed.
func Murmur3(key []byte, seed uint32) uint32 {
	h := seed
	n := len(key)
	for len(key) >= 4 {
		h = mixBlock(h, uint32(key[0])|uint32(key[1])<<8|uint32(key[2])<<16|uint32(key[3])<<24)
		key = key[4:]
	}
	var k uint32
	switch len(key) {
	case 3:
		k ^= uint32(key[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(key[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(key[0])
		h ^= mixKey(k)
	}
	return fmix(h ^ uint32(n))
}

// hash4 is Murmur3 of the 4 little-endian bytes of j.
func hash4(j, seed uint32) uint32 { return fmix(mixBlock(seed, j) ^ 4) }

func mixKey(k uint32) uint32 {
	k *= c1
	k = bits.RotateLeft32(k, 15)
	return k * c2
}

func mixBlock(h, k uint32) uint32 {
	h ^= mixKey(k)
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

// fmix is the finalisation mix: it forces all bits of h to avalanche.
func fmix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// Hasher maps feature indices into 2^Bits hashed rows. It is read-only
// and may be shared by goroutines.
type Hasher struct {
	bits int
	seed uint32
	mask uint32
}

// New returns the hasher of 2^bits rows and the given murmur3 seed; bits
// must be 1 to MaxBits.
func New(bits int, seed uint32) (*Hasher, error) {
	if bits < 1 || bits > MaxBits {
		return nil, fmt.Errorf("featurehash: %d bits, want 1 to %d", bits, MaxBits)
	}
	return &Hasher{bits: bits, seed: seed, mask: 1<<bits - 1}, nil
}

// Bits returns the number of hash bits.
func (h *Hasher) Bits() int { return h.bits }

// Seed returns the murmur3 seed.
func (h *Hasher) Seed() uint32 { return h.seed }

// Dim returns the rows of the hashed space, 2^Bits + 1: the bias row 0 and
// the hashed rows 1 to 2^Bits.
func (h *Hasher) Dim() int { return int(h.mask) + 2 }

// Index returns the hashed index of feature j: 1 + (murmur3(j) & mask).
func (h *Hasher) Index(j uint32) uint32 { return 1 + hash4(j, h.seed)&h.mask }

// Row is a reusable buffer for hashing one row at a time. The zero value
// is ready to use; a Row is not safe for concurrent use.
type Row struct {
	keys []uint64 // hashed index << 32 | position in the row
	tmp  []uint64 // the radix sort's second buffer
	idx  []uint32
	val  []float32
}

// Hash returns x hashed by h, in r's buffers: valid until the next call.
// It allocates only when r's buffers must grow.
func (r *Row) Hash(h *Hasher, x sparsevec.Vector) sparsevec.Vector {
	r.idx, r.val = h.appendRow(r, r.idx[:0], r.val[:0], x)
	return sparsevec.Vector{Idx: r.idx, Val: r.val}
}

// appendRow appends the hashed entries of x to idx and val, using r's key
// buffer. Sorting the keys (hashed index, position) orders the entries by
// hashed index and, within one, by position, which is ascending original
// index: the order the sums are taken in.
func (h *Hasher) appendRow(r *Row, idx []uint32, val []float32, x sparsevec.Vector) ([]uint32, []float32) {
	xv := x.Val[:len(x.Idx)]
	r.keys = r.keys[:0]
	for i, j := range x.Idx {
		r.keys = append(r.keys, uint64(h.Index(j))<<32|uint64(i))
	}
	r.sortKeys(h.bits)
	keys := r.keys
	for i := 0; i < len(keys); {
		to := uint32(keys[i] >> 32)
		s := 0.0
		for ; i < len(keys) && uint32(keys[i]>>32) == to; i++ {
			s += float64(xv[uint32(keys[i])])
		}
		s = max(min(s, math.MaxFloat32), -math.MaxFloat32) // rows stay finite
		if v := float32(s); v != 0 {
			idx, val = append(idx, to), append(val, v)
		}
	}
	return idx, val
}

// radixMinKeys is the shortest row whose keys sortKeys sorts by radix:
// for shorter rows slices.Sort is as fast.
const radixMinKeys = 64

// sortKeys sorts r.keys, keys of a hasher of the given bits, ascending.
// The keys are made in position order, so a stable sort by the hashed
// index alone orders them fully: an LSD radix sort of the index's bits+1
// bits (it runs from 1 to 2^bits), 8 bits a pass.
func (r *Row) sortKeys(bits int) {
	keys := r.keys
	if len(keys) < radixMinKeys {
		slices.Sort(keys)
		return
	}
	r.tmp = slices.Grow(r.tmp[:0], len(keys))[:len(keys)]
	src, dst := keys, r.tmp
	for shift := 32; shift < 32+bits+1; shift += 8 {
		var count [256]int32
		for _, k := range src {
			count[byte(k>>shift)]++
		}
		var sum int32
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range src {
			d := byte(k >> shift)
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// Apply returns the rows of src hashed by h as a new CSR, labels copied.
// Its Dim is one more than the largest hashed index stored (at most
// h.Dim()), as for any CSR.
func (h *Hasher) Apply(src *sparsevec.CSR) *sparsevec.CSR {
	n := src.NNZ()
	dst := &sparsevec.CSR{Idx: make([]uint32, 0, n), Val: make([]float32, 0, n), Ptr: make([]int, 0, src.Rows()+1)}
	h.ApplyTo(dst, src, &Row{})
	return dst
}

// ApplyTo sets dst to the rows of src hashed by h, as Apply does, reusing
// dst's arrays and r's buffers: it allocates only when they must grow.
func (h *Hasher) ApplyTo(dst, src *sparsevec.CSR, r *Row) {
	dst.Labels = append(dst.Labels[:0], src.Labels...)
	dst.Idx, dst.Val = dst.Idx[:0], dst.Val[:0]
	dst.Ptr = append(dst.Ptr[:0], 0)
	dst.Dim = 0
	for i := range src.Rows() {
		dst.Idx, dst.Val = h.appendRow(r, dst.Idx, dst.Val, src.Row(i))
		dst.Ptr = append(dst.Ptr, len(dst.Idx))
		if n := len(dst.Idx); n > dst.Ptr[i] {
			dst.Dim = max(dst.Dim, int(dst.Idx[n-1])+1)
		}
	}
}
