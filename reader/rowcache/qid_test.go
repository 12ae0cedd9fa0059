package rowcache_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// Query ids go through the cache: blocks with them (dictionary-coded and
// raw values, negative and repeated ids) and blocks without them in one
// cache read back as written.
func TestCacheQid(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	withQid := &sparsevec.CSR{}
	for r := range 40 {
		withQid.AppendQid(float32(r%2), int64(r/3-4)<<40, sparsevec.Vector{Idx: []uint32{1, uint32(2 + r)}, Val: []float32{0.5, float32(r) / 7}})
	}
	few := &sparsevec.CSR{}
	for r := range 5 {
		few.AppendQid(1, 9, sparsevec.Vector{Idx: []uint32{uint32(r + 1)}, Val: []float32{1}})
	}
	for _, blocks := range [][]*sparsevec.CSR{{withQid}, {few, withQid}, blocksOf(withQid, 7)} {
		path := filepath.Join(dir, "q.cpmcache")
		writeCache(t, path, src, blocks)
		got, _, err := readAll(t, mustOpen(t, path))
		if err != nil {
			t.Fatal(err)
		}
		want := &sparsevec.CSR{}
		for _, b := range blocks {
			want.AppendCSR(b)
		}
		if !slices.Equal(got.Qid, want.Qid) || !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) {
			t.Errorf("query ids %v\nwant %v", got.Qid, want.Qid)
		}
	}
	// A block of a cache without query ids, read into a pool block that
	// held some, has none.
	path := filepath.Join(dir, "mixed.cpmcache")
	plain := cacheRows(30, 3)
	writeCache(t, path, src, []*sparsevec.CSR{withQid, plain, withQid, plain, plain, plain, plain})
	br := mustOpen(t, path)
	defer br.Close()
	for i := range 7 {
		b, err := br.Next()
		if err != nil {
			t.Fatal(err)
		}
		if want := i == 0 || i == 2; b.HasQid() != want || (want && len(b.Qid) != b.Rows()) {
			t.Errorf("block %d: %d query ids for %d rows", i, len(b.Qid), b.Rows())
		}
		br.Release(b)
	}
}

func mustOpen(t *testing.T, path string) reader.BlockReader {
	t.Helper()
	b, err := rowcache.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A cache records WithZeroBased: asked for another, it is stale.
func TestCacheZeroBasedStale(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	path := filepath.Join(dir, "c.cpmcache")
	w, err := rowcache.Create(path, src, reader.WithZeroBased(reader.ZeroBasedYes))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(cacheRows(3, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rowcache.Check(path, src, reader.WithZeroBased(reader.ZeroBasedYes)); err != nil {
		t.Errorf("same zero-based: %v", err)
	}
	for _, z := range []reader.ZeroBased{reader.ZeroBasedAuto, reader.ZeroBasedNo} {
		err := rowcache.Check(path, src, reader.WithZeroBased(z))
		if !errors.Is(err, rowcache.ErrStale) || !strings.Contains(err.Error(), "zero-based yes, asked for "+z.String()) {
			t.Errorf("zero-based %s: %v, want stale", z, err)
		}
	}
}

// A cache of format version 1 is stale for Check and an error wrapping
// ErrCorrupt for Open, never misread.
func TestCacheVersion1(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	path := filepath.Join(dir, "c.cpmcache")
	writeCache(t, path, src, []*sparsevec.CSR{cacheRows(3, 1)})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	le.PutUint32(data[8:], 1)
	n := int(le.Uint32(data[40:]))
	le.PutUint32(data[45+n:], crc32.Checksum(data[:45+n], castagnoli))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err = rowcache.Check(path, src)
	var ce *rowcache.Error
	if !errors.Is(err, rowcache.ErrStale) || !errors.Is(err, reader.ErrCorrupt) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("version 1: Check %v, want stale", err)
	}
	_, _, err = readAll(t, mustOpen(t, path))
	if !errors.Is(err, reader.ErrCorrupt) || !errors.Is(err, reader.ErrBadInput) {
		t.Errorf("version 1: Open %v, want ErrCorrupt", err)
	}
}
