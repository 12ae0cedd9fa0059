package libsvm

import (
	"errors"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// The limit errors say which limit was exceeded, so that a command can say
// which flag raises it.
func TestLimitErrorsNameTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		opts       []core.Option
		want       error
		msg        string
	}{
		{"index", "1 1:1\n1 785:1\n", []core.Option{core.WithMaxIndex(784)}, core.ErrIndexRange, `f:2:3: feature index out of range: above the maximum 784 (near "785:1")`},
		{"index overflow", "1 4294967296:1\n", nil, core.ErrIndexRange, `f:1:3: feature index out of range: above the maximum 4294967295 (near "4294967296:1")`},
		{"line", "1 1:1\n1 1:1 2:1 3:1 4:1 5:1\n", []core.Option{core.WithMaxLineBytes(16)}, core.ErrLineTooLong, `f:2:17: line too long: more than 16 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rd := range allReaders {
				_, err := rd.read([]byte(tc.text), "f", tc.opts...)
				if !errors.Is(err, tc.want) || err.Error() != tc.msg {
					t.Errorf("%s: %v, want %s", rd.name, err, tc.msg)
				}
			}
		})
	}
}
