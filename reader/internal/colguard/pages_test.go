package colguard

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
)

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

// CheckPages walks a column chunk's pages as the library will and refuses
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
		err := CheckPages(r, 0, int64(len(tc.chunk)), tc.values, compress.Codecs.Uncompressed, limit)
		if !errSays(err, tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// CheckPages reads the size fields of snappy and zstd page bodies: the
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
		err := CheckPages(r, 0, int64(len(tc.chunk)), 1, tc.codec, limit)
		if !errSays(err, tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// ChunkStream finds the bytes the library reads for a column chunk: the
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
		start, end, err := ChunkStream(tc.size, tc.off, tc.n, tc.old)
		if (err == nil) != tc.ok || tc.ok && (start != tc.start || end != tc.end) {
			t.Errorf("ChunkStream(%d, %d, %d, %v) = %d, %d, %v", tc.size, tc.off, tc.n, tc.old, start, end, err)
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
