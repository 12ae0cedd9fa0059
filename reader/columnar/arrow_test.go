package columnar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/polyhedral/cpm/reader/internal/colguard"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// columnarExts are the extensions of the columnar formats.
var columnarExts = []string{".arrow", ".arrows", ".parquet"}

// jsonRecord builds a record of schema from JSON rows.
func jsonRecord(t testing.TB, schema *arrow.Schema, rows string) arrow.Record {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.NewGoAllocator(), schema, strings.NewReader(rows))
	if err != nil {
		t.Fatalf("RecordFromJSON: %v", err)
	}
	return rec
}

// writeRecords writes recs to a new file with extension ext (.arrow,
// .arrows or .parquet) with the Arrow and Parquet libraries directly, so
// that it may hold any schema and any rows, and returns its path.
func writeRecords(t testing.TB, ext string, schema *arrow.Schema, recs ...arrow.Record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x"+ext)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w interface {
		Write(arrow.Record) error
		Close() error
	}
	switch ext {
	case ".arrow":
		w, err = ipc.NewFileWriter(f, ipc.WithSchema(schema))
	case ".arrows":
		w = ipc.NewWriter(f, ipc.WithSchema(schema))
	case ".parquet":
		w, err = pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	default:
		t.Fatalf("extension %q", ext)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// csrRecordOf is csrRecord over rows [lo, hi) of m.
func csrRecordOf(m *sparsevec.CSR, lo, hi int) arrow.Record {
	offs := make([]int32, 0, hi-lo+1)
	for _, p := range m.Ptr[lo : hi+1] {
		offs = append(offs, int32(p-m.Ptr[lo]))
	}
	return csrRecord(m.Labels[lo:hi], offs, m.Idx[m.Ptr[lo]:m.Ptr[hi]], m.Val[m.Ptr[lo]:m.Ptr[hi]])
}

// recordArrays returns the label, index and value arrays of a record of
// the package schema.
func recordArrays(rec arrow.Record) (labels []float32, idx []uint32, val []float32) {
	st := rec.Column(1).(*array.List).ListValues().(*array.Struct)
	return rec.Column(0).(*array.Float32).Float32Values(),
		st.Field(0).(*array.Uint32).Uint32Values(),
		st.Field(1).(*array.Float32).Float32Values()
}

// TestArrowZeroCopy checks that a block's arrays are the record batch's
// own buffers, for Arrow files and streams, compressed or not. (Parquet is
// decoded straight into the blocks' arrays; there is no batch to alias.)
func TestArrowZeroCopy(t *testing.T) {
	m := sampleCSR(testRand(), 40)
	for _, tc := range []struct{ file, compression string }{
		{"x.arrow", "none"}, {"x.arrows", "none"}, {"x.arrow", "zstd"}, {"x.arrows", "lz4"},
	} {
		t.Run(tc.file+"/"+tc.compression, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			writeAll(t, path, m, 40, core.WithCompression(tc.compression), core.WithBatchRows(20))
			br, err := openBlocks(path, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer br.Close()
			for range 2 {
				b, err := br.Next()
				if err != nil {
					t.Fatal(err)
				}
				bb := br.(*blocks)
				rec := bb.held[len(bb.held)-1].rec
				labels, idx, val := recordArrays(rec)
				o := rec.Column(1).(*array.List).Offsets()
				if unsafe.SliceData(b.Labels) != unsafe.SliceData(labels) {
					t.Error("Labels copied")
				}
				if unsafe.SliceData(b.Idx) != &idx[o[0]] {
					t.Error("Idx copied")
				}
				if unsafe.SliceData(b.Val) != &val[o[0]] {
					t.Error("Val copied")
				}
				br.Release(b)
			}
		})
	}
}

// TestFillSliced maps slices of a record batch, whose arrays start at
// nonzero offsets, and checks rows and aliasing.
func TestFillSliced(t *testing.T) {
	m := sampleCSR(testRand(), 50)
	rec := csrRecordOf(m, 0, m.Rows())
	defer rec.Release()
	b := newBlocks("mem", nil, core.BuildOptions(nil), canonicalPlan(t))
	for _, s := range [][2]int{{0, 50}, {3, 50}, {7, 8}, {10, 41}, {49, 50}, {12, 12}} {
		sl := rec.NewSlice(int64(s[0]), int64(s[1]))
		blk := &sparsevec.CSR{}
		if err := b.fill(blk, sl); err != nil {
			t.Fatalf("slice %v: %v", s, err)
		}
		want := &sparsevec.CSR{}
		core.AppendRows(want, m, s[0], s[1])
		if blk.Rows() != s[1]-s[0] || !equalCSR(blk, want) {
			t.Errorf("slice %v: rows differ", s)
		}
		if blk.Rows() > 0 && unsafe.SliceData(blk.Labels) != &m.Labels[s[0]] {
			t.Errorf("slice %v: labels copied", s)
		}
		if blk.NNZ() > 0 && unsafe.SliceData(blk.Idx) != &m.Idx[m.Ptr[s[0]]] {
			t.Errorf("slice %v: indices copied", s)
		}
		sl.Release()
	}
}

func TestArrowSchemaErrors(t *testing.T) {
	f32, u32 := arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Uint32
	label := arrow.Field{Name: "label", Type: f32}
	feats := arrow.Field{Name: "features", Type: featuresType}
	structOf := func(a, b arrow.Field) arrow.DataType { return arrow.ListOf(arrow.StructOf(a, b)) }
	tests := []struct {
		name    string
		fields  []arrow.Field
		rows    string
		column  string
		want    string
		parquet bool // also as Parquet
	}{
		{"label string", []arrow.Field{{Name: "label", Type: arrow.BinaryTypes.String}, feats},
			`[{"label": "a", "features": []}]`, "label", "type utf8, want an integer or floating-point type", true},
		{"features list<int64>", []arrow.Field{label, {Name: "features", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}},
			`[{"label": 1, "features": [3, 4]}]`, "features", "int64, nullable>: list items are not structs", true},
		{"features not a list", []arrow.Field{label, {Name: "features", Type: u32}},
			`[{"label": 1, "features": 3}]`, "features", "type uint32: not a list", true},
		{"struct children misnamed", []arrow.Field{label, {Name: "features", Type: structOf(
			arrow.Field{Name: "idx", Type: u32}, arrow.Field{Name: "value", Type: f32})}},
			`[{"label": 1, "features": [{"idx": 1, "value": 2}]}]`, "features", "the struct has no fields named index and value", true},
		{"index float32", []arrow.Field{label, {Name: "features", Type: structOf(
			arrow.Field{Name: "index", Type: f32}, arrow.Field{Name: "value", Type: f32})}},
			`[{"label": 1, "features": [{"index": 1, "value": 2}]}]`, "features", "index is not an integer", true},
		{"value string", []arrow.Field{label, {Name: "features", Type: structOf(
			arrow.Field{Name: "index", Type: u32}, arrow.Field{Name: "value", Type: arrow.BinaryTypes.String})}},
			`[{"label": 1, "features": [{"index": 1, "value": "x"}]}]`, "features", "value is not a number", true},
		{"index list of floats", []arrow.Field{label, {Name: "index", Type: arrow.ListOf(f32)}, {Name: "value", Type: arrow.ListOf(f32)}},
			`[{"label": 1, "index": [1], "value": [2]}]`, "index", "want list<integer>", true},
		{"missing features", []arrow.Field{label}, `[{"label": 1}]`, "features", "missing; want features: list<struct<index: integer, value: number>>", true},
		{"missing features, a string column", []arrow.Field{label, {Name: "name", Type: arrow.BinaryTypes.String}, {Name: "x", Type: f32}},
			`[{"label": 1, "name": "a", "x": 2}]`, "features", `column "name" (utf8) is not numeric`, true},
		{"missing label", []arrow.Field{{Name: "y", Type: f32}, feats}, `[{"y": 1, "features": []}]`, "label",
			"missing (name another label column with --label-column); the file's columns: y: float32, features: list<", true},
	}
	for _, tt := range tests {
		for _, ext := range columnarExts {
			if ext == ".parquet" && !tt.parquet {
				continue
			}
			t.Run(tt.name+ext, func(t *testing.T) {
				schema := arrow.NewSchema(tt.fields, nil)
				rec := jsonRecord(t, schema, tt.rows)
				defer rec.Release()
				path := writeRecords(t, ext, schema, rec)
				_, _, err := readAllBlocks(t, path)
				var se *core.SchemaError
				if !errors.As(err, &se) || !errors.Is(err, core.ErrSchema) {
					t.Fatalf("got %v, want a SchemaError", err)
				}
				prefix := fmt.Sprintf("%s: column %q: ", path, tt.column)
				if se.Column != tt.column || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("got %q, want %q...%q", err, prefix, tt.want)
				}
			})
		}
	}
}

