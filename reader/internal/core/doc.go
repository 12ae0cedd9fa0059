// Package core holds what every format package of reader shares: the
// BlockReader and BlockWriter interfaces, the options (one Option type for
// readers and writers alike), the error taxonomy (the sentinels of the
// ErrBadInput class, ParseError, RowError, SchemaError), the validation of
// rows handed out (CheckRows), Open's decompression by magic bytes, and the
// atomically replaced, optionally compressed output file (CreateCompressed).
//
// It imports no other package of reader, so every format package may
// import it; package reader gives its names to callers outside reader.
package core
