package reader

import (
	"github.com/polyhedral/cpm/reader/columnar"
	"github.com/polyhedral/cpm/reader/internal/core"
)

// ColumnLayout is how the Arrow and Parquet readers map a file's columns
// to rows (see DescribeColumns and package columnar).
type ColumnLayout = columnar.Layout

// The layouts of Arrow and Parquet files.
const (
	// LayoutStructList: features: list<struct<index, value>>.
	LayoutStructList = columnar.StructList
	// LayoutTwoLists: index and value list columns of equal lengths.
	LayoutTwoLists = columnar.TwoLists
	// LayoutDense: numeric columns as features 1..n.
	LayoutDense = columnar.Dense
)

// DescribeColumns returns the layout in which OpenBlocks and Load, given
// the same options, read the Arrow or Parquet file at path: the columns
// read, and for a dense file which column is which feature. It reads no
// rows.
func DescribeColumns(path string, opts ...Option) (ColumnLayout, error) {
	return columnar.Describe(path, opts...)
}

// WithLabelColumn names the label column of Arrow and Parquet input
// (default "label").
func WithLabelColumn(name string) Option { return core.WithLabelColumn(name) }

// WithFeaturesColumn names the list<struct<index, value>> column of Arrow
// and Parquet input (default "features").
func WithFeaturesColumn(name string) Option { return core.WithFeaturesColumn(name) }

// WithIndexColumn names the index list column of Arrow and Parquet input
// in the two-list layout (default "index", or "indices").
func WithIndexColumn(name string) Option { return core.WithIndexColumn(name) }

// WithValueColumn names the value list column of Arrow and Parquet input
// in the two-list layout (default "value", or "values").
func WithValueColumn(name string) Option { return core.WithValueColumn(name) }

// WithParquetPageVersion sets the data page version of Parquet output, 1
// (the default) or 2.
func WithParquetPageVersion(v int) Option { return core.WithParquetPageVersion(v) }

// ErrUnsupported is the error of an Arrow or Parquet file that uses a
// feature the readers do not implement, such as a Parquet codec the
// Parquet library does not decode (LZO, Hadoop-framed LZ4).
var ErrUnsupported = core.ErrUnsupported
