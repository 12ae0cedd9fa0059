package rowcache_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// cacheFile writes blocks as a cache of a one-line source and returns its
// bytes.
func cacheFile(t testing.TB, blocks []*sparsevec.CSR) []byte {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.libsvm")
	if err := os.WriteFile(src, []byte("1 1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c.cpmcache")
	writeCache(t, path, src, blocks)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixCacheCRCs recomputes every checksum of a cache file's bytes that it
// can find (header, blocks, trailer), so that fuzzed changes reach the
// checks behind them.
func fixCacheCRCs(b []byte) []byte {
	le := binary.LittleEndian
	if len(b) < 44 {
		return b
	}
	n := int(le.Uint32(b[40:]))
	if n > len(b) || 44+n+1+4 > len(b) {
		return b
	}
	le.PutUint32(b[45+n:], crc32.Checksum(b[:45+n], castagnoli))
	off := 44 + n + 1 + 4
	for off+4 <= len(b) {
		if le.Uint32(b[off:]) == 0 {
			if off+32 <= len(b) {
				le.PutUint32(b[off+28:], crc32.Checksum(b[off:off+28], castagnoli))
			}
			return b
		}
		if off+24 > len(b) {
			return b
		}
		plen := int(le.Uint32(b[off+16:]))
		if plen > len(b)-off-24 {
			return b
		}
		h := b[off : off+24]
		le.PutUint32(h[20:], crc32.Update(crc32.Checksum(h[:20], castagnoli), castagnoli, b[off+24:off+24+plen]))
		off += 24 + plen
	}
	return b
}

// fuzzCacheMaxIndex is the WithMaxIndex of FuzzCache, below some of the
// seeds' indices.
const fuzzCacheMaxIndex = 1 << 31

// FuzzCache reads arbitrary bytes as a row cache, as they are and with
// their checksums recomputed (so that mutations reach the checks behind
// them). Reading must end in rows or in a *CacheError wrapping ErrCorrupt
// or a *RowError wrapping ErrIndexRange, never a panic. Rows read without
// error must be valid (indices ascending within 1..fuzzCacheMaxIndex,
// finite numbers, each block's Dim its largest index + 1), and must read
// back the same after being written to a new cache.
func FuzzCache(f *testing.F) {
	for _, s := range fuzzCacheSeeds(f) {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCache(t, data)
		checkCache(t, fixCacheCRCs(bytes.Clone(data)))
	})
}

func checkCache(t *testing.T, data []byte) {
	t.Helper()
	path := writeTempFile(t, "x.cpmcache", data)
	b, err := rowcache.Open(path, 0, reader.WithMaxIndex(fuzzCacheMaxIndex))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []*sparsevec.CSR
	for {
		blk, err2 := b.Next()
		if err2 == io.EOF {
			break
		}
		if err2 != nil {
			err = err2
			break
		}
		if want := dimOf(blk); blk.Dim != want {
			t.Fatalf("block Dim %d, want %d", blk.Dim, want)
		}
		c := &sparsevec.CSR{}
		core.AppendRows(c, blk, 0, blk.Rows())
		blocks = append(blocks, c)
		b.Release(blk)
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var ce *rowcache.Error
		var re *reader.RowError
		switch {
		case errors.As(err, &ce) && ce.Path == path && errors.Is(err, reader.ErrCorrupt):
		case errors.As(err, &re) && re.Path == path && re.Row >= 1 && errors.Is(err, reader.ErrIndexRange):
		default:
			t.Fatalf("%v: neither a *CacheError wrapping ErrCorrupt nor a *RowError wrapping ErrIndexRange", err)
		}
		return
	}
	all := &sparsevec.CSR{Ptr: []int{0}}
	for _, blk := range blocks {
		if _, _, _, err := core.CheckRows(blk.Labels, blk.Ptr, blk.Idx, blk.Val, fuzzCacheMaxIndex); err != nil {
			t.Fatalf("rows read without error are invalid: %v", err)
		}
		all.AppendCSR(blk)
	}
	again := cacheFile(t, blocks)
	back, _, err := readAll(t, mustOpenCache(t, writeTempFile(t, "y.cpmcache", again)))
	if err != nil {
		t.Fatalf("reading the rewritten cache: %v", err)
	}
	if !equalCSR(back, all) {
		t.Fatalf("rewritten cache reads differently")
	}
}

func mustOpenCache(t *testing.T, path string) reader.BlockReader {
	t.Helper()
	b, err := rowcache.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fuzzCacheSeeds are valid caches (dictionary and raw values, one and many
// blocks, empty rows, index 4294967295 beyond FuzzCache's limit, no rows)
// and damaged ones (truncated, a flipped byte, block headers that lie
// about sizes with their checksums fixed).
func fuzzCacheSeeds(t testing.TB) []fuzzSeed {
	small := &sparsevec.CSR{}
	for r := range 6 {
		small.Append(float32(r%2*2-1), sparsevec.Vector{Idx: []uint32{1, uint32(3 + r)}, Val: []float32{0.5, 1}})
	}
	good := cacheFile(t, []*sparsevec.CSR{small})
	mixed := cacheRows(30, 9)
	withQid := &sparsevec.CSR{}
	for r := range 6 {
		withQid.AppendQid(float32(r%2), int64(r/2*3-2), sparsevec.Vector{Idx: []uint32{uint32(2 + r)}, Val: []float32{1}})
	}
	seeds := []fuzzSeed{
		{"small", good},
		{"qid", cacheFile(t, []*sparsevec.CSR{withQid})},
		{"mixed-blocks", cacheFile(t, blocksOf(mixed, 7))},
		{"empty", cacheFile(t, nil)},
		{"truncated", good[:len(good)/2]},
		{"no-trailer", good[:len(good)-32]},
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x10
	seeds = append(seeds, fuzzSeed{"flipped", flipped})
	le := binary.LittleEndian
	h := 44 + int(le.Uint32(good[40:])) + 1 + 4
	lie := func(name string, at int, v uint32) {
		d := bytes.Clone(good)
		le.PutUint32(d[h+at:], v)
		seeds = append(seeds, fuzzSeed{name, fixCacheCRCs(d)})
	}
	lie("lying-rows", 0, 1<<24)
	lie("lying-nnz", 4, 1<<28)
	lie("lying-max-index", 8, 1<<31)
	lie("lying-dict", 12, 300)
	lie("lying-payload", 16, 1<<30)
	return seeds
}

// fuzzSeed is one named input of a seed corpus.
type fuzzSeed struct {
	name string
	data []byte
}

// TestWriteFuzzCorpus writes the seed corpus of FuzzCache to testdata/fuzz
// when CPM_WRITE_FUZZ_CORPUS=1; see testdata/fuzz/README.md.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("CPM_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set CPM_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzCache")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range fuzzCacheSeeds(t) {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(s.data)))
		if err := os.WriteFile(filepath.Join(dir, s.name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// castagnoli is the CRC-32C table of the cache's checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)
