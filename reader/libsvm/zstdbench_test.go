package libsvm

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/polyhedral/cpm/internal/cputime"
	"github.com/polyhedral/cpm/reader/internal/core"
)

// mnist8mValues are the pixel values k/255 as cpm gen writes MNIST8m-like
// data: float32 in the shortest decimal that reads back exactly
// ("0.011764706", "0.99215686", "1"), 8 to 11 bytes where the LIBSVM
// site's files have 6 significant digits.
var mnist8mValues = func() [256]string {
	var v [256]string
	for k := range v {
		v[k] = strconv.FormatFloat(float64(float32(k)/255), 'g', -1, 32)
	}
	return v
}()

// appendMNIST8mRow appends one image-like row: labels -1 and 1 (MNIST8m-2),
// pixels in horizontal strokes of 2 to 12 consecutive indices over rows
// 5..24 of the 28x28 grid, bright inside a stroke (a third of them 253/255) and dim
// at its ends, about 200 nonzeros (3 KB) a row; so that zstd finds the repeats
// it finds in the real data (3.8:1 here with zstd.SpeedFastest, 3.6:1 for
// MNIST8m-2).
func appendMNIST8mRow(b []byte, rng *rand.Rand) []byte {
	b = strconv.AppendInt(b, int64(2*rng.IntN(2)-1), 10)
	for y := 5; y < 25; y++ {
		x := 6 + rng.IntN(6)
		for s := 1 + rng.IntN(3); s > 0 && x < 24; s-- {
			n := 2 + rng.IntN(min(11, 26-x-1))
			for k := range n {
				v := 253
				if rng.IntN(3) != 0 {
					v = 64 + rng.IntN(192)
				}
				if k == 0 || k == n-1 {
					v = 1 + rng.IntN(252)
				}
				b = append(b, ' ')
				b = strconv.AppendInt(b, int64(28*y+x+k+1), 10)
				b = append(b, ':')
				b = append(b, mnist8mValues[min(v, 255)]...)
			}
			x += n + 1 + rng.IntN(4)
		}
	}
	return append(b, '\n')
}

// zstd8m is about 32 MiB of MNIST8m-like text compressed as cpm gen
// writes a .zst (reader.CreateCompressed: zstd.SpeedFastest, encoder
// concurrency 2), made once per test binary.
var zstd8m struct {
	once      sync.Once
	text, zst []byte
	ratio     float64
}

func loadZstd8m(b *testing.B) string {
	b.Helper()
	zstd8m.once.Do(func() {
		rng := testRand()
		t := make([]byte, 0, 32<<20+4096)
		for len(t) < 32<<20 {
			t = appendMNIST8mRow(t, rng)
		}
		var buf bytes.Buffer
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(2))
		mustNil(err)
		_, err = w.Write(t)
		mustNil(err)
		mustNil(w.Close())
		zstd8m.text, zstd8m.zst = t, buf.Bytes()
		zstd8m.ratio = float64(len(t)) / float64(buf.Len())
	})
	return writeTempFile(b, "mnist8m.zst", zstd8m.zst)
}

// reportCPU reports the CPU time per iteration (cpu-ns/op) and the text
// bytes read per CPU-second (MB/cpu-s) since cpu0.
func reportCPU(b *testing.B, cpu0 int64, textBytes int) {
	cputime.Report(b, cpu0, "op")
	if cpu := cputime.Process() - cpu0; cpu0 > 0 && cpu > 0 {
		b.ReportMetric(float64(textBytes)*float64(b.N)/float64(cpu)*1e3, "MB/cpu-s")
	}
}

// BenchmarkStreamZstd8m is a Stream of MNIST8m-like zstd text, every row
// handed out and released: decompression and parsing, with ZeroBasedNo
// (no scan) and with ZeroBasedAuto's scan made on every iteration (the
// memo cleared), as the first pass of cpm train --stream makes it.
func BenchmarkStreamZstd8m(b *testing.B) {
	path := loadZstd8m(b)
	b.Logf("%d MiB of text, zstd %.2f:1", len(zstd8m.text)>>20, zstd8m.ratio)
	for _, tc := range []struct {
		name string
		z    core.ZeroBased
	}{{"no", core.ZeroBasedNo}, {"auto-scan", core.ZeroBasedAuto}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(zstd8m.text)))
			cpu0 := cputime.Process()
			for b.Loop() {
				if tc.z == core.ZeroBasedAuto {
					zeroMemo.mu.Lock()
					clear(zeroMemo.m)
					zeroMemo.mu.Unlock()
				}
				s, err := NewStream(path, 4096, core.WithZeroBased(tc.z))
				if err != nil {
					b.Fatal(err)
				}
				rows := 0
				for {
					blk, err := s.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					rows += blk.Rows()
					s.Release(blk)
				}
				s.Close()
				if rows == 0 {
					b.Fatal("no rows")
				}
			}
			reportCPU(b, cpu0, len(zstd8m.text))
		})
	}
}

// BenchmarkZeroScanZstd8m is ZeroBasedAuto's scan alone of the
// MNIST8m-like zstd file (1-based, so read to the end).
func BenchmarkZeroScanZstd8m(b *testing.B) {
	benchZeroScan(b, loadZstd8m(b), len(zstd8m.text))
}

// BenchmarkParseChunk8m is the parsers' work alone: parseChunk over the
// MNIST8m-like text in chunks of core.DefaultChunkBytes cut at line ends,
// the block's arrays reused.
func BenchmarkParseChunk8m(b *testing.B) {
	loadZstd8m(b)
	text := zstd8m.text
	var chunks [][]byte
	for rest := text; len(rest) > 0; {
		k := min(len(rest), core.DefaultChunkBytes)
		if k < len(rest) {
			k = bytes.LastIndexByte(rest[:k], '\n') + 1
		}
		chunks, rest = append(chunks, rest[:k]), rest[k:]
	}
	o := core.BuildOptions(nil)
	lp := lineParser{maxIndex: o.MaxIndex, im: oneShot(core.ZeroBasedNo)}
	var c chunk
	b.SetBytes(int64(len(text)))
	cpu0 := cputime.Process()
	for b.Loop() {
		for _, d := range chunks {
			c.data = d
			parseChunk(&c, &lp, "x", o.MaxLineBytes)
			if c.err != nil || c.blk.Rows() == 0 {
				b.Fatal(c.err)
			}
		}
	}
	reportCPU(b, cpu0, len(text))
}