// nullableSchema is the package schema with everything nullable, as
// pyarrow and pandas write it.
var nullableSchema = arrow.NewSchema([]arrow.Field{
	{Name: "label", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "features", Type: arrow.ListOf(arrow.StructOf(
		arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	)), Nullable: true},
}, nil)

func TestArrowNulls(t *testing.T) {
	good := `{"label": 1, "features": [{"index": 2, "value": 0.5}]}, {"label": -1, "features": []}, {"label": 2, "features": [{"index": 1, "value": 0}, {"index": 7, "value": 3}]}`
	tests := []struct {
		name, row, column, what string
	}{
		{"label", `{"label": null, "features": []}`, "label", "null value: label"},
		{"list", `{"label": 1, "features": null}`, "features", "null value: feature list"},
		{"element", `{"label": 1, "features": [{"index": 1, "value": 1}, null]}`, "features", "null value: list element"},
		{"index", `{"label": 1, "features": [{"index": 1, "value": 1}, {"index": null, "value": 1}]}`, "features", "null value: index"},
		{"value", `{"label": 1, "features": [{"index": 1, "value": null}]}`, "features", "null value: value"},
	}
	for _, ext := range columnarExts {
		t.Run("no nulls"+ext, func(t *testing.T) {
			rec := jsonRecord(t, nullableSchema, "["+good+"]")
			defer rec.Release()
			path := writeRecords(t, ext, nullableSchema, rec)
			got, _, err := readAllBlocks(t, path)
			if err != nil {
				t.Fatalf("nullable fields without nulls: %v", err)
			}
			want := csrOf(wantRow{1, []uint32{2}, []float32{0.5}}, wantRow{-1, nil, nil},
				wantRow{2, []uint32{1, 7}, []float32{0, 3}})
			if !equalCSR(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
		for _, tt := range tests {
			t.Run(tt.name+ext, func(t *testing.T) {
				// Two batches; the null is in row 2 of the second, row 5 of the file.
				r1 := jsonRecord(t, nullableSchema, "["+good+"]")
				r2 := jsonRecord(t, nullableSchema, `[{"label": 0, "features": [{"index": 9, "value": 1}]}, `+tt.row+`, {"label": 3, "features": []}]`)
				defer r1.Release()
				defer r2.Release()
				path := writeRecords(t, ext, nullableSchema, r1, r2)
				got, sizes, err := readAllBlocks(t, path)
				var re *core.RowError
				if !errors.As(err, &re) || !errors.Is(err, core.ErrNull) {
					t.Fatalf("got %v, want a RowError wrapping ErrNull", err)
				}
				want := fmt.Sprintf("%s: row 5: column %q: %s", path, tt.column, tt.what)
				if re.Row != 5 || re.Column != tt.column || err.Error() != want {
					t.Errorf("got %q, want %q", err, want)
				}
				if got.Rows() != 3 || len(sizes) != 1 {
					t.Errorf("read %d rows in %d blocks before the error, want the first batch", got.Rows(), len(sizes))
				}
			})
		}
	}
}

// TestArrowBadRows writes rows that the writer would refuse straight with
// the Arrow libraries and checks the RowError: absolute row, column,
// sentinel.
func TestArrowBadRows(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name     string
		label    float32
		idx      []uint32
		val      []float32
		maxIndex uint32
		column   string
		want     error
	}{
		{"index 0", 1, []uint32{0, 4}, []float32{1, 1}, 0, "features", core.ErrIndexZero},
		{"unsorted", 1, []uint32{2, 5, 4}, []float32{1, 1, 1}, 0, "features", core.ErrUnsorted},
		{"duplicate", 1, []uint32{2, 5, 5}, []float32{1, 1, 1}, 0, "features", core.ErrDuplicate},
		{"NaN value", 1, []uint32{2, 5}, []float32{1, nan}, 0, "features", core.ErrNonFinite},
		{"Inf value", 1, []uint32{2}, []float32{-inf}, 0, "features", core.ErrNonFinite},
		{"NaN label", nan, nil, nil, 0, "label", core.ErrNonFinite},
		{"Inf label", inf, []uint32{1}, []float32{1}, 0, "label", core.ErrNonFinite},
		{"above max index", 1, []uint32{2, 100, 101}, []float32{1, 1, 1}, 100, "features", core.ErrIndexRange},
	}
	good := &sparsevec.CSR{}
	for r := range 12 {
		good.Append(float32(r), sparsevec.Vector{Idx: []uint32{1, uint32(r + 2)}, Val: []float32{0, 1}})
	}
	for _, ext := range columnarExts {
		for _, tt := range tests {
			t.Run(tt.name+ext, func(t *testing.T) {
				m := &sparsevec.CSR{}
				m.AppendCSR(good)
				m.Append(tt.label, sparsevec.Vector{Idx: tt.idx, Val: tt.val}) // row 13
				m.AppendCSR(good)
				r1, r2 := csrRecordOf(m, 0, 10), csrRecordOf(m, 10, m.Rows())
				defer r1.Release()
				defer r2.Release()
				path := writeRecords(t, ext, rowSchema, r1, r2)
				var opts []core.Option
				if tt.maxIndex > 0 {
					opts = append(opts, core.WithMaxIndex(tt.maxIndex))
				} else {
					opts = append(opts, core.WithMaxIndex(1<<32-1))
				}
				got, _, err := readAllBlocks(t, path, opts...)
				var re *core.RowError
				if !errors.As(err, &re) || !errors.Is(err, tt.want) {
					t.Fatalf("got %v, want a RowError wrapping %v", err, tt.want)
				}
				prefix := fmt.Sprintf("%s: row 13: column %q: ", path, tt.column)
				if re.Row != 13 || re.Column != tt.column || re.Path != path || !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("got %q, want prefix %q", err, prefix)
				}
				if got.Rows() != 10 {
					t.Errorf("read %d rows before the error, want the first batch's 10", got.Rows())
				}
			})
		}
	}
}

// TestArrowMaxIndex checks that WithMaxIndex applies to good files too.
func TestArrowMaxIndex(t *testing.T) {
	m := sampleCSR(testRand(), 20) // row 2 holds 4294967295
	for _, ext := range columnarExts {
		path := filepath.Join(t.TempDir(), "x"+ext)
		writeAll(t, path, m, 20)
		if _, _, err := readAllBlocks(t, path); err != nil {
			t.Errorf("%s: %v", ext, err)
		}
		_, _, err := readAllBlocks(t, path, core.WithMaxIndex(1<<31))
		var re *core.RowError
		if !errors.As(err, &re) || !errors.Is(err, core.ErrIndexRange) || re.Row != 3 {
			t.Errorf("%s with max index 2^31: got %v, want ErrIndexRange at row 3", ext, err)
		}
	}
}

// readNoPanic reads path to the end; a panic fails the test with the
// file's name.
func readNoPanic(t *testing.T, path string, what string) (m *sparsevec.CSR, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s: panic: %v", what, p)
		}
	}()
	m, _, err = readAllBlocks(t, path)
	return m, err
}

