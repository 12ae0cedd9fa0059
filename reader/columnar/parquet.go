package columnar

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/polyhedral/cpm/reader/internal/colguard"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// Parquet of the canonical schema is read with parquet/file's column
// readers, in the caller's goroutine, straight into the blocks' arrays, so
// that a panic of a decoder on a corrupt page (snappy does panic) is
// recovered here. Any other accepted schema is read as Arrow record
// batches by pqarrow's record reader, one row group at a time, each
// column chunk checked first as the column readers' are, and converted as
// Arrow IPC batches are (plan.convert). pqarrow.FromParquet maps the
// Parquet schema to the Arrow one that newPlan chooses the layout from.

// maxParquetBatchRows bounds the rows of one block read from Parquet: a row
// group with more rows is handed out in several blocks of at most this
// many rows. A variable so that tests can lower it.
var maxParquetBatchRows int64 = 1 << 20

// levelChunk is the number of levels decoded at a time.
const levelChunk = 1 << 16

// OpenParquet opens the Parquet file at path and returns a BlockReader
// handing out one block per row group (or per maxParquetBatchRows rows of a
// larger one) for the canonical schema, and one block per batch of at most
// parquetRecordRows rows otherwise (see the package documentation).
// WithMaxIndex, WithOpener, WithZeroBased and the column options apply.
func OpenParquet(path string, opts ...core.Option) (core.BlockReader, error) {
	return openParquetBlocks(path, core.BuildOptions(opts))
}

// openParquetBlocks is OpenParquet with the options built.
func openParquetBlocks(path string, opt core.Options) (br core.BlockReader, err error) {
	fh, err := opt.OpenFile(path)
	if err != nil {
		return nil, err
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			fh.Close()
			br, err = nil, fmt.Errorf("%s: %w: %v", path, core.ErrCorrupt, p)
		}
	}()
	pf, err := file.NewParquetReader(fh, file.WithReadProps(parquet.NewReaderProperties(nil)))
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w: %w", path, core.ErrCorrupt, err)
	}
	md := pf.MetaData()
	meta, hasMeta := "", false
	if v := md.KeyValueMetadata().FindValue(IndexBaseKey); v != nil {
		meta, hasMeta = *v, true
	}
	// The Arrow schema comes from the Parquet schema alone. The copy of
	// the writer's Arrow schema in the key-value metadata (ARROW:schema)
	// is dropped before pqarrow sees it: it would be decoded with the
	// Arrow IPC reader, unguarded (see colguard.CheckFooter), and it can
	// only tell list from large_list or restore extension types, which
	// make no difference to the rows.
	if md.FileMetaData != nil {
		kv := md.FileMetaData.KeyValueMetadata
		keep := kv[:0:0]
		for _, e := range kv {
			if e != nil && e.Key != "ARROW:schema" {
				keep = append(keep, e)
			}
		}
		md.FileMetaData.KeyValueMetadata = keep
	}
	as, err := pqarrow.FromParquet(md.Schema, &pqarrow.ArrowReadProperties{}, nil)
	if err != nil {
		pf.Close()
		return nil, &core.SchemaError{Path: path, Column: featuresColumn, Msg: "Parquet schema without an Arrow equivalent: " + err.Error()}
	}
	p, err := newPlan(path, as, opt, meta, hasMeta)
	if err != nil {
		pf.Close()
		return nil, err
	}
	limit := readLimit(fi.Size())
	oldWriter := md.WriterVersion().LessThan(metadata.Parquet816FixedVersion)
	if p.fast {
		b := &parquetBlocks{path: path, maxIndex: opt.MaxIndex, pf: pf, limit: limit, fh: fh, size: fi.Size(),
			oldWriter: oldWriter, plan: p}
		if err := b.mapColumns(md.Schema); err != nil {
			pf.Close()
			return nil, err
		}
		return b, nil
	}
	src, err := newParquetRecords(pf, fh, fi.Size(), limit, oldWriter, p, opt)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: %w: %w", path, core.ErrCorrupt, err)
	}
	return newBlocks(path, src, opt, p), nil
}

