package colguard

import (
	"encoding/binary"
	"fmt"
	"io"
)

// An Arrow IPC record batch with compressed buffers stores each buffer as
// an int64 uncompressed length followed by one LZ4 frame or zstd frames.
// The Arrow library resizes its buffer to that length and then reads it
// from klauspost/compress's streaming zstd decoder, which allocates each
// frame's declared window before it decodes a byte: a 100-byte buffer
// declaring a 500 MB frame makes it allocate about 500 MB. CheckIPCBody reads
// the zstd frame headers before the library decodes them; arrow-go v18
// needs it (TestArrowZstdWindowBomb allocates 256 MiB without it, and
// TestCheckIPCBody's buffers outside the body). LZ4 frames need no check:
// their blocks are at most 4 MiB.

// Block is a message of an Arrow IPC file as its footer lists it: the
// metadata (with its length prefix) at off, then the body.
type Block struct {
	Off, Meta, Body int64
}

// Arrow IPC flatbuffer tables and unions used below (format/Message.fbs).
const (
	msgDictionaryBatch = 2 // MessageHeader union
	msgRecordBatch     = 3
	codecZstd          = 1 // CompressionType; 0 is LZ4_FRAME
)

// CheckFileMessage checks the compressed buffers of the message at blk of
// the Arrow IPC file r, reading its metadata as the Arrow library does
// (fileBlock.NewMessage). A message the library cannot parse is left for it
// to refuse.
func CheckFileMessage(r io.ReaderAt, blk Block, w *WindowReader, limit int) error {
	if blk.Meta < 8 {
		return nil
	}
	meta := make(FB, blk.Meta)
	if _, err := r.ReadAt(meta, blk.Off); err != nil {
		return fmt.Errorf("reading message metadata at byte %d: %w", blk.Off, InMessage(err))
	}
	switch binary.LittleEndian.Uint32(meta) {
	case 0:
	case 0xffffffff:
		meta = meta[8:]
	default: // before Arrow 0.15, no continuation marker
		meta = meta[4:]
	}
	w.reset(r)
	return CheckIPCBody(meta, w, blk.Off+blk.Meta, blk.Body, limit)
}

// CheckIPCBody checks the buffers of a record batch or dictionary batch
// message whose flatbuffer is meta and whose body is the bodyLen bytes at
// bodyOff of w: every buffer lies in the body; a compressed buffer declares
// an uncompressed length of at most limit; and its zstd frames pass
// checkZstd for a streaming decoder. Other messages pass unchecked.
func CheckIPCBody(meta FB, w *WindowReader, bodyOff, bodyLen int64, limit int) error {
	root, err := meta.Root()
	if err != nil {
		return err
	}
	ht, err := meta.Field(root, 1) // header_type
	if err != nil || ht < 0 || ht >= int64(len(meta)) {
		return err
	}
	p, err := meta.Field(root, 2) // header
	if err != nil || p < 0 {
		return err
	}
	rb, err := meta.Deref(p)
	if err != nil {
		return err
	}
	switch meta[ht] {
	case msgRecordBatch:
	case msgDictionaryBatch:
		if p, err = meta.Field(rb, 1); err != nil || p < 0 { // data
			return err
		}
		if rb, err = meta.Deref(p); err != nil {
			return err
		}
	default:
		return nil
	}
	// The compression table (field 3) is absent for uncompressed bodies;
	// its codec defaults to LZ4_FRAME.
	codec := -1
	if p, err := meta.Field(rb, 3); err != nil {
		return err
	} else if p >= 0 {
		comp, err := meta.Deref(p)
		if err != nil {
			return err
		}
		codec = 0
		if c, err := meta.Field(comp, 0); err != nil {
			return err
		} else if c >= 0 && c < int64(len(meta)) {
			codec = int(meta[c])
		}
	}
	start, n, err := meta.Vector(rb, 2, 16) // buffers: [Buffer{offset, length}]
	if err != nil {
		return err
	}
	for i := range n {
		b := meta[start+16*int64(i):]
		off := int64(binary.LittleEndian.Uint64(b))
		size := int64(binary.LittleEndian.Uint64(b[8:]))
		if off < 0 || size < 0 || off > bodyLen || size > bodyLen-off {
			return fmt.Errorf("buffer %d at byte %d, %d bytes long, outside the %d-byte message body", i, off, size, bodyLen)
		}
		if codec < 0 || size < 8 {
			continue
		}
		h, err := w.at(bodyOff+off, 8)
		if err != nil {
			return fmt.Errorf("buffer %d: %w", i, InMessage(err))
		}
		uncomp := int64(binary.LittleEndian.Uint64(h))
		switch {
		case uncomp == -1: // stored uncompressed
		case uncomp < 0 || uncomp > int64(limit):
			return fmt.Errorf("buffer %d at byte %d declares %d bytes uncompressed, over the %d-byte limit for this file", i, bodyOff+off, uncomp, limit)
		case codec == codecZstd:
			if err := checkZstd(w, bodyOff+off+8, size-8, uncomp, limit, true); err != nil {
				return fmt.Errorf("buffer %d: %w", i, err)
			}
		}
	}
	return nil
}
