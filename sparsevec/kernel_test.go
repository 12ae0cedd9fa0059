package sparsevec

import "testing"

// kernelImpl is one implementation of the kernels; use switches the
// exported Matrix methods to it and returns a function restoring the
// previous choice.
type kernelImpl struct {
	name string
	use  func() (restore func())
}

// forEachImpl runs f once per kernel implementation available on this
// machine, as a subtest named after it, with the exported Matrix methods
// switched to that implementation.
func forEachImpl(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, impl := range kernelImpls() {
		t.Run(impl.name, func(t *testing.T) {
			defer impl.use()()
			f(t)
		})
	}
}
