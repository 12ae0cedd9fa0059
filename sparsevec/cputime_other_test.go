//go:build !unix

package sparsevec

import "testing"

func cpuTime() int64 { return 0 }

func reportCPU(b *testing.B, cpu0 int64) {}
