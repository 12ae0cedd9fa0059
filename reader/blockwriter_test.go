package reader

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/internal/readertest"
	"github.com/polyhedral/cpm/sparsevec"
)

// Shared test helpers (package readertest).
var (
	sampleCSR    = readertest.SampleCSR
	sampleLabels = readertest.SampleLabels
)

// readAllBlocks reads every block of path with OpenBlocks into one CSR and
// returns the row counts of the blocks. It checks each block's Dim.
func readAllBlocks(t testing.TB, path string, opts ...Option) (*sparsevec.CSR, []int, error) {
	t.Helper()
	br, err := OpenBlocks(path, 5, opts...)
	if err != nil {
		return nil, nil, err
	}
	defer br.Close()
	m := &sparsevec.CSR{Ptr: []int{0}}
	var sizes []int
	for {
		b, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return m, sizes, err
		}
		if want := dimOf(b); b.Dim != want {
			t.Errorf("%s: block Dim %d, want %d", path, b.Dim, want)
		}
		sizes = append(sizes, b.Rows())
		m.AppendCSR(b)
		br.Release(b)
	}
	return m, sizes, br.Close()
}

// dimOf computes a block's Dim the slow way.
func dimOf(b *sparsevec.CSR) int {
	d := 0
	for _, j := range b.Idx {
		d = max(d, int(j)+1)
	}
	return d
}

