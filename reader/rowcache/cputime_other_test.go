//go:build !unix

package rowcache_test

// cpuTime is 0 where the CPU time is not read: the benchmarks then report
// no CPU figure worth reading.
func cpuTime() int64 { return 0 }
