package columnar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// The rows every variant file holds, as LIBSVM text would give them.
var variantRows = csrOf(
	wantRow{1, []uint32{1, 3, 70000}, []float32{0.5, -2, 3}},
	wantRow{-1, nil, nil},
	wantRow{2, []uint32{2}, []float32{0.25}},
	wantRow{0, []uint32{5, 6}, []float32{1, 100}},
)

// variantJSON renders variantRows as JSON rows of a list<struct> column
// feats, with indices shifted by -base0 (0-based when base0 is 1).
func variantJSON(label, feats string, base0 uint32) string {
	var b strings.Builder
	b.WriteString("[")
	for r := range variantRows.Rows() {
		if r > 0 {
			b.WriteString(",")
		}
		v := variantRows.Row(r)
		fmt.Fprintf(&b, `{%q: %v, "other": "x%d", %q: [`, label, variantRows.Labels[r], r, feats)
		for k := range v.Idx {
			if k > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"value": %v, "index": %d}`, v.Val[k], v.Idx[k]-base0)
		}
		b.WriteString("]}")
	}
	b.WriteString("]")
	return b.String()
}

// writeVariant writes rec to a new file of extension ext with the Arrow
// and Parquet libraries themselves (props for Parquet, nil for the
// defaults) and returns its path.
func writeVariant(t *testing.T, ext string, rec arrow.Record, props *parquet.WriterProperties) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "v"+ext)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	switch ext {
	case ".parquet":
		if props == nil {
			props = parquet.NewWriterProperties()
		}
		tbl := array.NewTableFromRecords(rec.Schema(), []arrow.Record{rec})
		defer tbl.Release()
		err = pqarrow.WriteTable(tbl, f, 2, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	case ".arrow":
		var w *ipc.FileWriter
		if w, err = ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema())); err == nil {
			if err = w.Write(rec.NewSlice(0, 2)); err == nil {
				err = w.Write(rec.NewSlice(2, rec.NumRows()))
			}
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
	case ".arrows":
		w := ipc.NewWriter(f, ipc.WithSchema(rec.Schema()))
		err = w.Write(rec)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// checkVariant reads path with opts and checks that it holds variantRows.
func checkVariant(t *testing.T, path string, want *sparsevec.CSR, opts ...core.Option) {
	t.Helper()
	got, _, err := readAllBlocks(t, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if !equalCSR(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestStructListVariants reads list<struct<index, value>> files of every
// accepted label, index and value type and list kind, with the columns in
// either order and an extra column, as Arrow files, streams and Parquet.
func TestStructListVariants(t *testing.T) {
	labels := []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Int64, arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64}
	indices := []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint32,
		arrow.PrimitiveTypes.Uint64}
	values := []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64}
	lists := map[string]func(arrow.DataType) arrow.DataType{
		"list":       func(e arrow.DataType) arrow.DataType { return arrow.ListOf(e) },
		"large_list": func(e arrow.DataType) arrow.DataType { return arrow.LargeListOf(e) },
	}
	var cases []arrow.DataType // label, index, value, in turn
	for i, l := range labels {
		cases = append(cases, l, indices[i%len(indices)], values[i%len(values)])
	}
	for _, u := range []arrow.DataType{arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64} {
		cases = append(cases, u, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Int32) // integer values
	}
	for i := 0; i < len(cases); i += 3 {
		for kind, list := range lists {
			lt, it, vt := cases[i], cases[i+1], cases[i+2]
			feats := list(arrow.StructOf(arrow.Field{Name: "value", Type: vt, Nullable: true}, arrow.Field{Name: "index", Type: it, Nullable: true}))
			// features first, an extra column between, label last.
			schema := arrow.NewSchema([]arrow.Field{{Name: "f", Type: feats, Nullable: true},
				{Name: "other", Type: arrow.BinaryTypes.String}, {Name: "y", Type: lt, Nullable: true}}, nil)
			want := variantRows
			if !arrow.IsFloating(vt.ID()) { // the values are whole for integer types
				want = csrOf(wantRow{1, []uint32{1, 3, 70000}, []float32{1, -2, 3}}, wantRow{-1, nil, nil},
					wantRow{2, []uint32{2}, []float32{3}}, wantRow{0, []uint32{5, 6}, []float32{1, 100}})
			}
			js := variantJSON("y", "f", 0)
			if !arrow.IsFloating(vt.ID()) {
				js = strings.NewReplacer("0.5", "1", "0.25", "3").Replace(js)
			}
			if !arrow.IsSignedInteger(lt.ID()) && !arrow.IsFloating(lt.ID()) {
				js = strings.Replace(js, `"y": -1`, `"y": 255`, 1)
				want = cloneCSR(want)
				want.Labels[1] = 255
			}
			if arrow.IsUnsignedInteger(vt.ID()) || vt.ID() == arrow.INT32 {
				js = strings.Replace(js, `"value": -2`, `"value": 2`, 1)
				want = cloneCSR(want)
				want.Val[1] = 2
			}
			rec := jsonRecord(t, schema, js)
			for _, ext := range columnarExts {
				t.Run(fmt.Sprintf("%s-%s-%s-%s%s", kind, lt, it, vt, ext), func(t *testing.T) {
					path := writeVariant(t, ext, rec, nil)
					checkVariant(t, path, want, core.WithLabelColumn("y"), core.WithFeaturesColumn("f"))
				})
			}
			rec.Release()
		}
	}
}

// TestFixedSizeList reads rows of a fixed_size_list<struct> column.
func TestFixedSizeList(t *testing.T) {
	st := arrow.StructOf(arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Int64}, arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Float64})
	schema := arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int64},
		{Name: "features", Type: arrow.FixedSizeListOf(2, st)}}, nil)
	rec := jsonRecord(t, schema, `[{"label": 1, "features": [{"index": 1, "value": 2}, {"index": 4, "value": 0.5}]},
		{"label": -1, "features": [{"index": 2, "value": 3}, {"index": 3, "value": -1}]}]`)
	defer rec.Release()
	want := csrOf(wantRow{1, []uint32{1, 4}, []float32{2, 0.5}}, wantRow{-1, []uint32{2, 3}, []float32{3, -1}})
	for _, ext := range []string{".arrow", ".arrows"} { // Parquet has no fixed-size lists
		checkVariant(t, writeVariant(t, ext, rec, nil), want)
	}
}

// TestTwoListLayout reads index and value list columns, under the
// default names, the scipy names indices/values, and names given by
// option.
func TestTwoListLayout(t *testing.T) {
	for _, tc := range []struct {
		idx, val string
		opts     []core.Option
	}{
		{"index", "value", nil},
		{"indices", "values", nil},
		{"cols", "vals", []core.Option{core.WithIndexColumn("cols"), core.WithValueColumn("vals")}},
	} {
		schema := arrow.NewSchema([]arrow.Field{
			{Name: tc.val, Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
			{Name: "label", Type: arrow.PrimitiveTypes.Float64},
			{Name: tc.idx, Type: arrow.LargeListOf(arrow.PrimitiveTypes.Int64)},
		}, nil)
		var b strings.Builder
		b.WriteString("[")
		for r := range variantRows.Rows() {
			v := variantRows.Row(r)
			idx, _ := jsonOf(v.Idx)
			val, _ := jsonOf(v.Val)
			if r > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"label": %v, %q: %s, %q: %s}`, variantRows.Labels[r], tc.idx, idx, tc.val, val)
		}
		b.WriteString("]")
		rec := jsonRecord(t, schema, b.String())
		for _, ext := range columnarExts {
			t.Run(tc.idx+ext, func(t *testing.T) {
				path := writeVariant(t, ext, rec, nil)
				checkVariant(t, path, variantRows, tc.opts...)
				l, err := Describe(path, tc.opts...)
				if err != nil || l.Kind != TwoLists || l.Index != tc.idx || l.Value != tc.val {
					t.Errorf("Describe: %+v, %v", l, err)
				}
			})
		}
		rec.Release()
	}
}

// jsonOf renders a slice as a JSON array.
func jsonOf[T any](s []T) (string, error) {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(parts, ",") + "]", nil
}

// TestDenseLayout reads numeric columns as features 1..n in schema
// order, zeros left out, and reports the mapping.
func TestDenseLayout(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "age", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int32},
		{Name: "income", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "member", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "h", Type: arrow.PrimitiveTypes.Float32},
		{Name: "__index_level_0__", Type: arrow.PrimitiveTypes.Int64}, // pandas' index: not a feature
	}, nil)
	rec := jsonRecord(t, schema, `[{"age": 30, "label": 1, "income": 0, "member": true, "h": 1.5, "__index_level_0__": 7},
		{"age": 0, "label": 0, "income": 0, "member": false, "h": 0, "__index_level_0__": 8},
		{"age": 41, "label": -1, "income": 2.5e4, "member": false, "h": -2, "__index_level_0__": 9}]`)
	defer rec.Release()
	want := csrOf(wantRow{1, []uint32{1, 3, 4}, []float32{30, 1, 1.5}}, wantRow{0, nil, nil},
		wantRow{-1, []uint32{1, 2, 4}, []float32{41, 25000, -2}})
	for _, ext := range columnarExts {
		t.Run(ext, func(t *testing.T) {
			path := writeVariant(t, ext, rec, nil)
			checkVariant(t, path, want)
			l, err := Describe(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := l.String(); l.Kind != Dense || got != "label label, dense columns as features 1..4 (1=age, 2=income, 3=member, 4=h)" {
				t.Errorf("layout %q", got)
			}
		})
	}
}

