//go:build amd64 && !purego

package kvec

type asmMode struct {
	name string
	set  func() (restore func())
}

// asmModes runs a test with the AVX2 kernel, if the CPU has it, and
// without.
func asmModes() []asmMode {
	modes := []asmMode{{"generic", func() func() {
		old := useAVX2
		useAVX2 = false
		return func() { useAVX2 = old }
	}}}
	if useAVX2 {
		modes = append(modes, asmMode{"avx2", func() func() { return func() {} }})
	}
	return modes
}

func vectorExp() bool { return useAVX2 }
