//go:build linux

package sparsevec

import (
	"runtime"
	"slices"
	"syscall"
	"unsafe"
)

// madvCollapse is Linux's MADV_COLLAPSE (6.1 on), which package syscall
// does not name.
const madvCollapse = 25

// AdviseHugePages asks the kernel to back the nonzeros of ps (their index
// and value arrays) with transparent huge pages of 2 MiB: MADV_HUGEPAGE on
// the 2 MiB-aligned ranges that hold them, then MADV_COLLAPSE, which
// gathers the pages already in place into huge ones at once. Rows read in
// a random order from tens of megabytes otherwise miss the TLB on almost
// every row, and each miss stalls the prefetch that asks for the row on a
// page walk (MNIST's held stream copy, 27 MB: 4 KiB pages take a fifth of
// the SGD loop of a double-sided run). The ranges may hold other memory of
// the process besides; the advice changes no contents, only how pages are
// backed. It is a hint: errors (a kernel without MADV_COLLAPSE, huge pages
// disabled, memory too fragmented to find them) are ignored.
func AdviseHugePages(ps []*Packed) {
	const huge = 2 << 20
	var spans [][2]uintptr
	add := func(p unsafe.Pointer, n uintptr) {
		if n == 0 {
			return
		}
		lo := uintptr(p) &^ (huge - 1)
		hi := (uintptr(p) + n + huge - 1) &^ (huge - 1)
		spans = append(spans, [2]uintptr{lo, hi})
	}
	for _, p := range ps {
		if len(p.idx16) > 0 {
			add(unsafe.Pointer(&p.idx16[0]), 2*uintptr(len(p.idx16)))
		}
		if len(p.idx32) > 0 {
			add(unsafe.Pointer(&p.idx32[0]), 4*uintptr(len(p.idx32)))
		}
		if len(p.codes) > 0 {
			add(unsafe.Pointer(&p.codes[0]), uintptr(len(p.codes)))
		}
		if len(p.val) > 0 {
			add(unsafe.Pointer(&p.val[0]), 4*uintptr(len(p.val)))
		}
	}
	slices.SortFunc(spans, func(a, b [2]uintptr) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	for i := 0; i < len(spans); {
		lo, hi := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= hi; i++ {
			hi = max(hi, spans[i][1])
		}
		syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_HUGEPAGE)
		syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvCollapse)
	}
	runtime.KeepAlive(ps)
}
