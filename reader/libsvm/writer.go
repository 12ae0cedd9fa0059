package libsvm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// Writer formats rows as LIBSVM text, one per line:
//
//	label [qid:N] idx:val idx:val ...
//
// with qid:N for rows written by WriteQid. A file has qid:N on every row or
// on none, as the reader requires: a Writer refuses a row of the other
// kind than its first.
// Numbers are written with strconv.AppendFloat(v, 'g', -1, 32), the shortest
// decimal that parses back to the same float32, so a write/parse round trip is
// bit-exact. Writer buffers its output; call Flush when done. Write does no
// allocation: each line is formatted into a buffer the Writer reuses.
type Writer struct {
	w    *bufio.Writer
	buf  []byte
	row  int64
	qids int8 // 0 before the first row, then 1 without qid, 2 with
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
// Otherwise the only errors are those of the underlying writer, and
// errMixedQID for a row without a query id after rows with one.
// It panics if len(x.Val) < len(x.Idx).
func (w *Writer) Write(label float32, x sparsevec.Vector) error {
	return w.write(label, 0, false, x)
}

// WriteQid is Write for a row with query id qid, written as qid:N after
// the label. Rows with and without a query id cannot be mixed.
func (w *Writer) WriteQid(label float32, qid int64, x sparsevec.Vector) error {
	return w.write(label, qid, true, x)
}

// ErrMixedQID is the error of a Writer given a row with a query id after
// rows without one, or the other way round.
var ErrMixedQID = errors.New("rows with and without qid:N in one LIBSVM file (it has qid on every row or on none)")

func (w *Writer) write(label float32, qid int64, hasQID bool, x sparsevec.Vector) error {
	val := x.Val[:len(x.Idx)]
	b := w.buf[:0]
	q := int8(1)
	if hasQID {
		q = 2
	}
	if w.qids != 0 && q != w.qids {
		return fmt.Errorf("row %d: %w", w.row, ErrMixedQID)
	}
	if !core.Finite32(label) {
		return fmt.Errorf("row %d: %w: label %v", w.row, core.ErrNonFinite, label)
	}
	b = strconv.AppendFloat(b, float64(label), 'g', -1, 32)
	if hasQID {
		b = append(b, " qid:"...)
		b = strconv.AppendInt(b, qid, 10)
	}
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
	w.qids = q
	_, err := w.w.Write(b)
	return err
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }
