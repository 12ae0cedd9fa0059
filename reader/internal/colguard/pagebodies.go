package colguard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
)

// The library decompresses a page into a buffer of the page's
// uncompressed_page_size, but its codecs grow that buffer to whatever the
// compressed bytes claim or produce: snappy allocates the decoded length
// of its header, zstd (klauspost/compress) the frame content size of each
// frame's header, and a zstd frame without one decodes as far as its
// blocks go, 128 KiB from a 4-byte RLE block. A page of a few kilobytes
// can so make it allocate gigabytes. CheckPageBody reads the codec's own
// size fields before the library decodes the page. The inputs that need it
// are those of TestCheckPageBodies: a snappy body claiming more than its
// page's uncompressed size, a zstd frame whose content size exceeds it,
// and zstd RLE blocks decoding past the file's limit; arrow-go v18's
// snappy and zstd codecs (snappy.Decode, zstd DecodeAll without a memory
// limit) allocate what those headers claim. Gzip and Brotli decode
// into the page buffer and stop at its end, so they need no check.

// maxZstdBlock is the largest output of one compressed zstd block
// (RFC 8878, Block_Maximum_Size).
const maxZstdBlock = 128 << 10

// WindowReader reads small pieces of r at increasing offsets through one
// 64 KiB window, so that walking a zstd page's block headers costs a read
// per window, not per block.
type WindowReader struct {
	r   io.ReaderAt
	buf []byte
	off int64 // file offset of buf[0]
}

// reset points w at r, dropping what it holds of the previous reader.
func (w *WindowReader) reset(r io.ReaderAt) {
	if w.r == nil { // buf was another's memory (resetMem)
		w.buf = nil
	}
	w.r, w.buf, w.off = r, w.buf[:0], 0
}

// resetMem points w at bytes already in memory, b, which sit at offset
// off of the file: at then returns pieces of b itself, copying nothing,
// and an error for bytes outside b.
func (w *WindowReader) resetMem(b []byte, off int64) { w.r, w.buf, w.off = nil, b, off }

// at returns n <= 64 KiB bytes at off, or an error if they are not in r.
func (w *WindowReader) at(off int64, n int) ([]byte, error) {
	if off >= w.off && off+int64(n) <= w.off+int64(len(w.buf)) {
		return w.buf[off-w.off:][:n], nil
	}
	if w.r == nil {
		return nil, io.ErrUnexpectedEOF
	}
	if cap(w.buf) < 64<<10 {
		w.buf = make([]byte, 64<<10)
	}
	m, err := w.r.ReadAt(w.buf[:cap(w.buf)], off)
	w.buf, w.off = w.buf[:m], off
	if m < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return w.buf[:n], nil
}

// CheckPageBody checks the compressed bytes [off, off+n) of a page that
// decompresses to uncomp bytes: the codec must not be told to produce more
// than uncomp bytes at once (snappy's decoded length, zstd's frame content
// sizes), nor, for zstd, more than limit bytes in all. Bytes the codec cannot decode are left to it: it refuses
// them, having allocated no more than these checks allow.
func CheckPageBody(w *WindowReader, off, n int64, codec compress.Compression, uncomp int32, limit int) error {
	switch codec {
	case compress.Codecs.Snappy:
		b, err := w.at(off, int(min(n, binary.MaxVarintLen64)))
		if err != nil {
			return err
		}
		if d, err := snappy.DecodedLen(b); err == nil && int64(d) > int64(uncomp) {
			return fmt.Errorf("snappy data decode to %d bytes, over the %d bytes declared", d, uncomp)
		}
	case compress.Codecs.Zstd:
		return checkZstd(w, off, n, int64(uncomp), limit, false)
	}
	return nil
}

var errZstdShort = errors.New("zstd data end inside a frame")

// minZstdWindow is the largest window checkZstd allows a streamed frame
// whatever its size: the window of klauspost/compress's encoder by
// default, and of libzstd at levels up to 19.
const minZstdWindow = 8 << 20

// checkZstd walks the frames of zstd data [off, off+n) (RFC 8878): each
// frame's content size, when its header gives one, must be at most uncomp
// (the codec allocates it up front); and the output the blocks of all
// frames can produce (raw and RLE blocks their size, compressed blocks up
// to 128 KiB) must be at most limit.
//
// With streamed set the data is for klauspost's streaming decoder, which
// allocates each frame's window before it decodes a byte (a 100-byte frame
// declaring a 256 MiB window allocates 256 MiB; DecodeAll does not). The
// window must then be at most max(8 MiB, 2·uncomp): every encoder that
// knows the data's size sizes the window to fit it (at most the next power
// of two), and the streaming encoders' default windows are 8 MiB or less.
func checkZstd(w *WindowReader, off, n, uncomp int64, limit int, streamed bool) error {
	end := off + n
	bound := int64(0)
	for pos := off; pos < end; {
		var h zstd.Header
		b, err := w.at(pos, int(min(end-pos, zstd.HeaderMaxSize)))
		if err != nil {
			return err
		}
		if err := h.Decode(b); err != nil {
			return nil // not zstd: the codec refuses it
		}
		if h.Skippable {
			pos += int64(h.HeaderSize) + int64(h.SkippableSize)
			continue
		}
		if h.HasFCS && h.FrameContentSize > uint64(uncomp) {
			return fmt.Errorf("zstd frame at byte %d: content size %d, over the %d bytes declared", pos, h.FrameContentSize, uncomp)
		}
		if streamed && h.WindowSize > uint64(max(minZstdWindow, 2*uncomp)) {
			return fmt.Errorf("zstd frame at byte %d: window of %d bytes for %d bytes of data", pos, h.WindowSize, uncomp)
		}
		pos += int64(h.HeaderSize)
		for last := false; !last; {
			if end-pos < 3 {
				return nil // cut: the codec refuses it
			}
			b, err := w.at(pos, 3)
			if err != nil {
				return err
			}
			bh := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
			last = bh&1 == 1
			size := int64(bh >> 3)
			pos += 3
			switch (bh >> 1) & 3 {
			case 0: // raw
				pos += size
				bound += size
			case 1: // RLE: one byte, repeated size times
				pos++
				bound += size
			case 2: // compressed
				pos += size
				bound += maxZstdBlock
			default:
				return nil // reserved: the codec refuses it
			}
			if bound > int64(limit) {
				return fmt.Errorf("zstd data at byte %d decode to over %d bytes, the limit for this file", off, limit)
			}
		}
		if h.HasCheckSum {
			pos += 4
		}
	}
	return nil
}
