//go:build !race

package main

// rssBoundsHold says whether peak-RSS bounds apply: not under the race
// detector, whose shadow memory inflates RSS.
const rssBoundsHold = true
