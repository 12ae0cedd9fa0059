package colguard

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// CheckPages walks the page headers of a column chunk before the library
// does, to find each compressed page body for CheckPageBody: the page
// reader hands a page to its codec, which allocates what the codec's own
// header claims (see pagebodies.go). The walk refuses the chunk unless it
// ends inside it, at a page that completes the chunk's values; with
// arrow-go v18 those refusals are also the library's (its page reader
// checks page sizes against ReaderProperties' limits and fails on a cut
// header), so CheckPages is needed only as the carrier of CheckPageBody.
//
// The headers are Thrift structs in the compact protocol (Apache Thrift,
// "Thrift Compact protocol encoding", THRIFT-110); of PageHeader
// (parquet-format, parquet.thrift) only fields 1-3 (type,
// uncompressed_page_size, compressed_page_size, i32), the num_values of
// the nested data page headers and data_page_header_v2.is_compressed are
// read, the rest skipped.

// maxPageHeader bounds the bytes of one page header, as the library's
// default maximum (16 MiB) does.
const maxPageHeader = 16 << 20

// errHeaderShort means the buffer ended inside a header: read more.
var errHeaderShort = errors.New("page header runs past the bytes read")

// pageHeader is what CheckPages needs of a PageHeader.
type pageHeader struct {
	len          int   // bytes of the header
	typ          int32 // 0 data page, 2 dictionary page, 3 data page v2
	comp, uncomp int32
	// num_values of the nested data_page_header (v1) and
	// data_page_header_v2 (v2); the library reads the one of the page's
	// type, so both are kept.
	v1Values, v2Values int32
	// v2Plain: data_page_header_v2.is_compressed is false. The library
	// then reads uncompressed_page_size bytes of body, not
	// compressed_page_size.
	v2Plain bool
	// v2Levels: the bytes of repetition and definition levels at the
	// start of a v2 page's body, which are stored uncompressed.
	v2Levels int64
}

// known reports whether the library reads the page (a data page of
// either version, or a dictionary page) rather than passing over its
// header; Next returns at a known page.
func (h pageHeader) known() bool { return h.typ == 0 || h.typ == 2 || h.typ == 3 }

// decompressed reports whether the library decompresses the page's body
// (from its v2Levels-th byte for a v2 page).
func (h pageHeader) decompressed() bool { return h.known() && !(h.typ == 3 && h.v2Plain) }

// values returns the num_values the library adds for this page: that of
// the nested header of the page's type, none for other pages.
func (h pageHeader) values() int32 {
	switch h.typ {
	case 0:
		return h.v1Values
	case 3:
		return h.v2Values
	}
	return 0
}

// body returns the bytes of page body the library reads after the header:
// none for pages of unknown type, whose bodies it does not skip.
func (h pageHeader) body() int64 {
	switch {
	case h.typ == 3 && h.v2Plain:
		return int64(h.uncomp)
	case h.known():
		return int64(h.comp)
	}
	return 0
}

// ChunkStream returns the bytes [start, end) of a file of size bytes that
// the library reads as the column chunk of n bytes at off, as
// RowGroupReader.GetColumnPageReader works them out: for files of old
// parquet-mr writers (oldWriter) it adds up to 100 bytes of padding
// (PARQUET-816). A chunk that does not lie inside the file is an error:
// the library would allocate its claimed size before reading it.
func ChunkStream(size, off, n int64, oldWriter bool) (start, end int64, err error) {
	if off < 0 || n < 0 || off > size || n > size-off {
		return 0, 0, fmt.Errorf("column chunk of %d bytes at byte %d does not fit in the file's %d bytes", n, off, size)
	}
	end = off + n
	if oldWriter {
		end += min(100, size-end)
	}
	return off, end, nil
}