// knownError reports whether err is one of the documented kinds.
func knownError(err error) bool {
	var re *core.RowError
	var pe *core.ParseError
	return errors.Is(err, core.ErrCorrupt) || errors.Is(err, core.ErrSchema) || errors.Is(err, core.ErrUnsupported) || errors.As(err, &re) || errors.As(err, &pe)
}

// TestArrowCorrupt truncates files and flips bytes in them: reading must
// end in an error, never a panic. Truncated files are always errors, an
// Arrow stream cut between two messages too (it lacks its end-of-stream
// marker).
func TestArrowCorrupt(t *testing.T) {
	defer func(n int64) { allocFloor = n }(allocFloor)
	allocFloor = 16 << 20
	m := sampleCSR(testRand(), 60)
	for _, tc := range []struct{ ext, compression string }{
		{".arrow", "none"}, {".arrow", "zstd"}, {".arrows", "none"}, {".arrows", "lz4"},
		{".parquet", "none"}, {".parquet", "snappy"}, {".parquet", "zstd"},
	} {
		t.Run(tc.ext+"/"+tc.compression, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src"+tc.ext)
			writeAll(t, src, m, 60, core.WithCompression(tc.compression), core.WithBatchRows(16))
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(dir, "bad"+tc.ext)
			f, err := os.Create(bad)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			overwrite := func(p []byte) { // faster than os.WriteFile, which truncates to 0 first
				_, err := f.WriteAt(p, 0)
				mustNil(err)
				mustNil(f.Truncate(int64(len(p))))
			}
			step := max(1, len(data)/200)
			for n := 0; n < len(data); n += step {
				overwrite(data[:n])
				got, err := readNoPanic(t, bad, fmt.Sprintf("truncated to %d of %d bytes", n, len(data)))
				switch {
				case n < 8: // not even the magic number: LIBSVM text
				case err != nil:
					if !knownError(err) {
						t.Errorf("truncated to %d bytes: unexpected error %v", n, err)
					}
				default:
					t.Errorf("truncated to %d of %d bytes: no error, %d rows", n, len(data), got.Rows())
				}
			}
			flipped := make([]byte, len(data))
			for i := 0; i < len(data); i += step {
				copy(flipped, data)
				flipped[i] ^= 0x5a
				overwrite(flipped)
				if _, err := readNoPanic(t, bad, fmt.Sprintf("byte %d of %d flipped", i, len(data))); err != nil && !knownError(err) {
					t.Errorf("byte %d flipped: unexpected error %v", i, err)
				}
			}
		})
	}
}

