package columnar

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// parquetWriter writes record batches of the package schema to a Parquet
// file through parquet/file's column writers, one row group per batch,
// in the layout pqarrow gives that schema:
//
//	required float label;
//	required group features (LIST) {
//	  repeated group list {
//	    required group element {
//	      required int32 index (INTEGER(32,false));
//	      required float value;
//	    }
//	  }
//	}
//
// with cpm.index_base = "1" and the Arrow schema in the key-value metadata
// (ARROW:schema, the IPC schema message in base64) as pqarrow's
// WithStoreSchema writes them. The
// list is repeated once, so a row of k nonzeros has k definition levels of
// 1 (repetition levels 0, then 1) and an empty row one of 0.
type parquetWriter struct {
	fw         *file.Writer
	defs, reps []int16 // levels of the index and value columns, reused
}

// newParquetWriter starts a Parquet file on w with props.
func newParquetWriter(w io.Writer, props *parquet.WriterProperties) (*parquetWriter, error) {
	req := parquet.Repetitions.Required
	index, err := schema.NewPrimitiveNodeLogical(indexField, req, schema.NewIntLogicalType(32, false), parquet.Types.Int32, -1, -1)
	if err != nil {
		return nil, err
	}
	elem := schema.MustGroup(schema.NewGroupNode("element", req, schema.FieldList{
		index, schema.NewFloat32Node(valueField, req, -1),
	}, -1))
	list := schema.MustGroup(schema.NewGroupNode("list", parquet.Repetitions.Repeated, schema.FieldList{elem}, -1))
	features := schema.MustGroup(schema.NewGroupNodeLogical(featuresColumn, req, schema.FieldList{list}, schema.NewListLogicalType(), -1))
	root := schema.MustGroup(schema.NewGroupNode("schema", parquet.Repetitions.Repeated, schema.FieldList{
		schema.NewFloat32Node(labelColumn, req, -1), features,
	}, -1))
	var meta metadata.KeyValueMetadata
	meta.Append(IndexBaseKey, "1")
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(storedSchema()))
	fw, err := file.NewParquetWriterWithError(w, root, file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	return &parquetWriter{fw: fw}, nil
}

// storedSchema returns the package schema as an Arrow IPC stream holding
// only its schema message, the list's item field named element as the
// Parquet group is.
func storedSchema() []byte {
	elem := featuresType.ElemField()
	elem.Name = "element"
	md := rowSchema.Metadata()
	s := arrow.NewSchema([]arrow.Field{rowSchema.Field(0), {Name: featuresColumn, Type: arrow.ListOfField(elem)}}, &md)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s))
	w.Close()
	return buf.Bytes()
}

// Write writes rec, a batch of the package schema, as one row group.
func (p *parquetWriter) Write(rec arrow.Record) error {
	labels := rec.Column(0).(*array.Float32).Float32Values()
	list := rec.Column(1).(*array.List)
	offs := list.Offsets()[:len(labels)+1]
	entries := list.ListValues().(*array.Struct)
	lo, hi := int(offs[0]), int(offs[len(labels)])
	idx := entries.Field(0).(*array.Uint32).Uint32Values()[lo:hi]
	val := entries.Field(1).(*array.Float32).Float32Values()[lo:hi]
	p.levels(offs)

	rg := p.fw.AppendRowGroup()
	if err := writeColumn[float32](rg, labels, nil, nil); err != nil {
		return err
	}
	// The index column is INT32 with an unsigned logical type: the same
	// bits, as pqarrow writes a uint32 array.
	if err := writeColumn(rg, unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(idx))), len(idx)), p.defs, p.reps); err != nil {
		return err
	}
	if err := writeColumn(rg, val, p.defs, p.reps); err != nil {
		return err
	}
	return rg.Close()
}

// levels fills p.defs and p.reps for the rows whose list offsets are offs.
func (p *parquetWriter) levels(offs []int32) {
	p.defs, p.reps = p.defs[:0], p.reps[:0]
	for r := range len(offs) - 1 {
		k := int(offs[r+1] - offs[r])
		if k == 0 {
			p.defs, p.reps = append(p.defs, 0), append(p.reps, 0)
			continue
		}
		p.reps = append(p.reps, 0)
		for range k - 1 {
			p.reps = append(p.reps, 1)
		}
		for range k {
			p.defs = append(p.defs, 1)
		}
	}
}

// writeColumn writes the next column of rg.
func writeColumn[T int32 | float32](rg file.SerialRowGroupWriter, vals []T, defs, reps []int16) error {
	cw, err := rg.NextColumn()
	if err != nil {
		return err
	}
	switch w := cw.(type) {
	case *file.Float32ColumnChunkWriter:
		_, err = w.WriteBatch(any(vals).([]float32), defs, reps)
	case *file.Int32ColumnChunkWriter:
		_, err = w.WriteBatch(any(vals).([]int32), defs, reps)
	default:
		err = fmt.Errorf("parquet column writer of unexpected type %T", cw)
	}
	if err != nil {
		return err
	}
	return cw.Close()
}

// Close writes the file's footer.
func (p *parquetWriter) Close() error { return p.fw.Close() }
