//go:build amd64 && !purego

package sparsevec

import "unsafe"

// prefetchRange issues PREFETCHT0 for every 64-byte line of [p, p+n).
//
//go:noescape
func prefetchRange(p unsafe.Pointer, n uintptr)

// prefetchPair issues PREFETCHT0 for every 64-byte line of [p, p+n) and
// of [q, q+n).
//
//go:noescape
func prefetchPair(p, q unsafe.Pointer, n uintptr)

// prefetchRows issues PREFETCHT0 for the first 64-byte line of row j of
// the d rows of strideBytes at w, for every j in idx below d.
//
//go:noescape
func prefetchRows(w unsafe.Pointer, d, strideBytes int, idx []uint32)