// TestArrowCorruptOffsets hands fill a batch whose list offsets decrease
// or point past the children, as a corrupt file can.
func TestArrowCorruptOffsets(t *testing.T) {
	m := sampleCSR(testRand(), 6)
	b := newBlocks("mem", nil, core.BuildOptions(nil), canonicalPlan(t))
	b.src = &ipcFileSource{i: 1}
	for _, offs := range [][]int32{
		{0, 0, 1, 4, 3, 6, 8},
		{0, 0, 1, 4, 7, 9, 99},
		{-1, 0, 1, 4, 7, 9, 11},
	} {
		rec := csrRecord(m.Labels, offs, m.Idx, m.Val)
		err := b.fill(&sparsevec.CSR{}, rec)
		if !errors.Is(err, core.ErrCorrupt) || !strings.HasPrefix(err.Error(), "mem: record batch 1: ") {
			t.Errorf("offsets %v: got %v, want ErrCorrupt", offs, err)
		}
		rec.Release()
	}
}

func TestBlocksMisuse(t *testing.T) {
	m := sampleCSR(testRand(), 50)
	path := filepath.Join(t.TempDir(), "x.arrow")
	writeAll(t, path, m, 50, core.WithBatchRows(5))
	br, err := openBlocks(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	var held []*sparsevec.CSR
	for range core.StreamBlocks {
		b, err := br.Next()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, b)
	}
	if _, err := br.Next(); !errors.Is(err, core.ErrBlocksHeld) {
		t.Errorf("Next with %d blocks held: %v, want ErrBlocksHeld", core.StreamBlocks, err)
	}
	br.Release(held[1])
	held = append(held[:1], held[2:]...)
	b, err := br.Next()
	if err != nil {
		t.Fatalf("Next after a Release: %v", err)
	}
	held = append(held, b)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Release of a foreign block did not panic")
			}
		}()
		br.Release(&sparsevec.CSR{})
	}()
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if err := br.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := br.Next(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Next after Close: %v, want ErrClosed", err)
	}
	// Held blocks stay valid after Close: batches 1, 3, 4, 5.
	for i, first := range []int{0, 10, 15, 20} {
		want := &sparsevec.CSR{}
		core.AppendRows(want, m, first, first+5)
		if !equalCSR(held[i], want) {
			t.Errorf("held block %d changed after Close", i)
		}
		br.Release(held[i])
	}
}

