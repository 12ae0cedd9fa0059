//go:build unix

package rowcache_test

import "syscall"

// cpuTime is the CPU time the process has used, user and system, in
// nanoseconds: on a shared machine it varies less than the wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
