package main

import (
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/polyhedral/cpm/reader"
)

// columnFlags holds the flags that name the columns of Arrow and Parquet
// input, taken by every command that reads data.
type columnFlags struct {
	label, features, index, value string
}

// addColumnFlags registers --label-column, --features-column,
// --index-column and --value-column on fs.
func addColumnFlags(fs *flag.FlagSet) *columnFlags {
	c := &columnFlags{}
	fs.StringVar(&c.label, "label-column", "", "Arrow/Parquet input: the label column's `name` (default label)")
	fs.StringVar(&c.features, "features-column", "", "Arrow/Parquet input: the `name` of the list<struct<index, value>> column (default features)")
	fs.StringVar(&c.index, "index-column", "", "Arrow/Parquet input without a features column: the `name` of the list column of indices (default index, or indices)")
	fs.StringVar(&c.value, "value-column", "", "Arrow/Parquet input without a features column: the `name` of the list column of values (default value, or values)")
	return c
}

// opts returns the reader options of the flags given.
func (c *columnFlags) opts() []reader.Option {
	var opts []reader.Option
	for _, o := range []struct {
		v    string
		with func(string) reader.Option
	}{{c.label, reader.WithLabelColumn}, {c.features, reader.WithFeaturesColumn},
		{c.index, reader.WithIndexColumn}, {c.value, reader.WithValueColumn}} {
		if o.v != "" {
			opts = append(opts, o.with(o.v))
		}
	}
	return opts
}

// noteLayout prints to stderr, for an Arrow or Parquet input read in any
// layout but the canonical one with 1-based indices, the one line that
// says how its columns become rows, e.g. "cpm: t.parquet: label label,
// dense columns as features 1..2 (1=age, 2=income)". It prints nothing
// for other inputs, or when the file cannot be described (reading it
// reports why).
func noteLayout(stderr io.Writer, path string, opts []reader.Option) {
	f, err := reader.DetectFormat(path)
	if err != nil || !slices.Contains([]reader.Format{reader.ArrowFile, reader.ArrowStream, reader.Parquet}, f) {
		return
	}
	l, err := reader.DescribeColumns(path, opts...)
	if err != nil || (l.Kind == reader.LayoutStructList && !l.ZeroBased) {
		return
	}
	fmt.Fprintf(stderr, "cpm: %s: %s\n", path, l)
}

// convertColumnFlags holds convert's flags for Arrow and Parquet output.
type convertColumnFlags struct {
	arrowCompression string
	parquetPages     string
}

// addConvertColumnFlags registers --arrow-compression and --parquet-pages
// on fs.
func addConvertColumnFlags(fs *flag.FlagSet) *convertColumnFlags {
	c := &convertColumnFlags{}
	fs.StringVar(&c.arrowCompression, "arrow-compression", "", "`codec` of Arrow IPC bodies: none (the default: the Arrow JavaScript library and some other readers read no compressed bodies), lz4 or zstd")
	fs.StringVar(&c.parquetPages, "parquet-pages", "", "Parquet data page `version`: v1 (the default, read by every Parquet reader) or v2")
	return c
}

// apply checks the flags against the output format and merges
// --arrow-compression into *compression (convert's --compression, which
// may name the same codec).
func (c *convertColumnFlags) apply(format reader.Format, compression *string) error {
	arrow := format == reader.ArrowFile || format == reader.ArrowStream
	if c.arrowCompression != "" {
		switch {
		case !arrow:
			return usagef("--arrow-compression %q: the output is %s, not Arrow", c.arrowCompression, format)
		case !slices.Contains([]string{"none", "lz4", "zstd"}, c.arrowCompression):
			return usagef("--arrow-compression %q: want none, lz4 or zstd", c.arrowCompression)
		case *compression != "" && *compression != c.arrowCompression:
			return usagef("--arrow-compression %q and --compression %q disagree", c.arrowCompression, *compression)
		}
		*compression = c.arrowCompression
	}
	switch {
	case c.parquetPages == "":
	case format != reader.Parquet:
		return usagef("--parquet-pages %q: the output is %s, not Parquet", c.parquetPages, format)
	case c.parquetPages != "v1" && c.parquetPages != "v2":
		return usagef("--parquet-pages %q: want v1 or v2", c.parquetPages)
	}
	return nil
}

// opts returns the writer options of the flags.
func (c *convertColumnFlags) opts() []reader.Option {
	if c.parquetPages == "v2" {
		return []reader.Option{reader.WithParquetPageVersion(2)}
	}
	return nil
}