// levels tells what a definition level of a list leaf means: below
// emptyDef the list is null, at emptyDef it is empty, below elemDef the
// struct element is null, below maxDef the leaf is null, at maxDef there is
// a value.
type levels struct {
	maxDef, emptyDef, elemDef int16
}

// leafLevels works out the levels of column c from the repetition of the
// nodes on its path. It reports false unless exactly one node (the list)
// is repeated.
func leafLevels(c *schema.Column) (levels, bool) {
	var path []schema.Node
	for n := c.SchemaNode(); n != nil && n.Parent() != nil; n = n.Parent() {
		path = append([]schema.Node{n}, path...)
	}
	var lv levels
	var def int16
	rep := -1
	for i, n := range path {
		switch n.RepetitionType() {
		case parquet.Repetitions.Repeated:
			if rep >= 0 {
				return lv, false
			}
			rep = i
			lv.emptyDef = def
			def++
		case parquet.Repetitions.Optional:
			def++
		}
		if i == len(path)-2 {
			lv.elemDef = def
		}
	}
	lv.maxDef = def
	if len(path) < 2 {
		lv.elemDef = def
	}
	return lv, rep >= 0 && rep < len(path)-1 && def == c.MaxDefinitionLevel() && c.MaxRepetitionLevel() == 1
}

// parquetBlocks is the BlockReader of Parquet files.
type parquetBlocks struct {
	path     string
	maxIndex uint32
	plan     *plan

	mu    sync.Mutex // serialises Next and Close
	pf    *file.Reader
	limit int         // readLimit of the file
	fh    io.ReaderAt // the file pf reads, for colguard.CheckPages
	size  int64
	// oldWriter: the file's writer is a parquet-mr before 1.2.9, whose
	// column chunks the library reads with padding (see colguard.ChunkStream).
	oldWriter bool

	labelCol, idxCol, valCol int
	labelDef                 int16 // max definition level of label
	idxLv, valLv             levels

	rg   int             // row groups started
	cur  *rowGroupCursor // the row group being read; nil between them
	rows int64           // rows handed out
	bufs rowGroupCursor  // buffers handed from one row group's cursor to the next

	held   []*sparsevec.CSR
	free   []*sparsevec.CSR
	err    error
	closed bool
	cerr   error
}

var (
	_ core.BlockReader = (*parquetBlocks)(nil)
	_ core.Detacher    = (*parquetBlocks)(nil)
)

// mapColumns finds the three leaf columns of the plan's label and
// features and checks their physical types and levels; other columns are
// not read.
func (b *parquetBlocks) mapColumns(sc *schema.Schema) error {
	b.labelCol, b.idxCol, b.valCol = -1, -1, -1
	for i := range sc.NumColumns() {
		c := sc.Column(i)
		p := c.ColumnPath()
		name, want := "", parquet.Types.Float
		switch {
		case len(p) == 1 && p[0] == b.plan.Label && b.labelCol < 0:
			b.labelCol, name = i, labelColumn
			b.labelDef = c.MaxDefinitionLevel()
			if c.MaxRepetitionLevel() != 0 {
				return &core.SchemaError{Path: b.path, Column: b.plan.Label, Msg: "repeated, want one label per row"}
			}
		case len(p) > 1 && p[0] == b.plan.Features && p[len(p)-1] == indexField && b.idxCol < 0:
			b.idxCol, name, want = i, indexField, parquet.Types.Int32
		case len(p) > 1 && p[0] == b.plan.Features && p[len(p)-1] == valueField && b.valCol < 0:
			b.valCol, name = i, valueField
		default:
			continue
		}
		if c.PhysicalType() != want {
			return &core.SchemaError{Path: b.path, Column: c.Path(), Msg: fmt.Sprintf("Parquet physical type %s, want %s", c.PhysicalType(), want)}
		}
		if name == labelColumn {
			continue
		}
		lv, ok := leafLevels(c)
		if !ok {
			return &core.SchemaError{Path: b.path, Column: b.plan.Features, Msg: "Parquet column " + c.Path() + " is not a list of one level"}
		}
		if name == indexField {
			b.idxLv = lv
		} else {
			b.valLv = lv
		}
	}
	if b.labelCol < 0 || b.idxCol < 0 || b.valCol < 0 {
		return &core.SchemaError{Path: b.path, Column: b.plan.Features, Msg: "Parquet leaf columns " + b.plan.Label + ", index and value not all found"}
	}
	return nil
}