// CheckPages walks the page headers of the column chunk read as the bytes
// [off, end) of r, holding values values, as the library's page reader
// will: while fewer values than the chunk holds have been seen, it reads
// a header; data and dictionary pages are followed by their body, data
// pages add their num_values, pages of other types are passed over by
// their header alone (the library does not skip their bodies). It refuses
//
//   - a header that does not parse within the chunk (the library would
//     go on into stale bytes, or refuse it too);
//   - a page whose body does not fit in the chunk after its header;
//   - a page, or a run of pages of unknown type and the page that ends
//     it, needing more than limit bytes uncompressed: the library holds
//     them all at once;
//   - a compressed page whose codec would allocate more than the page
//     holds (CheckPageBody);
//   - a chunk that ends before its pages have given values values.
//
// A negative size or count ends the walk: the library stops there with an
// error before it allocates.
func CheckPages(r io.ReaderAt, off, end, values int64, codec compress.Compression, limit int) error {
	buf := make([]byte, 4<<10)
	w := &WindowReader{r: r}
	seen := int64(0)
	held, runFrom := int64(0), off // allocated since the last page the library returns
	pos := off
	for pos < end && seen < values {
		var h pageHeader
		for want := int64(4 << 10); ; want *= 2 {
			m := min(want, end-pos)
			if int64(cap(buf)) < m {
				buf = make([]byte, m)
			}
			buf = buf[:m]
			if _, err := r.ReadAt(buf, pos); err != nil && err != io.EOF {
				return err
			}
			var err error
			if h, err = parsePageHeader(buf); err == nil {
				break
			}
			if err != errHeaderShort || m == end-pos || want >= maxPageHeader {
				return fmt.Errorf("page header at byte %d: %w", pos, err)
			}
		}
		if h.comp < 0 || h.uncomp < 0 || h.values() < 0 || h.v2Levels < 0 {
			return nil // refused by the library
		}
		if b := h.body(); b > end-pos-int64(h.len) {
			return fmt.Errorf("page at byte %d: %d bytes of body, but the column chunk ends %d bytes after its header", pos, b, end-pos-int64(h.len))
		}
		if h.typ == 3 && h.v2Levels > h.body() {
			return fmt.Errorf("page at byte %d: %d bytes of levels in a body of %d", pos, h.v2Levels, h.body())
		}
		if h.decompressed() && codec != compress.Codecs.Uncompressed {
			lev := int64(0)
			if h.typ == 3 {
				lev = h.v2Levels
			}
			if err := CheckPageBody(w, pos+int64(h.len)+lev, int64(h.comp)-lev, codec, h.uncomp, limit); err != nil {
				return fmt.Errorf("page at byte %d: %w", pos, err)
			}
		}
		held += int64(h.uncomp)
		switch {
		case int64(h.uncomp) > int64(limit):
			return fmt.Errorf("page at byte %d: %d bytes uncompressed exceed the %d-byte limit for this file", pos, h.uncomp, limit)
		case held > int64(limit):
			return fmt.Errorf("pages at bytes %d to %d: %d bytes uncompressed, held at once, exceed the %d-byte limit for this file", runFrom, pos, held, limit)
		}
		seen += int64(h.values())
		pos += int64(h.len) + h.body()
		if h.known() {
			held, runFrom = 0, pos
		}
	}
	if seen < values {
		return fmt.Errorf("column chunk at byte %d ends at byte %d after %d of its %d values", off, pos, seen, values)
	}
	return nil
}

// parsePageHeader reads a compact-protocol PageHeader at the start of b.
// Integers are truncated to 32 bits as Thrift's ReadI32 does.
func parsePageHeader(b []byte) (pageHeader, error) {
	t := thriftCompact{b: b}
	var h pageHeader
	var set [4]bool // type, uncompressed, compressed
	t.structFields(0, func(id int16, typ byte) bool {
		switch {
		case typ == tcI32 && id >= 1 && id <= 3:
			v := t.zigzag32()
			switch id {
			case 1:
				h.typ = v
			case 2:
				h.uncomp = v
			case 3:
				h.comp = v
			}
			set[id] = true
			return true
		case typ == tcStruct && id == 5: // data_page_header
			h.v1Values = 0 // a repeated field replaces the struct
			t.structFields(1, func(id int16, typ byte) bool {
				if id == 1 && typ == tcI32 {
					h.v1Values = t.zigzag32()
					return true
				}
				return false
			})
			return true
		case typ == tcStruct && id == 8: // data_page_header_v2
			h.v2Values, h.v2Plain, h.v2Levels = 0, false, 0
			var levels [2]int32 // definition, repetition
			t.structFields(1, func(id int16, typ byte) bool {
				switch {
				case id == 1 && typ == tcI32:
					h.v2Values = t.zigzag32()
				case (id == 5 || id == 6) && typ == tcI32: // definition_levels_byte_length, repetition_levels_byte_length
					levels[id-5] = t.zigzag32()
				case id == 7 && (typ == tcTrue || typ == tcFalse): // is_compressed, default true
					h.v2Plain = typ == tcFalse
				default:
					return false
				}
				return true
			})
			h.v2Levels = int64(levels[0]) + int64(levels[1])
			return true
		}
		return false
	})
	if t.err != nil {
		return h, t.err
	}
	if !set[1] || !set[2] || !set[3] {
		return h, errors.New("page header without its type or sizes")
	}
	h.len = t.off
	return h, nil
}

