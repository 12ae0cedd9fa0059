// Package threadcpu reads the CPU time of the calling OS thread, for
// benchmarks that report it beside the wall time: on a machine shared with
// other work it varies much less. Callers lock the goroutine to its thread
// (runtime.LockOSThread) around the measurement.
package threadcpu
