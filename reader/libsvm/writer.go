package libsvm

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// Writer formats rows as LIBSVM text, one per line:
//
//	label idx:val idx:val ...
//
// Numbers are written with strconv.AppendFloat(v, 'g', -1, 32), the shortest
// decimal that parses back to the same float32, so a write/parse round trip is
// bit-exact. Writer buffers its output; call Flush when done. Write does no
// allocation: each line is formatted into a buffer the Writer reuses.
type Writer struct {
	w   *bufio.Writer
	buf []byte
	row int64
}

// NewWriter returns a Writer that buffers its output to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 256<<10), buf: make([]byte, 0, 4096)}
}

// Write appends one line for the row (label, x). Rows the package's own
// parser would reject are refused, and nothing is written: the error wraps
// ErrNonFinite for a NaN or infinite label or value, ErrIndexZero for index
// 0, and ErrUnsorted or ErrDuplicate for indices that are not strictly
// ascending, and names the row (0-based count of rows written before).
// Otherwise the only errors are those of the underlying writer.
// It panics if len(x.Val) < len(x.Idx).
func (w *Writer) Write(label float32, x sparsevec.Vector) error {
	val := x.Val[:len(x.Idx)]
	b := w.buf[:0]
	if !core.Finite32(label) {
		return fmt.Errorf("row %d: %w: label %v", w.row, core.ErrNonFinite, label)
	}
	b = strconv.AppendFloat(b, float64(label), 'g', -1, 32)
	if len(x.Idx) > 0 && x.Idx[0] == 0 {
		return fmt.Errorf("row %d: %w", w.row, core.ErrIndexZero)
	}
	var prev uint32
	for i, j := range x.Idx {
		v := val[i]
		if i > 0 && j <= prev {
			err := core.ErrUnsorted
			if j == prev {
				err = core.ErrDuplicate
			}
			return fmt.Errorf("row %d: %w: index %d after %d", w.row, err, j, prev)
		}
		if !core.Finite32(v) {
			return fmt.Errorf("row %d: %w: value %v at index %d", w.row, core.ErrNonFinite, v, j)
		}
		prev = j
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(j), 10)
		b = append(b, ':')
		b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
	}
	b = append(b, '\n')
	w.buf = b
	w.row++
	_, err := w.w.Write(b)
	return err
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }
