package shard

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/polyhedral/cpm/internal/cputime"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// benchData is the generated input of BenchmarkRead, shared by its runs.
var benchData struct {
	once      sync.Once
	dir       string
	single    map[string]string // compression extension -> file
	sets      map[string]string // "ext/n" -> directory of n shards
	textBytes int64
	rows      int
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchData.dir != "" {
		os.RemoveAll(benchData.dir)
	}
	os.Exit(code)
}

// benchRows are seeded MNIST-like rows: about 150 nonzeros of 784
// features, values k/255, labels ±1.
func benchRows(rows int) *sparsevec.CSR {
	r := rand.New(rand.NewPCG(2014, 1))
	m := &sparsevec.CSR{}
	x := sparsevec.Vector{}
	for range rows {
		x.Idx, x.Val = x.Idx[:0], x.Val[:0]
		nnz := 120 + r.IntN(61)
		// nnz distinct indices in 1..784, ascending: select by coin flips
		// with the right rate, then trim.
		for j := 1; j <= 784 && len(x.Idx) < nnz; j++ {
			if r.IntN(784-j+1) < nnz-len(x.Idx) {
				x.Idx = append(x.Idx, uint32(j))
				x.Val = append(x.Val, float32(1+r.IntN(255))/255)
			}
		}
		label := float32(1)
		if r.IntN(2) == 0 {
			label = -1
		}
		m.Append(label, x)
	}
	return m
}

// writeRuns writes m to n shard files in dir, named with extension ext
// (which picks the compression), runs of run rows dealt round-robin, with a
// manifest.
func writeRuns(dir string, m *sparsevec.CSR, n, run int, ext string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	man := &Manifest{RunRows: run}
	for s := range n {
		name := ShardName(s, n, ext)
		out, err := reader.CreateCompressed(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		w := libsvm.NewWriter(out)
		info := ShardInfo{Name: name}
		for r := range m.Rows() {
			if (r/run)%n != s {
				continue
			}
			if err := w.Write(m.Labels[r], m.Row(r)); err != nil {
				out.Abort()
				return err
			}
			info.Rows++
			info.NNZ += int64(len(m.Row(r).Idx))
		}
		if err := w.Flush(); err != nil {
			out.Abort()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		info.Bytes = out.Written()
		man.Shards = append(man.Shards, info)
	}
	return writeManifest(dir, man)
}

// countingWriter counts bytes.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func setupBench(b *testing.B) {
	d := &benchData
	d.once.Do(func() {
		d.dir, d.err = os.MkdirTemp("", "cpm-shard-bench-")
		if d.err != nil {
			return
		}
		const rows = 72000 // about 150 MB of text
		m := benchRows(rows)
		var cw countingWriter
		w := libsvm.NewWriter(&cw)
		for r := range m.Rows() {
			w.Write(m.Labels[r], m.Row(r))
		}
		w.Flush()
		d.textBytes, d.rows = cw.n, rows
		d.single, d.sets = map[string]string{}, map[string]string{}
		for _, c := range benchCompressions {
			ext := ".libsvm." + c
			one := filepath.Join(d.dir, "one-"+c)
			if d.err = writeRuns(one, m, 1, 4096, ext); d.err != nil {
				return
			}
			d.single[c] = filepath.Join(d.dir, "single"+ext)
			if d.err = os.Rename(filepath.Join(one, ShardName(0, 1, ext)), d.single[c]); d.err != nil {
				return
			}
			for _, n := range []int{2, 4} {
				dir := filepath.Join(d.dir, fmt.Sprintf("set%d-%s", n, c))
				if d.err = writeRuns(dir, m, n, 4096, ext); d.err != nil {
					return
				}
				d.sets[fmt.Sprintf("%s/%d", c, n)] = dir
			}
		}
	})
	if d.err != nil {
		b.Fatal(d.err)
	}
}

// measure runs read b.N times and reports the CPU time per text MB
// besides the wall-clock MB/s, which on a shared machine depends on the
// other load.
func measure(b *testing.B, read func()) {
	b.SetBytes(benchData.textBytes)
	c0 := cputime.Process()
	b.ResetTimer()
	for range b.N {
		read()
	}
	b.StopTimer()
	if c := cputime.Process() - c0; c > 0 {
		b.ReportMetric(float64(c)/1e6/float64(b.N)/(float64(benchData.textBytes)/1e6), "cpu-ms/MB")
	}
}

// drain reads every block of br and checks the row count.
func drain(b *testing.B, br reader.BlockReader, err error, want int) {
	if err != nil {
		b.Fatal(err)
	}
	rows := 0
	for {
		blk, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		rows += blk.Rows()
		br.Release(blk)
	}
	if err := br.Close(); err != nil {
		b.Fatal(err)
	}
	if rows != want {
		b.Fatalf("%d rows, want %d", rows, want)
	}
}

// benchCompressions are the shard compressions BenchmarkRead compares.
var benchCompressions = []string{"zst", "gz"}

// BenchmarkRead reads about 150 MB of LIBSVM text (MNIST density) from one
// file and from shard sets, zstd- and gzip-compressed; MB/s counts text
// bytes. One file is read by one pipeline: a serial read-and-decompress
// goroutine feeding parser goroutines (reader.WithWorkers, default
// GOMAXPROCS). Shards run one such pipeline each, so they pay off when the
// single pipeline's serial stage is the bottleneck:
//
//   - zst: decompression is cheap and the parsers already use every core,
//     so on 2 cores shards add only overhead;
//   - gz: decompression is about as costly as parsing and runs on one
//     core, so 2 shards decompress on 2;
//   - serial-parse: every pipeline has one parser (Workers 1), the case of
//     a reader whose parsing is serial; 2 shards parse on 2 cores.
func BenchmarkRead(b *testing.B) {
	setupBench(b)
	d := &benchData
	file := func(path string, opts ...reader.Option) func(b *testing.B) {
		return func(b *testing.B) {
			measure(b, func() {
				br, err := reader.OpenBlocks(path, DefaultBlockRows, opts...)
				drain(b, br, err, d.rows)
			})
		}
	}
	shards := func(dir string, cfg ReadConfig) func(b *testing.B) {
		return func(b *testing.B) {
			measure(b, func() {
				br, err := Open(dir, cfg)
				drain(b, br, err, d.rows)
			})
		}
	}
	for _, c := range benchCompressions {
		b.Run(c+"/file", file(d.single[c]))
		for _, n := range []int{2, 4} {
			b.Run(fmt.Sprintf("%s/shards%d", c, n), shards(d.sets[fmt.Sprintf("%s/%d", c, n)], ReadConfig{Readers: 2}))
		}
	}
	b.Run("serial-parse/file", file(d.single["zst"], reader.WithWorkers(1)))
	b.Run("serial-parse/shards2", shards(d.sets["zst/2"], ReadConfig{Readers: 2, Workers: 1}))
}
