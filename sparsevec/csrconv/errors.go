package csrconv

import (
	"errors"
	"fmt"
)

// Sentinel errors name the kind of failure; test for them with errors.Is.
var (
	// ErrNonFinite: a value or label that is NaN or ±Inf, or a finite value
	// beyond the float32 range.
	ErrNonFinite = errors.New("non-finite value")
	// ErrInexact: a value that float32 cannot hold exactly (without
	// Options.Round).
	ErrInexact = errors.New("value not representable as float32")
	// ErrTooWide: a matrix with more columns than uint32 feature indices
	// can name (2^32−1), or a row with an index beyond the column count
	// asked of ToSparse.
	ErrTooWide = errors.New("too many columns for uint32 feature indices")
	// ErrLabels: a label slice whose length is not the number of rows.
	ErrLabels = errors.New("labels do not match the rows")
	// ErrMalformed: row pointers, indices and values that do not form a
	// compressed sparse row matrix (wrong lengths, decreasing pointers,
	// indices out of range, a repeated index in a row, feature index 0).
	ErrMalformed = errors.New("malformed CSR")
)

// ValueError is the failure of one stored element or label. Col is the
// 0-based column of *sparse.CSR, or -1 for a label.
type ValueError struct {
	Row, Col int
	Value    float64
	Err      error
}

func (e *ValueError) Error() string {
	if e.Col < 0 {
		return fmt.Sprintf("csrconv: label of row %d = %v: %v", e.Row, e.Value, e.Err)
	}
	return fmt.Sprintf("csrconv: row %d column %d = %v: %v", e.Row, e.Col, e.Value, e.Err)
}

func (e *ValueError) Unwrap() error { return e.Err }
