package sparsevec

import "unsafe"

// PrefetchRow asks the CPU to start loading the nonzeros of row r of m into
// cache, so that a learner can overlap the memory latency of the next row
// with the arithmetic of the current one. It is a hint: it never faults,
// has no visible effect, and is a no-op without the assembly path or when
// r is out of range.
func (m *CSR) PrefetchRow(r int) {
	if r < 0 || r+1 >= len(m.Ptr) {
		return
	}
	lo, hi := m.Ptr[r], m.Ptr[r+1]
	if lo >= hi {
		return
	}
	prefetchPair(unsafe.Pointer(&m.Idx[lo]), unsafe.Pointer(&m.Val[lo]), uintptr(hi-lo)*4)
}

// PrefetchPtr hints that row r's offsets and label will be read soon (the
// first hop of PrefetchRow for a row two steps ahead).
func (m *CSR) PrefetchPtr(r int) {
	if r < 0 || r+1 >= len(m.Ptr) {
		return
	}
	prefetchRange(unsafe.Pointer(&m.Ptr[r]), 16)
	prefetchRange(unsafe.Pointer(&m.Labels[r]), 4)
}

// Prefetch asks the CPU to start loading the nonzeros of x into cache; see
// PrefetchRow. It is a hint with no visible effect.
func (x Vector) Prefetch() {
	n := min(len(x.Idx), len(x.Val))
	if n == 0 {
		return
	}
	prefetchRange(unsafe.Pointer(&x.Idx[0]), uintptr(n)*4)
	prefetchRange(unsafe.Pointer(&x.Val[0]), uintptr(n)*4)
}
