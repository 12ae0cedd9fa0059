package reader_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/libsvm"
)

func ExampleParseError() {
	_, err := libsvm.LoadReader(strings.NewReader("1 1:1\n1 3:1 2:1\n"), "data.txt")
	fmt.Println(err)
	fmt.Println(errors.Is(err, reader.ErrUnsorted))
	var pe *reader.ParseError
	if errors.As(err, &pe) {
		fmt.Println(pe.Line, pe.Col)
	}
	// Output:
	// data.txt:2:7: feature indices not ascending (near "2:1")
	// true
	// 2 7
}
