package columnar

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// The conversion of record batches of any accepted layout and types into
// blocks the reader owns: labels and values to float32, indices to the
// 1-based uint32 indices of LIBSVM. Each array is converted by one loop
// over a typed slice, chosen once per batch; nothing is allocated per row.

// errInexact is the detail of an integer that a float32 cannot hold.
func errInexact(v any) error {
	return fmt.Errorf("integer %v cannot be held exactly by a float32", v)
}

// errOverflow is the detail of a float64 beyond the range of float32.
func errOverflow(v float64) error {
	return fmt.Errorf("%w: %v overflows float32", core.ErrNonFinite, v)
}

// exactInt reports whether float32 holds the integer of magnitude u
// exactly: at most 24 significant bits.
func exactInt(u uint64) bool {
	return u == 0 || u>>bits.TrailingZeros64(u) < 1<<24
}

// appendFloats appends the values of a, a numeric or boolean array, to dst
// as float32: integers must be exact in float32, float64 must not
// overflow it (NaN and infinities pass, for CheckRows to report). It
// returns the position in a of a value it cannot convert.
func appendFloats(dst []float32, a arrow.Array) ([]float32, int, error) {
	switch a := a.(type) {
	case *array.Float32:
		return append(dst, a.Float32Values()...), 0, nil
	case *array.Float64:
		for k, v := range a.Float64Values() {
			f := float32(v)
			if math.IsInf(float64(f), 0) && !math.IsInf(v, 0) {
				return dst, k, errOverflow(v)
			}
			dst = append(dst, f)
		}
		return dst, 0, nil
	case *array.Float16:
		for _, v := range a.Values() {
			dst = append(dst, v.Float32())
		}
		return dst, 0, nil
	case *array.Boolean:
		for k := range a.Len() {
			f := float32(0)
			if a.Value(k) {
				f = 1
			}
			dst = append(dst, f)
		}
		return dst, 0, nil
	case *array.Int8:
		return signedFloats(dst, a.Int8Values())
	case *array.Int16:
		return signedFloats(dst, a.Int16Values())
	case *array.Int32:
		return signedFloats(dst, a.Int32Values())
	case *array.Int64:
		return signedFloats(dst, a.Int64Values())
	case *array.Uint8:
		return unsignedFloats(dst, a.Uint8Values())
	case *array.Uint16:
		return unsignedFloats(dst, a.Uint16Values())
	case *array.Uint32:
		return unsignedFloats(dst, a.Uint32Values())
	case *array.Uint64:
		return unsignedFloats(dst, a.Uint64Values())
	}
	return dst, 0, fmt.Errorf("array of type %s where a number was expected", a.DataType())
}

func signedFloats[T int8 | int16 | int32 | int64](dst []float32, src []T) ([]float32, int, error) {
	for k, v := range src {
		u := uint64(v)
		if v < 0 {
			u = -u
		}
		if !exactInt(u) {
			return dst, k, errInexact(v)
		}
		dst = append(dst, float32(v))
	}
	return dst, 0, nil
}

func unsignedFloats[T uint8 | uint16 | uint32 | uint64](dst []float32, src []T) ([]float32, int, error) {
	for k, v := range src {
		if !exactInt(uint64(v)) {
			return dst, k, errInexact(v)
		}
		dst = append(dst, float32(v))
	}
	return dst, 0, nil
}

// indexMap is how stored indices become 1-based indices: shift is 1 for
// 0-based files, 0 otherwise; max is WithMaxIndex.
type indexMap struct {
	shift uint64
	max   uint32
}

// errIndexZero is ErrIndexZero with the way out.
func errIndexZero() error {
	return fmt.Errorf("%w; if the file's indices are 0-based, pass --zero-based yes (reader option WithZeroBased), or record %s = \"0\" in its metadata", core.ErrIndexZero, IndexBaseKey)
}

