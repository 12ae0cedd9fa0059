//go:build linux || freebsd || netbsd || openbsd || dragonfly

package cputime

// rusageThread is RUSAGE_THREAD (RUSAGE_LWP on the BSDs).
const rusageThread = 1

// Thread returns the user and system CPU time of the calling OS thread in
// nanoseconds, or 0 if the system does not report it. Callers lock the
// goroutine to its thread (runtime.LockOSThread) around a measurement.
func Thread() int64 { return rusage(rusageThread) }
