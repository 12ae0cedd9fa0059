package columnar

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/polyhedral/cpm/reader/internal/colguard"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// Names of the columnar schema (see the package documentation).
const (
	labelColumn    = core.LabelColumn
	featuresColumn = core.FeaturesColumn
	indexField     = core.IndexColumn
	valueField     = core.ValueColumn
)

// MaxBatchNNZ is the largest number of nonzeros in one Arrow record batch or
// Parquet row group that this package reads or writes: list offsets are
// int32, so a batch holds fewer than 2^31-1 nonzeros.
const MaxBatchNNZ = math.MaxInt32 - 1

// Schema returns the Arrow schema of the sparse rows that CreateBlocks
// writes: label float32 and features list<item: struct<index: uint32,
// value: float32>>, nothing nullable, with the metadata cpm.index_base =
// "1" (1-based indices).
func Schema() *arrow.Schema { return rowSchema }

var (
	entryType = arrow.StructOf(
		arrow.Field{Name: indexField, Type: arrow.PrimitiveTypes.Uint32},
		arrow.Field{Name: valueField, Type: arrow.PrimitiveTypes.Float32},
	)
	featuresType = arrow.ListOfNonNullable(entryType)
	rowSchema    = arrow.NewSchema([]arrow.Field{
		{Name: labelColumn, Type: arrow.PrimitiveTypes.Float32},
		{Name: featuresColumn, Type: featuresType},
	}, &indexBaseMeta)
	indexBaseMeta = arrow.NewMetadata([]string{IndexBaseKey}, []string{"1"})
)

// recordSource yields the record batches of a file in order. next returns
// a record the caller must Release, or io.EOF after the last. It may
// panic on corrupt input; blocks recovers. pos names the batch last
// asked for in error messages, e.g. "record batch 3".
type recordSource interface {
	next() (arrow.Record, error)
	pos() string
	close() error
}

// heldBlock is a block handed out by blocks.Next with the record it aliases.
type heldBlock struct {
	blk *sparsevec.CSR
	rec arrow.Record
}

// blocks is the BlockReader of Arrow IPC files and of Parquet files of
// other than the canonical schema: each record batch becomes one block,
// which aliases the batch's buffers (canonical schema, plan.fast) or holds
// their converted values (plan.convert).
type blocks struct {
	path     string
	maxIndex uint32
	plan     *plan
	imap     indexMap
	bound    *arrow.Schema // the schema plan was last bound to
	scratch  [][]float32   // dense columns of the batch being converted

	mu     sync.Mutex // serialises Next and Close
	src    recordSource
	rows   int64 // rows handed out so far
	held   []heldBlock
	free   []*sparsevec.CSR
	err    error
	closed bool
	cerr   error
}

var (
	_ core.BlockReader = (*blocks)(nil)
	_ core.Detacher    = (*blocks)(nil)
)

func newBlocks(path string, src recordSource, opt core.Options, p *plan) *blocks {
	b := &blocks{path: path, src: src, maxIndex: opt.MaxIndex, plan: p, imap: indexMap{max: opt.MaxIndex}}
	if p.ZeroBased {
		b.imap.shift = 1
	}
	return b
}

// Layout returns the layout the reader reads the file in.
func (b *blocks) Layout() Layout { return b.plan.Layout }

// Next returns the next record batch as a block, or io.EOF after the last.
// Batches without rows are skipped. A block of the canonical schema
// aliases the batch's buffers: Labels, Idx and Val are the Arrow arrays
// themselves (no copy), Ptr is the list offsets converted to int; any other
// block holds the batch's values converted into arrays of the reader, reused
// after Release. It stays valid until Release. At most
// StreamBlocks blocks may be held at once; Next returns ErrBlocksHeld,
// without reading, when the caller holds that many. Errors are sticky:
// *SchemaError, *RowError with the absolute row, an error wrapping
// ErrUnsupported for a Parquet codec the library lacks, or an error
// wrapping ErrCorrupt for a truncated or corrupt file.
func (b *blocks) Next() (*sparsevec.CSR, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return nil, b.err
	}
	if b.closed {
		b.err = core.ErrClosed
		return nil, b.err
	}
	if len(b.held) >= core.StreamBlocks {
		return nil, core.ErrBlocksHeld
	}
	for {
		rec, err := b.read()
		if err != nil {
			b.err = err
			return nil, err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		var blk *sparsevec.CSR
		if n := len(b.free); n > 0 {
			blk, b.free = b.free[n-1], b.free[:n-1]
		} else {
			blk = new(sparsevec.CSR)
		}
		if err := b.fill(blk, rec); err != nil {
			rec.Release()
			b.free = append(b.free, clearBlock(blk))
			b.err = err
			return nil, err
		}
		if !b.plan.fast { // blk holds converted copies
			rec.Release()
			rec = nil
		}
		b.rows += int64(blk.Rows())
		b.held = append(b.held, heldBlock{blk, rec})
		return blk, nil
	}
}

