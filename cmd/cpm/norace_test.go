//go:build !race

package main

// raceEnabled reports whether the race detector is on; its shadow memory
// inflates a process's RSS, so memory bounds are checked without it only.
const raceEnabled = false
