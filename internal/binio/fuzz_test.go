package binio

import (
	"bytes"
	"errors"
	"testing"
	"testing/iotest"
)

// FuzzDecoders runs the same reads, chosen by ops, over data through a
// byte-slice Decoder and a one-byte-a-call reader Decoder of unknown length,
// and checks that they agree on every value, error kind and offset, never
// move past the end and never panic.
func FuzzDecoders(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4}, fields())
	f.Add([]byte{4, 4, 4}, []byte{200, 0, 0, 0, 0, 0, 0, 0, 1, 2})
	f.Fuzz(func(t *testing.T, ops, data []byte) {
		a := NewBytes(data)
		b := NewReader(iotest.OneByteReader(bytes.NewReader(data)), -1, 0)
		for i, op := range ops {
			va, ea := step(a, op)
			vb, eb := step(b, op)
			// A refused Array leaves the byte-slice decoder where it was
			// and moves the other to the end, so offsets are compared
			// only after a success.
			if errors.Is(ea, ErrShort) != errors.Is(eb, ErrShort) || (ea == nil) != (eb == nil) || (ea == nil && (va != vb || a.Offset() != b.Offset())) {
				t.Fatalf("op %d (%d): bytes %d %v at %d, reader %d %v at %d", i, op, va, ea, a.Offset(), vb, eb, b.Offset())
			}
			if a.Offset() > int64(len(data)) {
				t.Fatalf("offset %d past the end %d", a.Offset(), len(data))
			}
			if ea != nil {
				return
			}
		}
	})
}

// step performs one read chosen by op and returns a digest of its value.
func step(d *Decoder, op byte) (uint64, error) {
	switch op % 6 {
	case 0:
		v, err := d.U8()
		return uint64(v), err
	case 1:
		v, err := d.U32()
		return uint64(v), err
	case 2:
		return d.U64()
	case 3:
		b, err := d.Next(int(op >> 3))
		return uint64(len(b)), err
	default:
		n := uint64(op>>3) % 5
		s, err := Array(d, n, 2, 4, func(dst []uint16, b []byte) {
			for i := range dst {
				dst[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
			}
		})
		var sum uint64
		for _, v := range s {
			sum = sum*31 + uint64(v)
		}
		return sum, err
	}
}
