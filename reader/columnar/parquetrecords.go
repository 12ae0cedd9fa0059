package columnar

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// parquetRecordRows is the most rows of one record batch read by pqarrow
// (a block of a non-canonical Parquet file). A variable so that tests can
// lower it.
var parquetRecordRows int64 = 1 << 16

// denseBatchCells bounds the cells (rows times feature columns) of a
// batch of a dense Parquet file: its Arrow columns and their float32
// copies then take some 50 MiB at most.
const denseBatchCells = 4 << 20

// parquetRecords is the recordSource of a Parquet file of a
// non-canonical schema: pqarrow's record reader over the leaf columns the
// plan reads, one row group at a time, each of its column chunks checked
// by checkChunk before the reader starts on the row group.
type parquetRecords struct {
	pf        *file.Reader
	fr        *pqarrow.FileReader
	fh        *os.File
	size      int64
	limit     int
	oldWriter bool
	ctx       context.Context
	leaves    []int // the leaf columns read
	rg        int   // row groups started
	rr        pqarrow.RecordReader
}

// newParquetRecords reads the columns of p from pf, the Parquet reader of
// fh.
func newParquetRecords(pf *file.Reader, fh *os.File, size int64, limit int, oldWriter bool, p *plan, o core.Options) (*parquetRecords, error) {
	sc := pf.MetaData().Schema
	root := sc.Root()
	want := map[schema.Node]bool{root.Field(p.label): true}
	switch p.Kind {
	case StructList:
		want[root.Field(p.feat)] = true
	case TwoLists:
		want[root.Field(p.feat)], want[root.Field(p.val)] = true, true
	case Dense:
		for _, i := range p.dense {
			want[root.Field(i)] = true
		}
	}
	var leaves []int
	for i := range sc.NumColumns() {
		if want[sc.ColumnRoot(i)] {
			leaves = append(leaves, i)
		}
	}
	batch := parquetRecordRows
	if p.Kind == Dense { // about 4M cells a batch, whatever the width
		batch = min(batch, max(256, int64(denseBatchCells/len(p.dense))))
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	ctx := o.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return &parquetRecords{pf: pf, fr: fr, fh: fh, size: size, limit: limit, oldWriter: oldWriter, ctx: ctx, leaves: leaves}, nil
}

func (s *parquetRecords) next() (arrow.Record, error) {
	for {
		if s.rr == nil {
			if s.rg >= s.pf.NumRowGroups() {
				return nil, io.EOF
			}
			rg := s.pf.RowGroup(s.rg)
			s.rg++
			for _, j := range s.leaves {
				if err := checkChunk(rg, j, s.fh, s.size, s.limit, s.oldWriter); err != nil {
					return nil, err
				}
			}
			rr, err := s.fr.GetRecordReader(s.ctx, s.leaves, []int{s.rg - 1})
			if err != nil {
				return nil, err
			}
			s.rr = rr
		}
		if s.rr.Next() {
			rec := s.rr.RecordBatch()
			rec.Retain()
			return rec, nil
		}
		err := s.rr.Err()
		s.rr.Release()
		s.rr = nil
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
}

func (s *parquetRecords) pos() string { return "row group " + strconv.Itoa(s.rg) }

func (s *parquetRecords) close() error {
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	return s.pf.Close()
}
