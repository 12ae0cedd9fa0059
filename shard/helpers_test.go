package shard

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// genRows returns n seeded random rows: labels ±1, up to maxNNZ nonzeros
// among features 1..dim with values k/255 or small negative reals.
func genRows(seed uint64, n, dim, maxNNZ int) *sparsevec.CSR {
	r := rand.New(rand.NewPCG(seed, 99))
	m := &sparsevec.CSR{}
	var x sparsevec.Vector
	for range n {
		x.Idx, x.Val = x.Idx[:0], x.Val[:0]
		nnz := r.IntN(maxNNZ + 1)
		for _, j := range r.Perm(dim)[:nnz] {
			x.Idx = append(x.Idx, uint32(j+1))
		}
		slices.Sort(x.Idx)
		for range x.Idx {
			if r.IntN(4) == 0 {
				x.Val = append(x.Val, -r.Float32()*3)
			} else {
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

// idRows returns n rows whose label is their 0-based number, for tracing
// where each row goes.
func idRows(n int) *sparsevec.CSR {
	m := &sparsevec.CSR{}
	for i := range n {
		m.Append(float32(i), sparsevec.Vector{Idx: []uint32{uint32(1 + i%7)}, Val: []float32{float32(i%5) + 0.5}})
	}
	return m
}

// writeRows writes m as LIBSVM text to path, compressed by its extension.
func writeRows(t testing.TB, path string, m *sparsevec.CSR) {
	t.Helper()
	out, err := reader.CreateCompressed(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Abort()
	w := libsvm.NewWriter(out)
	for r := range m.Rows() {
		if err := w.Write(m.Labels[r], m.Row(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// readAll reads every block of br into one CSR, returns the block sizes
// too, and closes br.
func readAll(t testing.TB, br reader.BlockReader) (*sparsevec.CSR, []int) {
	t.Helper()
	defer br.Close()
	m := &sparsevec.CSR{}
	var sizes []int
	for {
		b, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m.AppendCSR(b)
		sizes = append(sizes, b.Rows())
		br.Release(b)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	return m, sizes
}

// load reads a whole file.
func load(t testing.TB, path string) *sparsevec.CSR {
	t.Helper()
	m, err := reader.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// rowKey renders row r exactly (float bits), for multiset comparison.
func rowKey(m *sparsevec.CSR, r int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%x", m.Labels[r])
	x := m.Row(r)
	for i, j := range x.Idx {
		fmt.Fprintf(&b, " %d:%x", j, x.Val[i])
	}
	return b.String()
}

// multiset counts the rows of the given blocks by rowKey.
func multiset(ms ...*sparsevec.CSR) map[string]int {
	c := map[string]int{}
	for _, m := range ms {
		for r := range m.Rows() {
			c[rowKey(m, r)]++
		}
	}
	return c
}

// sameRows fails unless a and b hold the same rows in the same order.
func sameRows(t testing.TB, a, b *sparsevec.CSR) {
	t.Helper()
	if a.Rows() != b.Rows() {
		t.Fatalf("%d rows, want %d", a.Rows(), b.Rows())
	}
	for r := range a.Rows() {
		if ka, kb := rowKey(a, r), rowKey(b, r); ka != kb {
			t.Fatalf("row %d: %s, want %s", r, ka, kb)
		}
	}
}

// dirNames lists the names in dir, sorted; none if dir does not exist.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // a directory Split created and removed: empty
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// shardPaths returns the shard files of a manifest in dir.
func shardPaths(dir string, m *Manifest) []string {
	var p []string
	for _, s := range m.Shards {
		p = append(p, filepath.Join(dir, s.Name))
	}
	return p
}

// waitGoroutines waits up to 5 s for the goroutine count to fall to n.
func waitGoroutines(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// heldCounter wraps a BlockReader and records the most blocks held at once.
type heldCounter struct {
	reader.BlockReader
	held, peak int
}

func (h *heldCounter) Next() (*sparsevec.CSR, error) {
	b, err := h.BlockReader.Next()
	if err == nil {
		h.held++
		h.peak = max(h.peak, h.held)
	}
	return b, err
}

func (h *heldCounter) Release(b *sparsevec.CSR) {
	h.held--
	h.BlockReader.Release(b)
}

var errTest = errors.New("test error")