// Layout returns the layout the reader reads the file in.
func (b *parquetBlocks) Layout() Layout { return b.plan.Layout }

// Next returns the rows of the next row group (or of its next
// maxParquetBatchRows rows), decoded into a block the reader owns; see
// blocks.Next for the contract.
func (b *parquetBlocks) Next() (*sparsevec.CSR, error) {
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
	var blk *sparsevec.CSR
	if n := len(b.free); n > 0 {
		blk, b.free = b.free[n-1], b.free[:n-1]
	} else {
		blk = new(sparsevec.CSR)
	}
	if err := b.read(blk); err != nil {
		blk.Reset()
		b.free = append(b.free, blk)
		b.err = err
		return nil, err
	}
	b.rows += int64(blk.Rows())
	b.held = append(b.held, blk)
	return blk, nil
}

// corrupt wraps err so that it names the file and row group and matches
// ErrCorrupt.
func (b *parquetBlocks) corrupt(err error) error {
	return fmt.Errorf("%s: row group %d: %w: %w", b.path, b.rg, core.ErrCorrupt, err)
}

// read decodes the next batch into blk and validates it, turning a panic
// of the Parquet library into an error.
func (b *parquetBlocks) read(blk *sparsevec.CSR) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = b.corrupt(fmt.Errorf("%v", p))
		}
	}()
	for {
		if b.cur == nil {
			if b.rg >= b.pf.NumRowGroups() {
				return io.EOF
			}
			c, err := b.openRowGroup(b.rg)
			b.rg++
			if errors.Is(err, core.ErrUnsupported) {
				return fmt.Errorf("%s: row group %d: %w", b.path, b.rg, err)
			}
			if err != nil {
				return b.corrupt(err)
			}
			b.cur = c
		}
		c := b.cur
		if c.got == c.want {
			if err := c.finish(); err != nil {
				return b.corrupt(err)
			}
			b.bufs = *c
			b.cur = nil
			continue
		}
		k := int(min(c.want-c.got, maxParquetBatchRows))
		blk.Reset()
		blk.Ptr = append(blk.Ptr, 0)
		if cp := int(min(min(c.nnzHint, 1<<40)*int64(k)/c.want, 1<<24)); cap(blk.Idx) < cp {
			blk.Idx = make([]uint32, 0, cp)
			blk.Val = make([]float32, 0, cp)
		}
		var ni, nv int
		var err error
		blk.Idx, blk.Ptr, ni, err = take(&c.idx, k, blk.Idx, blk.Ptr)
		if err != nil {
			return b.leafErr(err, "index")
		}
		if ni != k {
			return b.corrupt(fmt.Errorf("index column holds %d rows, the row group %d", c.got+int64(ni), c.want))
		}
		if len(blk.Idx) > MaxBatchNNZ {
			return b.corrupt(fmt.Errorf("batch of %d nonzeros exceeds %d", len(blk.Idx), MaxBatchNNZ))
		}
		c.ptr = append(c.ptr[:0], 0)
		blk.Val, c.ptr, nv, err = take(&c.val, k, blk.Val, c.ptr)
		if err != nil {
			return b.leafErr(err, "value")
		}
		if nv != k || !slices.Equal(c.ptr, blk.Ptr) {
			return b.corrupt(errors.New("index and value columns have different list lengths"))
		}
		if err := b.readLabels(c, blk, k); err != nil {
			return err
		}
		c.got += int64(k)
		dim, row, col, err := core.CheckRows(blk.Labels, blk.Ptr, blk.Idx, blk.Val, b.maxIndex)
		if err != nil {
			if err == core.ErrIndexZero {
				err = errIndexZero()
			}
			return &core.RowError{Path: b.path, Row: b.rows + int64(row) + 1, Column: b.plan.column(col, err), Err: err}
		}
		blk.Dim = dim
		return nil
	}
}

