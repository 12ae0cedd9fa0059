package columnar

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/polyhedral/cpm/reader/internal/core"
)

// TestParquetRowGroups checks that each row group is one block, and that a
// row group larger than maxParquetBatchRows is split.
func TestParquetRowGroups(t *testing.T) {
	m := sampleCSR(testRand(), 45)
	path := filepath.Join(t.TempDir(), "x.parquet")
	writeAll(t, path, m, 7, core.WithBatchRows(20))
	got, sizes, err := readAllBlocks(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if !equalCSR(got, m) || !slices.Equal(sizes, []int{20, 20, 5}) {
		t.Errorf("blocks of %v rows, want [20 20 5] holding the rows written", sizes)
	}

	defer func(n int64) { maxParquetBatchRows = n }(maxParquetBatchRows)
	maxParquetBatchRows = 8
	got, sizes, err = readAllBlocks(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if !equalCSR(got, m) || !slices.Equal(sizes, []int{8, 8, 4, 8, 8, 4, 5}) {
		t.Errorf("with at most 8 rows a batch: blocks of %v rows", sizes)
	}
}

// TestParquetForeign reads a Parquet file written without the stored Arrow
// schema, with nullable fields and other list item and root names, as
// other tools write it; the types come from Parquet's logical types.
func TestParquetForeign(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "label", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "features", Type: arrow.ListOfField(arrow.Field{Name: "element", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
			arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		)}), Nullable: true},
	}, nil)
	rec := jsonRecord(t, schema, `[
		{"label": 1, "features": [{"index": 4294967295, "value": 0.25}]},
		{"label": -1, "features": []},
		{"label": 0, "features": [{"index": 1, "value": 0}, {"index": 2, "value": -3}]}]`)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "foreign.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithRootName("spark_schema"))
	if err := pqarrow.WriteTable(tbl, f, 2, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	got, sizes, err := readAllBlocks(t, path)
	if err != nil {
		t.Fatal(err)
	}
	want := csrOf(wantRow{1, []uint32{4294967295}, []float32{0.25}}, wantRow{-1, nil, nil},
		wantRow{0, []uint32{1, 2}, []float32{0, -3}})
	if !equalCSR(got, want) || !slices.Equal(sizes, []int{2, 1}) {
		t.Errorf("got %+v in blocks %v, want %+v in [2 1]", got, sizes, want)
	}
}

// The Parquet writer writes, byte for byte, what pqarrow's FileWriter
// writes for the package schema with the Arrow schema stored, so that
// Arrow tools read the files as they would pqarrow's; an empty row and
// every codec included.
func TestParquetWriterMatchesPqarrow(t *testing.T) {
	m := sampleCSR(testRand(), 45)
	m.Labels = append(m.Labels, 1)
	m.Ptr = append(m.Ptr, m.Ptr[len(m.Ptr)-1]) // an empty last row
	const batch = 16
	for _, codec := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Snappy, compress.Codecs.Uncompressed} {
		props := func() *parquet.WriterProperties {
			return parquet.NewWriterProperties(parquet.WithCompression(codec), parquet.WithMaxRowGroupLength(batch),
				parquet.WithDataPageVersion(parquet.DataPageV2))
		}
		var got, want bytes.Buffer
		pw, err := newParquetWriter(&got, props())
		if err != nil {
			t.Fatal(err)
		}
		qw, err := pqarrow.NewFileWriter(rowSchema, &want, props(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < m.Rows(); lo += batch {
			hi := min(lo+batch, m.Rows())
			offs := make([]int32, 0, hi-lo+1)
			for _, p := range m.Ptr[lo : hi+1] {
				offs = append(offs, int32(p-m.Ptr[lo]))
			}
			rec := csrRecord(m.Labels[lo:hi], offs, m.Idx[m.Ptr[lo]:m.Ptr[hi]], m.Val[m.Ptr[lo]:m.Ptr[hi]])
			if err := pw.Write(rec); err != nil {
				t.Fatal(err)
			}
			if err := qw.Write(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		if err := pw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := qw.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%v: %d bytes written, pqarrow writes %d other bytes", codec, got.Len(), want.Len())
		}
	}
}