// spyWriter records where the index array of each written record lives.
type spyWriter struct {
	recordWriter
	idx []*uint32
}

func (s *spyWriter) Write(rec arrow.Record) error {
	_, idx, _ := recordArrays(rec)
	s.idx = append(s.idx, unsafe.SliceData(idx))
	return s.recordWriter.Write(rec)
}

var _ io.Closer = (*spyWriter)(nil)

// TestArrowHostileLengths patches lengths and offsets in the flatbuffers
// of valid files to values that would make the Arrow library reserve
// gigabytes (a fatal out-of-memory) or recurse forever, and checks that
// the reader refuses them with ErrCorrupt.
func TestArrowHostileLengths(t *testing.T) {
	m := sampleCSR(testRand(), 10)
	const huge = 0x40000000
	// vecLen returns the position of the length of vector field i of the
	// table at tab.
	vecLen := func(t *testing.T, b colguard.FB, tab int64, i int) int64 {
		p, err := b.Field(tab, i)
		if err != nil || p < 0 {
			t.Fatalf("field %d: %v", i, err)
		}
		v, err := b.Deref(p)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// schemaOf returns the schema table of a footer or stream message.
	schemaOf := func(t *testing.T, b colguard.FB, field int) int64 {
		root, err := b.Root()
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.Field(root, field)
		if err != nil || p < 0 {
			t.Fatal("no schema")
		}
		s, err := b.Deref(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// featuresField returns the table of field 1 (features) of a schema.
	featuresField := func(t *testing.T, b colguard.FB, sch int64) int64 {
		v := vecLen(t, b, sch, 1)
		f, err := b.Deref(v + 4 + 4)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	patches := []struct {
		name  string
		patch func(t *testing.T, b colguard.FB, sch int64)
	}{
		{"schema fields", func(t *testing.T, b colguard.FB, sch int64) {
			binary.LittleEndian.PutUint32(b[vecLen(t, b, sch, 1):], huge)
		}},
		{"field children", func(t *testing.T, b colguard.FB, sch int64) {
			binary.LittleEndian.PutUint32(b[vecLen(t, b, featuresField(t, b, sch), 5):], huge)
		}},
		{"child loops to its parent", func(t *testing.T, b colguard.FB, sch int64) {
			f := featuresField(t, b, sch)
			v := vecLen(t, b, f, 5)
			binary.LittleEndian.PutUint32(b[v+4:], uint32(f-(v+4))) // wraps to f
		}},
	}
	for _, ext := range []string{".arrow", ".arrows"} {
		path := filepath.Join(t.TempDir(), "x"+ext)
		writeAll(t, path, m, 10, core.WithCompression("none"))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// The flatbuffer holding the schema, as a window into data.
		var fb colguard.FB
		schemaField := 2 // Message.header
		if ext == ".arrow" {
			n := int(binary.LittleEndian.Uint32(data[len(data)-10:]))
			fb = data[len(data)-10-n : len(data)-10]
			schemaField = 1 // Footer.schema
		} else {
			n := int(binary.LittleEndian.Uint32(data[4:]))
			fb = data[8 : 8+n]
		}
		for _, p := range patches {
			t.Run(ext+"/"+p.name, func(t *testing.T) {
				bad := append([]byte(nil), data...)
				var b colguard.FB
				if ext == ".arrow" {
					b = bad[len(data)-10-len(fb) : len(data)-10]
				} else {
					b = bad[8 : 8+len(fb)]
				}
				p.patch(t, b, schemaOf(t, b, schemaField))
				_, _, err := readAllBlocks(t, writeTempFile(t, "bad"+ext, bad))
				if !errors.Is(err, core.ErrCorrupt) {
					t.Errorf("got %v, want ErrCorrupt", err)
				}
			})
		}
	}
	t.Run("stream message length", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "x.arrows")
		writeAll(t, path, m, 10, core.WithCompression("none"))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n := int(binary.LittleEndian.Uint32(data[4:]))
		next := 8 + n // the record batch message: ff ff ff ff, length
		binary.LittleEndian.PutUint32(data[next+4:], 0x7fff0000)
		_, _, err = readAllBlocks(t, writeTempFile(t, "bad.arrows", data))
		if !errors.Is(err, core.ErrCorrupt) || !strings.Contains(err.Error(), "left in the file") {
			t.Errorf("got %v, want ErrCorrupt for the length", err)
		}
	})
	t.Run("file block length", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "x.arrow")
		writeAll(t, path, m, 10, core.WithCompression("none"))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n := int(binary.LittleEndian.Uint32(data[len(data)-10:]))
		b := colguard.FB(data[len(data)-10-n : len(data)-10])
		root, _ := b.Root()
		v := vecLen(t, b, root, 3)                       // recordBatches
		binary.LittleEndian.PutUint64(b[v+4+16:], 1<<40) // bodyLength of block 0
		_, _, err = readAllBlocks(t, writeTempFile(t, "bad.arrow", data))
		if !errors.Is(err, core.ErrCorrupt) || !strings.Contains(err.Error(), "outside the file") {
			t.Errorf("got %v, want ErrCorrupt for the block", err)
		}
	})
}

