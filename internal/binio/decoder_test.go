package binio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"testing"
	"testing/iotest"
)

// fields is a small record: a byte, a uint32, a uint64, a float32 and a
// float64, little-endian.
func fields() []byte {
	b := []byte{7}
	b = binary.LittleEndian.AppendUint32(b, 0xdeadbeef)
	b = binary.LittleEndian.AppendUint64(b, 1<<40+3)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(-1.5))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(math.Pi))
	return b
}

// decoders returns a Decoder over b of every kind: bytes, a reader of
// known length, a reader of unknown length and one that returns a byte a
// call.
func decoders(b []byte) map[string]*Decoder {
	return map[string]*Decoder{
		"bytes":   NewBytes(b),
		"sized":   NewReader(bytes.NewReader(b), int64(len(b)), 0),
		"unsized": NewReader(bytes.NewReader(b), -1, 0),
		"onebyte": NewReader(iotest.OneByteReader(bytes.NewReader(b)), -1, 0),
	}
}

func TestFields(t *testing.T) {
	for name, d := range decoders(fields()) {
		t.Run(name, func(t *testing.T) {
			u8, err1 := d.U8()
			u32, err2 := d.U32()
			u64, err3 := d.U64()
			f32, err4 := d.F32()
			f64, err5 := d.F64()
			if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
				t.Fatal(err)
			}
			if u8 != 7 || u32 != 0xdeadbeef || u64 != 1<<40+3 || f32 != -1.5 || f64 != math.Pi {
				t.Errorf("got %d %#x %d %v %v", u8, u32, u64, f32, f64)
			}
			if d.Offset() != int64(len(fields())) {
				t.Errorf("offset %d, want %d", d.Offset(), len(fields()))
			}
			var se *ShortError
			if _, err := d.U32(); !errors.As(err, &se) || !se.Ended || se.Need != 4 || se.Left != 0 {
				t.Errorf("read past the end: %v, want a *ShortError needing 4 with 0 left", err)
			}
		})
	}
}

// TestShortRead checks the error and the offset of a read that the input
// ends inside.
func TestShortRead(t *testing.T) {
	for name, d := range decoders([]byte{1, 2, 3}) {
		t.Run(name, func(t *testing.T) {
			_, err := d.U64()
			var se *ShortError
			if !errors.As(err, &se) || !errors.Is(err, ErrShort) {
				t.Fatalf("error %v, want a *ShortError", err)
			}
			if se.Need != 8 || se.Left != 3 || !se.Ended || d.Offset() != 3 {
				t.Errorf("%+v at offset %d, want need 8, left 3, ended, offset 3", se, d.Offset())
			}
		})
	}
}

func TestNeed(t *testing.T) {
	d := NewBytes(make([]byte, 10))
	if err := d.Need(10); err != nil {
		t.Errorf("Need(10) of 10: %v", err)
	}
	var se *ShortError
	if err := d.Need(11); !errors.As(err, &se) || se.Ended || se.Left != 10 {
		t.Errorf("Need(11) of 10: %v", err)
	}
	if err := d.NeedElems(3, 4); !errors.As(err, &se) || se.Need != 12 {
		t.Errorf("NeedElems(3, 4) of 10: %v", err)
	}
	if err := d.NeedElems(1<<62, 8); !errors.As(err, &se) || se.Need != math.MaxUint64 {
		t.Errorf("NeedElems(2^62, 8): %v, want a saturated need", err)
	}
	if d.Offset() != 0 {
		t.Errorf("checks consumed %d bytes", d.Offset())
	}
	u := NewReader(bytes.NewReader(nil), -1, 0)
	if err := u.Need(1 << 40); err != nil {
		t.Errorf("Need with unknown length: %v", err)
	}
}

// TestReaderError checks that a failing reader's error comes back as it is.
func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	d := NewReader(io.MultiReader(bytes.NewReader([]byte{1, 2}), iotest.ErrReader(boom)), -1, 0)
	if _, err := d.U32(); !errors.Is(err, boom) || errors.Is(err, ErrShort) {
		t.Errorf("error %v, want boom", err)
	}
}

