// Package rowcache reads and writes the binary row cache: Create writes
// one (Writer), Open reads one back as a reader.BlockReader, Tee writes a
// cache while another BlockReader is read, and Check tells whether a cache
// still matches its source. Package reader's OpenBlocks opens a cache like
// any other input, detected by Magic.
//
// Multi-pass training over text re-parses every row on every pass; parsing
// costs about 6 µs for an MNIST row of 150 nonzeros (2.1 KB of text). The
// cache stores the parsed rows once, in a form that decodes at a few
// nanoseconds per nonzero, so passes after the first cost little more than
// the SGD steps themselves.
//
// It is a purpose-built format rather than Arrow IPC because of what it
// holds: sparse rows whose indices ascend within a row, and whose values
// often come from a small set (pixel/255, binary features, a few tf-idf
// levels). Delta-coded indices take one byte for gaps below 128 and
// dictionary-coded values one byte, so an MNIST nonzero costs 2 bytes where
// Arrow's uint32+float32 layout costs 8 (bench/RESULTS.md has the
// measurements). Every block carries a CRC-32C, so a damaged cache is an
// error, never wrong rows.
//
// Layout (integers little-endian, "uv" an unsigned LEB128 varint, "sv" a
// zigzag varint as binary.AppendVarint writes it):
//
//	header   "CPMCACHE" | version u32 = 2 | maxIndex u32 (the WithMaxIndex the
//	         rows were checked against) | source size i64 | source mtime i64
//	         (Unix ns) | source head u64 (CRC-64/ECMA of its first 64 KiB) |
//	         path length u32 | path | zero-based u8 (the WithZeroBased the
//	         rows were read with: 0 auto, 1 no, 2 yes) | CRC-32C of the
//	         header so far
//	block    rows u32 (> 0) | nnz u32 | max index u32 | dict field u32 (bits
//	         0-30: the dictionary length, 0..256; bit 31: the rows have query
//	         ids) | payload length u32 | CRC-32C u32 of the five fields
//	         before it and the payload | payload
//	payload  labels: rows × f32 | row lengths: rows × uv | indices: nnz × uv,
//	         each the gap to the previous index of its row (the first from 0),
//	         so always >= 1 | values: if dict length > 0, dict length × f32
//	         then nnz × u8 codes, else nnz × f32 | if bit 31: query ids:
//	         rows × sv, each the difference from the previous row's (the
//	         first from 0)
//	trailer  rows u32 = 0 | total rows u64 | total nnz u64 | blocks u64 |
//	         CRC-32C of the trailer so far
//
// A cache of version 1 (an earlier build's, without the zero-based byte and
// query ids) is not read: Open fails and Check reports it stale, with an
// error wrapping ErrStale and reader.ErrCorrupt, so that package input
// rebuilds it on the next pass over its source. Check also reports a cache
// stale when WithZeroBased differs from the one recorded.
//
// A cache file exists only complete: it is written to a temporary file and
// renamed into place when the last block is in (Create, Writer).
package rowcache
