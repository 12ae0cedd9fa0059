package rowcache_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// cacheBlockHeader returns the offset of the first block header of the
// cache file data.
func cacheBlockHeader(t *testing.T, data []byte) int {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[40:]))
	return 44 + n + 1 + 4
}

// A cache's rows obey WithMaxIndex like every other format's, whatever
// limit the cache was built with: the first row with a larger index is a
// *RowError naming it.
func TestCacheMaxIndex(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	m := &sparsevec.CSR{}
	for r := range 10 {
		x := sparsevec.Vector{Idx: []uint32{1, uint32(10 + r)}, Val: []float32{1, 2}}
		m.Append(1, x)
	}
	path := filepath.Join(dir, "c.cpmcache")
	writeCache(t, path, src, blocksOf(m, 4))
	for _, open := range []struct {
		name string
		f    func(...reader.Option) (reader.BlockReader, error)
	}{
		{"OpenCache", func(o ...reader.Option) (reader.BlockReader, error) { return rowcache.Open(path, 0, o...) }},
		{"OpenBlocks", func(o ...reader.Option) (reader.BlockReader, error) { return reader.OpenBlocks(path, 0, o...) }},
	} {
		b, err := open.f(reader.WithMaxIndex(19))
		if err != nil {
			t.Fatal(err)
		}
		if got, _, err := readAll(t, b); err != nil || !equalCSR(got, withDim(m)) {
			t.Fatalf("%s: max index 19: %v", open.name, err)
		}
		b, err = open.f(reader.WithMaxIndex(15))
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := readAll(t, b)
		var re *reader.RowError
		if !errors.Is(err, reader.ErrIndexRange) || !errors.As(err, &re) || re.Row != 7 || re.Path != path ||
			!strings.Contains(err.Error(), "index 16 above the maximum 15") {
			t.Fatalf("%s: max index 15: %v, want a RowError at row 7", open.name, err)
		}
		if got.Rows() != 4 {
			t.Errorf("%s: %d rows before the error, want the first block's 4", open.name, got.Rows())
		}
	}
}

// A block header that lies about sizes is refused before anything is
// allocated for it, even when its checksum is right: the reader never
// reserves more than the file could hold.
func TestCacheLyingBlockHeader(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir)
	m := &sparsevec.CSR{}
	for r := range 20 {
		m.Append(float32(r%2), sparsevec.Vector{Idx: []uint32{1, uint32(5 + 7*r)}, Val: []float32{0.5, float32(r)}})
	}
	path := filepath.Join(dir, "c.cpmcache")
	writeCache(t, path, src, []*sparsevec.CSR{m})
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := cacheBlockHeader(t, good)
	le := binary.LittleEndian
	plen := int(le.Uint32(good[h+16:]))
	// fix recomputes the block checksum of d after a change to its header.
	fix := func(d []byte) []byte {
		p := d[h+24 : min(len(d), h+24+int(le.Uint32(d[h+16:])))]
		le.PutUint32(d[h+20:], crc32.Update(crc32.Checksum(d[h:h+20], castagnoli), castagnoli, p))
		return d
	}
	for _, tc := range []struct {
		name string
		edit func(d []byte) []byte
		msg  string
	}{
		{"huge payload", func(d []byte) []byte {
			le.PutUint32(d[h:], rowcache.MaxBlockRows)
			le.PutUint32(d[h+4:], rowcache.MaxBlockNNZ)
			le.PutUint32(d[h+16:], 9*rowcache.MaxBlockRows+9*rowcache.MaxBlockNNZ)
			return d
		}, "runs past the end of the file"},
		{"huge rows", func(d []byte) []byte {
			le.PutUint32(d[h:], rowcache.MaxBlockRows)
			le.PutUint32(d[h+4:], rowcache.MaxBlockNNZ)
			return fix(d)
		}, "too short for 16777216 rows"},
		{"largest index below the rows'", func(d []byte) []byte {
			le.PutUint32(d[h+8:], le.Uint32(d[h+8:])-1)
			return fix(d)
		}, "index gap of 0 or an index above the block's maximum"},
		{"largest index above the rows'", func(d []byte) []byte {
			le.PutUint32(d[h+8:], 1<<31)
			return fix(d)
		}, "claims largest index 2147483648"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.edit(append([]byte(nil), good...))
			if le.Uint32(d[h+16:]) == uint32(plen) && tc.name == "huge payload" {
				t.Fatal("edit did not change the payload length")
			}
			bad := writeTempFile(t, "bad.cpmcache", d)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b, err := rowcache.Open(bad, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = readAll(t, b)
			runtime.ReadMemStats(&after)
			var ce *rowcache.Error
			if !errors.Is(err, reader.ErrCorrupt) || !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want a CacheError saying %q", err, tc.msg)
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > 32<<20 {
				t.Errorf("reading allocated %d MiB", a>>20)
			}
		})
	}
}
