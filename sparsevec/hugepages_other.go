//go:build !linux

package sparsevec

// AdviseHugePages asks for transparent huge pages under the nonzeros of
// ps on Linux; elsewhere it does nothing.
func AdviseHugePages(ps []*Packed) {}