// read gets the next record from the source, turning a panic of the
// Arrow library into an error: a byte flipped in an Arrow file
// (TestArrowCorrupt/.arrow/none, byte 5376 of 5610) makes arrow-go v18 slice
// out of range.
func (b *blocks) read() (rec arrow.Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			rec, err = nil, b.corrupt(fmt.Errorf("%v", p))
		}
	}()
	rec, err = b.src.next()
	switch {
	case err == io.EOF:
		return nil, io.EOF
	case errors.Is(err, core.ErrUnsupported):
		return nil, fmt.Errorf("%s: %s: %w", b.path, b.src.pos(), err)
	case err != nil:
		return nil, b.corrupt(err)
	case rec == nil:
		return nil, b.corrupt(errors.New("no record"))
	}
	return rec, nil
}

// corrupt wraps err, an error of the Arrow or Parquet library, so that it
// names the file and batch and matches ErrCorrupt.
func (b *blocks) corrupt(err error) error {
	return fmt.Errorf("%s: %s: %w: %w", b.path, b.src.pos(), core.ErrCorrupt, err)
}

// fill points blk at the arrays of rec (the canonical schema) or fills it
// with their converted values (any other), and validates its rows.
func (b *blocks) fill(blk *sparsevec.CSR, rec arrow.Record) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = b.corrupt(fmt.Errorf("%v", p))
		}
	}()
	if s := rec.Schema(); s != b.bound {
		if err := b.plan.bind(s); err != nil {
			return b.corrupt(err)
		}
		b.bound = s
	}
	if !b.plan.fast {
		err := b.plan.convert(blk, rec, b.imap, &b.scratch, b.rowErr)
		var bd *badData
		if errors.As(err, &bd) {
			return b.corrupt(bd.err)
		}
		return err
	}
	n := int(rec.NumRows())
	labels, ok1 := rec.Column(b.plan.label).(*array.Float32)
	feats, ok2 := rec.Column(b.plan.feat).(*array.List)
	if !ok1 || !ok2 || labels.Len() != n || feats.Len() != n {
		return b.corrupt(errors.New("column lengths differ from the batch's row count"))
	}
	if r, ok := firstNull(labels, 0, n); ok {
		return b.rowErr(r, b.plan.Label, fmt.Errorf("%w: label", core.ErrNull))
	}
	if r, ok := firstNull(feats, 0, n); ok {
		return b.rowErr(r, b.plan.Features, fmt.Errorf("%w: feature list", core.ErrNull))
	}
	off := feats.Data().Offset()
	all := feats.Offsets()
	if off < 0 || len(all) < off+n+1 {
		return b.corrupt(fmt.Errorf("list offsets buffer holds %d entries, want %d", len(all), off+n+1))
	}
	o := all[off : off+n+1]
	st, ok := feats.ListValues().(*array.Struct)
	if !ok {
		return b.corrupt(errors.New("list values are not a struct array"))
	}
	idxArr, ok1 := st.Field(b.plan.sIdx).(*array.Uint32)
	valArr, ok2 := st.Field(b.plan.sVal).(*array.Float32)
	if !ok1 || !ok2 {
		return b.corrupt(errors.New("struct children of the wrong type"))
	}
	idx, val := idxArr.Uint32Values(), valArr.Float32Values()

	// Offsets: non-negative, ascending, within the children.
	lo, hi := o[0], o[n]
	if lo < 0 || hi < lo || int(hi) > len(idx) || int(hi) > len(val) || int(hi) > st.Len() {
		return b.corrupt(fmt.Errorf("list offsets [%d, %d] outside the %d list elements", lo, hi, min(len(idx), len(val), st.Len())))
	}
	if int64(hi)-int64(lo) > MaxBatchNNZ {
		return b.corrupt(fmt.Errorf("batch of %d nonzeros exceeds %d", int64(hi)-int64(lo), MaxBatchNNZ))
	}
	ptr := blk.Ptr[:0]
	if cap(ptr) < n+1 {
		ptr = make([]int, 0, n+1)
	}
	ptr = ptr[:n+1]
	prev := lo
	for r, p := range o {
		if p < prev || p > hi {
			return b.corrupt(fmt.Errorf("list offsets not ascending at row %d", b.rows+int64(r)))
		}
		ptr[r] = int(p - lo)
		prev = p
	}
	blk.Ptr = ptr

	// Nulls inside the lists, reported at their row.
	for _, c := range []struct {
		a    arrow.Array
		what string
	}{{st, "list element"}, {idxArr, "index"}, {valArr, "value"}} {
		if k, ok := firstNull(c.a, int(lo), int(hi)); ok {
			return b.rowErr(core.RowOf(ptr, k-int(lo)), b.plan.Features, fmt.Errorf("%w: %s", core.ErrNull, c.what))
		}
	}

	blk.Labels = labels.Float32Values()[:n:n]
	blk.Idx = idx[lo:hi:hi]
	blk.Val = val[lo:hi:hi]
	dim, row, col, err := core.CheckRows(blk.Labels, blk.Ptr, blk.Idx, blk.Val, b.maxIndex)
	if err != nil {
		return b.rowErr(row, b.plan.column(col, err), err)
	}
	blk.Dim = dim
	return nil
}

