package columnar

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// CreateArrow creates an Arrow IPC file (stream false) or stream (stream
// true) at path, written atomically as reader.CreateCompressed writes, in
// record batches of WithBatchRows rows with bodies compressed by
// WithCompression ("none", the default, "zstd" or "lz4": the Arrow
// JavaScript library and other readers cannot read compressed bodies).
// The schema is Schema(), with cpm.index_base = "1" in its metadata.
// Write validates every row as the readers do; see reader.CreateBlocks.
func CreateArrow(path string, stream bool, opts ...core.Option) (core.BlockWriter, error) {
	o := core.BuildOptions(opts)
	var arrowOpts []ipc.Option
	switch o.Compression {
	case "zstd":
		arrowOpts = append(arrowOpts, ipc.WithZstd())
	case "lz4":
		arrowOpts = append(arrowOpts, ipc.WithLZ4())
	case "", "none":
	default:
		return nil, fmt.Errorf("%s: compression %q: want zstd, lz4 or none for Arrow output", path, o.Compression)
	}
	w, err := newBlockWriter(path, o)
	if err != nil {
		return nil, err
	}
	arrowOpts = append(arrowOpts, ipc.WithSchema(rowSchema))
	if stream {
		w.rw = ipc.NewWriter(w.buf, arrowOpts...)
		return w, nil
	}
	fw, err := ipc.NewFileWriter(w.buf, arrowOpts...)
	if err != nil {
		w.out.Abort()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w.rw = fw
	return w, nil
}

// CreateParquet creates a Parquet file at path, written atomically as
// reader.CreateCompressed writes, in row groups of WithBatchRows rows with
// column chunks compressed by WithCompression ("zstd", the default,
// "snappy" or "none"), as data pages of WithParquetPageVersion (version 1
// by default, which every Parquet reader reads; hyparquet, for one, reads
// no version 2 pages). The key-value metadata holds cpm.index_base = "1"
// and the Arrow schema (ARROW:schema). Write validates every row as the
// readers do; see reader.CreateBlocks.
func CreateParquet(path string, opts ...core.Option) (core.BlockWriter, error) {
	o := core.BuildOptions(opts)
	if o.Err != nil {
		return nil, fmt.Errorf("%s: %w", path, o.Err)
	}
	pages := parquet.DataPageV1
	if o.Columnar.ParquetPageVersion == 2 {
		pages = parquet.DataPageV2
	}
	var pqCodec compress.Compression
	switch o.Compression {
	case "", "zstd":
		pqCodec = compress.Codecs.Zstd
	case "snappy":
		pqCodec = compress.Codecs.Snappy
	case "none":
		pqCodec = compress.Codecs.Uncompressed
	default:
		return nil, fmt.Errorf("%s: compression %q: want zstd, snappy or none for Parquet output", path, o.Compression)
	}
	w, err := newBlockWriter(path, o)
	if err != nil {
		return nil, err
	}
	props := parquet.NewWriterProperties(
		parquet.WithCompression(pqCodec),
		parquet.WithMaxRowGroupLength(int64(o.BatchRows)),
		parquet.WithDataPageVersion(pages),
	)
	pw, err := newParquetWriter(w.buf, props)
	if err != nil {
		w.out.Abort()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w.rw = pw
	return w, nil
}

// newBlockWriter creates the output file at path for an Arrow or Parquet
// writer, which the caller completes with its record writer.
func newBlockWriter(path string, o core.Options) (*arrowBlockWriter, error) {
	out, err := core.CreateOutput(o.Ctx, path) // errors name the path
	if err != nil {
		return nil, err
	}
	return &arrowBlockWriter{
		path:      path,
		out:       out,
		buf:       &seekWriter{w: bufio.NewWriterSize(out, 1<<20)},
		batchRows: o.BatchRows,
		maxNNZ:    batchNNZLimit,
	}, nil
}

// batchNNZLimit is the most nonzeros a written batch holds; a variable so
// that tests can lower it.
var batchNNZLimit = MaxBatchNNZ

// recordWriter is what the Arrow IPC writers and the Parquet writer have
// in common.
type recordWriter interface {
	Write(arrow.Record) error
	Close() error
}

// arrowBlockWriter writes Arrow IPC or Parquet: rows are gathered into
// batches of batchRows rows, which become record batches or row groups.
type arrowBlockWriter struct {
	path      string
	out       *core.OutputFile
	buf       *seekWriter
	rw        recordWriter
	batchRows int
	maxNNZ    int

	pending sparsevec.CSR // rows of a batch not yet full
	offsets []int32       // scratch for list offsets
	rows    int64         // rows accepted by Write
	done    bool
	err     error // sticky write error
}

// Write validates b and writes its rows. Batches are emitted straight from
// b's arrays when they lie wholly within it; only rows that complete or
// start a batch shared with other blocks are copied.
func (w *arrowBlockWriter) Write(b *sparsevec.CSR) error {
	switch {
	case w.done:
		return fmt.Errorf("%s: %w", w.path, core.ErrWriterDone)
	case w.err != nil:
		return w.err
	}
	if err := core.CheckBlock(w.path, w.rows, b); err != nil {
		return err
	}
	if b.HasQid() {
		return w.fail(fmt.Errorf("the rows have query ids (qid:N), which the Arrow and Parquet schema has no column for; write LIBSVM text or a row cache to keep them: %w", core.ErrUnsupported))
	}
	n := b.Rows()
	for r := range n {
		if k := b.Ptr[r+1] - b.Ptr[r]; k > w.maxNNZ {
			return &core.RowError{Path: w.path, Row: w.rows + int64(r) + 1, Column: featuresColumn,
				Err: fmt.Errorf("%d nonzeros, more than the %d an Arrow or Parquet batch can hold", k, w.maxNNZ)}
		}
	}
	for lo := 0; lo < n; {
		if w.pending.Rows() == 0 {
			hi, full := w.cut(b, lo)
			if full {
				if err := w.emit(b, lo, hi); err != nil {
					return w.fail(err)
				}
				lo = hi
				continue
			}
		}
		// Top up the pending batch.
		hi, full := w.cutPending(b, lo)
		core.AppendRows(&w.pending, b, lo, hi)
		lo = hi
		if full {
			if err := w.flush(); err != nil {
				return w.fail(err)
			}
		}
	}
	w.rows += int64(n)
	return nil
}

// cut returns the end of the batch that starts at row lo of b, and whether
// that batch is complete (batchRows rows, or as many as the nonzero limit
// allows) rather than cut short by the end of b.
func (w *arrowBlockWriter) cut(b *sparsevec.CSR, lo int) (hi int, full bool) {
	return w.extend(b, lo, w.batchRows, w.maxNNZ)
}

// cutPending is cut for rows appended to the pending batch.
func (w *arrowBlockWriter) cutPending(b *sparsevec.CSR, lo int) (hi int, full bool) {
	return w.extend(b, lo, w.batchRows-w.pending.Rows(), w.maxNNZ-w.pending.NNZ())
}

// extend takes up to rows rows of b from lo holding at most nnz nonzeros.
// A single row over the limit is taken alone and refused by emit.
func (w *arrowBlockWriter) extend(b *sparsevec.CSR, lo, rows, nnz int) (hi int, full bool) {
	n := b.Rows()
	hi = min(n, lo+rows)
	base := b.Ptr[lo]
	if b.Ptr[hi]-base > nnz {
		// The largest hi whose rows fit, by binary search on Ptr.
		l, h := lo, hi // rows lo..l fit; lo..h do not
		for h-l > 1 {
			m := int(uint(l+h) >> 1)
			if b.Ptr[m]-base <= nnz {
				l = m
			} else {
				h = m
			}
		}
		if l == lo && w.pending.Rows() == 0 {
			l = lo + 1 // cannot happen: Write refuses rows over the limit
		}
		return l, true
	}
	return hi, hi-lo == rows
}

// flush emits the pending batch.
func (w *arrowBlockWriter) flush() error {
	if w.pending.Rows() == 0 {
		return nil
	}
	err := w.emit(&w.pending, 0, w.pending.Rows())
	w.pending.Reset()
	return err
}

// emit writes rows [lo, hi) of b as one record batch or row group. The
// record aliases b's arrays; only the offsets are converted.
func (w *arrowBlockWriter) emit(b *sparsevec.CSR, lo, hi int) error {
	base := b.Ptr[lo]
	nnz := b.Ptr[hi] - base
	w.offsets = w.offsets[:0]
	for _, p := range b.Ptr[lo : hi+1] {
		w.offsets = append(w.offsets, int32(p-base))
	}
	rec := csrRecord(b.Labels[lo:hi], w.offsets, b.Idx[base:base+nnz], b.Val[base:base+nnz])
	defer rec.Release()
	return w.rw.Write(rec)
}

// csrRecord builds a record of the package schema over the given arrays
// without copying them.
func csrRecord(labels []float32, offsets []int32, idx []uint32, val []float32) arrow.Record {
	buf := func(b []byte) *memory.Buffer { return memory.NewBufferBytes(b) }
	n, nnz := len(labels), len(idx)
	labelData := array.NewData(arrow.PrimitiveTypes.Float32, n,
		[]*memory.Buffer{nil, buf(arrow.Float32Traits.CastToBytes(labels))}, nil, 0, 0)
	idxData := array.NewData(arrow.PrimitiveTypes.Uint32, nnz,
		[]*memory.Buffer{nil, buf(arrow.Uint32Traits.CastToBytes(idx))}, nil, 0, 0)
	valData := array.NewData(arrow.PrimitiveTypes.Float32, nnz,
		[]*memory.Buffer{nil, buf(arrow.Float32Traits.CastToBytes(val))}, nil, 0, 0)
	entryData := array.NewData(entryType, nnz, []*memory.Buffer{nil},
		[]arrow.ArrayData{idxData, valData}, 0, 0)
	listData := array.NewData(featuresType, n,
		[]*memory.Buffer{nil, buf(arrow.Int32Traits.CastToBytes(offsets))},
		[]arrow.ArrayData{entryData}, 0, 0)
	labelArr, listArr := array.MakeFromData(labelData), array.MakeFromData(listData)
	rec := array.NewRecord(rowSchema, []arrow.Array{labelArr, listArr}, int64(n))
	for _, r := range []interface{ Release() }{labelData, idxData, valData, entryData, listData, labelArr, listArr} {
		r.Release()
	}
	return rec
}

// fail makes err sticky and names the path.
func (w *arrowBlockWriter) fail(err error) error {
	w.err = fmt.Errorf("%s: %w", w.path, err)
	return w.err
}

// Close writes the last batch and the file's footer and puts the file in
// place. On error the output is discarded.
func (w *arrowBlockWriter) Close() error {
	if w.done {
		return fmt.Errorf("%s: %w", w.path, core.ErrWriterDone)
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	w.done = true
	err := w.flush()
	if cerr := w.rw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.buf.w.Flush()
	}
	if err != nil {
		w.out.Abort()
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return w.out.Close()
}

// Abort discards the output.
func (w *arrowBlockWriter) Abort() {
	w.done = true
	w.out.Abort()
}

// seekWriter gives a writer the Seek(0, io.SeekCurrent) that the Arrow IPC
// file writer uses to learn its position; it cannot seek otherwise.
type seekWriter struct {
	w *bufio.Writer
	n int64
}

func (s *seekWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.n += int64(n)
	return n, err
}

func (s *seekWriter) Seek(offset int64, whence int) (int64, error) {
	if offset == 0 && whence == io.SeekCurrent {
		return s.n, nil
	}
	return s.n, errors.New("seek not supported on output")
}
