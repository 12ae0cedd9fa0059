//go:build !unix

package reader

func cpuTime() int64 { return 0 }
