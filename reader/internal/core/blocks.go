package core

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/polyhedral/cpm/sparsevec"
)

// BlockReader hands out blocks of rows in file order: Next returns io.EOF
// after the last block; a block stays valid and unmodified until it is given
// back with Release; Close stops any goroutines and closes the input and
// may be called more than once. *libsvm.Stream is the LIBSVM BlockReader.
// Next and Release are for one goroutine.
type BlockReader interface {
	Next() (*sparsevec.CSR, error)
	Release(*sparsevec.CSR)
	Close() error
}

// Detacher is a BlockReader that can let the caller keep a block: Detach
// takes blk, a block the caller holds, off the reader's hands instead of
// Release, so that the reader never reuses or releases its arrays, which
// are garbage-collected memory that stays valid while blk is referenced.
// It panics with NotHeld if blk is not a block the caller holds.
type Detacher interface {
	Detach(blk *sparsevec.CSR)
}

// ConcatCSR joins blocks in order into one exactly sized CSR, dropping
// each block from the slice as it is copied.
func ConcatCSR(blocks []*sparsevec.CSR) *sparsevec.CSR {
	rows, nnz := 0, 0
	for _, b := range blocks {
		rows += b.Rows()
		nnz += b.NNZ()
	}
	m := &sparsevec.CSR{
		Labels: make([]float32, 0, rows),
		Ptr:    make([]int, 1, rows+1),
		Idx:    make([]uint32, 0, nnz),
		Val:    make([]float32, 0, nnz),
	}
	for i, b := range blocks {
		m.AppendCSR(b)
		blocks[i] = nil
	}
	return m
}

// DefaultBatchRows is the number of rows per Arrow record batch or Parquet
// row group that CreateBlocks writes unless WithBatchRows says otherwise.
const DefaultBatchRows = 1 << 16

// BlockWriter writes blocks of rows to a file. Write may be called any
// number of times with blocks of any size; Close finishes the file and puts
// it in place; Abort discards it. Abort after Close is a no-op, so it can
// be deferred. A BlockWriter is not safe for concurrent use.
type BlockWriter interface {
	Write(*sparsevec.CSR) error
	Close() error
	Abort()
}

// WithCompression sets the compression of Arrow IPC bodies or Parquet
// column chunks: "zstd" (the default for Parquet), "lz4" (Arrow only),
// "snappy" (Parquet only) or "none" (the default for Arrow). LIBSVM output is compressed by the
// path's extension instead (see CreateCompressed), so any name other than
// "" is an error for it. An unknown name makes CreateBlocks fail.
func WithCompression(name string) Option {
	return func(o *Options) { o.Compression = name }
}

// WithBatchRows sets the rows per Arrow record batch or Parquet row group;
// n <= 0 selects DefaultBatchRows. A batch is also cut before it would
// reach 2^31-1 nonzeros (see MaxBatchNNZ). LIBSVM output ignores it.
func WithBatchRows(n int) Option {
	return func(o *Options) {
		if n <= 0 {
			n = DefaultBatchRows
		}
		o.BatchRows = n
	}
}

// StreamBlocks is the number of blocks a libsvm.Stream owns, and so the
// most the caller can hold at a time (see Next).
const StreamBlocks = 4

// Errors of BlockReader misuse.
var (
	// ErrClosed is returned by Next after Close.
	ErrClosed = errors.New("reader: stream closed")
	// ErrBlocksHeld is returned by Next when the caller holds so many
	// blocks that the stream has none left to fill.
	ErrBlocksHeld = errors.New("reader: all stream blocks are held; Release one before Next")
)

// NotHeld is the panic of every BlockReader's Release given a block the
// caller does not hold: releasing a block twice would hand it out twice.
const NotHeld = "reader: Release of a block that Next did not hand out or that was released already"

// Unhold returns held without b, the bookkeeping of Release; it panics
// with notHeld if b is not in held.
func Unhold(held []*sparsevec.CSR, b *sparsevec.CSR) []*sparsevec.CSR {
	i := slices.Index(held, b)
	if i < 0 {
		panic(NotHeld)
	}
	return slices.Delete(held, i, i+1)
}