// leafErr turns an error of take into a RowError for a null, or a corrupt
// file error.
func (b *parquetBlocks) leafErr(err error, leaf string) error {
	var n *nullAt
	if errors.As(err, &n) {
		what := leaf
		switch n.kind {
		case nullList:
			what = "feature list"
		case nullElem:
			what = "list element"
		}
		return &core.RowError{Path: b.path, Row: b.rows + int64(n.row) + 1, Column: b.plan.Features, Err: fmt.Errorf("%w: %s", core.ErrNull, what)}
	}
	return b.corrupt(fmt.Errorf("%s column: %w", leaf, err))
}

// readLabels decodes k labels into blk.Labels.
func (b *parquetBlocks) readLabels(c *rowGroupCursor, blk *sparsevec.CSR, k int) error {
	blk.Labels = slices.Grow(blk.Labels[:0], k)[:k]
	var def []int16
	if b.labelDef > 0 {
		if cap(c.labelDefs) < k {
			c.labelDefs = make([]int16, k)
		}
		def = c.labelDefs[:k]
	}
	got := 0
	for got < k {
		var d []int16
		if def != nil {
			d = def[got:]
		}
		n, nv, err := c.label.ReadBatch(int64(k-got), blk.Labels[got:], d, nil)
		if err == nil {
			err = c.label.Err()
		}
		if err != nil {
			return b.corrupt(fmt.Errorf("label column: %w", err))
		}
		if n == 0 {
			return b.corrupt(fmt.Errorf("label column holds %d rows, the row group %d", c.got+int64(got), c.want))
		}
		if nv != int(n) {
			for i, l := range d[:n] {
				if l < b.labelDef {
					return &core.RowError{Path: b.path, Row: b.rows + int64(got+i) + 1, Column: b.plan.Label, Err: fmt.Errorf("%w: label", core.ErrNull)}
				}
			}
			return b.corrupt(errors.New("label column: fewer values than levels"))
		}
		got += int(n)
	}
	return nil
}

// openRowGroup starts reading row group i.
func (b *parquetBlocks) openRowGroup(i int) (*rowGroupCursor, error) {
	rg := b.pf.RowGroup(i)
	c := &rowGroupCursor{
		want:      rg.NumRows(),
		labelDefs: b.bufs.labelDefs,
		ptr:       b.bufs.ptr,
		idx:       b.bufs.idx.reset(),
		val:       b.bufs.val.reset(),
	}
	if c.want < 0 {
		return nil, fmt.Errorf("row group claims %d rows", c.want)
	}
	col := func(j int) (file.ColumnChunkReader, error) {
		if err := checkChunk(rg, j, b.fh, b.size, b.limit, b.oldWriter); err != nil {
			return nil, err
		}
		pr, err := rg.GetColumnPageReader(j)
		if err != nil {
			return nil, err
		}
		descr := b.pf.MetaData().Schema.Column(j)
		return file.NewColumnReader(descr, pr, memory.DefaultAllocator, b.pf.BufferPool()), nil
	}
	lr, err := col(b.labelCol)
	if err != nil {
		return nil, err
	}
	ir, err := col(b.idxCol)
	if err != nil {
		return nil, err
	}
	vr, err := col(b.valCol)
	if err != nil {
		return nil, err
	}
	var ok1, ok2, ok3 bool
	c.label, ok1 = lr.(*file.Float32ColumnChunkReader)
	c.idx.rd, ok2 = ir.(*file.Int32ColumnChunkReader)
	c.val.rd, ok3 = vr.(*file.Float32ColumnChunkReader)
	if !ok1 || !ok2 || !ok3 {
		return nil, errors.New("column readers of unexpected types")
	}
	c.idx.lv, c.val.lv = b.idxLv, b.valLv
	if md, err := rg.MetaData().ColumnChunk(b.idxCol); err == nil {
		c.nnzHint = max(0, md.NumValues())
	}
	return c, nil
}