// TestKnownLengthDoesNotWait checks that with a known length a read beyond
// it fails at once, without reading r.
func TestKnownLengthDoesNotWait(t *testing.T) {
	d := NewReader(iotest.ErrReader(errors.New("read")), 2, 0)
	if _, err := d.U32(); !errors.Is(err, ErrShort) {
		t.Errorf("error %v, want ErrShort without a read", err)
	}
}

func TestArray(t *testing.T) {
	var b []byte
	for i := range 1000 {
		b = binary.LittleEndian.AppendUint32(b, uint32(i*i))
	}
	want := make([]uint32, 1000)
	for i := range want {
		want[i] = uint32(i * i)
	}
	for name, d := range decoders(b) {
		t.Run(name, func(t *testing.T) {
			got, err := Array(d, 1000, 4, 64, DecU32)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("Array = %v, %v", got[:min(len(got), 4)], err)
			}
			if cap(got) != 1000 {
				t.Errorf("capacity %d, want 1000", cap(got))
			}
		})
	}
	// A header that lies about the count: the sized decoders refuse before
	// allocating, the others fail when the input ends.
	for name, d := range decoders(b) {
		if _, err := Array(d, 1<<40, 4, 64, DecU32); !errors.Is(err, ErrShort) {
			t.Errorf("%s: 2^40 elements: %v, want ErrShort", name, err)
		}
	}
	if s, err := Array(NewBytes(nil), 0, 4, 64, DecU32); s != nil || err != nil {
		t.Errorf("0 elements: %v, %v", s, err)
	}
}

// TestArrayAllocs checks that a lying count costs no more than the bytes
// present: 4,000 bytes of input declaring 2^40 elements.
func TestArrayAllocs(t *testing.T) {
	b := make([]byte, 4000)
	var d Decoder
	allocs := testing.AllocsPerRun(10, func() {
		d.Reset(bytes.NewReader(b), -1, 0)
		Array(&d, 1<<40, 4, 1024, DecU32)
	})
	// The buffer, then slices growing 256, 512, 1024 (+ the reader's
	// error): a handful, not one per element.
	if allocs > 8 {
		t.Errorf("%v allocations", allocs)
	}
}

func TestGrowTo(t *testing.T) {
	s := GrowTo([]int{1, 2}, 5, 6)
	if !slices.Equal(s, []int{1, 2, 0, 0, 0}) || cap(s) > 6 {
		t.Errorf("GrowTo = %v cap %d", s, cap(s))
	}
	if s2 := GrowTo(s, 3, 6); len(s2) != 5 {
		t.Errorf("GrowTo to a shorter length changed the length to %d", len(s2))
	}
}

func TestChecksum(t *testing.T) {
	tab := crc32.MakeTable(crc32.Castagnoli)
	b := fields()
	for name, d := range decoders(b) {
		t.Run(name, func(t *testing.T) {
			d.U8()
			d.Checksum(tab)
			Array(d, uint64(len(b)-1), 1, 3, func(dst []byte, src []byte) { copy(dst, src) })
			if got, want := d.Sum32(), crc32.Checksum(b[1:], tab); got != want {
				t.Errorf("Sum32 = %#x, want %#x", got, want)
			}
		})
	}
}

func TestPeekBeyondBoundPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Peek beyond the buffer bound did not panic")
		}
	}()
	NewReader(bytes.NewReader(make([]byte, 10000)), -1, 0).Peek(minBuf + 1)
}

func TestPeek(t *testing.T) {
	for name, d := range decoders([]byte{1, 2, 3}) {
		b, err := d.Peek(2)
		if err != nil || !bytes.Equal(b, []byte{1, 2}) || d.Offset() != 0 {
			t.Errorf("%s: Peek(2) = %v, %v", name, b, err)
		}
		if b, err := d.Peek(5); len(b) != 3 || !errors.Is(err, io.EOF) {
			t.Errorf("%s: Peek(5) = %v, %v; want the 3 bytes and io.EOF", name, b, err)
		}
	}
}
