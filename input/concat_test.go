package input

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// closeCount is a BlockReader that counts its Close calls.
type closeCount struct {
	reader.BlockReader
	closed *int
}

func (c closeCount) Close() error {
	*c.closed++
	return c.BlockReader.Close()
}

// concat hands out the files' blocks in file order; blocks held across
// the end of their file stay valid (Arrow blocks alias the file's
// buffers), and each file's reader is closed once it has ended and its
// blocks are back, before the reader of a later file ends.
func TestConcatHeldBlocks(t *testing.T) {
	all, err := reader.Load(heart)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	for i, lo := range []int{0, 90, 180} {
		p := filepath.Join(dir, fmt.Sprintf("p%d.arrow", i))
		writeRows(t, p, rowsOf(all, lo, lo+90))
		files = append(files, p)
	}
	closed := 0
	c := newConcat(files, func(p string) (reader.BlockReader, error) {
		r, err := reader.OpenBlocks(p, 16)
		return closeCount{r, &closed}, err
	})
	defer c.Close()
	got := &sparsevec.CSR{Ptr: []int{0}}
	var held []*sparsevec.CSR
	for {
		b, err := c.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, b)
		if len(held) == 4 { // a window across file ends
			got.AppendCSR(held[0])
			c.Release(held[0])
			held = held[1:]
		}
	}
	if closed != 2 {
		t.Errorf("%d readers closed before the end of the last file's blocks, want 2", closed)
	}
	for _, b := range held {
		got.AppendCSR(b)
		c.Release(b)
	}
	if closed != 3 {
		t.Errorf("%d readers closed once every block is back, want 3", closed)
	}
	if !sameRows(got, all) {
		t.Error("the blocks of the files, in order, are not the rows of the files")
	}
	if _, err := c.Next(); err != io.EOF {
		t.Errorf("Next after the end: %v, want io.EOF", err)
	}
	c.Close()
	if _, err := c.Next(); !errors.Is(err, reader.ErrClosed) {
		t.Errorf("Next after Close: %v, want ErrClosed", err)
	}
}
