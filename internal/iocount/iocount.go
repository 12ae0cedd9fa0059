// Package iocount counts the bytes that pass through a writer, for the
// progress and size lines that commands print.
package iocount

import (
	"io"
	"sync/atomic"
)

// Writer passes each Write to W and counts the bytes W accepted. The count
// is atomic, so N may be read while another goroutine writes (as a
// compressor does from its own goroutine). Set W before the first Write.
type Writer struct {
	W io.Writer
	n atomic.Int64
}

// Write writes p to W and adds the bytes W reports written to the count.
func (c *Writer) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// N returns the number of bytes written so far.
func (c *Writer) N() int64 { return c.n.Load() }
