package reader

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/polyhedral/cpm/internal/cputime"
	"github.com/polyhedral/cpm/reader/internal/core"
)

// mnist2Train is MNIST "2 vs rest" training data, written by
// scripts/get-mnist.sh, relative to this package's directory.
const mnist2Train = "../data/mnist2.train.libsvm.zst"

// BenchmarkArrowMNIST2 compares reading MNIST-2 train (60000 rows) as
// LIBSVM text with reading it as Arrow IPC and Parquet. It skips when the
// data has not been fetched.
func BenchmarkArrowMNIST2(b *testing.B) {
	if _, err := os.Stat(mnist2Train); err != nil {
		b.Skipf("%s: %v (run scripts/get-mnist.sh)", mnist2Train, err)
	}
	benchColumnar(b, mnist2Train)
}

// BenchmarkArrowSynthetic is BenchmarkArrowMNIST2 on ~30 MB of generated
// MNIST-like text, for machines without the data.
func BenchmarkArrowSynthetic(b *testing.B) {
	src := writeTempFile(b, "synth.libsvm.zst", zstdBytes(genMNIST(testRand(), benchBytes)))
	benchColumnar(b, src)
}

// benchColumnar converts the LIBSVM file src once into each form, then
// times Load of each form and, for the columnar ones, a pass over the
// blocks of OpenBlocks without copying them. Metrics: rows/s, nonzeros/s,
// the size of the file read, and the CPU time of the process per read and
// the file's megabytes per CPU-second (the rate a core sustains, which a
// shared machine disturbs less than the wall-clock rates).
func benchColumnar(b *testing.B, src string) {
	dir := b.TempDir()
	m, err := Load(src)
	if err != nil {
		b.Fatal(err)
	}
	plain := filepath.Join(dir, "data.libsvm")
	writeAll(b, plain, m, m.Rows())
	forms := []struct {
		name, path  string
		compression string
	}{
		{"libsvm-zst", src, ""},
		{"libsvm", plain, ""},
		{"arrow-none", filepath.Join(dir, "none.arrow"), "none"},
		{"arrow-lz4", filepath.Join(dir, "lz4.arrow"), "lz4"},
		{"arrow-zstd", filepath.Join(dir, "zstd.arrow"), "zstd"},
		{"arrows-none", filepath.Join(dir, "none.arrows"), "none"},
		{"parquet-zstd", filepath.Join(dir, "zstd.parquet"), "zstd"},
		{"parquet-snappy", filepath.Join(dir, "snappy.parquet"), "snappy"},
		{"parquet-none", filepath.Join(dir, "none.parquet"), "none"},
	}
	for _, f := range forms {
		if f.compression != "" {
			writeAll(b, f.path, m, m.Rows(), core.WithCompression(f.compression))
			got, err := Load(f.path)
			if err != nil {
				b.Fatal(err)
			}
			if !equalCSR(got, m) {
				b.Fatalf("%s does not hold the rows of %s", f.path, src)
			}
		}
		fi, err := os.Stat(f.path)
		if err != nil {
			b.Fatal(err)
		}
		var cpu0 int64
		start := func(b *testing.B) { b.ResetTimer(); cpu0 = cputime.Process() }
		report := func(b *testing.B) {
			if cpu := cputime.Process() - cpu0; cpu0 > 0 && cpu > 0 {
				b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(fi.Size())*float64(b.N)/float64(cpu)*1e3, "MB/cpu-s")
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(m.Rows())*float64(b.N)/s, "rows/s")
			b.ReportMetric(float64(m.NNZ())*float64(b.N)/s/1e6, "Mnnz/s")
			b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
			b.ReportMetric(0, "ns/op") // the rates say it; ns/op is noise at -benchtime 3x
		}
		b.Run(f.name+"/Load", func(b *testing.B) {
			start(b)
			for b.Loop() {
				got, err := Load(f.path)
				if err != nil {
					b.Fatal(err)
				}
				if got.NNZ() != m.NNZ() {
					b.Fatalf("%d nonzeros, want %d", got.NNZ(), m.NNZ())
				}
			}
			report(b)
		})
		if f.compression == "" {
			continue
		}
		b.Run(f.name+"/Blocks", func(b *testing.B) {
			start(b)
			for b.Loop() {
				if nnz := passBlocks(b, f.path); nnz != m.NNZ() {
					b.Fatalf("%d nonzeros, want %d", nnz, m.NNZ())
				}
			}
			report(b)
		})
	}
}

// passBlocks reads every block of path, as a training pass does, and
// returns the number of nonzeros.
func passBlocks(b *testing.B, path string) int {
	br, err := OpenBlocks(path, core.DefaultBatchRows)
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	nnz := 0
	for {
		blk, err := br.Next()
		if errors.Is(err, io.EOF) {
			return nnz
		}
		if err != nil {
			b.Fatal(err)
		}
		nnz += blk.NNZ()
		br.Release(blk)
	}
}

// BenchmarkCheckRows times the validation of every row that the columnar
// readers run on each batch, on MNIST-like rows (~150 nonzeros a row).
func BenchmarkCheckRows(b *testing.B) {
	m, err := scanAll(genMNIST(testRand(), 8<<20), "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(8 * m.NNZ()))
	for b.Loop() {
		if _, _, _, err := core.CheckRows(m.Labels, m.Ptr, m.Idx, m.Val, 1<<32-1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m.NNZ()), "ns/nnz")
}
