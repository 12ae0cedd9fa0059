package libsvm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/internal/cputime"
	"github.com/polyhedral/cpm/reader/internal/core"
)

// bigWithError builds ~size bytes of MNIST-like text with comment, blank
// and CRLF lines mixed in, and replaces line errLine (1-based) with bad.
// It returns the text.
func bigWithError(size, errLine int, bad string) []byte {
	rng := testRand()
	var b []byte
	for line := 1; len(b) < size || line <= errLine; line++ {
		switch {
		case line == errLine:
			b = append(b, bad...)
			b = append(b, '\n')
		case line%7 == 0:
			b = append(b, "# comment line\n"...)
		case line%11 == 0:
			b = append(b, "  \r\n"...)
		case line%13 == 0:
			row := appendMNISTRow(nil, rng)
			b = append(b, row[:len(row)-1]...)
			b = append(b, "\r\n"...)
		default:
			b = appendMNISTRow(b, rng)
		}
	}
	return b
}

// TestLoadDeepErrorLine puts an error deep in a multi-chunk input and
// checks its absolute line and column for many chunk sizes and worker
// counts, and that the first error in file order wins over a later one.
func TestLoadDeepErrorLine(t *testing.T) {
	const errLine = 1499
	text := bigWithError(4<<20, errLine, "3 5:1 9:0.5 8:1")
	// A second, later error that a parser may well see first.
	later := bytes.LastIndex(text, []byte("\n1 "))
	if bytes.Count(text[:later], []byte("\n")) < errLine+200 {
		t.Fatal("test input too short")
	}
	text = append(text[:later+1:later+1], append([]byte("1 0:1\n"), text[later+1:]...)...)
	for _, chunk := range []int{1 << 10, 64 << 10, 1 << 20, 0} {
		for _, workers := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("chunk%d/workers%d", chunk, workers), func(t *testing.T) {
				_, err := LoadReader(bytes.NewReader(text), "big.txt", core.WithChunkBytes(chunk), core.WithWorkers(workers))
				want := fmt.Sprintf("big.txt:%d:13: ", errLine)
				if !errors.Is(err, core.ErrUnsorted) || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("error %v, want %s... ErrUnsorted", err, want)
				}
			})
		}
	}
	// Without the first error, the later one is found at its line.
	fixed := bytes.Replace(text, []byte("3 5:1 9:0.5 8:1\n"), []byte("3 5:1 8:0.5 9:1\n"), 1)
	wantLine := bytes.Count(fixed[:later+1], []byte("\n")) + 1
	_, err := LoadReader(bytes.NewReader(fixed), "big.txt", core.WithChunkBytes(32<<10))
	if want := fmt.Sprintf("big.txt:%d:3: ", wantLine); !errors.Is(err, core.ErrIndexZero) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want %s... ErrIndexZero", err, want)
	}
}

// TestLoadDeterministic checks that Load gives the Scanner's rows whatever
// the chunk size and number of workers.
func TestLoadDeterministic(t *testing.T) {
	text := bigWithError(2<<20, 0, "")
	want, err := scanAll(text, "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{100, 4 << 10, 300 << 10, 0} {
		for _, workers := range []int{1, 2, 7} {
			got, err := LoadReader(bytes.NewReader(text), "x", core.WithChunkBytes(chunk), core.WithWorkers(workers))
			if err != nil {
				t.Fatal(err)
			}
			if !equalCSR(got, want) {
				t.Errorf("chunk %d, workers %d: rows differ from the Scanner's", chunk, workers)
			}
		}
	}
}

// TestLoadLongLines has lines much longer than a chunk, and one longer than
// MaxLineBytes deep in the file.
func TestLoadLongLines(t *testing.T) {
	long := "1" + strings.Repeat(" 1:1", 0) + func() string {
		var b strings.Builder
		for j := 1; j <= 5000; j++ {
			fmt.Fprintf(&b, " %d:0.5", j)
		}
		return b.String()
	}()
	text := strings.Repeat(long+"\n2 3:1\n", 20)
	want, err := scanAll([]byte(text), "x")
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadReader(strings.NewReader(text), "x", core.WithChunkBytes(1000))
	if err != nil || !equalCSR(got, want) {
		t.Fatalf("long lines: err %v, equal %v", err, err == nil && equalCSR(got, want))
	}
	_, err = LoadReader(strings.NewReader(text), "x", core.WithChunkBytes(1000), core.WithMaxLineBytes(len(long)-1))
	if !errors.Is(err, core.ErrLineTooLong) || !strings.HasPrefix(err.Error(), fmt.Sprintf("x:1:%d: ", len(long))) {
		t.Errorf("error %v, want x:1:%d: line too long", err, len(long))
	}
}

// waitGoroutines waits for the number of goroutines to fall back to n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, want %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNoGoroutineLeak stops Load and Stream early in every way and checks
// that no goroutine is left behind, including on endless input.
func TestNoGoroutineLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	endless := func() io.Reader { return &endlessReader{line: appendMNISTRow(nil, testRand())} }

	// An error early in endless input: Load mustNil return, not read forever.
	_, err := LoadReader(io.MultiReader(strings.NewReader("1 1:1\n1 0:1\n"), endless()), "x", core.WithChunkBytes(4<<10))
	if !errors.Is(err, core.ErrIndexZero) {
		t.Errorf("error %v", err)
	}
	// An error late, after many chunks.
	_, _ = LoadReader(bytes.NewReader(bigWithError(1<<20, 400, "x")), "x", core.WithChunkBytes(8<<10))
	// A read error.
	_, _ = LoadReader(&failingReader{data: bigWithError(1<<20, 0, ""), err: errors.New("boom")}, "x", core.WithChunkBytes(8<<10))
	// A Stream closed after one block of endless input, with the block held.
	s := newStream(endless(), io.NopCloser(nil), "x", 10, []core.Option{core.WithChunkBytes(4 << 10)})
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != core.ErrClosed {
		t.Errorf("Next after Close: %v", err)
	}
	// A Stream that meets an error, never closed by a caller that forgot.
	s = newStream(strings.NewReader("1 1:1\nbad\n"), io.NopCloser(nil), "x", 10, nil)
	for {
		if _, err := s.Next(); err != nil {
			break
		}
	}
	waitGoroutines(t, base)
	s.Close()
}

func BenchmarkLoad(b *testing.B) {
	loadBenchData(b)
	for _, tc := range []struct{ name, path string }{
		{"plain", benchData.plainPath},
		{"zstd", benchData.zstPath},
		{"gzip", benchData.gzPath},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(benchData.text)))
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				m, err := Load(tc.path)
				if err != nil {
					b.Fatal(err)
				}
				if m.Rows() == 0 {
					b.Fatal("no rows")
				}
			}
			// On a shared machine the wall-clock MB/s depends on the
			// other load; this is the throughput per CPU-second used.
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(float64(len(benchData.text))*float64(b.N)/float64(cpu)*1e3, "MB/cpu-s")
			}
		})
	}
}
