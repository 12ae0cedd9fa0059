package colguard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The Arrow library trusts the lengths in a file's flatbuffers: it makes a
// slice of whatever length a schema's field or metadata vector claims, or a
// stream message's metadata claims, which a corrupt file can set to billions
// (a fatal out-of-memory, not a panic), and it follows offsets into cycles
// (a fatal stack overflow). The checks below walk the flatbuffers first and
// bound every such length by the bytes that hold it, and every message by
// the bytes left in the file. arrow-go v18 still needs them: without
// CheckSchema, TestArrowCorrupt's byte flips of an Arrow file end the
// process with a fatal out-of-memory; without the message lengths of
// StreamMessages, TestArrowHostileLengths/stream_message_length allocates
// 2 GB. The block lengths of CheckFooter bound what CheckFileMessage reads.

// FB is a flatbuffer being checked; positions are int64 so that no
// offset wraps around.
type FB []byte

var ErrFlatbuffer = errors.New("flatbuffer offset or length out of range")

func (b FB) u32(p int64) (uint32, error) {
	if p < 0 || p > int64(len(b))-4 {
		return 0, ErrFlatbuffer
	}
	return binary.LittleEndian.Uint32(b[p:]), nil
}

func (b FB) u16(p int64) (uint16, error) {
	if p < 0 || p > int64(len(b))-2 {
		return 0, ErrFlatbuffer
	}
	return binary.LittleEndian.Uint16(b[p:]), nil
}

// root returns the position of the root table.
func (b FB) Root() (int64, error) { return b.Deref(0) }

// deref follows the uoffset stored at p.
func (b FB) Deref(p int64) (int64, error) {
	u, err := b.u32(p)
	if err != nil {
		return 0, err
	}
	t := p + int64(u)
	if t >= int64(len(b)) {
		return 0, ErrFlatbuffer
	}
	return t, nil
}

// field returns the position of field i of the table at tab, or -1 when
// the field is absent.
func (b FB) Field(tab int64, i int) (int64, error) {
	so, err := b.u32(tab)
	if err != nil {
		return 0, err
	}
	vt := tab - int64(int32(so))
	vlen, err := b.u16(vt)
	if err != nil {
		return 0, err
	}
	slot := int64(4 + 2*i)
	if slot >= int64(vlen) { // as the flatbuffers library decides
		return -1, nil
	}
	o, err := b.u16(vt + slot)
	if err != nil || o == 0 {
		return -1, err
	}
	return tab + int64(o), nil
}

// vector returns the start and length of the vector referenced by field i
// of the table at tab (0, 0 when absent), checking that its elements of
// elem bytes lie in the buffer.
func (b FB) Vector(tab int64, i, elem int) (int64, int, error) {
	p, err := b.Field(tab, i)
	if err != nil || p < 0 {
		return 0, 0, err
	}
	v, err := b.Deref(p)
	if err != nil {
		return 0, 0, err
	}
	n, err := b.u32(v)
	if err != nil {
		return 0, 0, err
	}
	if int64(n)*int64(elem) > int64(len(b))-v-4 {
		return 0, 0, ErrFlatbuffer
	}
	return v + 4, int(n), nil
}

// maxFieldDepth bounds the nesting of a schema's fields, as the Arrow
// library bounds the nesting of arrays.
const maxFieldDepth = 64

// CheckSchema checks the Schema table at tab: its field tree (at most
// maxFieldDepth deep, and no more fields than the buffer has room for) and
// its metadata vectors.
func (b FB) CheckSchema(tab int64) error {
	budget := len(b) / 4 // a field takes more than 4 bytes
	var field func(tab int64, depth int) error
	fields := func(tab int64, i, depth int) error {
		start, n, err := b.Vector(tab, i, 4)
		if err != nil {
			return err
		}
		for k := range n {
			if budget--; budget < 0 || depth > maxFieldDepth {
				return errors.New("schema nests too deep or has too many fields")
			}
			t, err := b.Deref(start + 4*int64(k))
			if err != nil {
				return err
			}
			if err := field(t, depth); err != nil {
				return err
			}
		}
		return nil
	}
	field = func(tab int64, depth int) error {
		if _, _, err := b.Vector(tab, 6, 4); err != nil { // custom_metadata
			return err
		}
		tt, err := b.Field(tab, 2) // type_type
		if err != nil {
			return err
		}
		if tt >= 0 && tt < int64(len(b)) && b[tt] == 14 { // Union
			p, err := b.Field(tab, 3)
			if err != nil {
				return err
			}
			if p >= 0 {
				u, err := b.Deref(p)
				if err != nil {
					return err
				}
				if _, _, err := b.Vector(u, 1, 4); err != nil { // typeIds
					return err
				}
			}
		}
		return fields(tab, 5, depth+1) // children
	}
	if err := fields(tab, 1, 1); err != nil {
		return err
	}
	if _, _, err := b.Vector(tab, 2, 4); err != nil { // custom_metadata
		return err
	}
	_, _, err := b.Vector(tab, 3, 8) // features
	return err
}

// CheckFooter checks the footer of the Arrow IPC file f of size bytes: its
// schema (CheckSchema) and that every block it lists lies in the file.
// It returns the blocks of the dictionaries and of the record batches. A
// footer that the Arrow library itself rejects (bad magic, bad length) is
// left for it to report, with no blocks.
func CheckFooter(f io.ReaderAt, size int64) (dicts, records []Block, err error) {
	const tail = 10 // int32 footer length and "ARROW1"
	if size < tail+8 {
		return nil, nil, nil
	}
	var t [tail]byte
	if _, err := f.ReadAt(t[:], size-tail); err != nil {
		return nil, nil, err
	}
	n := int64(binary.LittleEndian.Uint32(t[:4]))
	if string(t[4:]) != "ARROW1" || n <= 0 || n > size-tail-8 {
		return nil, nil, nil
	}
	b := make(FB, n)
	if _, err := f.ReadAt(b, size-tail-n); err != nil {
		return nil, nil, err
	}
	root, err := b.Root()
	if err != nil {
		return nil, nil, err
	}
	p, err := b.Field(root, 1) // schema
	if err != nil {
		return nil, nil, err
	}
	if p >= 0 {
		sch, err := b.Deref(p)
		if err != nil {
			return nil, nil, err
		}
		if err := b.CheckSchema(sch); err != nil {
			return nil, nil, err
		}
	}
	var blocks [2][]Block
	for i := range blocks { // fields 2, 3: dictionaries, recordBatches: [Block]
		start, k, err := b.Vector(root, 2+i, 24)
		if err != nil {
			return nil, nil, err
		}
		blocks[i] = make([]Block, k)
		for j := range k {
			blk := b[start+24*int64(j):]
			off := int64(binary.LittleEndian.Uint64(blk))
			meta := int64(int32(binary.LittleEndian.Uint32(blk[8:])))
			body := int64(binary.LittleEndian.Uint64(blk[16:]))
			if off < 0 || meta < 0 || body < 0 || meta > size || body > size || off+meta+body > size {
				return nil, nil, fmt.Errorf("block %d at %d with %d+%d bytes outside the file", j, off, meta, body)
			}
			blocks[i][j] = Block{Off: off, Meta: meta, Body: body}
		}
	}
	return blocks[0], blocks[1], nil
}
