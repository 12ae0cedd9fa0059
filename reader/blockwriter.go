package reader

import (
	"fmt"

	"github.com/polyhedral/cpm/reader/columnar"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/libsvm"
)

// CreateBlocks creates a file of sparse rows at path in the format
// FormatForOutput chooses by its extension: LIBSVM text (compressed by
// CreateCompressed's rules), an Arrow IPC file or stream, or Parquet, the
// last three with the schema of the package documentation. The output is
// atomic as CreateCompressed's: it lands at path only when Close succeeds.
// Cache output (.cpmcache) is refused.
//
// Write validates every row as the readers do (finite labels and values,
// indices >= 1 and strictly ascending within a row) and writes nothing of a
// block that holds a bad row; the error is a *RowError numbering rows from
// the first written. Arrow and Parquet output regroup the rows into batches
// of WithBatchRows rows (the last may be shorter), whatever the sizes of
// the blocks written; a block's arrays are not copied when it already
// holds whole batches.
func CreateBlocks(path string, opts ...core.Option) (core.BlockWriter, error) {
	o := core.BuildOptions(opts)
	switch FormatForOutput(path) {
	case Cache:
		return nil, fmt.Errorf("%s: CreateBlocks cannot write the binary cache; use rowcache.Create", path)
	case ArrowFile:
		return columnar.CreateArrow(path, false, opts...)
	case ArrowStream:
		return columnar.CreateArrow(path, true, opts...)
	case Parquet:
		return columnar.CreateParquet(path, opts...)
	}
	if o.Compression != "" {
		return nil, fmt.Errorf("%s: compression %q: LIBSVM output is compressed by its extension (.zst, .gz), not by a compression option", path, o.Compression)
	}
	out, err := core.CreateOutput(o.Ctx, path) // errors name the path
	if err != nil {
		return nil, err
	}
	return libsvm.NewBlockWriter(path, out), nil
}