// FuzzColumnar reads arbitrary bytes as an Arrow file, Arrow stream or
// Parquet file (the seeds are valid files of each, compressed and not):
// reading must end, without a panic, in rows or a documented error, and
// rows read without error must be valid and come back unchanged through
// CreateBlocks as an Arrow stream and as Parquet. Byte flips of every seed
// byte with four masks were run this way once (3 min) and found the guards
// of colguard.CheckFooter, colguard.StreamMessages and the Parquet level checks (since left to arrow-go v18).
func FuzzColumnar(f *testing.F) {
	m := sampleCSR(testRand(), 20)
	for _, tc := range []struct{ ext, compression string }{
		{".arrow", "none"}, {".arrow", "zstd"}, {".arrows", "none"}, {".arrows", "lz4"},
		{".parquet", "none"}, {".parquet", "snappy"},
	} {
		path := filepath.Join(f.TempDir(), "seed"+tc.ext)
		writeAll(f, path, m, 20, core.WithCompression(tc.compression), core.WithBatchRows(8))
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Seeds of the converted path: wider types, and a dense file.
	wide := wideRecord(f, m)
	defer wide.Release()
	dense := jsonRecord(f, arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int64},
		{Name: "a", Type: arrow.PrimitiveTypes.Float64}, {Name: "b", Type: arrow.PrimitiveTypes.Int32}}, nil),
		`[{"label": 1, "a": 0.5, "b": 0}, {"label": -1, "a": 0, "b": 3}]`)
	defer dense.Release()
	for _, rec := range []arrow.Record{wide, dense} {
		for _, ext := range columnarExts {
			data, err := os.ReadFile(writeRecords(f, ext, rec.Schema(), rec))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	defer func(n int64) { allocFloor = n }(allocFloor)
	allocFloor = 16 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		path := writeTempFile(t, "x", data)
		got, err := readNoPanic(t, path, "fuzz input")
		if err != nil && !knownError(err) {
			t.Errorf("unexpected error %v", err)
		}
		if err != nil {
			return
		}
		if _, _, _, err := core.CheckRows(got.Labels, got.Ptr, got.Idx, got.Val, 1<<32-1); err != nil {
			t.Fatalf("rows read without error are invalid: %v", err)
		}
		for _, ext := range []string{".arrows", ".parquet"} {
			out := filepath.Join(t.TempDir(), "rt"+ext)
			writeAll(t, out, got, 7, core.WithCompression("none"))
			back, _, err := readAllBlocks(t, out)
			if err != nil {
				t.Fatalf("reading back %s: %v", ext, err)
			}
			if !equalCSR(back, got) {
				t.Fatalf("%s round trip changed the rows", ext)
			}
		}
	})
}
