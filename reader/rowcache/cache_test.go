package rowcache_test

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/internal/cputime"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/internal/readertest"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// Shared test helpers (package readertest).
var (
	blocksOf  = readertest.BlocksOf
	cacheRows = readertest.CacheRows
)

func writeSource(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src.libsvm")
	if err := os.WriteFile(src, []byte("1 1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

func writeCache(t testing.TB, path, src string, blocks []*sparsevec.CSR) {
	t.Helper()
	w, err := rowcache.Create(path, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, b reader.BlockReader) (*sparsevec.CSR, []int, error) {
	t.Helper()
	m := &sparsevec.CSR{Ptr: []int{0}}
	var dims []int
	defer b.Close()
	for {
		blk, err := b.Next()
		if err == io.EOF {
			return m, dims, b.Close()
		}
		if err != nil {
			return m, dims, err
		}
		dims = append(dims, blk.Dim)
		m.AppendCSR(blk)
		b.Release(blk)
	}
}

func TestCacheRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	want := cacheRows(2000, 1)
	blocks := blocksOf(want, 300)
	path := filepath.Join(dir, "c.cpmcache")
	writeCache(t, path, src, blocks)
	if f, err := reader.DetectFormat(path); err != nil || f != reader.Cache {
		t.Fatalf("DetectFormat = %v, %v", f, err)
	}
	if err := rowcache.Check(path, src); err != nil {
		t.Fatalf("fresh cache: %v", err)
	}
	b, err := reader.OpenBlocks(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, dims, err := readAll(t, b)
	if err != nil {
		t.Fatal(err)
	}
	assertSameRows(t, got, want)
	for i, blk := range blocks {
		if dims[i] != blk.Dim {
			t.Errorf("block %d: Dim %d, want %d", i, dims[i], blk.Dim)
		}
	}
	// Load goes through the cache too.
	all, err := reader.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	assertSameRows(t, all, want)
}

func assertSameRows(t *testing.T, got, want *sparsevec.CSR) {
	t.Helper()
	if got.Rows() != want.Rows() {
		t.Fatalf("%d rows, want %d", got.Rows(), want.Rows())
	}
	for r := range want.Rows() {
		g, w := got.Row(r), want.Row(r)
		if math.Float32bits(got.Labels[r]) != math.Float32bits(want.Labels[r]) ||
			!reflect.DeepEqual(append([]uint32{}, g.Idx...), append([]uint32{}, w.Idx...)) {
			t.Fatalf("row %d: label %v idx %v, want %v %v", r, got.Labels[r], g.Idx, want.Labels[r], w.Idx)
		}
		for j := range w.Val {
			if math.Float32bits(g.Val[j]) != math.Float32bits(w.Val[j]) {
				t.Fatalf("row %d value %d: %v, want %v", r, j, g.Val[j], w.Val[j])
			}
		}
	}
}

func TestCacheDictionaryKeepsBits(t *testing.T) {
	// -0 and +0, and two NaN-free values that compare equal as floats
	// but not as bits, must come back bit for bit.
	dir := t.TempDir()
	src := writeSource(t, dir)
	m := &sparsevec.CSR{}
	m.Append(1, sparsevec.Vector{Idx: []uint32{1, 2, 3}, Val: []float32{0, float32(math.Copysign(0, -1)), 1}})
	path := filepath.Join(dir, "c.cpmcache")
	writeCache(t, path, src, []*sparsevec.CSR{m})
	got, err := reader.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	assertSameRows(t, got, m)
}

func TestCacheStaleness(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	path := filepath.Join(dir, "c.cpmcache")
	writeCache(t, path, src, blocksOf(cacheRows(10, 2), 4))

	if err := rowcache.Check(filepath.Join(dir, "none.cpmcache"), src); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing cache: %v, want ErrNotExist", err)
	}
	if err := rowcache.Check(path, src, reader.WithMaxIndex(100)); !errors.Is(err, rowcache.ErrStale) {
		t.Errorf("other max index: %v, want ErrCacheStale", err)
	}
	// Same size, different content.
	if err := os.WriteFile(src, []byte("1 2:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := rowcache.Check(path, src)
	if !errors.Is(err, rowcache.ErrStale) {
		t.Fatalf("changed source: %v, want ErrCacheStale", err)
	}
	// Restore the content but not the time.
	if err := os.WriteFile(src, []byte("1 1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(src, later, later); err != nil {
		t.Fatal(err)
	}
	if err := rowcache.Check(path, src); !errors.Is(err, rowcache.ErrStale) || !strings.Contains(err.Error(), "modified") {
		t.Errorf("touched source: %v, want a stale error saying modified", err)
	}
	// Different size.
	if err := os.WriteFile(src, []byte("1 1:1\n-1 2:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rowcache.Check(path, src); !errors.Is(err, rowcache.ErrStale) || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("grown source: %v, want a stale error about the size", err)
	}
}

// Every damaged cache is an error wrapping ErrCorrupt, never wrong rows or a
// panic: truncation at every length and a flipped bit at every byte.
func TestCacheCorruption(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	path := filepath.Join(dir, "c.cpmcache")
	writeCache(t, path, src, blocksOf(cacheRows(12, 3), 5))
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.cpmcache")
	try := func(data []byte, what string) {
		t.Helper()
		if err := os.WriteFile(bad, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := rowcache.Open(bad, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = readAll(t, b)
		if !errors.Is(err, reader.ErrCorrupt) {
			t.Fatalf("%s: err = %v, want ErrCorrupt", what, err)
		}
		var ce *rowcache.Error
		if !errors.As(err, &ce) || ce.Path != bad {
			t.Fatalf("%s: %v is not a *CacheError naming the file", what, err)
		}
	}
	for n := 0; n < len(good); n++ {
		try(good[:n], "truncated")
	}
	try(append(append([]byte{}, good...), 0), "trailing byte")
	for i := range good {
		d := append([]byte{}, good...)
		d[i] ^= byte(1) << (i % 8) // every bit position, spread over the bytes
		try(d, "flipped")
	}
}

func TestCacheRefusesCompressedName(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	if _, err := rowcache.Create(filepath.Join(dir, "c.cpmcache.zst"), src); err == nil {
		t.Fatal("a .zst cache name was accepted")
	}
}

// TestCacheRefusesForeignFile checks that Create refuses to write
// over its own source and over a file that is not a cache, leaving it as it
// was, and replaces an empty file, a damaged cache and a stale cache.
func TestCacheRefusesForeignFile(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	model := filepath.Join(dir, "m.model")
	if err := os.WriteFile(model, []byte("CPMMODEL and more"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path string
		want error
	}{
		{src, atomicfile.ErrRefused},
		{model, rowcache.ErrNotCache},
	} {
		before, _ := os.ReadFile(tt.path)
		_, err := rowcache.Create(tt.path, src)
		if !errors.Is(err, tt.want) || !errors.Is(err, atomicfile.ErrRefused) || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("Create(%s) = %v, want %v naming the path", tt.path, err, tt.want)
		}
		if after, _ := os.ReadFile(tt.path); string(after) != string(before) {
			t.Errorf("%s changed", tt.path)
		}
	}
	if err := rowcache.Replaceable(model); !errors.Is(err, rowcache.ErrNotCache) {
		t.Errorf("CacheReplaceable(model) = %v", err)
	}
	empty := filepath.Join(dir, "empty.cpmcache")
	damaged := filepath.Join(dir, "damaged.cpmcache")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(damaged, []byte("CPMCACHE\x07"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{empty, damaged} {
		if err := rowcache.Replaceable(p); err != nil {
			t.Errorf("CacheReplaceable(%s) = %v", p, err)
		}
		writeCache(t, p, src, blocksOf(cacheRows(10, 4), 4))
		if err := rowcache.Check(p, src); err != nil {
			t.Errorf("after rewriting %s: %v", p, err)
		}
	}
}

func TestCacheAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	path := filepath.Join(dir, "c.cpmcache")
	w, err := rowcache.Create(path, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(cacheRows(10, 4)); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("after Abort the directory holds %d entries, want only the source", len(entries))
	}
}

// A pass through Tee hands out the source's rows and leaves a
// complete cache; a pass closed early leaves none.
func TestTeeCache(t *testing.T) {
	dir := t.TempDir()
	want := cacheRows(3000, 5)
	src := filepath.Join(dir, "d.libsvm")
	writeLIBSVM(t, src, want)
	path := filepath.Join(dir, "d.cpmcache")

	open := func() reader.BlockReader {
		s, err := libsvm.NewStream(src, 256)
		if err != nil {
			t.Fatal(err)
		}
		w, err := rowcache.Create(path, src)
		if err != nil {
			t.Fatal(err)
		}
		return rowcache.Tee(s, w)
	}
	// Closed after one block: no cache.
	b := open()
	if _, err := b.Next(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a cache appeared after an unfinished pass: %v", err)
	}
	got, _, err := readAll(t, open())
	if err != nil {
		t.Fatal(err)
	}
	assertSameRows(t, got, want)
	if err := rowcache.Check(path, src); err != nil {
		t.Fatal(err)
	}
	cached, err := reader.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	assertSameRows(t, cached, want)
}

func writeLIBSVM(t *testing.T, path string, m *sparsevec.CSR) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := libsvm.NewWriter(f)
	for r := range m.Rows() {
		if err := w.Write(m.Labels[r], m.Row(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCacheReaderDoesNotAllocatePerBlock(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	path := filepath.Join(dir, "c.cpmcache")
	m := cacheRows(200, 6)
	var blocks []*sparsevec.CSR
	for range 400 {
		blocks = append(blocks, m)
	}
	writeCache(t, path, src, blocks)
	b, err := rowcache.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for range 10 { // warm the pool
		blk, err := b.Next()
		if err != nil {
			t.Fatal(err)
		}
		b.Release(blk)
	}
	allocs := testing.AllocsPerRun(200, func() {
		blk, err := b.Next()
		if err != nil {
			t.Fatal(err)
		}
		b.Release(blk)
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per block", allocs)
	}
}

// BenchmarkCacheWrite times encoding and writing MNIST-2 train (or, without
// the data, generated MNIST-like rows) into a cache, in 4096-row blocks as
// a first training pass does. ns/nnz is the figure to watch: it is the cost
// the first pass of a --cache run adds per nonzero.
func BenchmarkCacheWrite(b *testing.B) {
	src := mnist2Train
	if _, err := os.Stat(src); err != nil {
		src = writeTempFile(b, "synth.libsvm.zst", zstdBytes(genMNIST(testRand(), benchBytes)))
	}
	m, err := reader.Load(src)
	if err != nil {
		b.Fatal(err)
	}
	blocks := blocksOf(m, reader.DefaultBatchRows)
	path := filepath.Join(b.TempDir(), "b.cpmcache")
	b.ResetTimer()
	for b.Loop() {
		writeCache(b, path, src, blocks)
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(m.NNZ()), "ns/nnz")
}

// A caller that keeps StreamBlocks-1 blocks (as a shared pass does) while
// the writer also holds blocks still gets every row, and the cache is
// whole: Next waits for the writer instead of failing with ErrBlocksHeld.
func TestTeeCacheWindow(t *testing.T) {
	dir := t.TempDir()
	want := cacheRows(5000, 9)
	src := filepath.Join(dir, "d.libsvm")
	writeLIBSVM(t, src, want)
	path := filepath.Join(dir, "d.cpmcache")
	s, err := libsvm.NewStream(src, 100)
	if err != nil {
		t.Fatal(err)
	}
	w, err := rowcache.Create(path, src)
	if err != nil {
		t.Fatal(err)
	}
	tee := rowcache.Tee(s, w)
	defer tee.Close()
	got := &sparsevec.CSR{}
	var window []*sparsevec.CSR
	for {
		b, err := tee.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		core.AppendRows(got, b, 0, b.Rows())
		window = append(window, b)
		if len(window) == reader.StreamBlocks-1 {
			tee.Release(window[0])
			window = window[1:]
		}
	}
	assertSameRows(t, got, want)
	cached, err := reader.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	assertSameRows(t, cached, want)
}

// A failing cache write ends the pass with the writer's error and leaves
// no cache behind.
func TestTeeCacheWriteError(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "d.libsvm")
	writeLIBSVM(t, src, cacheRows(3000, 3))
	path := filepath.Join(dir, "d.cpmcache")
	s, err := libsvm.NewStream(src, 100)
	if err != nil {
		t.Fatal(err)
	}
	w, err := rowcache.Create(path, src)
	if err != nil {
		t.Fatal(err)
	}
	rowcache.FailWrites(w, errors.New("disk full"))
	tee := rowcache.Tee(s, w)
	defer tee.Close()
	for {
		b, err := tee.Next()
		if err == nil {
			tee.Release(b)
			continue
		}
		if err == io.EOF || !strings.Contains(err.Error(), "writing the cache: disk full") {
			t.Fatalf("pass ended with %v, want the cache's write error", err)
		}
		break
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a cache appeared after a failed write: %v", err)
	}
}

// TeeOptional: a failing cache write drops the cache but not the pass,
// which hands out every row; a complete cache appears only when the
// caller closes the writer after the end.
func TestTeeOptional(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "d.libsvm")
	want := cacheRows(3000, 3)
	writeLIBSVM(t, src, want)
	path := filepath.Join(dir, "d.cpmcache")
	for _, fail := range []bool{true, false} {
		s, err := libsvm.NewStream(src, 100)
		if err != nil {
			t.Fatal(err)
		}
		w, err := rowcache.Create(path, src)
		if err != nil {
			t.Fatal(err)
		}
		if fail {
			rowcache.FailWrites(w, errors.New("disk full"))
		}
		tee, werr := rowcache.TeeOptional(s, w)
		got := &sparsevec.CSR{}
		for {
			b, err := tee.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("fail %v: %v", fail, err)
			}
			core.AppendRows(got, b, 0, b.Rows())
			tee.Release(b)
		}
		tee.Close()
		assertSameRows(t, got, want)
		if err := werr(); (err != nil) != fail {
			t.Fatalf("fail %v: the tee reports %v", fail, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("fail %v: a cache appeared before the writer was closed: %v", fail, err)
		}
		if fail {
			continue
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		cached, err := reader.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		assertSameRows(t, cached, want)
	}
}

// BenchmarkCacheRead times one pass over a cache of MNIST-2 train (or,
// without the data, generated MNIST-like rows) through Open, as every
// training pass after the first reads it: reading, checking and decoding
// its blocks. ns/nnz is the figure to watch.
func BenchmarkCacheRead(b *testing.B) {
	src := mnist2Train
	if _, err := os.Stat(src); err != nil {
		src = writeTempFile(b, "synth.libsvm.zst", zstdBytes(genMNIST(testRand(), benchBytes)))
	}
	m, err := reader.Load(src)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "b.cpmcache")
	writeCache(b, path, src, blocksOf(m, reader.DefaultBatchRows))
	cpu0 := cputime.Process()
	b.ResetTimer()
	for b.Loop() {
		r, err := rowcache.Open(path, 0)
		if err != nil {
			b.Fatal(err)
		}
		for {
			blk, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			r.Release(blk)
		}
		r.Close()
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(m.NNZ()), "ns/nnz")
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N)/float64(m.NNZ()), "cpu-ns/nnz")
}
