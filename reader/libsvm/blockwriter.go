package libsvm

import (
	"fmt"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// blockWriter writes LIBSVM text.
type blockWriter struct {
	path string
	out  *core.OutputFile
	w    *Writer
	rows int64
	done bool
}

func (w *blockWriter) Write(b *sparsevec.CSR) error {
	if w.done {
		return fmt.Errorf("%s: %w", w.path, core.ErrWriterDone)
	}
	if err := core.CheckBlock(w.path, w.rows, b); err != nil {
		return err
	}
	for r := range b.Rows() {
		var err error
		if b.HasQid() {
			err = w.w.WriteQid(b.Labels[r], b.Qid[r], b.Row(r))
		} else {
			err = w.w.Write(b.Labels[r], b.Row(r))
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w.path, err)
		}
	}
	w.rows += int64(b.Rows())
	return nil
}

func (w *blockWriter) Close() error {
	if w.done {
		return fmt.Errorf("%s: %w", w.path, core.ErrWriterDone)
	}
	w.done = true
	if err := w.w.Flush(); err != nil {
		w.out.Abort()
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return w.out.Close()
}

func (w *blockWriter) Abort() {
	w.done = true
	w.out.Abort()
}

// NewBlockWriter returns a BlockWriter that writes the rows of each block
// to out as LIBSVM text; path names the output in errors. Close flushes and
// closes out, Abort discards it.
func NewBlockWriter(path string, out *core.OutputFile) core.BlockWriter {
	return &blockWriter{path: path, out: out, w: NewWriter(out)}
}