// TestIndexBase reads 0-based indices, told by the file's metadata or by
// the option, and refuses index 0 otherwise with the hint.
func TestIndexBase(t *testing.T) {
	feats := arrow.ListOf(arrow.StructOf(arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Uint32}, arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Float32}))
	for _, tc := range []struct {
		name string
		meta []string // cpm.index_base, if any
		opt  core.ZeroBased
		base uint32 // of the indices stored
		err  error
	}{
		{"metadata 0", []string{"0"}, core.ZeroBasedAuto, 1, nil},
		{"metadata 1", []string{"1"}, core.ZeroBasedAuto, 0, nil},
		{"option yes", nil, core.ZeroBasedYes, 1, nil},
		{"option yes over metadata 1", []string{"1"}, core.ZeroBasedYes, 1, nil},
		{"no metadata", nil, core.ZeroBasedAuto, 0, nil},
		{"0-based without word", nil, core.ZeroBasedAuto, 1, core.ErrIndexZero},
		{"option no over metadata 0", []string{"0"}, core.ZeroBasedNo, 1, core.ErrIndexZero},
	} {
		var md *arrow.Metadata
		if tc.meta != nil {
			m := arrow.NewMetadata([]string{IndexBaseKey}, tc.meta)
			md = &m
		}
		schema := arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Float32}, {Name: "features", Type: feats}}, md)
		rec := jsonRecord(t, schema, variantJSON("label", "features", tc.base))
		for _, ext := range columnarExts {
			t.Run(tc.name+ext, func(t *testing.T) {
				path := writeVariant(t, ext, rec, nil)
				if tc.err == nil {
					checkVariant(t, path, variantRows, core.WithZeroBased(tc.opt))
					return
				}
				_, _, err := readAllBlocks(t, path, core.WithZeroBased(tc.opt))
				var re *core.RowError
				if !errors.Is(err, tc.err) || !errors.As(err, &re) || re.Row != 1 || !strings.Contains(err.Error(), "--zero-based yes") {
					t.Errorf("got %v, want %v at row 1 with the hint", err, tc.err)
				}
			})
		}
		rec.Release()
	}
}

