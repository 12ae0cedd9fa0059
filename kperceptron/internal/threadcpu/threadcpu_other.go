//go:build !(linux || freebsd || netbsd || openbsd || dragonfly)

package threadcpu

// Nanos returns 0: the per-thread CPU time is not read on this system.
func Nanos() int64 { return 0 }