// rowErr positions err at row r (0-based) of the current batch. Index 0
// gets the hint about 0-based files.
func (b *blocks) rowErr(r int, col string, err error) error {
	if err == core.ErrIndexZero {
		err = errIndexZero()
	}
	return &core.RowError{Path: b.path, Row: b.rows + int64(r) + 1, Column: col, Err: err}
}

// Release gives back a block returned by Next and releases the record
// batch it aliases. The caller must not use b afterwards. It panics if blk
// is not a block the caller holds.
func (b *blocks) Release(blk *sparsevec.CSR) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.IndexFunc(b.held, func(h heldBlock) bool { return h.blk == blk })
	if i < 0 {
		panic(core.NotHeld)
	}
	if rec := b.held[i].rec; rec != nil {
		rec.Release()
		clearBlock(blk)
	}
	b.held = slices.Delete(b.held, i, i+1)
	b.free = append(b.free, blk)
}

// Detach takes blk, a block the caller holds, off the reader's hands
// without releasing the record batch it aliases: the batch's buffers come
// from the Go allocator (see openArrowBlocks), so they stay valid while blk
// is referenced. It panics if blk is not a block the caller holds.
func (b *blocks) Detach(blk *sparsevec.CSR) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.IndexFunc(b.held, func(h heldBlock) bool { return h.blk == blk })
	if i < 0 {
		panic(core.NotHeld)
	}
	b.held = slices.Delete(b.held, i, i+1)
}

// clearBlock drops blk's references to Arrow memory, keeping Ptr for reuse.
func clearBlock(blk *sparsevec.CSR) *sparsevec.CSR {
	*blk = sparsevec.CSR{Ptr: blk.Ptr[:0]}
	return blk
}

// Close closes the file. Blocks the caller holds stay valid until
// released. Next returns ErrClosed afterwards. Close may be called more
// than once; it waits for a Next in progress.
func (b *blocks) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.cerr = b.src.close()
	}
	return b.cerr
}

// firstNull returns the first null position in [lo, hi) of a, if any. An
// array that claims nulls but has no validity bitmap is all null.
func firstNull(a arrow.Array, lo, hi int) (int, bool) {
	if lo >= hi {
		return 0, false
	}
	bm := a.NullBitmapBytes()
	if len(bm) == 0 {
		return lo, a.NullN() > 0
	}
	off := a.Data().Offset()
	if bitutil.CountSetBits(bm, off+lo, hi-lo) == hi-lo {
		return 0, false
	}
	for k := lo; k < hi; k++ {
		if !bitutil.BitIsSet(bm, off+k) {
			return k, true
		}
	}
	return 0, false
}

// OpenArrow opens the Arrow IPC file (stream false) or stream (stream true)
// at path and returns a BlockReader handing out its record batches, one
// block each (see the package documentation). WithMaxIndex, WithOpener,
// WithZeroBased and the column options (WithLabelColumn, WithFeaturesColumn,
// WithIndexColumn, WithValueColumn) apply.
func OpenArrow(path string, stream bool, opts ...core.Option) (core.BlockReader, error) {
	return openArrowBlocks(path, stream, core.BuildOptions(opts))
}

