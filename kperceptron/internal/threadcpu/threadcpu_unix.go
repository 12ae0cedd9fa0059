//go:build linux || freebsd || netbsd || openbsd || dragonfly

package threadcpu

import "syscall"

// rusageThread is RUSAGE_THREAD (RUSAGE_LWP on the BSDs).
const rusageThread = 1

// Nanos returns the user and system CPU time of the calling thread in
// nanoseconds, or 0 if the system does not report it.
func Nanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
