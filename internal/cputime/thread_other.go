//go:build !(linux || freebsd || netbsd || openbsd || dragonfly)

package cputime

// Thread returns 0: the per-thread CPU time is not read on this system.
func Thread() int64 { return 0 }
