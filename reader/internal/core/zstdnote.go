package core

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
)

// A .zst output (CreateCompressed) ends with a zstd skippable frame, the
// note, that records whether the text before it holds a feature index 0 by
// the rule of ZeroScanner, which the output applies to every byte written.
// Package libsvm reads the note instead of scanning the whole file again
// when ZeroBasedAuto must decide ahead of a Stream. Every zstd decoder
// skips such frames (RFC 8878, section 3.1.2), so the file decompresses
// to the same text with any tool. Layout (little-endian), 28 bytes:
//
//	magic u32 = 0x184D2A5E (skippable frame) | frame size u32 = 20 |
//	"CPMZ" | version u8 = 1 | flags u8 (bit 0: the text holds an index 0) |
//	reserved u16 = 0 | covered u64 (the bytes of the file before the note) |
//	CRC-32C u32 of the 16 bytes from "CPMZ" on
//
// A note is believed only as the last 28 bytes of a file whose size is
// covered + 28, so a file cut short, appended to (concatenated .zst files)
// or damaged is scanned as any other. Only a note saying "no index 0" is
// used, so a note that lies cannot make wrong rows: the file is read as
// 1-based, and an index 0 in it is an error naming its line
// (ErrIndexZero).
const (
	zstdNoteMagic = 0x184D2A5E
	zstdNoteSize  = 28
	zstdNoteFlag0 = 1 // flags bit 0: the text holds an index 0
)

var zstdNoteID = []byte("CPMZ")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendZstdNote appends the note of a .zst output of covered bytes whose
// text holds an index 0 or not.
func appendZstdNote(b []byte, covered int64, zero bool) []byte {
	b = binary.LittleEndian.AppendUint32(b, zstdNoteMagic)
	b = binary.LittleEndian.AppendUint32(b, zstdNoteSize-8)
	start := len(b)
	b = append(b, zstdNoteID...)
	flags := byte(0)
	if zero {
		flags |= zstdNoteFlag0
	}
	b = append(b, 1, flags, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(covered))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// ZstdNote reads the note at the end of f, a regular file of size bytes,
// and reports whether its text holds a feature index 0 (zero), and
// whether f ends with a valid note that covers all of it (ok; zero means
// nothing otherwise). It reads 28 bytes with ReadAt and leaves f's offset
// as it was.
func ZstdNote(f *os.File, size int64) (zero, ok bool) {
	if size < zstdNoteSize+4 {
		return false, false
	}
	var b [zstdNoteSize]byte
	if _, err := f.ReadAt(b[:], size-zstdNoteSize); err != nil {
		return false, false
	}
	le := binary.LittleEndian
	switch {
	case le.Uint32(b[0:]) != zstdNoteMagic, le.Uint32(b[4:]) != zstdNoteSize-8,
		!bytes.Equal(b[8:12], zstdNoteID), b[12] != 1, b[13]&^zstdNoteFlag0 != 0, le.Uint16(b[14:]) != 0,
		le.Uint64(b[16:]) != uint64(size-zstdNoteSize),
		le.Uint32(b[24:]) != crc32.Checksum(b[8:24], castagnoli):
		return false, false
	}
	return b[13]&zstdNoteFlag0 != 0, true
}
