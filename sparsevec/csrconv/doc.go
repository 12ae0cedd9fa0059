// Package csrconv converts between sparsevec.CSR, the row blocks the
// trainers read, and *sparse.CSR of github.com/james-bowman/sparse, the
// compressed sparse row matrix (a gonum mat.Matrix) in which Go programs
// commonly hold sparse data.
//
// # Index mapping
//
// sparsevec keeps LIBSVM's 1-based feature indices (index 0 is the bias row
// of a weight matrix), *sparse.CSR has 0-based columns. Column j of an
// r×c *sparse.CSR is feature index j+1:
//
//	sparse.CSR (i, j) = v   ⇔   sparsevec row i holds (Idx j+1, Val v)
//
// so a c-column matrix needs indices 1..c, and c is at most 2^32−1
// (ErrTooWide). The result of FromSparse has Dim = 1 + its largest stored
// index, as a block read from a LIBSVM file does; ToSparse gives c.Dim−1
// columns unless asked for more.
//
// # Values
//
// sparsevec stores float32, *sparse.CSR float64. ToSparse widens, which is
// exact. FromSparse refuses NaN and ±Inf (ErrNonFinite), as the LIBSVM
// reader does, and by default refuses any value that float32 cannot hold
// exactly (ErrInexact), so that a matrix converted and converted back is
// the matrix given; with Options.Round it rounds to the nearest float32
// instead, and still refuses finite values beyond the float32 range, which
// would round to ±Inf. A *ValueError names the row and column.
//
// # Sharing
//
// Both layouts keep row pointers as []int, so the row pointers are shared,
// not copied: the result of either conversion aliases the argument's row
// pointers (with the capacity clipped, so appending rows to the result
// reallocates them). Modify neither while the other is in use; Clone the
// result to detach it. Indices (uint32 against int, shifted by one) and
// values (float32 against float64) have different types and are copied.
// Labels are passed beside the matrix and shared the same way.
//
// # Scoring stays on sparsevec
//
// The trainers score a row against K faces feature-major: one pass over the
// row, reading K contiguous float32 weights per nonzero (sparsevec.Matrix).
// A general sparse library computes the same scores face-major, one sparse
// dot product per face, each gathering nnz scattered float64 weights;
// BenchmarkScores in this package measures both on the same rows, and
// bench/RESULTS.md records the figures. Convert once, at the edge, and train
// and predict on sparsevec.
package csrconv
