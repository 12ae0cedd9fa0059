package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/polyhedral/cpm/reader"
)

// writeDenseParquet writes a Parquet file of a label column y and two
// numeric columns, as pandas' to_parquet writes a data frame.
func writeDenseParquet(t *testing.T, path string) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "age", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "income", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.NewGoAllocator(), schema, strings.NewReader(
		`[{"age": 30, "income": 0, "y": 1}, {"age": 0, "income": 2.5, "y": -1}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, f, 10, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

// TestConvertColumnFlags converts a dense Parquet file with --label-column,
// reporting the feature mapping, and refuses it without the flag, naming
// the columns found.
func TestConvertColumnFlags(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.parquet")
	writeDenseParquet(t, in)
	var stdout, stderr bytes.Buffer
	if err := runConvert(context.Background(), []string{in, "--label-column", "y", "-o", "-"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if got, want := stdout.String(), "1 1:30\n-1 2:2.5\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if want := "cpm: " + in + ": label y, dense columns as features 1..2 (1=age, 2=income)\n"; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q, want it to start with %q", stderr.String(), want)
	}
	err := runConvert(context.Background(), []string{in, "-o", "-"}, &stdout, &stderr)
	var se *reader.SchemaError
	if !errors.As(err, &se) || se.Column != "label" || !strings.Contains(err.Error(), "age: int64, income: float64, y: int64") {
		t.Errorf("without --label-column: %v, want a SchemaError listing the columns", err)
	}
}

// Every command that reads data names the layout of a dense Parquet file
// on standard error, once, before its report.
func TestLayoutLineEverywhere(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.parquet")
	writeDenseParquet(t, in)
	m := filepath.Join(dir, "m.model")
	want := "cpm: " + in + ": label y, dense columns as features 1..2 (1=age, 2=income)\n"
	for _, args := range [][]string{
		{"train", "--label-column", "y", "-k", "1", "-i", "100", "-t", in, "-o", m},
		{"eval", "--label-column", "y", "-m", m, in},
		{"predict", "--label-column", "y", "-m", m, "-c", in},
	} {
		code, _, stderr := cpm(t, args...)
		if code != 0 || strings.Count(stderr, want) != 1 {
			t.Errorf("%v: exit %d, stderr %q; want the layout line once", args, code, stderr)
		}
	}
	// cv and tune cannot split two rows into stratified folds; they name
	// the layout before they say so.
	for _, args := range [][]string{
		{"cv", "--label-column", "y", "-k", "1", "-i", "100", "-r", "1", "-f", "2", in},
		{"tune", "--label-column", "y", "--grid", "C=1,2", "-f", "2", in},
	} {
		_, _, stderr := cpm(t, args...)
		if !strings.HasPrefix(stderr, want) || strings.Count(stderr, want) != 1 {
			t.Errorf("%v: stderr %q; want it to start with the layout line, once", args, stderr)
		}
	}
}

// TestConvertOutputFlags checks --arrow-compression and --parquet-pages:
// the defaults (uncompressed Arrow bodies, version 1 Parquet pages), the
// options, and the refusals.
func TestConvertOutputFlags(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.libsvm")
	if err := os.WriteFile(in, []byte(strings.Repeat(convertSample, 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	conv := func(out string, flags ...string) error {
		var stdout, stderr bytes.Buffer
		return runConvert(context.Background(), append([]string{in, "-o", filepath.Join(dir, out), "--max-features", "4294967296"}, flags...), &stdout, &stderr)
	}
	for _, tc := range []struct {
		out   string
		flags []string
		v2    bool
	}{{"v1.parquet", nil, false}, {"v2.parquet", []string{"--parquet-pages", "v2"}, true}, {"v1b.parquet", []string{"--parquet-pages", "v1"}, false}} {
		if err := conv(tc.out, tc.flags...); err != nil {
			t.Fatal(err)
		}
		if v2 := firstPageV2(t, filepath.Join(dir, tc.out)); v2 != tc.v2 {
			t.Errorf("%s: version 2 pages %v, want %v", tc.out, v2, tc.v2)
		}
	}
	sizes := map[string]int64{}
	for _, c := range []string{"none", "zstd", "lz4", ""} {
		out := "x-" + c + ".arrow"
		flags := []string{"--arrow-compression", c}
		if c == "" {
			flags = nil
		}
		if err := conv(out, flags...); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		sizes[c] = fi.Size()
	}
	if sizes[""] != sizes["none"] || sizes["zstd"] >= sizes["none"] || sizes["lz4"] >= sizes["none"] {
		t.Errorf("Arrow sizes by --arrow-compression %v: want the default uncompressed, zstd and lz4 smaller", sizes)
	}
	for _, bad := range [][]string{
		{"x.parquet", "--arrow-compression", "zstd"},
		{"x.arrow", "--arrow-compression", "snappy"},
		{"x.arrow", "--arrow-compression", "zstd", "--compression", "lz4"},
		{"x.arrow", "--parquet-pages", "v2"},
		{"x.parquet", "--parquet-pages", "3"},
	} {
		if err := conv(bad[0], bad[1:]...); !errors.As(err, new(usageError)) {
			t.Errorf("%v: got %v, want a usage error", bad, err)
		}
	}
}

// firstPageV2 reports whether the first data page of the first column of
// the Parquet file at path is a version 2 page.
func firstPageV2(t *testing.T, path string) bool {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	pr, err := pf.RowGroup(0).GetColumnPageReader(0)
	if err != nil {
		t.Fatal(err)
	}
	for pr.Next() {
		switch pr.Page().(type) {
		case *file.DataPageV2:
			return true
		case *file.DataPageV1:
			return false
		}
	}
	t.Fatalf("%s: no data page: %v", path, pr.Err())
	return false
}
