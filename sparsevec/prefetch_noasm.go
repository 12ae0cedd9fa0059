//go:build !amd64 || purego

package sparsevec

import "unsafe"

func prefetchRange(p unsafe.Pointer, n uintptr) {}

func prefetchPair(p, q unsafe.Pointer, n uintptr) {}

func prefetchRows(w unsafe.Pointer, d, strideBytes int, idx []uint32) {}
