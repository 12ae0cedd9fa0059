//go:build unix

package cputime

import "syscall"

// Process returns the user and system CPU time of the process in
// nanoseconds, or 0 if the system does not report it.
func Process() int64 { return rusage(syscall.RUSAGE_SELF) }

// rusage returns the user and system CPU time of who in nanoseconds, or 0.
func rusage(who int) int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
