//go:build unix

package sparsevec

import (
	"syscall"
	"testing"
)

// cpuTime returns the user+system CPU time of the process in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU reports the process CPU time since cpu0 per iteration as
// cpu-ns/op: on a shared machine it varies less than the wall time, which
// counts the time the benchmark waits for a core.
func reportCPU(b *testing.B, cpu0 int64) {
	if cpu := cpuTime() - cpu0; cpu0 > 0 && cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
}