// AppendRows appends rows [lo, hi) of src to dst in bulk, with their query
// ids. dst and src either both have query ids or neither does (the
// readers' blocks of one file); otherwise the rule of sparsevec.CSR holds.
func AppendRows(dst, src *sparsevec.CSR, lo, hi int) {
	if lo >= hi {
		return
	}
	if len(dst.Ptr) == 0 {
		dst.Ptr = append(dst.Ptr, 0)
	}
	switch {
	case len(src.Qid) > 0:
		if len(dst.Qid) < dst.Rows() {
			dst.Qid = append(dst.Qid[:0], make([]int64, dst.Rows())...)
		}
		dst.Qid = append(dst.Qid, src.Qid[lo:hi]...)
	case len(dst.Qid) > 0:
		dst.Qid = append(dst.Qid, make([]int64, hi-lo)...)
	}
	a, b := src.Ptr[lo], src.Ptr[hi]
	shift := len(dst.Idx) - a
	dst.Labels = append(dst.Labels, src.Labels[lo:hi]...)
	dst.Idx = append(dst.Idx, src.Idx[a:b]...)
	dst.Val = append(dst.Val, src.Val[a:b]...)
	prev := a
	for _, p := range src.Ptr[lo+1 : hi+1] {
		dst.Ptr = append(dst.Ptr, p+shift)
		if p > prev {
			dst.Dim = max(dst.Dim, int(src.Idx[p-1])+1)
		}
		prev = p
	}
}

// CheckRows validates the rows of a CSR whose Ptr is known to be ascending
// and within Idx: finite labels and values, indices in 1..maxIndex and
// strictly ascending within a row. It makes one pass over the nonzeros and
// returns the block's Dim, or the 0-based row and the column of the first
// bad row with an error wrapping the sentinel.
func CheckRows(labels []float32, ptr []int, idx []uint32, val []float32, maxIndex uint32) (dim, row int, col string, err error) {
	val = val[:len(idx)]
	ptr = ptr[:len(labels)+1]
	var top uint32
	for r, y := range labels {
		if !Finite32(y) {
			return 0, r, LabelColumn, fmt.Errorf("%w: label %v", ErrNonFinite, y)
		}
		lo, hi := ptr[r], ptr[r+1]
		if lo == hi {
			continue
		}
		x, v := idx[lo:hi], val[lo:hi]
		v = v[:len(x)]
		prev := x[0]
		if prev == 0 {
			return 0, r, FeaturesColumn, ErrIndexZero
		}
		// A value is not finite when its exponent bits are all ones;
		// adding 1 to the exponent then carries into the sign bit. The
		// branch-free test runs at about 0.8 ns a nonzero (measured
		// against 1.0 ns for a branch per value).
		var bad uint32
		for k, j := range x {
			bad |= math.Float32bits(v[k])&0x7f800000 + 0x00800000
			if j <= prev && k > 0 {
				e := ErrUnsorted
				if j == prev {
					e = ErrDuplicate
				}
				return 0, r, FeaturesColumn, fmt.Errorf("%w: index %d after %d", e, j, prev)
			}
			prev = j
		}
		if bad&0x80000000 != 0 {
			for k, f := range v {
				if !Finite32(f) {
					return 0, r, FeaturesColumn, fmt.Errorf("%w: value %v at index %d", ErrNonFinite, f, x[k])
				}
			}
		}
		if prev > maxIndex {
			for _, j := range x {
				if j > maxIndex {
					return 0, r, FeaturesColumn, fmt.Errorf("%w: index %d above the maximum %d", ErrIndexRange, j, maxIndex)
				}
			}
		}
		top = max(top, prev)
	}
	if len(idx) > 0 {
		dim = int(top) + 1
	}
	return dim, 0, "", nil
}

// RowOf returns the row of ptr that holds nonzero k.
func RowOf(ptr []int, k int) int {
	lo, hi := 0, len(ptr)-1 // ptr[lo] <= k < ptr[hi]
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if ptr[m] <= k {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// Names of the two columns of the Arrow and Parquet formats, which CheckRows
// names in its errors.
const (
	LabelColumn    = "label"
	FeaturesColumn = "features"
)

// ErrWriterDone is returned by Write after Close or Abort.
var ErrWriterDone = errors.New("write after Close or Abort")

// CheckBlock validates the rows of b, numbered from row+1, and the shape of
// its arrays.
func CheckBlock(path string, row int64, b *sparsevec.CSR) error {
	n := b.Rows()
	if n == 0 {
		return nil
	}
	if len(b.Ptr) != n+1 || b.Ptr[0] != 0 || b.Ptr[n] != len(b.Idx) || len(b.Val) != len(b.Idx) {
		return fmt.Errorf("%s: malformed CSR block: %d rows, %d row pointers, %d indices, %d values",
			path, n, len(b.Ptr), len(b.Idx), len(b.Val))
	}
	if len(b.Qid) != 0 && len(b.Qid) != n {
		return fmt.Errorf("%s: malformed CSR block: %d rows, %d query ids", path, n, len(b.Qid))
	}
	for r := range n {
		if b.Ptr[r] > b.Ptr[r+1] {
			return fmt.Errorf("%s: malformed CSR block: row pointers decrease at row %d", path, row+int64(r)+1)
		}
	}
	if _, r, col, err := CheckRows(b.Labels, b.Ptr, b.Idx, b.Val, 1<<32-1); err != nil {
		return &RowError{Path: path, Row: row + int64(r) + 1, Column: col, Err: err}
	}
	return nil
}
