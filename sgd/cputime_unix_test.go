//go:build unix

package sgd

import "syscall"

// cpuTime returns the user+system CPU time of the process in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