// appendIndices appends the indices of a, an integer array, to dst mapped
// by m: a negative index, one above m.max once shifted and (1-based) index
// 0 are errors. It returns the position in a of the first bad index.
func appendIndices(dst []uint32, a arrow.Array, m indexMap) ([]uint32, int, error) {
	switch a := a.(type) {
	case *array.Int8:
		return signedIndices(dst, a.Int8Values(), m)
	case *array.Int16:
		return signedIndices(dst, a.Int16Values(), m)
	case *array.Int32:
		return signedIndices(dst, a.Int32Values(), m)
	case *array.Int64:
		return signedIndices(dst, a.Int64Values(), m)
	case *array.Uint8:
		return unsignedIndices(dst, a.Uint8Values(), m)
	case *array.Uint16:
		return unsignedIndices(dst, a.Uint16Values(), m)
	case *array.Uint32:
		return unsignedIndices(dst, a.Uint32Values(), m)
	case *array.Uint64:
		return unsignedIndices(dst, a.Uint64Values(), m)
	}
	return dst, 0, fmt.Errorf("array of type %s where an integer was expected", a.DataType())
}

func signedIndices[T int8 | int16 | int32 | int64](dst []uint32, src []T, m indexMap) ([]uint32, int, error) {
	for k, v := range src {
		if v < 0 {
			return dst, k, fmt.Errorf("%w: negative index %d", core.ErrIndexRange, v)
		}
		j := uint64(v) + m.shift
		if j == 0 || j > uint64(m.max) {
			return dst, k, indexErr(uint64(v), j, m)
		}
		dst = append(dst, uint32(j))
	}
	return dst, 0, nil
}

func unsignedIndices[T uint8 | uint16 | uint32 | uint64](dst []uint32, src []T, m indexMap) ([]uint32, int, error) {
	for k, v := range src {
		j := uint64(v) + m.shift
		if j == 0 || j > uint64(m.max) || j < uint64(v) {
			return dst, k, indexErr(uint64(v), j, m)
		}
		dst = append(dst, uint32(j))
	}
	return dst, 0, nil
}

// indexErr describes stored index v, read as j.
func indexErr(v, j uint64, m indexMap) error {
	switch {
	case j == 0:
		return errIndexZero()
	case m.shift != 0:
		return fmt.Errorf("%w: 0-based index %d (feature %d) above the maximum %d", core.ErrIndexRange, v, v+1, m.max)
	}
	return fmt.Errorf("%w: index %d above the maximum %d", core.ErrIndexRange, v, m.max)
}

// listRange returns the offsets of rows [0, n) of the list array l as
// row pointers relative to the first (appended to ptr[:0]) and the range
// [lo, hi) of l's values they cover. Offsets that are not ascending or
// leave the values are corrupt.
func listRange(l array.ListLike, n int, ptr []int) ([]int, int64, int64, error) {
	ptr = ptr[:0]
	if n == 0 {
		return append(ptr, 0), 0, 0, nil
	}
	lo, _ := l.ValueOffsets(0)
	prev := lo
	ptr = append(ptr, 0)
	for r := range n {
		s, e := l.ValueOffsets(r)
		if s != prev || e < s {
			return ptr, 0, 0, fmt.Errorf("list offsets not contiguous and ascending at row %d of the batch", r)
		}
		ptr = append(ptr, int(e-lo))
		prev = e
	}
	if lo < 0 || prev > int64(l.ListValues().Len()) {
		return ptr, 0, 0, fmt.Errorf("list offsets [%d, %d] outside the %d list elements", lo, prev, l.ListValues().Len())
	}
	if prev-lo > MaxBatchNNZ {
		return ptr, 0, 0, fmt.Errorf("batch of %d nonzeros exceeds %d", prev-lo, MaxBatchNNZ)
	}
	return ptr, lo, prev, nil
}

// badData marks an error of convert that is the file's structure, not a
// row's content: the caller reports it as corrupt.
type badData struct{ err error }

func (b *badData) Error() string { return b.err.Error() }

