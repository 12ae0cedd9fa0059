// Package binio decodes little-endian binary formats from untrusted input
// without reading past the end, without allocating more than the input can
// justify, and without panicking.
//
// A Decoder reads from a byte slice (NewBytes: the slices it returns alias
// it, nothing is copied) or from an io.Reader (NewReader), through a
// read-ahead buffer that grows only as far as the longest single read asks
// and, when the input length is known, never past the bytes that remain.
// Every read that needs more bytes than remain fails with a *ShortError
// (errors.Is ErrShort) that says how many were needed and how many were
// left; other failures of the io.Reader are returned as they are. Callers
// wrap both with the name of the field and the format's own error kinds.
//
// Fixed-width fields are little-endian: U8, U32, U64, F32 (IEEE 754 binary32
// bits) and F64 (binary64 bits). Arrays of n elements of a fixed size are
// decoded chunk by chunk (Array): with a known input length the element
// count is first checked against the bytes that remain (Need), so a header
// that declares 2^40 elements fails before anything is allocated; with an
// unknown length the slice grows geometrically as the bytes arrive, so a
// lying header costs at most twice the bytes actually read.
package binio