// TestParquetCodecsAndEncodings reads Parquet files that arrow-go writes
// with every codec it writes, every encoding of numbers, dictionaries on
// and off, and data pages of both versions, in the canonical schema (the
// column readers) and another (pqarrow).
func TestParquetCodecsAndEncodings(t *testing.T) {
	m := sampleCSR(testRand(), 300)
	canon := csrRecordOf(m, 0, m.Rows())
	defer canon.Release()
	// The same rows with int64 indices and float64 values.
	wide := wideRecord(t, m)
	defer wide.Release()
	type prop = parquet.WriterProperty
	var variants []struct {
		name  string
		props []prop
	}
	add := func(name string, props ...prop) {
		variants = append(variants, struct {
			name  string
			props []prop
		}{name, props})
	}
	for _, c := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Gzip,
		compress.Codecs.Brotli, compress.Codecs.Zstd, compress.Codecs.Lz4Raw} {
		add(c.String()+"-v1", parquet.WithCompression(c), parquet.WithDataPageVersion(parquet.DataPageV1))
		add(c.String()+"-v2", parquet.WithCompression(c), parquet.WithDataPageVersion(parquet.DataPageV2))
	}
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		sfx := fmt.Sprintf("-v%d", v+1)
		add("dictionary"+sfx, parquet.WithDictionaryDefault(true), parquet.WithDataPageVersion(v))
		add("plain"+sfx, parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(v))
		add("byte_stream_split"+sfx, parquet.WithDictionaryDefault(false), parquet.WithEncoding(parquet.Encodings.ByteStreamSplit),
			parquet.WithDataPageVersion(v), parquet.WithCompression(compress.Codecs.Zstd))
		add("delta_binary_packed"+sfx, parquet.WithDictionaryDefault(false),
			parquet.WithEncodingFor("features.list.element.index", parquet.Encodings.DeltaBinaryPacked),
			parquet.WithEncodingFor("label", parquet.Encodings.ByteStreamSplit),
			parquet.WithDataPageVersion(v), parquet.WithCompression(compress.Codecs.Lz4Raw))
		add("small pages"+sfx, parquet.WithDataPageSize(256), parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(v))
	}
	for _, v := range variants {
		for _, rec := range []arrow.Record{canon, wide} {
			t.Run(v.name+"/"+rec.Schema().Field(1).Type.String(), func(t *testing.T) {
				path := writeVariant(t, ".parquet", rec, parquet.NewWriterProperties(v.props...))
				checkVariant(t, path, m)
			})
		}
	}
}

// wideRecord is m as a record of label float64 and list<struct<index:
// int64, value: float64>>.
func wideRecord(t testing.TB, m *sparsevec.CSR) arrow.Record {
	st := arrow.StructOf(arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Int64}, arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Float64})
	schema := arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Float64}, {Name: "features", Type: arrow.ListOf(st)}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	lb := b.Field(1).(*array.ListBuilder)
	sb := lb.ValueBuilder().(*array.StructBuilder)
	for r := range m.Rows() {
		b.Field(0).(*array.Float64Builder).Append(float64(m.Labels[r]))
		lb.Append(true)
		v := m.Row(r)
		for k := range v.Idx {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(v.Idx[k]))
			sb.FieldBuilder(1).(*array.Float64Builder).Append(float64(v.Val[k]))
		}
	}
	return b.NewRecord()
}