// checkChunk checks column chunk j of rg, in the file fh of size bytes,
// before the library reads it: its codec must be one the library decodes
// (else an error wrapping ErrUnsupported), and its pages must pass
// colguard.CheckPages with the file's limit.
func checkChunk(rg *file.RowGroupReader, j int, fh io.ReaderAt, size int64, limit int, oldWriter bool) error {
	md, err := rg.MetaData().ColumnChunk(j)
	if err != nil {
		return err
	}
	if c := md.Compression(); c < compress.Codecs.Uncompressed || c > compress.Codecs.Lz4Raw {
		return fmt.Errorf("column %d: compression codec %d, not one of Parquet's", j, c)
	} else if _, err := compress.GetCodec(c); err != nil {
		return fmt.Errorf("column %d: Parquet compression %s: %w (readable: uncompressed, snappy, gzip, brotli, zstd, lz4_raw)", j, c, core.ErrUnsupported)
	}
	// The chunk's extent as GetColumnPageReader works it out.
	start := md.DataPageOffset()
	if md.HasDictionaryPage() && md.DictionaryPageOffset() > 0 && start > md.DictionaryPageOffset() {
		start = md.DictionaryPageOffset()
	}
	start, end, err := colguard.ChunkStream(size, start, md.TotalCompressedSize(), oldWriter)
	if err == nil {
		err = colguard.CheckPages(fh, start, end, md.NumValues(), md.Compression(), limit)
	}
	if err != nil {
		return fmt.Errorf("column %d: %w", j, err)
	}
	return nil
}

// rowGroupCursor is the state of the row group being read.
type rowGroupCursor struct {
	want, got int64 // rows in the row group, rows read
	nnzHint   int64 // levels of the index column: nonzeros plus empty rows
	label     *file.Float32ColumnChunkReader
	labelDefs []int16
	idx       leafCursor[int32]
	val       leafCursor[float32]
	ptr       []int // scratch: row pointers of the value column
}

// finish checks that every column of the row group is exhausted.
func (c *rowGroupCursor) finish() error {
	if c.label.HasNext() || c.idx.more() || c.val.more() {
		return fmt.Errorf("columns hold more than the %d rows of the row group", c.want)
	}
	for _, err := range []error{c.label.Err(), c.idx.rd.Err(), c.val.rd.Err()} {
		if err != nil {
			return err
		}
	}
	return nil
}

// batchReader is the typed ReadBatch of parquet/file's column readers.
type batchReader[T any] interface {
	ReadBatch(n int64, vals []T, def, rep []int16) (int64, int, error)
	HasNext() bool
	Err() error
}

// leafCursor holds the decoded but not yet consumed levels and values of a
// list leaf column.
type leafCursor[T int32 | float32] struct {
	rd         batchReader[T]
	lv         levels
	def, rep   []int16
	vals       []T
	lpos, lend int // pending levels
	vpos, vend int // pending values
	started    bool
}

// reset returns c emptied for the next column chunk, keeping its buffers.
func (c *leafCursor[T]) reset() leafCursor[T] {
	return leafCursor[T]{def: c.def, rep: c.rep, vals: c.vals}
}

// fill decodes the next chunk of levels once the pending ones are used up.
// It reports false at the end of the column chunk.
func (c *leafCursor[T]) fill() (bool, error) {
	if c.lpos < c.lend {
		return true, nil
	}
	if c.vpos != c.vend {
		return false, errors.New("more values than levels")
	}
	if c.def == nil {
		c.def = make([]int16, levelChunk)
		c.rep = make([]int16, levelChunk)
		c.vals = make([]T, levelChunk)
	}
	n, nv, err := c.rd.ReadBatch(levelChunk, c.vals, c.def, c.rep)
	if err == nil {
		err = c.rd.Err()
	}
	if err != nil {
		return false, err
	}
	if n < 0 || n > levelChunk || nv < 0 || nv > int(n) {
		return false, fmt.Errorf("decoder returned %d levels and %d values", n, nv)
	}
	c.lpos, c.lend, c.vpos, c.vend = 0, int(n), 0, nv
	return n > 0, nil
}

// more reports whether levels remain.
func (c *leafCursor[T]) more() bool {
	ok, err := c.fill()
	return ok || err != nil
}