// writeAll writes m with CreateBlocks in blocks of blockRows rows.
func writeAll(t testing.TB, path string, m *sparsevec.CSR, blockRows int, opts ...Option) {
	t.Helper()
	w, err := CreateBlocks(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for lo := 0; lo < m.Rows(); lo += blockRows {
		blk := &sparsevec.CSR{}
		core.AppendRows(blk, m, lo, min(m.Rows(), lo+blockRows))
		if err := w.Write(blk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// convertFile streams src into dst block by block, as cpm convert does.
func convertFile(t testing.TB, src, dst string, opts ...Option) {
	t.Helper()
	br, err := OpenBlocks(src, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	w, err := CreateBlocks(dst, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for {
		b, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		br.Release(b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRoundTripAllFormats converts LIBSVM (zstd, gzip) -> Arrow file ->
// Arrow stream -> Parquet -> LIBSVM for each compression and checks that
// every stage holds exactly the original rows.
func TestRoundTripAllFormats(t *testing.T) {
	want := sampleCSR(testRand(), 203)
	text := formatCSR(want)
	for _, tc := range []struct{ arrow, parquet string }{
		{"none", "none"}, {"lz4", "snappy"}, {"zstd", "zstd"}, {"", ""},
	} {
		for _, in := range []string{"in.libsvm.zst", "in.libsvm.gz"} {
			t.Run(tc.arrow+"-"+tc.parquet+"/"+in, func(t *testing.T) {
				dir := t.TempDir()
				src := filepath.Join(dir, in)
				out, err := CreateCompressed(src)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := out.Write(text); err != nil {
					t.Fatal(err)
				}
				if err := out.Close(); err != nil {
					t.Fatal(err)
				}
				stages := []struct {
					path string
					opts []Option
					fmt  Format
				}{
					{filepath.Join(dir, "a.arrow"), []Option{WithCompression(tc.arrow), WithBatchRows(16)}, ArrowFile},
					{filepath.Join(dir, "b.arrows"), []Option{WithCompression(tc.arrow), WithBatchRows(9)}, ArrowStream},
					{filepath.Join(dir, "c.parquet"), []Option{WithCompression(tc.parquet), WithBatchRows(50)}, Parquet},
					{filepath.Join(dir, "d.libsvm.zst"), nil, LIBSVM},
				}
				prev := src
				for _, s := range stages {
					convertFile(t, prev, s.path, s.opts...)
					if f, err := DetectFormat(s.path); err != nil || f != s.fmt {
						t.Errorf("%s: DetectFormat = %v, %v; want %v", s.path, f, err, s.fmt)
					}
					got, _, err := readAllBlocks(t, s.path)
					if err != nil {
						t.Fatal(err)
					}
					if !equalCSR(got, want) {
						t.Fatalf("%s: rows differ after the round trip", s.path)
					}
					loaded, err := Load(s.path)
					if err != nil {
						t.Fatal(err)
					}
					if !equalCSR(loaded, want) {
						t.Fatalf("%s: Load differs", s.path)
					}
					prev = s.path
				}
			})
		}
	}
}

// TestBlockWriterBatches checks that rows are regrouped into batches of
// exactly WithBatchRows rows whatever the sizes of the blocks written.
func TestBlockWriterBatches(t *testing.T) {
	want := sampleCSR(testRand(), 100)
	for _, ext := range []string{".arrow", ".arrows", ".parquet"} {
		for _, blockRows := range []int{1, 3, 10, 64, 100} {
			t.Run(fmt.Sprintf("%s/blocks%d", ext, blockRows), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "x"+ext)
				writeAll(t, path, want, blockRows, WithBatchRows(10))
				got, sizes, err := readAllBlocks(t, path)
				if err != nil {
					t.Fatal(err)
				}
				if !equalCSR(got, want) {
					t.Error("rows differ")
				}
				if wantSizes := slices.Repeat([]int{10}, 10); !slices.Equal(sizes, wantSizes) {
					t.Errorf("batches of %v rows, want %v", sizes, wantSizes)
				}
			})
		}
	}
}

func TestBlockWriterRejects(t *testing.T) {
	nan := float32(math.NaN())
	good := sampleCSR(testRand(), 4)
	tests := []struct {
		name   string
		label  float32
		x      sparsevec.Vector
		column string
		want   error
	}{
		{"index 0", 1, sparsevec.Vector{Idx: []uint32{0, 2}, Val: []float32{1, 1}}, "features", ErrIndexZero},
		{"unsorted", 1, sparsevec.Vector{Idx: []uint32{3, 2}, Val: []float32{1, 1}}, "features", ErrUnsorted},
		{"duplicate", 1, sparsevec.Vector{Idx: []uint32{3, 3}, Val: []float32{1, 1}}, "features", ErrDuplicate},
		{"NaN value", 1, sparsevec.Vector{Idx: []uint32{3}, Val: []float32{nan}}, "features", ErrNonFinite},
		{"Inf label", float32(math.Inf(-1)), sparsevec.Vector{}, "label", ErrNonFinite},
	}
	for _, ext := range []string{".libsvm", ".arrow", ".arrows", ".parquet"} {
		for _, tt := range tests {
			t.Run(ext+"/"+tt.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "x"+ext)
				w, err := CreateBlocks(path, WithBatchRows(2))
				if err != nil {
					t.Fatal(err)
				}
				defer w.Abort()
				if err := w.Write(good); err != nil {
					t.Fatal(err)
				}
				bad := &sparsevec.CSR{}
				bad.Append(1, sparsevec.Vector{})
				bad.Append(tt.label, tt.x)
				err = w.Write(bad)
				var re *RowError
				if !errors.As(err, &re) || !errors.Is(err, tt.want) || re.Row != 6 || re.Column != tt.column || re.Path != path {
					t.Fatalf("got %v, want a RowError at row 6 of %s, column %q, wrapping %v", err, path, tt.column, tt.want)
				}
				// Nothing of the bad block was written; the writer goes on.
				if err := w.Write(good); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got, err := Load(path)
				if err != nil {
					t.Fatal(err)
				}
				want := &sparsevec.CSR{}
				want.AppendCSR(good)
				want.AppendCSR(good)
				if !equalCSR(got, want) {
					t.Error("file does not hold exactly the good blocks")
				}
			})
		}
	}
}

func TestBlockWriterEmpty(t *testing.T) {
	for _, ext := range []string{".libsvm", ".libsvm.zst", ".arrow", ".arrows", ".parquet"} {
		t.Run(ext, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x"+ext)
			w, err := CreateBlocks(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(&sparsevec.CSR{}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, sizes, err := readAllBlocks(t, path)
			if err != nil {
				t.Fatal(err)
			}
			if got.Rows() != 0 || len(sizes) != 0 {
				t.Errorf("%d rows in %d blocks, want none", got.Rows(), len(sizes))
			}
		})
	}
}

func TestBlockWriterAbortAndMisuse(t *testing.T) {
	m := sampleCSR(testRand(), 10)
	for _, ext := range []string{".libsvm.gz", ".arrow", ".arrows", ".parquet"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x"+ext)
			w, err := CreateBlocks(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(m); err != nil {
				t.Fatal(err)
			}
			w.Abort()
			w.Abort()
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("Abort left %d files", len(ents))
			}
			if err := w.Write(m); err == nil {
				t.Error("Write after Abort succeeded")
			}
			if err := w.Close(); err == nil {
				t.Error("Close after Abort succeeded")
			}

			w, err = CreateBlocks(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(m); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			w.Abort() // a no-op after Close
			if err := w.Close(); err == nil {
				t.Error("second Close succeeded")
			}
			if got, err := Load(path); err != nil || !equalCSR(got, m) {
				t.Errorf("file after Close+Abort: %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%d files, want only the output", len(ents))
			}
		})
	}
}

func TestCreateBlocksOptions(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file, compression string
		want                    string // substring of the error; "" for success
	}{
		{"arrow zstd", "a.arrow", "zstd", ""},
		{"arrow lz4", "a.feather", "lz4", ""},
		{"arrow none", "a.ipc", "none", ""},
		{"arrow snappy", "a.arrow", "snappy", `compression "snappy"`},
		{"stream lz4", "a.arrows", "lz4", ""},
		{"parquet snappy", "a.pq", "snappy", ""},
		{"parquet lz4", "a.parquet", "lz4", `compression "lz4"`},
		{"parquet bogus", "a.parquet", "brotli9", `compression "brotli9"`},
		{"libsvm with compression", "a.libsvm", "zstd", "by its extension"},
		{"cache", "a.cpmcache", "", "use rowcache.Create"},
		{"bz2", "a.libsvm.bz2", "", "bzip2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			w, err := CreateBlocks(path, WithCompression(tt.compression))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Write(sampleCSR(testRand(), 5)); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				w.Abort()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q lacks %q or the path", err, tt.want)
			}
		})
	}
}