// TestVariantErrors checks the errors of bad data in the converted
// layouts: each names the row and the column.
func TestVariantErrors(t *testing.T) {
	i64, f64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	structs := arrow.ListOf(arrow.StructOf(arrow.Field{Name: "index", Type: i64}, arrow.Field{Name: "value", Type: f64}))
	sl := []arrow.Field{{Name: "label", Type: f64}, {Name: "features", Type: structs, Nullable: true}}
	two := []arrow.Field{{Name: "label", Type: i64}, {Name: "index", Type: arrow.ListOf(i64)}, {Name: "value", Type: arrow.ListOf(f64), Nullable: true}}
	dense := []arrow.Field{{Name: "label", Type: f64}, {Name: "a", Type: f64, Nullable: true}, {Name: "b", Type: i64, Nullable: true}}
	ok := `{"label": 1, "features": [{"index": 1, "value": 1}]}`
	tests := []struct {
		name   string
		fields []arrow.Field
		rows   string
		column string
		want   string
		is     error
	}{
		{"label overflow", sl, ok + `, {"label": 1e300, "features": []}`, "label", "1e+300 overflows float32", core.ErrNonFinite},
		{"value overflow", sl, ok + `, {"label": 1, "features": [{"index": 2, "value": -1e39}]}`, "features", "-1e+39 overflows float32", core.ErrNonFinite},
		{"inexact integer label", []arrow.Field{{Name: "label", Type: i64}, sl[1]}, `{"label": 1, "features": []}, {"label": 16777217, "features": []}`,
			"label", "integer 16777217 cannot be held exactly by a float32", nil},
		{"negative index", sl, ok + `, {"label": 1, "features": [{"index": -3, "value": 1}]}`, "features", "negative index -3", core.ErrIndexRange},
		{"index above maximum", sl, ok + `, {"label": 1, "features": [{"index": 5000000000, "value": 1}]}`, "features", "index 5000000000 above the maximum", core.ErrIndexRange},
		{"null list", sl, ok + `, {"label": 1, "features": null}`, "features", "null value: feature list", core.ErrNull},
		{"unsorted", sl, ok + `, {"label": 1, "features": [{"index": 3, "value": 1}, {"index": 2, "value": 1}]}`, "features", "index 2 after 3", core.ErrUnsorted},
		{"lengths differ", two, `{"label": 1, "index": [1], "value": [2]}, {"label": 1, "index": [1, 2], "value": [2]}`, "value", "2 indices but 1 values", nil},
		{"two-list null", two, `{"label": 1, "index": [1], "value": [2]}, {"label": 1, "index": [1], "value": null}`, "value", "null value: list", core.ErrNull},
		{"dense null", dense, `{"label": 1, "a": 1, "b": 2}, {"label": 1, "a": 1, "b": null}`, "b", "null value", core.ErrNull},
		{"dense non-finite", dense, `{"label": 1, "a": 1, "b": 2}, {"label": 1, "a": 1e300, "b": 2}`, "a", "overflows float32", core.ErrNonFinite},
	}
	for _, tt := range tests {
		schema := arrow.NewSchema(tt.fields, nil)
		rec := jsonRecord(t, schema, "["+tt.rows+"]")
		for _, ext := range columnarExts {
			t.Run(tt.name+ext, func(t *testing.T) {
				path := writeVariant(t, ext, rec, nil)
				_, _, err := readAllBlocks(t, path)
				var re *core.RowError
				if !errors.As(err, &re) || re.Row != 2 || re.Column != tt.column || !strings.Contains(err.Error(), tt.want) ||
					(tt.is != nil && !errors.Is(err, tt.is)) {
					t.Errorf("got %v, want row 2, column %q: %q (%v)", err, tt.column, tt.want, tt.is)
				}
			})
		}
		rec.Release()
	}
}

// TestColumnOptionErrors: a column named by option that is missing is an
// error naming it and listing the file's columns.
func TestColumnOptionErrors(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Float32}, {Name: "features", Type: featuresType}}, nil)
	rec := jsonRecord(t, schema, `[{"label": 1, "features": []}]`)
	defer rec.Release()
	for _, tc := range []struct {
		opt    core.Option
		column string
	}{
		{core.WithLabelColumn("y"), "y"},
		{core.WithFeaturesColumn("x"), "x"},
	} {
		path := writeVariant(t, ".parquet", rec, nil)
		_, _, err := readAllBlocks(t, path, tc.opt)
		var se *core.SchemaError
		if !errors.As(err, &se) || se.Column != tc.column || !strings.Contains(err.Error(), "the file's columns: label: float32, features: list<") {
			t.Errorf("got %v, want a SchemaError of column %q listing the columns", err, tc.column)
		}
	}
}

// TestParquetUnsupportedCodec: a column chunk compressed with a codec the
// library does not decode (LZ4, the Hadoop framing) is ErrUnsupported,
// not ErrCorrupt.
func TestParquetUnsupportedCodec(t *testing.T) {
	m := sampleCSR(testRand(), 20)
	path := filepath.Join(t.TempDir(), "x.parquet")
	writeAll(t, path, m, 20, core.WithCompression("none"))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite the codec of every column chunk in the footer: field 4 of
	// ColumnMetaData, an i32 after field 3 (header byte 0x15: delta 1,
	// compact type 5) and before field 5, num_values, an i64 (0x16);
	// UNCOMPRESSED (0) is the zigzag byte 0x00, LZ4 (5) is 0x0a.
	n := int(uint32(data[len(data)-8]) | uint32(data[len(data)-7])<<8 | uint32(data[len(data)-6])<<16 | uint32(data[len(data)-5])<<24)
	footer := data[len(data)-8-n : len(data)-8]
	changed := 0
	for i := 0; i+1 < len(footer); i++ {
		if footer[i] == 0x15 && footer[i+1] == 0x00 && i+2 < len(footer) && footer[i+2] == 0x16 {
			footer[i+1] = 0x0a
			changed++
		}
	}
	if changed != 3 {
		t.Fatalf("%d codec fields found in the footer, want 3", changed)
	}
	bad := writeTempFile(t, "lz4.parquet", data)
	_, _, err = readAllBlocks(t, bad)
	if !errors.Is(err, core.ErrUnsupported) || errors.Is(err, core.ErrCorrupt) {
		t.Errorf("got %v, want ErrUnsupported", err)
	}
}

