//go:build !linux

package budget

// physical is not implemented off Linux: Physical assumes fallbackMemory.
func physical() (int64, bool) { return 0, false }
