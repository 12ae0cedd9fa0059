//go:build !unix

package libsvm

func cpuTime() int64 { return 0 }