// cloneCSR returns a copy of m.
func cloneCSR(m *sparsevec.CSR) *sparsevec.CSR {
	c := &sparsevec.CSR{}
	core.AppendRows(c, m, 0, m.Rows())
	return c
}

// TestReaderPaths: the canonical schema takes the column readers
// (Parquet) or the zero-copy batches (Arrow); other schemas the
// conversion.
func TestReaderPaths(t *testing.T) {
	m := sampleCSR(testRand(), 30)
	path := filepath.Join(t.TempDir(), "x.parquet")
	writeAll(t, path, m, 30)
	br, err := OpenParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := br.(*parquetBlocks); !ok {
		t.Errorf("canonical Parquet read by %T", br)
	}
	br.Close()
	wide := wideRecord(t, m)
	defer wide.Release()
	for _, ext := range columnarExts {
		br, err := openBlocks(writeVariant(t, ext, wide, nil), 1)
		if err != nil {
			t.Fatal(err)
		}
		if b, ok := br.(*blocks); !ok || b.plan.fast {
			t.Errorf("%s of label float64 read by %T, not converted", ext, br)
		}
		br.Close()
	}
}

// TestConvertAllocs pins the conversion's allocations per batch: none
// per row.
func TestConvertAllocs(t *testing.T) {
	for _, rows := range []int{40, 4000} {
		m := sampleCSR(testRand(), rows)
		rec := wideRecord(t, m)
		p, err := newPlan("mem", rec.Schema(), core.BuildOptions(nil), "", false)
		if err != nil {
			t.Fatal(err)
		}
		blk := &sparsevec.CSR{}
		var scratch [][]float32
		rowErr := func(r int, col string, err error) error { return err }
		if err := p.convert(blk, rec, indexMap{max: 1<<32 - 1}, &scratch, rowErr); err != nil || !equalCSR(blk, m) {
			t.Fatalf("convert: %v", err)
		}
		allocs := testing.AllocsPerRun(5, func() { p.convert(blk, rec, indexMap{max: 1<<32 - 1}, &scratch, rowErr) })
		if allocs > 8 {
			t.Errorf("%d rows: %v allocations per batch", rows, allocs)
		}
		rec.Release()
	}
}

// TestWrittenMetadata: Arrow and Parquet output record cpm.index_base =
// "1"; Parquet pages are version 1 unless WithParquetPageVersion(2).
func TestWrittenMetadata(t *testing.T) {
	m := sampleCSR(testRand(), 10)
	for _, ext := range columnarExts {
		path := filepath.Join(t.TempDir(), "x"+ext)
		writeAll(t, path, m, 10)
		l, err := Describe(path, core.WithZeroBased(core.ZeroBasedAuto))
		if err != nil || l.BaseFrom != "metadata" || l.ZeroBased {
			t.Errorf("%s: layout %+v, %v; want 1-based from the metadata", ext, l, err)
		}
	}
	for _, v := range []int{0, 1, 2} {
		path := filepath.Join(t.TempDir(), "x.parquet")
		writeAll(t, path, m, 10, core.WithParquetPageVersion(v))
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := pf.RowGroup(0).GetColumnPageReader(0)
		if err != nil {
			t.Fatal(err)
		}
		var v1, v2 bool
		for pr.Next() {
			switch pr.Page().(type) {
			case *file.DataPageV1:
				v1 = true
			case *file.DataPageV2:
				v2 = true
			}
		}
		if v1 == v2 || v2 != (v == 2) {
			t.Errorf("WithParquetPageVersion(%d): version 1 pages %v, version 2 pages %v", v, v1, v2)
		}
		if got := pf.MetaData().KeyValueMetadata().FindValue(IndexBaseKey); got == nil || *got != "1" {
			t.Errorf("Parquet key-value metadata %s = %v", IndexBaseKey, got)
		}
		pf.Close()
	}
	if _, err := CreateParquet(filepath.Join(t.TempDir(), "x.parquet"), core.WithParquetPageVersion(3)); err == nil {
		t.Error("page version 3 accepted")
	}
}

