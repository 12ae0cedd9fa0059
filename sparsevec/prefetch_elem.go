package sparsevec

import "unsafe"

// PrefetchElem asks the CPU to start loading element i of s (the 64-byte
// lines its unsafe.Sizeof bytes fall in), so that a caller can overlap the
// memory latency of a record it will read a step later with its work on
// the current one. It is a hint: it has no visible effect, does not
// allocate, is a no-op when i is out of range or without the assembly
// path.
func PrefetchElem[T any](s []T, i int) {
	if uint(i) >= uint(len(s)) {
		return
	}
	prefetchRange(unsafe.Pointer(&s[i]), unsafe.Sizeof(s[i]))
}
