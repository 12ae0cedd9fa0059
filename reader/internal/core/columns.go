package core

import "fmt"

// Columnar holds the options of Arrow IPC and Parquet files: the names of
// the columns a reader looks for, and the data page version the Parquet
// writer writes. An empty name selects the default.
type Columnar struct {
	Label    string // default LabelColumn
	Features string // default FeaturesColumn
	Index    string // default "index": list of feature indices (two-list layout)
	Value    string // default "value": list of feature values (two-list layout)
	// ParquetPageVersion is 1 (the default) or 2.
	ParquetPageVersion int
}

// Default names of the columns of the two-list layout.
const (
	IndexColumn = "index"
	ValueColumn = "value"
)

// Names returns c's column names with the defaults filled in.
func (c Columnar) Names() (label, features, index, value string) {
	def := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	return def(c.Label, LabelColumn), def(c.Features, FeaturesColumn), def(c.Index, IndexColumn), def(c.Value, ValueColumn)
}

// WithLabelColumn names the label column of Arrow and Parquet input
// (default "label").
func WithLabelColumn(name string) Option { return func(o *Options) { o.Columnar.Label = name } }

// WithFeaturesColumn names the column of Arrow and Parquet input that
// holds each row's list of index/value structs (default "features").
func WithFeaturesColumn(name string) Option {
	return func(o *Options) { o.Columnar.Features = name }
}

// WithIndexColumn and WithValueColumn name the two list columns of Arrow
// and Parquet input that hold each row's feature indices and values
// (defaults "index" and "value"), read when there is no features column.
func WithIndexColumn(name string) Option { return func(o *Options) { o.Columnar.Index = name } }

// WithValueColumn: see WithIndexColumn.
func WithValueColumn(name string) Option { return func(o *Options) { o.Columnar.Value = name } }

// WithParquetPageVersion makes the Parquet writer write data pages of
// version v, 1 (the default: every Parquet reader reads them) or 2. Any
// other v makes CreateBlocks fail.
func WithParquetPageVersion(v int) Option {
	return func(o *Options) {
		if v != 0 && v != 1 && v != 2 {
			o.Err = fmt.Errorf("parquet data page version %d: want 1 or 2", v)
			return
		}
		o.Columnar.ParquetPageVersion = v
	}
}

// ErrUnsupported: an Arrow or Parquet file that is well formed but uses a
// feature this reader does not implement, such as a Parquet compression
// codec the Parquet library does not decode. It is wrapped with the file
// and what is missing.
var ErrUnsupported error = &badInput{"unsupported feature"}
