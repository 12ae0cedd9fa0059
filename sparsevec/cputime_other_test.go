//go:build !unix

package sparsevec

func cpuTime() int64 { return 0 }
