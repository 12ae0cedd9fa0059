package libsvm_test

import (
	"fmt"
	"strings"

	"github.com/polyhedral/cpm/reader/libsvm"
)

func ExampleScanner() {
	in := "# label [qid:N] index:value ...\r\n+1 qid:3 1:0.5 3:2\r\n\n-1 qid:7 2:1e-3 # note\n"
	s := libsvm.NewScanner(strings.NewReader(in), "example.txt")
	for s.Scan() {
		x := s.Row() // valid until the next Scan
		qid, _ := s.Qid()
		fmt.Println(s.Line(), s.Label(), qid, x.Idx, x.Val)
	}
	if err := s.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 2 1 3 [1 3] [0.5 2]
	// 4 -1 7 [2] [0.001]
}

func ExampleLoadReader() {
	m, err := libsvm.LoadReader(strings.NewReader("1 1:1 4:0.5\n0 2:1\n"), "data.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Rows(), m.NNZ(), m.Dim, m.Row(0).Idx)
	// Output:
	// 2 3 5 [1 4]
}