// openArrowBlocks is OpenArrow with the options built.
func openArrowBlocks(path string, stream bool, opt core.Options) (br core.BlockReader, err error) {
	fh, err := opt.OpenFile(path)
	if err != nil {
		return nil, err
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	size := fi.Size()
	limit := readLimit(size)
	defer func() {
		if p := recover(); p != nil {
			fh.Close()
			br, err = nil, fmt.Errorf("%s: %w: %v", path, core.ErrCorrupt, p)
		}
	}()
	var src recordSource
	var schema *arrow.Schema
	if !stream {
		dicts, records, err := colguard.CheckFooter(fh, size)
		var w colguard.WindowReader
		for i := 0; err == nil && i < len(dicts); i++ {
			if err = colguard.CheckFileMessage(fh, dicts[i], &w, limit); err != nil {
				err = fmt.Errorf("dictionary batch %d: %w", i, err)
			}
		}
		if err != nil {
			fh.Close()
			return nil, fmt.Errorf("%s: %w: %w", path, core.ErrCorrupt, err)
		}
		r, err := ipc.NewFileReader(fh, ipc.WithAllocator(goAlloc))
		if err != nil {
			fh.Close()
			return nil, fmt.Errorf("%s: %w: %w", path, core.ErrCorrupt, err)
		}
		src, schema = &ipcFileSource{f: fh, r: r, blocks: records, limit: limit}, r.Schema()
	} else {
		msgs := colguard.NewStreamMessages(bufio.NewReaderSize(fh, 64<<10), size, limit)
		r, err := ipc.NewReaderFromMessageReader(msgs, ipc.WithAllocator(goAlloc))
		if err != nil {
			fh.Close()
			return nil, fmt.Errorf("%s: %w: %w", path, core.ErrCorrupt, err)
		}
		src, schema = &ipcStreamSource{f: fh, r: r}, r.Schema()
	}
	var meta string
	var hasMeta bool
	if schema != nil {
		md := schema.Metadata()
		if i := md.FindKey(IndexBaseKey); i >= 0 {
			meta, hasMeta = md.Values()[i], true
		}
	}
	p, err := newPlan(path, schema, opt, meta, hasMeta)
	if err != nil {
		src.close()
		return nil, err
	}
	return newBlocks(path, src, opt, p), nil
}

// goAlloc is the allocator of the IPC readers: Go memory, garbage
// collected, so that a detached block (blocks.Detach) may outlive its
// record batch's Release whatever memory.DefaultAllocator is.
var goAlloc = memory.NewGoAllocator()

// ipcFileSource reads the record batches of an Arrow IPC file, checking
// each one's compressed buffers (colguard.CheckFileMessage) before the library
// reads it.
type ipcFileSource struct {
	f      *os.File
	r      *ipc.FileReader
	i      int
	blocks []colguard.Block // the record batches, as colguard.CheckFooter read them
	w      colguard.WindowReader
	limit  int
}

func (s *ipcFileSource) next() (arrow.Record, error) {
	if s.i >= s.r.NumRecords() {
		return nil, io.EOF
	}
	s.i++
	if s.i > len(s.blocks) { // not expected: the library read the footer colguard.CheckFooter skipped
		return nil, fmt.Errorf("footer lists %d record batches, the library %d", len(s.blocks), s.r.NumRecords())
	}
	if err := colguard.CheckFileMessage(s.f, s.blocks[s.i-1], &s.w, s.limit); err != nil {
		return nil, err
	}
	return s.r.RecordAt(s.i - 1)
}

func (s *ipcFileSource) pos() string { return "record batch " + strconv.Itoa(s.i) }

func (s *ipcFileSource) close() error {
	s.r.Close()
	return s.f.Close()
}

// ipcStreamSource reads the record batches of an Arrow IPC stream.
type ipcStreamSource struct {
	f *os.File
	r *ipc.Reader
	i int
}

func (s *ipcStreamSource) pos() string { return "record batch " + strconv.Itoa(s.i) }

func (s *ipcStreamSource) next() (arrow.Record, error) {
	s.i++
	if !s.r.Next() {
		if err := s.r.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	rec := s.r.Record()
	rec.Retain()
	return rec, nil
}

func (s *ipcStreamSource) close() error {
	s.r.Release()
	return s.f.Close()
}

// allocFloor is the smallest value of readLimit; a variable so that tests
// of corrupt input can lower it.
var allocFloor int64 = 1 << 30

// readLimit bounds what the checks of a file of fileSize bytes let one
// buffer or page decode to: allocFloor (1 GiB) or 1024 times the file size,
// whichever is larger. A buffer can exceed the file only by decompression.
func readLimit(fileSize int64) int {
	return int(max(allocFloor, min(fileSize, math.MaxInt32)*1024))
}
