//go:build !amd64 || purego

package kvec

type asmMode struct {
	name string
	set  func() (restore func())
}

func asmModes() []asmMode {
	return []asmMode{{"generic", func() func() { return func() {} }}}
}

func vectorExp() bool { return false }