// Kinds of null in a list leaf.
const (
	nullList = iota
	nullElem
	nullLeaf
)

// nullAt is a null found by take at a 0-based row of the block.
type nullAt struct{ row, kind int }

func (n *nullAt) Error() string { return "null at row " + strconv.Itoa(n.row) }

// take appends the values of the next rows rows of c to dst, and a row
// pointer for each row to ptr (which holds the block's pointers so far,
// starting with 0). It returns fewer rows only at the end of the column.
func take[T int32 | float32, D uint32 | float32](c *leafCursor[T], rows int, dst []D, ptr []int) ([]D, []int, int, error) {
	n := 0 // rows started
	for {
		ok, err := c.fill()
		if err != nil {
			return dst, ptr, n, err
		}
		if !ok {
			return dst, ptr, n, nil
		}
		def, rep := c.def[c.lpos:c.lend], c.rep[c.lpos:c.lend]
		rep = rep[:len(def)]
		vals := c.vals[:c.vend]
		maxDef := c.lv.maxDef
		i := 0
		for ; i < len(def); i++ {
			if n > 0 {
				// The levels that continue the current row with a value
				// (repetition 1, definition maxDef), copied at once.
				j := i
				for j < len(def) && def[j] == maxDef && rep[j] == 1 {
					j++
				}
				if k := j - i; k > 0 {
					if k > len(vals)-c.vpos {
						return dst, ptr, n, errors.New("fewer values than levels")
					}
					dst = appendConv(dst, vals[c.vpos:c.vpos+k])
					c.vpos += k
					ptr[len(ptr)-1] = len(dst)
					if i = j; i == len(def) {
						break
					}
				}
			}
			switch r := rep[i]; {
			case r == 0:
				if n == rows {
					c.lpos += i
					return dst, ptr, n, nil
				}
				n++
				ptr = append(ptr, len(dst))
				c.started = true
			case r != 1 || !c.started:
				return dst, ptr, n, fmt.Errorf("repetition level %d", r)
			}
			d := def[i]
			switch {
			case d == c.lv.maxDef:
				if c.vpos >= len(vals) {
					return dst, ptr, n, errors.New("fewer values than levels")
				}
				dst = append(dst, D(vals[c.vpos]))
				c.vpos++
				ptr[len(ptr)-1] = len(dst)
			case d < 0 || d > c.lv.maxDef:
				return dst, ptr, n, fmt.Errorf("definition level %d", d)
			case d == c.lv.emptyDef:
				if rep[i] != 0 {
					return dst, ptr, n, errors.New("empty list inside a list")
				}
			case d < c.lv.emptyDef:
				return dst, ptr, n, &nullAt{n - 1, nullList}
			case d < c.lv.elemDef:
				return dst, ptr, n, &nullAt{n - 1, nullElem}
			default:
				return dst, ptr, n, &nullAt{n - 1, nullLeaf}
			}
		}
		c.lpos += i
	}
}

// appendConv appends the values of src, converted to D, to dst.
func appendConv[T int32 | float32, D uint32 | float32](dst []D, src []T) []D {
	m := len(dst)
	dst = slices.Grow(dst, len(src))[:m+len(src)]
	out := dst[m:]
	for i, v := range src {
		out[i] = D(v)
	}
	return dst
}

// Release gives back a block returned by Next for reuse. The caller must
// not use blk afterwards. It panics if blk is not a block the caller holds.
func (b *parquetBlocks) Release(blk *sparsevec.CSR) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = core.Unhold(b.held, blk)
	b.free = append(b.free, blk)
}

// Detach takes blk, a block the caller holds, off the reader's hands: the
// reader decodes later batches into new arrays. It panics if blk is not a
// block the caller holds.
func (b *parquetBlocks) Detach(blk *sparsevec.CSR) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = core.Unhold(b.held, blk)
}

// Close closes the file. Blocks the caller holds stay valid until
// released. Next returns ErrClosed afterwards. Close may be called more
// than once; it waits for a Next in progress.
func (b *parquetBlocks) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.cur = nil
		b.cerr = b.pf.Close()
	}
	return b.cerr
}