// Compact protocol type codes.
const (
	tcTrue   = 1
	tcFalse  = 2
	tcByte   = 3
	tcI16    = 4
	tcI32    = 5
	tcI64    = 6
	tcDouble = 7
	tcBinary = 8
	tcList   = 9
	tcSet    = 10
	tcMap    = 11
	tcStruct = 12
)

// maxThriftDepth bounds the nesting of structs and containers.
const maxThriftDepth = 32

// thriftCompact decodes the compact protocol from b with a sticky error.
type thriftCompact struct {
	b   []byte
	off int
	err error
}

func (t *thriftCompact) byte1() byte {
	if t.err != nil {
		return 0
	}
	if t.off >= len(t.b) {
		t.err = errHeaderShort
		return 0
	}
	c := t.b[t.off]
	t.off++
	return c
}

// uvarint reads an unsigned varint. Like Apache Thrift's Go compact
// protocol (readVarint64), it takes any number of continuation bytes; bits
// beyond the 64th are lost.
func (t *thriftCompact) uvarint() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := t.byte1()
		if t.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
}

// zigzag32 reads an i32: a zigzag varint cut to 32 bits first, as Thrift's
// ReadI32 does.
func (t *thriftCompact) zigzag32() int32 {
	u := uint32(t.uvarint())
	return int32(u>>1) ^ -int32(u&1)
}

// zigzag reads an i16 field id (Thrift reads it as an i32 too).
func (t *thriftCompact) zigzag() int64 { return int64(t.zigzag32()) }

func (t *thriftCompact) skipBytes(n uint64) {
	if t.err != nil {
		return
	}
	if n > uint64(len(t.b)-t.off) {
		t.err = errHeaderShort
		return
	}
	t.off += int(n)
}

// structFields reads the fields of a struct up to its stop byte, calling
// f with each field's id and type; f either reads the value and returns
// true, or returns false to have it skipped.
func (t *thriftCompact) structFields(depth int, f func(id int16, typ byte) bool) {
	if depth > maxThriftDepth {
		t.err = errors.New("structs nested too deep")
		return
	}
	var id int16
	for t.err == nil {
		h := t.byte1()
		if t.err != nil || h&0x0f == 0 {
			// A zero type ends the struct, whatever the high nibble, as
			// in Apache Thrift's Go compact protocol, which the library
			// reads the headers with.
			return
		}
		typ := h & 0x0f
		if d := h >> 4; d != 0 {
			id += int16(d)
		} else {
			id = int16(t.zigzag())
		}
		if f != nil && f(id, typ) {
			continue
		}
		t.skip(typ, depth)
	}
}

// skip skips a value of type typ.
func (t *thriftCompact) skip(typ byte, depth int) {
	switch typ {
	case tcTrue, tcFalse:
	case tcByte:
		t.byte1()
	case tcI16, tcI32, tcI64:
		t.uvarint()
	case tcDouble:
		t.skipBytes(8)
	case tcBinary:
		t.skipBytes(t.uvarint())
	case tcList, tcSet:
		h := t.byte1()
		n := uint64(h >> 4)
		if n == 15 {
			n = t.uvarint()
		}
		t.skipElems(n, h&0x0f, depth)
	case tcMap:
		n := t.uvarint()
		if n == 0 {
			return
		}
		kv := t.byte1()
		if n > uint64(len(t.b)-t.off)/2 { // every entry takes at least two bytes
			if t.err == nil {
				t.err = errHeaderShort
			}
			return
		}
		for i := uint64(0); i < n && t.err == nil; i++ {
			t.skipElem(kv>>4, depth)
			t.skipElem(kv&0x0f, depth)
		}
	case tcStruct:
		t.structFields(depth+1, nil)
	default:
		if t.err == nil {
			t.err = fmt.Errorf("unknown compact type %d", typ)
		}
	}
}

// skipElems skips n container elements of type typ.
func (t *thriftCompact) skipElems(n uint64, typ byte, depth int) {
	if n > uint64(len(t.b)-t.off) { // every element takes at least a byte
		if t.err == nil {
			t.err = errHeaderShort
		}
		return
	}
	for i := uint64(0); i < n && t.err == nil; i++ {
		t.skipElem(typ, depth)
	}
}

// skipElem skips one container element: booleans take a byte there.
func (t *thriftCompact) skipElem(typ byte, depth int) {
	if depth+1 > maxThriftDepth {
		t.err = errors.New("containers nested too deep")
		return
	}
	if typ == tcTrue || typ == tcFalse {
		t.byte1()
		return
	}
	t.skip(typ, depth+1)
}
