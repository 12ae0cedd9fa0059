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

// prefetchMinBytes is the size of a weight matrix below which
// Matrix.Prefetch does nothing: the caches hold such a matrix across steps,
// and the prefetches cost more than they save (MNIST-2, K=10, W of 50 KB:
// +40% CPU for the whole run). On a URL-like matrix of 3.2M features (W of
// 200 MB) they save 17% of the SGD loop's CPU time.
const prefetchMinBytes = 16 << 20

// Prefetch asks the CPU to start loading the weight rows of x's nonzeros
// (the first 64 bytes of each), so that a learner can overlap their memory
// latency with the work on the row before x. It does nothing unless the
// matrix holds at least 16 MiB of weights, which the caches cannot hold
// across steps. It is a hint: it never faults, has no visible effect,
// skips indices not below D, does not allocate, and is a no-op without
// the assembly path.
func (m *Matrix) Prefetch(x Vector) {
	d := min(m.D, len(m.Data)/max(m.Stride, 1))
	if d*m.Stride*4 < prefetchMinBytes || len(x.Idx) == 0 {
		return
	}
	prefetchRows(unsafe.Pointer(&m.Data[0]), d, m.Stride*4, x.Idx)
}

// prefetchTableBytes is the size of a table below which PrefetchIndexed
// does nothing: the caches hold it.
const prefetchTableBytes = 1 << 20

// PrefetchIndexed asks the CPU to start loading table[j] (the 64-byte line
// that holds its first byte) for every j in idx below len(table): for a
// loop over a row's entries that reads a large per-feature table at
// random, the next row's lines can load while the current row is
// processed. It does nothing for a table under 1 MiB, which the caches
// hold. It is a hint with no visible effect, does not allocate, and is a
// no-op without the assembly path.
func PrefetchIndexed[T any](table []T, idx []uint32) {
	if len(idx) == 0 || uintptr(len(table))*unsafe.Sizeof(table[0]) < prefetchTableBytes {
		return
	}
	prefetchRows(unsafe.Pointer(&table[0]), len(table), int(unsafe.Sizeof(table[0])), idx)
}

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
