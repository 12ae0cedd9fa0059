package binio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// ErrShort is the kind of every *ShortError.
var ErrShort = errors.New("input too short")

// ShortError is a read (Next and the reads built on it) or a check (Need,
// NeedElems) that asked for more bytes than remain. Ended is set by a read:
// the input ends inside it, and the Decoder's offset stands at the end of
// the input. A check leaves Ended false and the offset where it was.
type ShortError struct {
	Need  uint64 // bytes asked for (saturated at 2^64−1)
	Left  int64  // bytes that remained
	Ended bool   // the input ended inside a read
}

func (e *ShortError) Error() string {
	return fmt.Sprintf("need %d bytes, only %d remain", e.Need, e.Left)
}

func (e *ShortError) Unwrap() error { return ErrShort }

// minBuf is the first read-ahead buffer of a NewReader Decoder.
const minBuf = 4 << 10

// A Decoder reads little-endian fields from a byte slice or an io.Reader
// (see the package documentation). Its zero value is not usable; make one
// with NewBytes or NewReader.
type Decoder struct {
	r      io.Reader // nil for NewBytes
	rerr   error     // sticky error of r
	buf    []byte    // buf[pos:end] is read but not consumed
	pos    int
	end    int
	size   int64 // total input length, or -1 if unknown
	off    int64 // bytes consumed
	maxBuf int
	crcTab *crc32.Table // nil: no checksum
	crc    uint32
}

// NewBytes returns a Decoder over b. The slices its reads return alias b.
func NewBytes(b []byte) *Decoder {
	d := new(Decoder)
	d.ResetBytes(b)
	return d
}

// NewReader returns a Decoder over r. size is the length of the input if
// known (then no read waits for, or buffers, bytes that cannot come, and
// Need checks against it), or -1. maxBuf bounds the read-ahead buffer and
// hence the longest single Next or Peek; it is at least minBuf (4 KiB).
func NewReader(r io.Reader, size int64, maxBuf int) *Decoder {
	d := new(Decoder)
	d.Reset(r, size, maxBuf)
	return d
}

// ResetBytes makes d a Decoder over b, as NewBytes does, with no checksum.
func (d *Decoder) ResetBytes(b []byte) {
	*d = Decoder{buf: b, end: len(b), size: int64(len(b)), rerr: io.EOF, maxBuf: len(b)}
}

// Reset makes d a Decoder over r, as NewReader does, with no checksum and
// a new buffer.
func (d *Decoder) Reset(r io.Reader, size int64, maxBuf int) {
	*d = Decoder{r: r, size: size, maxBuf: max(maxBuf, minBuf)}
}

// Checksum starts a running CRC-32 with table tab over the bytes consumed
// after the call (crc32.Update order); Sum32 returns it.
func (d *Decoder) Checksum(tab *crc32.Table) { d.crcTab, d.crc = tab, 0 }

// Sum32 returns the CRC-32 of the bytes consumed since Checksum.
func (d *Decoder) Sum32() uint32 { return d.crc }

// Offset returns the number of bytes consumed.
func (d *Decoder) Offset() int64 { return d.off }

// Remaining returns the number of bytes left, and false if the input length
// is unknown.
func (d *Decoder) Remaining() (int64, bool) {
	if d.size < 0 {
		return 0, false
	}
	return max(d.size-d.off, 0), true
}

// Need returns a *ShortError if the input length is known and fewer than n
// bytes remain; it consumes nothing. With an unknown length it returns nil.
func (d *Decoder) Need(n uint64) error {
	if left, ok := d.Remaining(); ok && n > uint64(left) {
		return &ShortError{Need: n, Left: left}
	}
	return nil
}

// NeedElems is Need for n elements of size bytes each, without overflow.
func (d *Decoder) NeedElems(n uint64, size int) error {
	left, ok := d.Remaining()
	if !ok || n <= uint64(left)/uint64(size) {
		return nil
	}
	need := uint64(math.MaxUint64)
	if n <= math.MaxUint64/uint64(size) {
		need = n * uint64(size)
	}
	return &ShortError{Need: need, Left: left}
}

// Peek returns the next n bytes without consuming them, or fewer with the
// error that stopped the read (io.EOF at the end of the input). The slice
// is valid until the next read. It panics if n exceeds the buffer bound of
// NewReader (a programmer error: formats bound their fields).
func (d *Decoder) Peek(n int) ([]byte, error) {
	if d.end-d.pos >= n {
		return d.buf[d.pos : d.pos+n], nil
	}
	if d.r == nil {
		return d.buf[d.pos:d.end], io.EOF
	}
	if n > d.maxBuf {
		panic(fmt.Sprintf("binio: read of %d bytes, more than the buffer bound %d", n, d.maxBuf))
	}
	d.fill(n)
	if d.end < n {
		return d.buf[:d.end], d.rerr
	}
	return d.buf[:n], nil
}

// fill moves the unread bytes to the front of the buffer, growing it to
// hold n, and reads until it holds n bytes or r fails.
func (d *Decoder) fill(n int) {
	if n > len(d.buf) {
		// Grow geometrically, never past maxBuf, nor past the known input.
		c := min(max(2*len(d.buf), minBuf), d.maxBuf)
		if d.size >= 0 {
			c = min(c, int(min(d.size-d.off, int64(d.maxBuf))))
		}
		nb := make([]byte, max(c, n))
		d.end = copy(nb, d.buf[d.pos:d.end])
		d.buf, d.pos = nb, 0
	} else if d.pos > 0 {
		d.end = copy(d.buf, d.buf[d.pos:d.end])
		d.pos = 0
	}
	for empty := 0; d.end < n && d.rerr == nil; {
		k, err := d.r.Read(d.buf[d.end:])
		d.end += k
		if err != nil {
			d.rerr = err
		} else if k == 0 {
			if empty++; empty == 100 {
				d.rerr = io.ErrNoProgress
			}
		}
	}
}

// Next consumes the next n bytes and returns them; the slice is valid until
// the next read. If the input ends first it returns a *ShortError with
// Ended set and the offset moved to the end of the input; a failure of the
// reader other than io.EOF or io.ErrUnexpectedEOF is returned as it is.
func (d *Decoder) Next(n int) ([]byte, error) {
	var b []byte
	var err error
	if d.size >= 0 && int64(n) > d.size-d.off {
		b = nil // do not wait for, or buffer, bytes that cannot come
	} else {
		b, err = d.Peek(n)
	}
	if len(b) < n {
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			left := int64(len(b))
			if d.size >= 0 {
				left = max(d.size-d.off, 0)
			}
			d.off += left
			return nil, &ShortError{Need: uint64(n), Left: left, Ended: true}
		}
		return nil, err
	}
	if d.crcTab != nil {
		d.crc = crc32.Update(d.crc, d.crcTab, b)
	}
	d.pos += n
	d.off += int64(n)
	return b, nil
}

// U8 reads one byte.
func (d *Decoder) U8() (uint8, error) {
	b, err := d.Next(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// U32 reads a little-endian uint32.
func (d *Decoder) U32() (uint32, error) {
	b, err := d.Next(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// U64 reads a little-endian uint64.
func (d *Decoder) U64() (uint64, error) {
	b, err := d.Next(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// F32 reads the little-endian bits of a float32.
func (d *Decoder) F32() (float32, error) {
	v, err := d.U32()
	return math.Float32frombits(v), err
}

// F64 reads the little-endian bits of a float64.
func (d *Decoder) F64() (float64, error) {
	v, err := d.U64()
	return math.Float64frombits(v), err
}
