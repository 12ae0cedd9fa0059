package main

import (
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// watchdog panics with a dump of every goroutine if stop is not called
// within d, so that a hang fails CI with the stacks that hang instead of
// stalling it until the go test timeout.
func watchdog(t testing.TB, d time.Duration) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	name := t.Name()
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			var b strings.Builder
			pprof.Lookup("goroutine").WriteTo(&b, 2)
			panic("watchdog: " + name + " still running after " + d.String() + "\n" + b.String())
		}
	}()
	return func() { close(done) }
}

// settledGoroutines waits up to a few seconds for the number of goroutines
// to fall to at most want and returns the last count.
func settledGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	return n
}
