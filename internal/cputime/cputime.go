// Package cputime reads CPU time for benchmarks that report it beside the
// wall time: on a machine shared with other work, CPU time per iteration
// varies much less than wall time, so interleaved before/after runs are
// compared on it.
package cputime

import "testing"

// Report reports the process CPU time spent since start (a Process
// reading) per iteration of b as the metric "cpu-ns/"+unit. It reports
// nothing when the system gives no CPU time.
func Report(b *testing.B, start int64, unit string) {
	if cpu := Process() - start; start > 0 && cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/"+unit)
	}
}
