package core

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// zstdBenchFile writes about 16 MiB of LIBSVM text compressed with zstd and
// returns its path and the size of the text.
func zstdBenchFile(b *testing.B) (string, int) {
	var text bytes.Buffer
	for i := 0; text.Len() < 16<<20; i++ {
		fmt.Fprintf(&text, "%d %d:%g %d:%g %d:%g\n", i%2*2-1, i%97+1, float32(i)/7, i%997+100, float32(i%13)/3, i%9973+2000, 0.25)
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "bench.zst")
	if err := os.WriteFile(path, enc.EncodeAll(text.Bytes(), nil), 0o644); err != nil {
		b.Fatal(err)
	}
	return path, text.Len()
}

// BenchmarkOpenZstd measures decompression alone for the decoder
// concurrency Open uses (1, synchronous) against the library default
// (0: GOMAXPROCS, capped at 4).
func BenchmarkOpenZstd(b *testing.B) {
	path, size := zstdBenchFile(b)
	defer func(c int) { zstdConcurrency = c }(zstdConcurrency)
	for _, conc := range []int{1, 0} {
		b.Run(map[int]string{1: "conc1", 0: "default"}[conc], func(b *testing.B) {
			zstdConcurrency = conc
			b.SetBytes(int64(size))
			for b.Loop() {
				rc, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, rc); err != nil {
					b.Fatal(err)
				}
				rc.Close()
			}
		})
	}
}