// TestConvertedCorrupt truncates and flips bytes of files of the converted
// layouts (wider types, two lists, dense), as TestArrowCorrupt does for the
// canonical schema: reading must end in rows or a documented error, never
// a panic.
func TestConvertedCorrupt(t *testing.T) {
	defer func(n int64) { allocFloor = n }(allocFloor)
	allocFloor = 16 << 20
	m := sampleCSR(testRand(), 40)
	wide := wideRecord(t, m)
	defer wide.Release()
	two := jsonRecord(t, arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int32},
		{Name: "indices", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}, {Name: "values", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Float64)}}, nil),
		`[{"label": 1, "indices": [1, 5], "values": [0.5, 2]}, {"label": -1, "indices": [], "values": []}, {"label": 1, "indices": [3], "values": [7]}]`)
	defer two.Release()
	dense := jsonRecord(t, arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int64},
		{Name: "a", Type: arrow.PrimitiveTypes.Float64}, {Name: "b", Type: arrow.PrimitiveTypes.Int32}}, nil),
		`[{"label": 1, "a": 0.5, "b": 0}, {"label": -1, "a": 0, "b": 3}]`)
	defer dense.Release()
	for name, rec := range map[string]arrow.Record{"wide": wide, "two": two, "dense": dense} {
		for _, ext := range columnarExts {
			t.Run(name+ext, func(t *testing.T) {
				data, err := os.ReadFile(writeRecords(t, ext, rec.Schema(), rec))
				if err != nil {
					t.Fatal(err)
				}
				step := max(1, len(data)/150)
				for n := 8; n < len(data); n += step {
					p := writeTempFile(t, "cut"+ext, data[:n])
					if _, err := readNoPanic(t, p, fmt.Sprintf("truncated to %d bytes", n)); err == nil || !knownError(err) {
						t.Errorf("truncated to %d of %d bytes: %v, want a documented error", n, len(data), err)
					}
				}
				for i := 0; i < len(data); i += step {
					d := append([]byte(nil), data...)
					d[i] ^= 0x5a
					p := writeTempFile(t, "flip"+ext, d)
					if _, err := readNoPanic(t, p, fmt.Sprintf("byte %d flipped", i)); err != nil && !knownError(err) {
						t.Errorf("byte %d flipped: unexpected error %v", i, err)
					}
				}
			})
		}
	}
}

// TestDenseBatches: a wide dense Parquet file is read in batches of about
// denseBatchCells cells.
func TestDenseBatches(t *testing.T) {
	const cols, rows = 2000, 5000
	fields := []arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Float32}}
	for j := range cols {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", j), Type: arrow.PrimitiveTypes.Float32})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	want := &sparsevec.CSR{}
	for r := range rows {
		b.Field(0).(*array.Float32Builder).Append(float32(r % 2))
		var v sparsevec.Vector
		for j := range cols {
			x := float32(0)
			if (r+j)%97 == 0 {
				x = float32(j + 1)
				v.Idx, v.Val = append(v.Idx, uint32(j+1)), append(v.Val, x)
			}
			b.Field(j + 1).(*array.Float32Builder).Append(x)
		}
		want.Append(float32(r%2), v)
	}
	rec := b.NewRecord()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "wide.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.Record{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, f, rows, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, sizes, err := readAllBlocks(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if !equalCSR(got, want) {
		t.Error("rows differ")
	}
	if batch := denseBatchCells / cols; len(sizes) != 3 || sizes[0] != batch {
		t.Errorf("blocks of %v rows, want %d", sizes, batch)
	}
}
