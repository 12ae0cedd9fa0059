package binio

import (
	"encoding/binary"
	"math"
)

// Array reads n elements of size bytes each, at most chunk bytes a read,
// decoding each span with dec (dst has one element per size bytes of b).
// With a known input length it first checks that the n·size bytes remain
// (NeedElems) and allocates the slice once; otherwise the slice grows as
// the bytes arrive (GrowTo). It returns nil for n == 0. chunk must be at
// least size and at most the buffer bound of NewReader.
func Array[T any](d *Decoder, n uint64, size, chunk int, dec func(dst []T, b []byte)) ([]T, error) {
	if n == 0 {
		return nil, nil
	}
	if err := d.NeedElems(n, size); err != nil {
		return nil, err
	}
	var s []T
	if d.size >= 0 {
		s = make([]T, 0, n) // the bytes are known to be present
	}
	for left := n; left > 0; {
		c := min(left, uint64(chunk/size))
		b, err := d.Next(int(c) * size)
		if err != nil {
			return nil, err
		}
		l := len(s)
		s = GrowTo(s, l+int(c), int(min(n, math.MaxInt)))
		dec(s[l:], b)
		left -= c
	}
	return s, nil
}

// GrowTo returns s extended to length at least n, keeping its contents and
// zeroing the new elements. Capacity grows geometrically but never beyond
// limit, so a slice that ends at length limit was allocated at most twice
// its final size in total and ends with no slack beyond limit.
func GrowTo[T any](s []T, n, limit int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		return s[:n]
	}
	c := min(max(2*cap(s), n), limit)
	ns := make([]T, n, c)
	copy(ns, s)
	return ns
}

// DecF32 decodes len(dst) little-endian float32 values from b.
func DecF32(dst []float32, b []byte) {
	b = b[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// DecU32 decodes len(dst) little-endian uint32 values from b.
func DecU32(dst []uint32, b []byte) {
	b = b[:4*len(dst)]
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
}

// DecU64 decodes len(dst) little-endian uint64 values from b.
func DecU64(dst []uint64, b []byte) {
	b = b[:8*len(dst)]
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
}

// DecI64 decodes len(dst) little-endian int64 values (two's complement)
// from b.
func DecI64(dst []int64, b []byte) {
	b = b[:8*len(dst)]
	for i := range dst {
		dst[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
}

// DecF64 decodes len(dst) little-endian float64 values from b.
func DecF64(dst []float64, b []byte) {
	b = b[:8*len(dst)]
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
}
