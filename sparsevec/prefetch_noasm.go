//go:build !amd64 || purego

package sparsevec

import "unsafe"

func prefetchRange(p unsafe.Pointer, n uintptr) {}
