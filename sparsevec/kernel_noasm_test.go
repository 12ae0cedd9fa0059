//go:build !amd64 || purego

package sparsevec

func kernelImpls() []kernelImpl {
	return []kernelImpl{{"generic", func() func() { return func() {} }}}
}
