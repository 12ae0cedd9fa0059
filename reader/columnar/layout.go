package columnar

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// IndexBaseKey is the key of the schema metadata (Arrow) and key-value
// metadata (Parquet) that says whether a file's feature indices are 0- or
// 1-based: "0" or "1". The writers of this package record "1".
const IndexBaseKey = "cpm.index_base"

// LayoutKind is the way a file's columns hold the rows.
type LayoutKind int

const (
	// StructList: one column of type list<struct<index, value>> per row
	// (list, large_list or fixed_size_list), the canonical layout.
	StructList LayoutKind = iota
	// TwoLists: two list columns, the indices and the values of each row,
	// of equal length in each row (the arrays of a scipy CSR row).
	TwoLists
	// Dense: every column but the label is a numeric scalar; column i
	// (in schema order, the label left out) is feature i, counted from 1,
	// and zeros are not stored.
	Dense
)

func (k LayoutKind) String() string {
	switch k {
	case StructList:
		return "struct-list"
	case TwoLists:
		return "two-lists"
	case Dense:
		return "dense"
	}
	return fmt.Sprintf("LayoutKind(%d)", int(k))
}

// Layout is how a reader maps a file's columns to rows: which columns it
// reads and how their indices are numbered.
type Layout struct {
	Kind  LayoutKind
	Label string // the label column
	// Features is the list<struct> column of StructList.
	Features string
	// Index and Value are the index and value list columns of TwoLists,
	// or the struct's fields of StructList.
	Index, Value string
	// Dense are the feature columns of Dense: Dense[i] is feature i+1.
	Dense []string
	// ZeroBased: the stored indices are 0-based and read as index+1.
	ZeroBased bool
	// BaseFrom says what decided ZeroBased: "option", "metadata" (the
	// file's cpm.index_base) or "default" (1-based).
	BaseFrom string
}

// String describes the layout in one line, e.g. "label y, dense columns
// as features 1..3 (1=age, 2=income, 3=height)" or "label label, features
// f: list<struct<index, value>>, indices 0-based (by metadata), read as
// index+1".
func (l Layout) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "label %s, ", l.Label)
	switch l.Kind {
	case StructList:
		fmt.Fprintf(&b, "features %s: list<struct<%s, %s>>", l.Features, l.Index, l.Value)
	case TwoLists:
		fmt.Fprintf(&b, "index list %s, value list %s", l.Index, l.Value)
	case Dense:
		fmt.Fprintf(&b, "dense columns as features 1..%d (", len(l.Dense))
		for i, name := range l.Dense {
			if i > 0 {
				b.WriteString(", ")
			}
			if i == 8 && len(l.Dense) > 10 {
				fmt.Fprintf(&b, "..., %d=%s", len(l.Dense), l.Dense[len(l.Dense)-1])
				break
			}
			fmt.Fprintf(&b, "%d=%s", i+1, name)
		}
		b.WriteString(")")
		return b.String()
	}
	if l.ZeroBased {
		fmt.Fprintf(&b, ", indices 0-based (by %s), read as index+1", l.BaseFrom)
	} else {
		fmt.Fprintf(&b, ", indices 1-based (by %s)", l.BaseFrom)
	}
	return b.String()
}

// plan is a Layout bound to the fields of one schema.
type plan struct {
	Layout
	label      int   // field of the label
	feat       int   // StructList: the list field; TwoLists: the index list
	val        int   // TwoLists: the value list
	sIdx, sVal int   // StructList: the struct's index and value fields
	dense      []int // Dense: the feature fields
	// fast: the canonical schema with 1-based indices (label float32,
	// list<struct<index: uint32, value: float32>>), read without copying.
	fast bool
}

// columnsOf lists the fields of s for an error message: "a: int64, b: string".
func columnsOf(s *arrow.Schema) string {
	var b strings.Builder
	for i, f := range s.Fields() {
		if i > 0 {
			b.WriteString(", ")
		}
		if i == 20 {
			fmt.Fprintf(&b, "... (%d columns)", s.NumFields())
			break
		}
		fmt.Fprintf(&b, "%s: %s", f.Name, f.Type)
	}
	return b.String()
}

