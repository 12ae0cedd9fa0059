package reader

import (
	"errors"
	"fmt"
	"io"
)

// arrow/go v15's Parquet page reader grows a bytes.Buffer to a page's
// compressed_page_size before it reads the page, outside any allocator
// (serializedPageReader.decompress), so a 10 KB file whose page header
// claims 2 GB makes it allocate and clear 2 GB (found by FuzzColumnar). It
// also sizes the decompressed page from uncompressed_page_size. checkPages
// therefore walks the page headers of a column chunk itself, before the
// library does, and refuses a page that does not fit in the file or
// decompresses beyond the allocation cap.
//
// The headers are Thrift structs in the compact protocol (Apache Thrift,
// "Thrift Compact protocol encoding", THRIFT-110); of PageHeader
// (parquet-format, parquet.thrift) only fields 2 (uncompressed_page_size,
// i32) and 3 (compressed_page_size, i32) are read, the rest skipped.

// maxPageHeader bounds the bytes of one page header, as the library's
// default maximum (16 MiB) does.
const maxPageHeader = 16 << 20

// errHeaderShort means the buffer ended inside a header: read more.
var errHeaderShort = errors.New("page header runs past the bytes read")

// pageHeader is what checkPages needs of a PageHeader.
type pageHeader struct {
	len          int   // bytes of the header
	typ          int32 // 0 data page, 2 dictionary page, 3 data page v2
	comp, uncomp int32
	numValues    int32 // data pages: num_values of the nested page header
}

// checkPages walks the page headers of a column chunk of n bytes at off in
// r (a file of size bytes) holding values values, as the library's page
// reader will: while fewer values than the chunk holds have been seen,
// read a header; data and dictionary pages are followed by their
// compressed bytes, data pages add their num_values, pages of other types
// are passed over by their header alone (the library does not skip their
// bodies). Every page the library will decompress must fit in the file
// after its header and decompress to at most limit bytes. A header that
// does not parse, or the end of the chunk, ends the walk: the library
// stops there too, with an error or at the end of the chunk's stream.
func checkPages(r io.ReaderAt, size, off, n, values int64, limit int) error {
	if off < 0 || n < 0 || off >= size {
		return nil // the library refuses the chunk itself
	}
	// The library's stream is n bytes, plus up to 100 of padding for files
	// of old writers (PARQUET-816).
	end := min(off+n+100, size)
	buf := make([]byte, 4<<10)
	seen := int64(0)
	for pos := off; pos < end && seen < values; {
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
				return nil
			}
		}
		if h.comp < 0 || h.uncomp < 0 {
			return nil // refused by the library
		}
		if h.typ != 0 && h.typ != 2 && h.typ != 3 {
			pos += int64(h.len)
			continue
		}
		switch {
		case int64(h.comp) > size-pos-int64(h.len):
			return fmt.Errorf("page at byte %d: %d compressed bytes, but the file ends %d bytes after its header", pos, h.comp, size-pos-int64(h.len))
		case int(h.uncomp) > limit:
			return fmt.Errorf("page at byte %d: %d bytes uncompressed exceed the %d-byte limit for this file", pos, h.uncomp, limit)
		}
		if h.typ != 2 {
			if h.numValues < 0 {
				return nil
			}
			seen += int64(h.numValues)
		}
		pos += int64(h.len) + int64(h.comp)
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
		case typ == tcStruct && (id == 5 || id == 8): // data_page_header, data_page_header_v2
			t.structFields(1, func(id int16, typ byte) bool {
				if id == 1 && typ == tcI32 {
					h.numValues = t.zigzag32()
					return true
				}
				return false
			})
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
