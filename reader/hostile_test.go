package reader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"

	"github.com/polyhedral/cpm/sparsevec"
)

// The limit errors say which limit was exceeded, so that a command can say
// which flag raises it.
func TestLimitErrorsNameTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		opts       []Option
		want       error
		msg        string
	}{
		{"index", "1 1:1\n1 785:1\n", []Option{WithMaxIndex(784)}, ErrIndexRange, `f:2:3: feature index out of range: above the maximum 784 (near "785:1")`},
		{"index overflow", "1 4294967296:1\n", nil, ErrIndexRange, `f:1:3: feature index out of range: above the maximum 4294967295 (near "4294967296:1")`},
		{"line", "1 1:1\n1 1:1 2:1 3:1 4:1 5:1\n", []Option{WithMaxLineBytes(16)}, ErrLineTooLong, `f:2:17: line too long: more than 16 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rd := range allReaders {
				_, err := rd.read([]byte(tc.text), "f", tc.opts...)
				if !errors.Is(err, tc.want) || err.Error() != tc.msg {
					t.Errorf("%s: %v, want %s", rd.name, err, tc.msg)
				}
			}
		})
	}
}

// cacheBlockHeader returns the offset of the first block header of the
// cache file data.
func cacheBlockHeader(t *testing.T, data []byte) int {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[40:]))
	return 44 + n + 4
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
		f    func(...Option) (BlockReader, error)
	}{
		{"OpenCache", func(o ...Option) (BlockReader, error) { return OpenCache(path, 0, o...) }},
		{"OpenBlocks", func(o ...Option) (BlockReader, error) { return OpenBlocks(path, 0, o...) }},
	} {
		b, err := open.f(WithMaxIndex(19))
		if err != nil {
			t.Fatal(err)
		}
		if got, _, err := readAll(t, b); err != nil || !equalCSR(got, withDim(m)) {
			t.Fatalf("%s: max index 19: %v", open.name, err)
		}
		b, err = open.f(WithMaxIndex(15))
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := readAll(t, b)
		var re *RowError
		if !errors.Is(err, ErrIndexRange) || !errors.As(err, &re) || re.Row != 7 || re.Path != path ||
			!strings.Contains(err.Error(), "index 16 above the maximum 15") {
			t.Fatalf("%s: max index 15: %v, want a RowError at row 7", open.name, err)
		}
		if got.Rows() != 4 {
			t.Errorf("%s: %d rows before the error, want the first block's 4", open.name, got.Rows())
		}
	}
}

func withDim(m *sparsevec.CSR) *sparsevec.CSR {
	c := *m
	c.Dim = 0
	for r := range c.Rows() {
		if x := c.Row(r); len(x.Idx) > 0 {
			c.Dim = max(c.Dim, int(x.MaxIndex())+1)
		}
	}
	return &c
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
			le.PutUint32(d[h:], maxCacheBlockRows)
			le.PutUint32(d[h+4:], maxCacheBlockNNZ)
			le.PutUint32(d[h+16:], 9*maxCacheBlockRows+9*maxCacheBlockNNZ)
			return d
		}, "runs past the end of the file"},
		{"huge rows", func(d []byte) []byte {
			le.PutUint32(d[h:], maxCacheBlockRows)
			le.PutUint32(d[h+4:], maxCacheBlockNNZ)
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
			b, err := OpenCache(bad, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = readAll(t, b)
			runtime.ReadMemStats(&after)
			var ce *CacheError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want a CacheError saying %q", err, tc.msg)
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > 32<<20 {
				t.Errorf("reading allocated %d MiB", a>>20)
			}
		})
	}
}

// zstdFrame returns a zstd frame whose header declares a window of
// 2^windowLog bytes, holding content in one raw block.
func zstdFrame(windowLog int, content []byte) []byte {
	b := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, byte(windowLog-10) << 3}
	h := 1 | len(content)<<3 // last block, raw
	return append(append(b, byte(h), byte(h>>8), byte(h>>16)), content...)
}

// A zstd frame may declare a window up to MaxZstdWindow, the zstd tool's
// own limit; a larger one is refused, saying why, before the decoder holds
// it.
func TestZstdWindowLimit(t *testing.T) {
	text := []byte("1 1:1\n-1 2:1\n")
	ok := writeTempFile(t, "ok.zst", zstdFrame(27, text))
	if m, err := Load(ok); err != nil || m.Rows() != 2 {
		t.Fatalf("2^27 window: %v, %v", m, err)
	}
	big := writeTempFile(t, "big.zst", zstdFrame(28, text))
	_, err := Load(big)
	var pe *ParseError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &pe) || pe.Path != big || !strings.Contains(err.Error(), "at most 128 MiB") {
		t.Fatalf("2^28 window: %v, want ErrCorrupt saying the limit", err)
	}
}

// readCorpusFile returns the input of a "go test fuzz v1" file holding one
// []byte.
func readCorpusFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lit, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "go test fuzz v1\n[]byte(")
	if !ok || !strings.HasSuffix(lit, ")") {
		t.Fatalf("%s: not a go test fuzz v1 []byte", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}

// A Parquet data page of a column with definition levels (the list leaves)
// whose dictionary indices reach past the dictionary: parquet/file's
// dictionary decoder sizes a slice by the largest index, so this 1.7 KB
// file (found by FuzzColumnar) made it allocate and clear gigabytes. The
// file also has a broken page header in a later column, which checkPages
// now refuses first, when the row group is opened; the dictionary index
// check itself is TestCheckedPagesDictionaryIndices.
func TestParquetDictionaryIndexBomb(t *testing.T) {
	defer func(n int64) { allocFloor = n }(allocFloor)
	allocFloor = 16 << 20
	checkBomb(t, "parquet-dict-index-2e31", "page header at byte 362")
}

// checkBomb reads the FuzzColumnar corpus file name and checks that it is
// refused with ErrCorrupt and an error containing want, having allocated
// at most 32 MiB.
func checkBomb(t *testing.T, name, want string) {
	t.Helper()
	data := readCorpusFile(t, filepath.Join("testdata", "fuzz", "FuzzColumnar", name))
	checkBombFile(t, writeTempFile(t, "bomb.parquet", data), want)
}

// checkBombFile checks that reading path fails with ErrCorrupt saying
// want, having allocated at most 32 MiB.
func checkBombFile(t *testing.T, path, want string) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := readAllBlocks(t, path)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want ErrCorrupt saying %q", err, want)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 32<<20 {
		t.Errorf("reading allocated %d MiB", a>>20)
	}
}

// A compressed Arrow IPC buffer whose zstd frame declares a window or a
// content size far above the buffer's uncompressed length is refused
// before arrow's streaming zstd decoder allocates that window: measured
// without the check, a 500 MB content size made it allocate 477 MiB and a
// 2^28-byte window 256 MiB.
func TestArrowZstdWindowBomb(t *testing.T) {
	defer func(n int64) { allocFloor = n }(allocFloor)
	allocFloor = 16 << 20
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	m := sampleCSR(testRand(), 60)
	for _, ext := range []string{".arrow", ".arrows"} {
		src := filepath.Join(t.TempDir(), "src"+ext)
		writeAll(t, src, m, 60, WithCompression("zstd"), WithBatchRows(16))
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		at := bytes.Index(data, magic)
		if at < 8 {
			t.Fatalf("%s: no zstd frame", ext)
		}
		uncomp := binary.LittleEndian.Uint64(data[at-8:])
		for _, tc := range []struct {
			name string
			hdr  []byte // frame header replacing the first buffer's
			want string
		}{
			{"window", append(magic, 0x00, 18<<3), fmt.Sprintf("window of 268435456 bytes for %d bytes of data", uncomp)},
			{"content size", binary.LittleEndian.AppendUint64(append(magic, 0xe0), 500e6), fmt.Sprintf("content size 500000000, over the %d bytes declared", uncomp)},
		} {
			t.Run(ext+"/"+tc.name, func(t *testing.T) {
				bad := bytes.Clone(data)
				copy(bad[at:], tc.hdr)
				checkBombFile(t, writeTempFile(t, "bomb"+ext, bad), fmt.Sprintf("record batch 1: corrupt input: buffer 1: zstd frame at byte %d: %s", at, tc.want))
			})
		}
	}
}

// TestCheckIPCBody checks the buffer list of a real record batch, altered:
// a buffer outside the body and an uncompressed length over the limit are
// refused; a buffer stored uncompressed (length -1) is not looked into.
func TestCheckIPCBody(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.arrow")
	writeAll(t, path, sampleCSR(testRand(), 40), 40, WithCompression("zstd"), WithBatchRows(16))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, records, err := checkFooter(f, int64(len(data)))
	if err != nil || len(records) != 3 {
		t.Fatalf("checkFooter: %d record batches, %v", len(records), err)
	}
	blk := records[0]
	meta := fbuf(data[blk.off+8 : blk.off+blk.meta]) // after the continuation marker and length
	root, _ := meta.root()
	p, _ := meta.field(root, 2)
	rb, _ := meta.deref(p)
	start, n, err := meta.vector(rb, 2, 16)
	if err != nil || n < 2 {
		t.Fatalf("buffers: %d, %v", n, err)
	}
	buf1 := blk.off + 8 + start + 16                       // buffer 1's {offset, length} in the file
	rel1 := int64(binary.LittleEndian.Uint64(data[buf1:])) // in the body
	off1 := blk.off + blk.meta + rel1
	const limit = 1 << 20
	for _, tc := range []struct {
		name  string
		at    int64 // where to write
		value int64
		want  string
	}{
		{"as written", 0, 0, ""},
		{"buffer past the body", buf1 + 8, blk.body - rel1 + 1, fmt.Sprintf("buffer 1 at byte %d, %d bytes long, outside the %d-byte message body", rel1, blk.body-rel1+1, blk.body)},
		{"uncompressed length over the limit", off1, limit + 1, "declares 1048577 bytes uncompressed, over the 1048576-byte limit"},
		{"stored uncompressed", off1, -1, ""},
	} {
		b := bytes.Clone(data)
		if tc.at > 0 {
			binary.LittleEndian.PutUint64(b[tc.at:], uint64(tc.value))
		}
		var w windowReader
		if err := checkFileMessage(bytes.NewReader(b), blk, &w, limit); !errSays(err, tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A Parquet page header claiming 1.9 GB of compressed bytes in a 3.4 KB
// file is refused by checkPages before the library's page reader grows a
// buffer to that size outside any allocator: this file (found by a
// 10-minute FuzzColumnar run) made it clear 1.9 GB and take 30 s.
func TestParquetPageSizeBomb(t *testing.T) {
	checkBomb(t, "parquet-page-size-1.9e9", "1876934494 bytes of body, but the column chunk ends")
}

// A page header cut by the end of its column chunk is refused by
// checkPages: the library's buffered reader then hands its page reader
// stale buffer bytes instead of a short view, which it parsed as headers
// of unknown type in a loop, allocating each time, so this 2.9 KB file
// (found by an 11-minute FuzzColumnar run) made it hold over 4 GB and die
// out of memory.
func TestParquetStaleHeaderBomb(t *testing.T) {
	defer func(n int64) { allocFloor = n }(allocFloor)
	allocFloor = 16 << 20
	checkBomb(t, "parquet-stale-header-loop", "page header at byte 1132: page header runs past")
}

// zz encodes v as a Thrift compact i32/i16: a zigzag varint.
func zz(v int64) []byte { return binary.AppendUvarint(nil, uint64(v<<1^v>>63)) }

// field encodes a Thrift compact field header with an id delta, then val.
func field(delta, typ byte, val []byte) []byte { return append([]byte{delta<<4 | typ}, val...) }

// testPageHeader is a page header of type typ with the sizes given and,
// for data pages, a nested header with num_values (and is_compressed
// false for v2 when plain).
func testPageHeader(typ, uncomp, comp, values int64, plain bool) []byte {
	h := append(field(1, tcI32, zz(typ)), field(1, tcI32, zz(uncomp))...)
	h = append(h, field(1, tcI32, zz(comp))...)
	switch typ {
	case 0:
		h = append(h, field(2, tcStruct, nil)...)
		h = append(append(h, field(1, tcI32, zz(values))...), 0)
	case 3:
		h = append(h, field(5, tcStruct, nil)...)
		h = append(h, field(1, tcI32, zz(values))...)
		if plain {
			h = append(h, field(6, tcFalse, nil)...)
		}
		h = append(h, 0)
	}
	return append(h, 0)
}

// errSays reports whether err is nil when want is "", or contains want.
func errSays(err error, want string) bool {
	if err == nil {
		return want == ""
	}
	return want != "" && strings.Contains(err.Error(), want)
}

// checkPages walks a column chunk's pages as the library will and refuses
// what would make the library allocate without bound.
func TestCheckPages(t *testing.T) {
	page := func(typ, uncomp, comp, values int64, plain bool) []byte {
		body := comp
		if typ == 3 && plain {
			body = uncomp
		}
		if typ == 1 {
			body = 0
		}
		return append(testPageHeader(typ, uncomp, comp, values, plain), make([]byte, body)...)
	}
	cat := func(pages ...[]byte) []byte {
		var b []byte
		for _, p := range pages {
			b = append(b, p...)
		}
		return b
	}
	const limit = 1000
	for _, tc := range []struct {
		name   string
		chunk  []byte
		values int64
		want   string // "" for no error
	}{
		{"dictionary and data pages", cat(page(2, 40, 30, 0, false), page(0, 20, 10, 3, false), page(3, 20, 10, 2, false)), 5, ""},
		{"v2 page stored plain", cat(page(3, 30, 10, 4, true)), 4, ""},
		{"v2 plain body past the end", cat(testPageHeader(3, 30, 10, 4, true), make([]byte, 10)), 4, "30 bytes of body"},
		{"body past the end", cat(testPageHeader(0, 20, 50, 3, false), make([]byte, 10)), 3, "50 bytes of body"},
		{"too few values", cat(page(0, 20, 10, 3, false)), 5, "after 3 of its 5 values"},
		{"v2 count of a v1 page", cat(append(testPageHeader(0, 20, 10, 3, false)[:len(testPageHeader(0, 20, 10, 3, false))-1], append(field(3, tcStruct, nil), append(field(1, tcI32, zz(9)), 0, 0)...)...), make([]byte, 10)), 9, "after 3 of its 9 values"},
		{"unknown pages under the limit", cat(page(1, 400, 0, 0, false), page(1, 400, 0, 0, false), page(0, 100, 10, 1, false)), 1, ""},
		{"unknown pages held at once", cat(page(1, 400, 0, 0, false), page(1, 400, 0, 0, false), page(0, 300, 10, 1, false)), 1, "held at once"},
		{"one page over the limit", cat(page(0, 1001, 10, 1, false)), 1, "exceed the 1000-byte limit"},
		{"cut header", cat(page(0, 20, 10, 1, false), testPageHeader(0, 20, 10, 1, false)[:5]), 2, "runs past"},
		{"garbage header", cat(page(0, 20, 10, 1, false), []byte{0x1f, 0x00}), 2, "page header at byte 21: unknown compact type"},
	} {
		r := strings.NewReader(string(tc.chunk))
		err := checkPages(r, 0, int64(len(tc.chunk)), tc.values, compress.Codecs.Uncompressed, limit)
		if !errSays(err, tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// checkPages reads the size fields of snappy and zstd page bodies: the
// codecs allocate what those claim before they decode.
func TestCheckPageBodies(t *testing.T) {
	// page is a version 1 data page of 1 value holding body, which
	// decompresses to uncomp bytes.
	page := func(uncomp int, body []byte) []byte {
		return append(testPageHeader(0, int64(uncomp), int64(len(body)), 1, false), body...)
	}
	plain := bytes.Repeat([]byte("cpm "), 25) // 100 bytes
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	// frame is a zstd frame: magic, a frame header descriptor without a
	// content size (single segment off, window 1 MiB), and blocks.
	frame := func(blocks ...[]byte) []byte {
		f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50}
		for _, b := range blocks {
			f = append(f, b...)
		}
		return f
	}
	rle := func(n int, last bool) []byte { // an RLE block of n bytes 'x'
		h := uint32(n)<<3 | 1<<1
		if last {
			h |= 1
		}
		return []byte{byte(h), byte(h >> 8), byte(h >> 16), 'x'}
	}
	manyRLE := func(k int) []byte {
		var bs [][]byte
		for i := range k {
			bs = append(bs, rle(100_000, i == k-1))
		}
		return frame(bs...)
	}
	const limit = 1 << 20
	for _, tc := range []struct {
		name  string
		codec compress.Compression
		chunk []byte
		want  string
	}{
		{"snappy", compress.Codecs.Snappy, page(100, snappy.Encode(nil, plain)), ""},
		{"snappy claiming more", compress.Codecs.Snappy, page(100, append(binary.AppendUvarint(nil, 5000), 0, 0)), "snappy data decode to 5000 bytes"},
		{"zstd", compress.Codecs.Zstd, page(100, enc.EncodeAll(plain, nil)), ""},
		{"zstd content size over the page's", compress.Codecs.Zstd, page(100, []byte{0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0, 0, 0, 0x40, 1, 0, 0}), "content size 1073741824"},
		{"zstd RLE blocks under the limit", compress.Codecs.Zstd, page(100, manyRLE(10)), ""},
		{"zstd RLE blocks over the limit", compress.Codecs.Zstd, page(100, manyRLE(11)), "decode to over 1048576 bytes"},
		{"zstd skippable frame", compress.Codecs.Zstd, page(100, append([]byte{0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 9, 9}, enc.EncodeAll(plain, nil)...)), ""},
		{"gzip is not read", compress.Codecs.Gzip, page(100, []byte{1, 2, 3}), ""},
	} {
		r := bytes.NewReader(tc.chunk)
		err := checkPages(r, 0, int64(len(tc.chunk)), 1, tc.codec, limit)
		if !errSays(err, tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// chunkStream finds the bytes the library reads for a column chunk: the
// chunk, plus up to 100 bytes for old parquet-mr files; a chunk outside the
// file is an error.
func TestChunkStream(t *testing.T) {
	for _, tc := range []struct {
		size, off, n int64
		old          bool
		start, end   int64
		ok           bool
	}{
		{1000, 4, 200, false, 4, 204, true},
		{1000, 4, 200, true, 4, 304, true},
		{1000, 850, 100, true, 850, 1000, true},
		{1000, 4, 997, false, 0, 0, false},
		{1000, -1, 10, false, 0, 0, false},
		{1000, 4, 1 << 62, false, 0, 0, false},
	} {
		start, end, err := chunkStream(tc.size, tc.off, tc.n, tc.old)
		if (err == nil) != tc.ok || tc.ok && (start != tc.start || end != tc.end) {
			t.Errorf("chunkStream(%d, %d, %d, %v) = %d, %d, %v", tc.size, tc.off, tc.n, tc.old, start, end, err)
		}
	}
}

// parsePageHeader reads Thrift compact PageHeaders as the library does:
// the type and both sizes are required, a zero type nibble ends a struct
// whatever the field delta, i32 values are cut to 32 bits, and the
// num_values of a nested data page header is found.
func TestParsePageHeader(t *testing.T) {
	var h []byte
	h = append(h, field(1, tcI32, zz(0))...)                  // type: data page
	h = append(h, field(1, tcI32, zz(100))...)                // uncompressed
	h = append(h, field(1, tcI32, zz(1<<32+40))...)           // compressed, cut to 40
	h = append(h, field(2, tcStruct, nil)...)                 // 5: data_page_header
	h = append(h, field(1, tcI32, zz(7))...)                  //   num_values
	h = append(h, field(1, tcBinary, []byte{2, 'a', 'b'})...) //   a field to skip
	h = append(h, 0x10)                                       //   stop, with a delta
	h = append(h, 0)                                          // stop
	got, err := parsePageHeader(append(h, 0xff, 0xff))
	want := pageHeader{len: len(h), typ: 0, comp: 40, uncomp: 100, v1Values: 7}
	if err != nil || got != want {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	if _, err := parsePageHeader(h[:len(h)-3]); err != errHeaderShort {
		t.Fatalf("cut header: %v, want errHeaderShort", err)
	}
	if _, err := parsePageHeader(append(field(2, tcI32, zz(100)), 0)); err == nil {
		t.Fatal("header without type and compressed size accepted")
	}
}
