package input

import (
	"cmp"
	"io"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// concat reads several files one after the other as one BlockReader: the
// blocks of the first file, then those of the second, and so on. A file is
// opened when the one before it ends, and its reader is closed once it has
// ended and the caller has released every block of it, so that at most one
// file is read at a time and a held block stays valid.
type concat struct {
	files []string
	open  func(path string) (reader.BlockReader, error)
	next  int                // index of the next file to open
	cur   reader.BlockReader // the file being read, or nil
	held  map[*sparsevec.CSR]reader.BlockReader
	count map[reader.BlockReader]int // blocks held per reader
	ended []reader.BlockReader       // ended readers with blocks still held
	err   error                      // sticky
}

func newConcat(files []string, open func(string) (reader.BlockReader, error)) *concat {
	return &concat{files: files, open: open, held: map[*sparsevec.CSR]reader.BlockReader{}, count: map[reader.BlockReader]int{}}
}

// Next returns the next block, or io.EOF after the last block of the last
// file. Errors are sticky and name the file.
func (c *concat) Next() (*sparsevec.CSR, error) {
	for c.err == nil {
		if c.cur == nil {
			if c.next == len(c.files) {
				return nil, io.EOF
			}
			r, err := c.open(c.files[c.next])
			if err != nil {
				c.err = fileErr(c.next, len(c.files), c.files[c.next], err)
				break
			}
			c.cur = r
			c.next++
		}
		b, err := c.cur.Next()
		switch {
		case err == io.EOF:
			c.endCurrent()
		case err != nil:
			c.err = fileErr(c.next-1, len(c.files), c.files[c.next-1], err)
		default:
			c.held[b] = c.cur
			c.count[c.cur]++
			return b, nil
		}
	}
	return nil, c.err
}

// endCurrent retires the reader of the file that ended: closed now if the
// caller holds none of its blocks, else when the last one is released.
func (c *concat) endCurrent() {
	r := c.cur
	c.cur = nil
	if c.count[r] > 0 {
		c.ended = append(c.ended, r)
		return
	}
	c.closeReader(r)
}

// closeReader closes r, keeping the first error.
func (c *concat) closeReader(r reader.BlockReader) {
	delete(c.count, r)
	if err := r.Close(); err != nil && c.err == nil {
		c.err = err
	}
}

// Release gives b back to the reader of its file.
func (c *concat) Release(b *sparsevec.CSR) {
	r, ok := c.held[b]
	if !ok {
		return
	}
	delete(c.held, b)
	r.Release(b)
	c.count[r]--
	if c.count[r] > 0 || r == c.cur {
		return
	}
	for i, e := range c.ended {
		if e == r {
			c.ended = append(c.ended[:i], c.ended[i+1:]...)
			c.closeReader(r)
			return
		}
	}
}

// Close closes every reader still open.
func (c *concat) Close() error {
	var err error
	if c.cur != nil {
		err = c.cur.Close()
		c.cur = nil
	}
	for _, r := range c.ended {
		err = cmp.Or(err, r.Close())
	}
	c.ended = nil
	c.next = len(c.files)
	if c.err == nil {
		c.err = reader.ErrClosed
	}
	return err
}

var _ reader.BlockReader = (*concat)(nil)