// convert fills blk from rec, a record batch of any layout p accepts,
// converting every value. rowErr positions an error at a row of the batch.
func (p *plan) convert(blk *sparsevec.CSR, rec arrow.Record, m indexMap, scratch *[][]float32, rowErr func(r int, col string, err error) error) error {
	n := int(rec.NumRows())
	blk.Reset()
	la := rec.Column(p.label)
	if la.Len() != n {
		return &badData{errors.New("column lengths differ from the batch's row count")}
	}
	if r, ok := firstNull(la, 0, n); ok {
		return rowErr(r, p.Label, fmt.Errorf("%w: label", core.ErrNull))
	}
	var k int
	var err error
	if blk.Labels, k, err = appendFloats(blk.Labels[:0], la); err != nil {
		return rowErr(k, p.Label, err)
	}
	switch p.Kind {
	case StructList:
		err = p.convertStructs(blk, rec.Column(p.feat), n, m, rowErr)
	case TwoLists:
		err = p.convertLists(blk, rec.Column(p.feat), rec.Column(p.val), n, m, rowErr)
	case Dense:
		err = p.convertDense(blk, rec, n, scratch, rowErr)
	}
	if err != nil {
		return err
	}
	dim, row, col, err := core.CheckRows(blk.Labels, blk.Ptr, blk.Idx, blk.Val, m.max)
	if err != nil {
		return rowErr(row, p.column(col, err), err)
	}
	blk.Dim = dim
	return nil
}

// column names the column of an error CheckRows reports in column col.
func (p *plan) column(col string, err error) string {
	switch {
	case col == core.LabelColumn:
		return p.Label
	case p.Kind == TwoLists && errors.Is(err, core.ErrNonFinite):
		return p.Value
	case p.Kind == TwoLists:
		return p.Index
	case p.Kind == StructList:
		return p.Features
	}
	return col
}

// convertStructs converts the list<struct<index, value>> column a.
func (p *plan) convertStructs(blk *sparsevec.CSR, a arrow.Array, n int, m indexMap, rowErr func(int, string, error) error) error {
	l, ok := a.(array.ListLike)
	if !ok || a.Len() != n {
		return &badData{errors.New("features column is not a list array of the batch's length")}
	}
	if r, ok := firstNull(a, 0, n); ok {
		return rowErr(r, p.Features, fmt.Errorf("%w: feature list", core.ErrNull))
	}
	ptr, lo, hi, err := listRange(l, n, blk.Ptr)
	blk.Ptr = ptr
	if err != nil {
		return &badData{err}
	}
	st, ok := l.ListValues().(*array.Struct)
	if !ok {
		return &badData{errors.New("list values are not a struct array")}
	}
	ia, va := st.Field(p.sIdx), st.Field(p.sVal)
	for _, c := range []struct {
		a    arrow.Array
		what string
	}{{st, "list element"}, {ia, "index"}, {va, "value"}} {
		if k, ok := firstNull(c.a, int(lo), int(hi)); ok {
			return rowErr(core.RowOf(ptr, k-int(lo)), p.Features, fmt.Errorf("%w: %s", core.ErrNull, c.what))
		}
	}
	return p.convertPairs(blk, ia, va, lo, hi, lo, hi, m, p.Features, p.Features, rowErr)
}

// convertPairs converts indices ia[ilo:ihi) and values va[vlo:vhi), the
// nonzeros of the rows blk.Ptr points to.
func (p *plan) convertPairs(blk *sparsevec.CSR, ia, va arrow.Array, ilo, ihi, vlo, vhi int64, m indexMap, icol, vcol string, rowErr func(int, string, error) error) error {
	if ihi > int64(ia.Len()) || vhi > int64(va.Len()) {
		return &badData{errors.New("list elements beyond their child arrays")}
	}
	is, vs := array.NewSlice(ia, ilo, ihi), array.NewSlice(va, vlo, vhi)
	defer is.Release()
	defer vs.Release()
	var k int
	var err error
	if blk.Idx, k, err = appendIndices(blk.Idx[:0], is, m); err != nil {
		return rowErr(core.RowOf(blk.Ptr, k), icol, err)
	}
	if blk.Val, k, err = appendFloats(blk.Val[:0], vs); err != nil {
		return rowErr(core.RowOf(blk.Ptr, k), vcol, err)
	}
	return nil
}

