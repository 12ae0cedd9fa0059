package libsvm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

func TestStreamBlocks(t *testing.T) {
	text := bigWithError(1<<20, 0, "")
	want, err := scanAll(text, "x")
	if err != nil {
		t.Fatal(err)
	}
	path := writeTempFile(t, "s.zst", zstdBytes(text))
	for _, blockRows := range []int{1, 7, 100, 1 << 20} {
		for _, chunk := range []int{3000, 0} {
			t.Run(fmt.Sprintf("rows%d/chunk%d", blockRows, chunk), func(t *testing.T) {
				s, err := NewStream(path, blockRows, core.WithChunkBytes(chunk))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				got := new(sparsevec.CSR)
				for {
					b, err := s.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if b.Rows() != min(blockRows, want.Rows()-got.Rows()) {
						t.Fatalf("block of %d rows after %d, want %d", b.Rows(), got.Rows(), blockRows)
					}
					if dim := maxDim(b); b.Dim != dim {
						t.Fatalf("block Dim %d, want %d", b.Dim, dim)
					}
					got.AppendCSR(b)
					s.Release(b)
				}
				if !equalCSR(got, want) {
					t.Error("rows differ from the Scanner's")
				}
				if _, err := s.Next(); err != io.EOF {
					t.Errorf("Next after the end: %v", err)
				}
			})
		}
	}
}

// maxDim recomputes CSR.Dim.
func maxDim(m *sparsevec.CSR) int {
	d := 0
	for r := range m.Rows() {
		if x := m.Row(r); x.Len() > 0 {
			d = max(d, int(x.MaxIndex())+1)
		}
	}
	return d
}

// TestStreamError checks that every row before a bad line is delivered,
// then the error with its absolute line, sticky.
func TestStreamError(t *testing.T) {
	text := bigWithError(512<<10, 200, "1 2:1 2:1")
	rowsBefore := 0
	s := NewScanner(bytes.NewReader(text), "x")
	for s.Scan() {
		rowsBefore++
	}
	st := newStream(bytes.NewReader(text), io.NopCloser(nil), "x", 16, []core.Option{core.WithChunkBytes(8 << 10)})
	defer st.Close()
	n := 0
	var err error
	for {
		var b *sparsevec.CSR
		if b, err = st.Next(); err != nil {
			break
		}
		n += b.Rows()
		st.Release(b)
	}
	if !errors.Is(err, core.ErrDuplicate) || !strings.HasPrefix(err.Error(), "x:200:7: ") {
		t.Errorf("error %v, want x:200:7: duplicate", err)
	}
	if n != rowsBefore {
		t.Errorf("%d rows before the error, want %d", n, rowsBefore)
	}
	if _, err2 := st.Next(); err2 != err {
		t.Errorf("error not sticky: %v", err2)
	}
}

func TestStreamMisuse(t *testing.T) {
	if _, err := NewStream(writeTempFile(t, "x", []byte("1\n")), 0); err == nil {
		t.Error("blockRows 0: no error")
	}
	s := newStream(&endlessReader{line: []byte("1 1:1\n")}, io.NopCloser(nil), "x", 3, nil)
	defer s.Close()
	var held []*sparsevec.CSR
	for range core.StreamBlocks {
		b, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, b)
	}
	if _, err := s.Next(); err != core.ErrBlocksHeld {
		t.Fatalf("Next holding every block: %v, want ErrBlocksHeld", err)
	}
	s.Release(held[0])
	if _, err := s.Next(); err != nil {
		t.Fatalf("Next after Release: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Release of a foreign block did not panic")
			}
		}()
		s.Release(new(sparsevec.CSR))
	}()
}

// TestStreamBoundedMemory streams far more data than the bound and checks
// that the heap stays under it and that steady state allocates little.
func TestStreamBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 128 MiB")
	}
	const total = 128 << 20
	line := appendMNISTRow(nil, testRand())
	r := io.LimitReader(&endlessReader{line: line}, total/int64(len(line))*int64(len(line)))
	s := newStream(r, io.NopCloser(nil), "x", 1000, nil)
	defer s.Close()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	alloc0 := ms.TotalAlloc
	rows, maxHeap := 0, uint64(0)
	for i := 0; ; i++ {
		b, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows += b.Rows()
		s.Release(b)
		if i%10 == 0 {
			runtime.ReadMemStats(&ms)
			maxHeap = max(maxHeap, ms.HeapAlloc)
		}
	}
	runtime.ReadMemStats(&ms)
	allocated := ms.TotalAlloc - alloc0
	t.Logf("%d rows, max heap %d MiB, allocated %d MiB", rows, maxHeap>>20, allocated>>20)
	if rows != total/len(line) {
		t.Errorf("%d rows, want %d", rows, total/len(line))
	}
	if maxHeap > 64<<20 || allocated > 64<<20 {
		t.Errorf("max heap %d MiB, allocated %d MiB while streaming %d MiB; want both under 64 MiB", maxHeap>>20, allocated>>20, total>>20)
	}
}

func BenchmarkStream(b *testing.B) {
	loadBenchData(b)
	b.SetBytes(int64(len(benchData.text)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := NewStream(benchData.plainPath, 4096)
		if err != nil {
			b.Fatal(err)
		}
		for {
			blk, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			s.Release(blk)
		}
		s.Close()
	}
}
