package model

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"
)

const magic = "CPMMODEL"

// Flag bits of the header.
const (
	flagOvO    = 1 << 0
	flagCounts = 1 << 1
	flagMulti  = 1 << 2
	flagSteps  = 1 << 3
	flagScale  = 1 << 4
	flagHash   = 1 << 5 // version 2
	flagCalib  = 1 << 6 // version 2

	flagsKnownV1 = flagOvO | flagCounts | flagMulti | flagSteps | flagScale
	flagsKnown   = flagsKnownV1 | flagHash | flagCalib
)

// chunkSize is the unit of buffered I/O: Write flushes about this many bytes
// at a time and Read decodes arrays this many bytes at a time.
const chunkSize = 32 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Write validates m and writes it to w in the binary format described in the
// package documentation. The same Model always produces the same bytes.
// An invalid model is refused before anything is written, with the error of
// Validate.
func Write(w io.Writer, m *Model) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if err := encode(w, m); err != nil {
		return fmt.Errorf("model: write: %w", err)
	}
	return nil
}

// encoder buffers little-endian fields, checksums them as they are flushed
// and keeps the first write error.
type encoder struct {
	w   io.Writer
	buf []byte
	crc uint32
	err error
}

func (e *encoder) flush() {
	if e.err == nil && len(e.buf) > 0 {
		e.crc = crc32.Update(e.crc, castagnoli, e.buf)
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *encoder) maybeFlush() {
	if len(e.buf) >= chunkSize {
		e.flush()
	}
}

func (e *encoder) u32(v uint32)  { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }
func (e *encoder) u64(v uint64)  { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }
func (e *encoder) f32(v float32) { e.u32(math.Float32bits(v)) }
func (e *encoder) f64(v float64) { e.u64(math.Float64bits(v)) }

func (e *encoder) str(s string) {
	e.u32(uint32(len(s)))
	e.buf = append(e.buf, s...)
	e.maybeFlush()
}

func (e *encoder) f32s(s []float32) {
	for len(s) > 0 {
		n := min(len(s), chunkSize/4)
		for _, v := range s[:n] {
			e.f32(v)
		}
		s = s[n:]
		e.maybeFlush()
	}
}

func (e *encoder) u32s(s []uint32) {
	for len(s) > 0 {
		n := min(len(s), chunkSize/4)
		for _, v := range s[:n] {
			e.u32(v)
		}
		s = s[n:]
		e.maybeFlush()
	}
}

func (e *encoder) u64s(s []uint64) {
	for len(s) > 0 {
		n := min(len(s), chunkSize/8)
		for _, v := range s[:n] {
			e.u64(v)
		}
		s = s[n:]
		e.maybeFlush()
	}
}

func (e *encoder) i64s(s []int64) {
	for len(s) > 0 {
		n := min(len(s), chunkSize/8)
		for _, v := range s[:n] {
			e.u64(uint64(v))
		}
		s = s[n:]
		e.maybeFlush()
	}
}

func (e *encoder) f64s(s []float64) {
	for len(s) > 0 {
		n := min(len(s), chunkSize/8)
		for _, v := range s[:n] {
			e.f64(v)
		}
		s = s[n:]
		e.maybeFlush()
	}
}

// encode writes a validated m.
func encode(w io.Writer, m *Model) error {
	e := &encoder{w: w, buf: make([]byte, 0, 4<<10)}
	e.buf = append(e.buf, magic...)
	e.u32(Version)
	var flags uint32
	if m.OvO {
		flags |= flagOvO
	}
	if m.Counts != nil {
		flags |= flagCounts
	}
	if m.Multiclass {
		flags |= flagMulti
	}
	if m.Steps != nil {
		flags |= flagSteps
	}
	if m.Scale != nil {
		flags |= flagScale
	}
	if m.Hash != nil {
		flags |= flagHash
	}
	if m.Calibration != nil {
		flags |= flagCalib
	}
	e.u32(flags)
	e.u32(uint32(m.Sides))
	e.u32(uint32(m.K))
	e.u64(uint64(m.D))
	e.f64(m.Lambda)
	e.f64(m.Entropy)
	e.f64(m.CostRatio)
	e.f64(m.Bias)
	e.u64(m.Seed)
	e.u64(uint64(m.Iterations))
	e.str(m.Learner)

	e.u32(uint32(len(m.Classes)))
	e.f32s(m.Classes)

	e.u32(uint32(len(m.Params)))
	for _, k := range slices.Sorted(maps.Keys(m.Params)) {
		e.str(k)
		e.str(m.Params[k])
	}

	stored := m.storedRows()
	e.u64(uint64(len(stored)))
	for keep := stored; len(keep) > 0; {
		n := min(len(keep), chunkSize/4)
		for _, r := range keep[:n] {
			e.u32(m.feature(int(r)))
		}
		keep = keep[n:]
		e.maybeFlush()
	}
	e.u32(uint32(len(m.Weights)))
	for _, mat := range m.Weights {
		for _, r := range stored {
			e.f32s(mat.Data[int(r)*mat.Stride : int(r)*mat.Stride+mat.K])
		}
	}
	for _, c := range m.Counts {
		e.u64s(c)
	}
	e.i64s(m.Steps)

	e.u32(uint32(len(m.Extra)))
	for _, b := range m.Extra {
		e.str(b.Name)
		e.u64(uint64(len(b.F32)))
		e.f32s(b.F32)
		e.u64(uint64(len(b.U32)))
		e.u32s(b.U32)
		e.u64(uint64(len(b.I64)))
		e.i64s(b.I64)
	}
	if s := m.Scale; s != nil {
		e.str(s.Mode)
		e.u64(uint64(len(s.Index)))
		e.u32s(s.Index)
		e.f64s(s.Shift)
		e.f64s(s.Div)
	}
	if h := m.Hash; h != nil {
		e.u32(uint32(h.Bits))
		e.u32(h.Seed)
	}
	if c := m.Calibration; c != nil {
		e.str(c.Method)
		e.u32(uint32(len(c.A)))
		e.f64s(c.A)
		e.f64s(c.B)
		e.u64(uint64(c.Rows))
		e.f64(c.LogLoss)
	}
	e.flush()
	e.buf = binary.LittleEndian.AppendUint32(e.buf, e.crc)
	if e.err == nil {
		_, e.err = e.w.Write(e.buf)
	}
	return e.err
}