// convertLists converts the index and value list columns ia and va.
func (p *plan) convertLists(blk *sparsevec.CSR, ia, va arrow.Array, n int, m indexMap, rowErr func(int, string, error) error) error {
	il, ok1 := ia.(array.ListLike)
	vl, ok2 := va.(array.ListLike)
	if !ok1 || !ok2 || ia.Len() != n || va.Len() != n {
		return &badData{errors.New("index or value column is not a list array of the batch's length")}
	}
	for _, c := range []struct {
		a   arrow.Array
		col string
	}{{ia, p.Index}, {va, p.Value}} {
		if r, ok := firstNull(c.a, 0, n); ok {
			return rowErr(r, c.col, fmt.Errorf("%w: list", core.ErrNull))
		}
	}
	for r := range n {
		is, ie := il.ValueOffsets(r)
		vs, ve := vl.ValueOffsets(r)
		if ie-is != ve-vs {
			return rowErr(r, p.Value, fmt.Errorf("%d indices but %d values", ie-is, ve-vs))
		}
	}
	ptr, ilo, ihi, err := listRange(il, n, blk.Ptr)
	blk.Ptr = ptr
	if err != nil {
		return &badData{err}
	}
	// The value list's pointers equal the index list's (checked above).
	vlo, _ := vl.ValueOffsets(0)
	vhi := vlo + (ihi - ilo)
	if _, _, _, err := listRange(vl, n, nil); err != nil {
		return &badData{err}
	}
	ic, vc := il.ListValues(), vl.ListValues()
	if k, ok := firstNull(ic, int(ilo), int(ihi)); ok {
		return rowErr(core.RowOf(ptr, k-int(ilo)), p.Index, fmt.Errorf("%w: index", core.ErrNull))
	}
	if k, ok := firstNull(vc, int(vlo), int(vhi)); ok {
		return rowErr(core.RowOf(ptr, k-int(vlo)), p.Value, fmt.Errorf("%w: value", core.ErrNull))
	}
	return p.convertPairs(blk, ic, vc, ilo, ihi, vlo, vhi, m, p.Index, p.Value, rowErr)
}

// convertDense converts the feature columns of a dense batch: column j is
// feature j+1, and zeros are left out.
func (p *plan) convertDense(blk *sparsevec.CSR, rec arrow.Record, n int, scratch *[][]float32, rowErr func(int, string, error) error) error {
	cols := (*scratch)[:0]
	for j, fi := range p.dense {
		a := rec.Column(fi)
		name := p.Dense[j]
		if a.Len() != n {
			return &badData{errors.New("column lengths differ from the batch's row count")}
		}
		if r, ok := firstNull(a, 0, n); ok {
			return rowErr(r, name, fmt.Errorf("%w: value", core.ErrNull))
		}
		var c []float32
		if j < cap(*scratch) {
			c = (*scratch)[:j+1][j][:0]
		}
		c, k, err := appendFloats(c, a)
		if err != nil {
			return rowErr(k, name, err)
		}
		for r, v := range c {
			if !core.Finite32(v) {
				return rowErr(r, name, fmt.Errorf("%w: value %v", core.ErrNonFinite, v))
			}
		}
		cols = append(cols, c)
	}
	*scratch = cols
	blk.Ptr = append(blk.Ptr[:0], 0)
	blk.Idx, blk.Val = blk.Idx[:0], blk.Val[:0]
	for r := range n {
		for j, c := range cols {
			if v := c[r]; v != 0 {
				blk.Idx = append(blk.Idx, uint32(j+1))
				blk.Val = append(blk.Val, v)
			}
		}
		blk.Ptr = append(blk.Ptr, len(blk.Idx))
	}
	return nil
}
