//go:build !unix

package sgd

func cpuTime() int64 { return 0 }