// isInteger and isNumber tell the scalar types a reader converts.
func isInteger(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

func isNumber(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return isInteger(t)
}

// listElem returns the element type of a list, large_list or
// fixed_size_list type.
func listElem(t arrow.DataType) (arrow.DataType, bool) {
	switch t := t.(type) {
	case *arrow.ListType:
		return t.Elem(), true
	case *arrow.LargeListType:
		return t.Elem(), true
	case *arrow.FixedSizeListType:
		return t.Elem(), true
	}
	return nil, false
}

// fieldIndex returns the first field of s named name, or -1.
func fieldIndex(s *arrow.Schema, name string) int {
	for i, f := range s.Fields() {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// wantLayouts is the end of the error message of a file in none of the
// layouts.
const wantLayouts = "want features: list<struct<index: integer, value: number>>, or list columns index and value, or only numeric columns besides the label"

// newPlan chooses the layout of a file of schema s (see the package
// documentation): the columns named by o, the index base from o and from
// meta, the file's cpm.index_base (hasMeta false when absent).
func newPlan(path string, s *arrow.Schema, o core.Options, meta string, hasMeta bool) (*plan, error) {
	if s == nil {
		return nil, fmt.Errorf("%s: no schema: %w", path, core.ErrCorrupt)
	}
	labelName, featName, idxName, valName := o.Columnar.Names()
	schemaErr := func(col, msg string) error {
		return &core.SchemaError{Path: path, Column: col, Msg: msg + "; the file's columns: " + columnsOf(s)}
	}
	p := &plan{label: fieldIndex(s, labelName)}
	p.Label = labelName
	if p.label < 0 {
		return nil, schemaErr(labelName, "missing (name another label column with --label-column)")
	}
	if t := s.Field(p.label).Type; !isNumber(t) {
		return nil, schemaErr(labelName, "type "+t.String()+", want an integer or floating-point type")
	}
	fi := fieldIndex(s, featName)
	ii, vi := fieldIndex(s, idxName), fieldIndex(s, valName)
	if o.Columnar.Index == "" && o.Columnar.Value == "" && (ii < 0 || vi < 0) {
		if i2, v2 := fieldIndex(s, "indices"), fieldIndex(s, "values"); i2 >= 0 && v2 >= 0 {
			ii, vi, idxName, valName = i2, v2, "indices", "values"
		}
	}
	switch {
	case fi >= 0:
		if err := p.structList(s, fi, schemaErr); err != nil {
			return nil, err
		}
	case o.Columnar.Features != "":
		return nil, schemaErr(featName, "missing")
	case ii >= 0 && vi >= 0:
		if err := p.twoLists(s, ii, vi, schemaErr); err != nil {
			return nil, err
		}
	case o.Columnar.Index != "" || o.Columnar.Value != "":
		col := idxName
		if ii >= 0 {
			col = valName
		}
		return nil, schemaErr(col, "missing")
	default:
		if err := p.denseColumns(s, schemaErr); err != nil {
			return nil, err
		}
		if uint64(len(p.dense)) > uint64(o.MaxIndex) {
			return nil, schemaErr(p.Dense[len(p.Dense)-1], fmt.Sprintf("%d feature columns, above the maximum index %d", len(p.dense), o.MaxIndex))
		}
		return p, nil
	}
	switch {
	case o.ZeroBased != core.ZeroBasedAuto:
		p.ZeroBased, p.BaseFrom = o.ZeroBased == core.ZeroBasedYes, "option"
	case hasMeta && (meta == "0" || meta == "1"):
		p.ZeroBased, p.BaseFrom = meta == "0", "metadata"
	case hasMeta:
		return nil, &core.SchemaError{Path: path, Column: p.Index, Msg: fmt.Sprintf("metadata %s = %q: want 0 or 1", IndexBaseKey, meta)}
	default:
		p.BaseFrom = "default"
	}
	p.fast = p.Kind == StructList && !p.ZeroBased && s.Field(p.label).Type.ID() == arrow.FLOAT32 &&
		s.Field(p.feat).Type.ID() == arrow.LIST && p.structType(s).Field(p.sIdx).Type.ID() == arrow.UINT32 &&
		p.structType(s).Field(p.sVal).Type.ID() == arrow.FLOAT32
	return p, nil
}

// structType returns the struct type of the StructList column.
func (p *plan) structType(s *arrow.Schema) *arrow.StructType {
	e, _ := listElem(s.Field(p.feat).Type)
	return e.(*arrow.StructType)
}

// structList sets p to read field fi of s as the list<struct> column.
func (p *plan) structList(s *arrow.Schema, fi int, schemaErr func(col, msg string) error) error {
	f := s.Field(fi)
	bad := func(why string) error {
		return schemaErr(f.Name, "type "+f.Type.String()+": "+why+"; want list<struct<index: integer, value: number>> (list, large_list or fixed_size_list)")
	}
	e, ok := listElem(f.Type)
	if !ok {
		return bad("not a list")
	}
	st, ok := e.(*arrow.StructType)
	if !ok {
		return bad("list items are not structs")
	}
	i, ok1 := st.FieldIdx(core.IndexColumn)
	v, ok2 := st.FieldIdx(core.ValueColumn)
	switch {
	case !ok1 || !ok2:
		return bad("the struct has no fields named index and value")
	case !isInteger(st.Field(i).Type):
		return bad("index is not an integer")
	case !isNumber(st.Field(v).Type):
		return bad("value is not a number")
	}
	p.Kind, p.Features, p.Index, p.Value = StructList, f.Name, core.IndexColumn, core.ValueColumn
	p.feat, p.sIdx, p.sVal = fi, i, v
	return nil
}

// twoLists sets p to read fields ii and vi of s as the index and value
// lists.
func (p *plan) twoLists(s *arrow.Schema, ii, vi int, schemaErr func(col, msg string) error) error {
	for _, c := range []struct {
		i    int
		ok   func(arrow.DataType) bool
		want string
	}{{ii, isInteger, "list<integer>"}, {vi, isNumber, "list<number>"}} {
		f := s.Field(c.i)
		if e, ok := listElem(f.Type); !ok || !c.ok(e) {
			return schemaErr(f.Name, "type "+f.Type.String()+", want "+c.want+" (list, large_list or fixed_size_list)")
		}
	}
	p.Kind, p.Index, p.Value = TwoLists, s.Field(ii).Name, s.Field(vi).Name
	p.feat, p.val = ii, vi
	return nil
}

// denseColumns sets p to read every field of s but the label as a feature.
func (p *plan) denseColumns(s *arrow.Schema, schemaErr func(col, msg string) error) error {
	p.Kind = Dense
	for i, f := range s.Fields() {
		if i == p.label || isPandasIndex(f.Name) {
			continue
		}
		if !isNumber(f.Type) && f.Type.ID() != arrow.BOOL {
			return schemaErr(core.FeaturesColumn, fmt.Sprintf("missing, and column %q (%s) is not numeric, so the columns are not dense features either; %s", f.Name, f.Type, wantLayouts))
		}
		p.dense = append(p.dense, i)
		p.Dense = append(p.Dense, f.Name)
	}
	if len(p.dense) == 0 {
		return schemaErr(core.FeaturesColumn, "missing; "+wantLayouts)
	}
	return nil
}

// isPandasIndex reports whether name is that of a column in which pandas
// stores a data frame's index (__index_level_0__ and so on), which is not
// data.
func isPandasIndex(name string) bool {
	return strings.HasPrefix(name, "__index_level_") && strings.HasSuffix(name, "__")
}

// bind resolves p's columns in s, the schema of a record batch: the
// same fields as the file's, or those of a projection in file order
// (Parquet reads only the columns it needs).
func (p *plan) bind(s *arrow.Schema) error {
	find := func(name string) (int, error) {
		if i := fieldIndex(s, name); i >= 0 {
			return i, nil
		}
		return 0, fmt.Errorf("record batch without column %q", name)
	}
	var err error
	if p.label, err = find(p.Label); err != nil {
		return err
	}
	switch p.Kind {
	case StructList:
		p.feat, err = find(p.Features)
	case TwoLists:
		if p.feat, err = find(p.Index); err == nil {
			p.val, err = find(p.Value)
		}
	case Dense:
		p.dense = p.dense[:0]
		for i, f := range s.Fields() {
			if i != p.label && !isPandasIndex(f.Name) {
				p.dense = append(p.dense, i)
			}
		}
		if len(p.dense) != len(p.Dense) {
			return fmt.Errorf("record batch of %d feature columns, want %d", len(p.dense), len(p.Dense))
		}
	}
	return err
}

// Describe opens the Arrow IPC file or stream, or the Parquet file, at
// path, chooses its layout as the readers do with opts (WithLabelColumn,
// WithFeaturesColumn, WithIndexColumn, WithValueColumn, WithZeroBased,
// WithOpener apply) and returns it, without reading any rows.
func Describe(path string, opts ...core.Option) (Layout, error) {
	o := core.BuildOptions(opts)
	f, err := o.OpenFile(path)
	if err != nil {
		return Layout{}, err
	}
	head := make([]byte, 6)
	n, _ := io.ReadFull(f, head)
	f.Close()
	var br core.BlockReader
	switch head = head[:n]; {
	case bytes.HasPrefix(head, []byte("ARROW1")):
		br, err = openArrowBlocks(path, false, o)
	case bytes.HasPrefix(head, []byte{0xff, 0xff, 0xff, 0xff}):
		br, err = openArrowBlocks(path, true, o)
	case bytes.HasPrefix(head, []byte("PAR1")):
		br, err = openParquetBlocks(path, o)
	default:
		return Layout{}, fmt.Errorf("%s: not an Arrow IPC or Parquet file", path)
	}
	if err != nil {
		return Layout{}, err
	}
	defer br.Close()
	return br.(interface{ Layout() Layout }).Layout(), nil
}
