package core

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrBadInput is the class of every error that says the input data is
// malformed, as opposed to unreadable: errors.Is(err, ErrBadInput) holds for
// each sentinel below, for every *RowError, and for a *ParseError,
// *SchemaError or *rowcache.Error that wraps one of the sentinels, but not for
// one that carries an I/O error of the operating system. A command maps the two classes to
// different exit statuses with this one test.
var ErrBadInput = errors.New("bad input")

// badInput is a sentinel error of the ErrBadInput class.
type badInput struct{ msg string }

func (e *badInput) Error() string { return e.msg }

// Is reports whether target is ErrBadInput.
func (e *badInput) Is(target error) bool { return target == ErrBadInput }

// Sentinel errors name the kind of malformed input; each one matches
// ErrBadInput. They are wrapped in a *ParseError, *RowError, *SchemaError
// or *rowcache.Error carrying the position; test for them with errors.Is.
var (
	// ErrSyntax: a number that does not parse, or a feature without ':'.
	ErrSyntax error = &badInput{"syntax error"}
	// ErrIndexZero: feature index 0 (LIBSVM indices are 1-based).
	ErrIndexZero error = &badInput{"feature index 0 (indices are 1-based)"}
	// ErrIndexRange: feature index above the MaxIndex option, including any
	// index that overflows uint32.
	ErrIndexRange error = &badInput{"feature index out of range"}
	// ErrUnsorted: a feature index below the previous one on the line.
	ErrUnsorted error = &badInput{"feature indices not ascending"}
	// ErrDuplicate: a feature index equal to the previous one on the line.
	ErrDuplicate error = &badInput{"duplicate feature index"}
	// ErrNonFinite: a label or value that is NaN or ±Inf, or overflows
	// float32.
	ErrNonFinite error = &badInput{"non-finite number"}
	// ErrNoLabel: a line whose first token is not a label, e.g. "3:1 4:2".
	ErrNoLabel error = &badInput{"missing label"}
	// ErrLineTooLong: a line longer than the MaxLineBytes option.
	ErrLineTooLong error = &badInput{"line too long"}
	// ErrCorrupt: a file that is truncated or corrupt below the level of
	// text: a compressed stream, an Arrow or Parquet file, a row cache.
	ErrCorrupt error = &badInput{"corrupt input"}
	// ErrSchema: an Arrow or Parquet file whose columns are not the ones
	// described in the package documentation. It is wrapped in a
	// *SchemaError naming the column.
	ErrSchema error = &badInput{"unsupported schema"}
	// ErrNull: a null label, feature list, list element, index or value.
	// It is wrapped in a *RowError.
	ErrNull error = &badInput{"null value"}
)

// maxNear bounds the token quoted in an error message.
const maxNear = 40

// ParseError records where reading failed. Line and Col are 1-based; Col is
// the byte column of the first byte of the offending whitespace-separated
// token, or MaxLineBytes+1 for ErrLineTooLong. Col is 0 for read and
// decompression errors, which concern no token (Line is then the line being
// read), and Line is 0 for errors of Open's reader on its own.
//
// Err is one of the package's sentinel errors, possibly wrapped with detail,
// or the underlying read error.
type ParseError struct {
	Path string
	Line int
	Col  int
	Near string // the offending token, cut to 40 bytes; may be empty
	Err  error
}

// Error renders "path:line:col: what is wrong (near "token")", leaving out
// the parts that are zero or empty.
func (e *ParseError) Error() string {
	b := make([]byte, 0, 64+len(e.Path)+len(e.Near))
	b = append(b, e.Path...)
	if e.Line > 0 {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(e.Line), 10)
		if e.Col > 0 {
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(e.Col), 10)
		}
	}
	b = append(b, ": "...)
	if e.Err != nil {
		b = append(b, e.Err.Error()...)
	}
	if e.Near != "" {
		b = append(b, " (near "...)
		b = strconv.AppendQuote(b, e.Near)
		b = append(b, ')')
	}
	return string(b)
}

// Unwrap returns e.Err, so errors.Is(err, ErrUnsorted) and the like work.
func (e *ParseError) Unwrap() error { return e.Err }

// NearText returns tok cut to maxNear bytes for an error message.
func NearText(tok []byte) string {
	if len(tok) > maxNear {
		return string(tok[:maxNear]) + "..."
	}
	return string(tok)
}

// IndexRangeError says which maximum a feature index exceeds. It is built
// only when a line fails, so the parser makes no allocation per row.
func IndexRangeError(maxIndex uint32) error {
	return fmt.Errorf("%w: above the maximum %d", ErrIndexRange, maxIndex)
}

// LineTooLongError says which bound a line exceeds.
func LineTooLongError(maxLine int) error {
	return fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, maxLine)
}

// ErrBadRead reports a Reader that returned an impossible count. Like every
// other error a *ParseError carries but an I/O error of the system, it is of
// the ErrBadInput class.
var ErrBadRead error = &badInput{"reader returned an invalid count"}

// ReadError positions a read error at line. An error that Open's reader
// already wrapped in a *ParseError without a line gets the line filled in
// (on a copy); any other error is wrapped.
func ReadError(path string, line int, err error) error {
	if pe, ok := err.(*ParseError); ok && pe.Line == 0 {
		cp := *pe
		cp.Line = line
		if cp.Path == "" {
			cp.Path = path
		}
		return &cp
	}
	return &ParseError{Path: path, Line: line, Err: err}
}

// ErrStopped is returned by a pipeline that was stopped before its end.
var ErrStopped = errors.New("reader: stopped")

// SchemaError reports an Arrow or Parquet file whose schema is not the
// one this package reads: a column with the wrong type, a missing or an
// extra column, or columns out of order. Errors.Is(err, ErrSchema) holds.
type SchemaError struct {
	Path   string
	Column string // the column concerned
	Msg    string // what is wrong, e.g. "type list<item: int64>, want ..."
}

// Error renders "path: column "name": what is wrong".
func (e *SchemaError) Error() string {
	return e.Path + ": column " + strconv.Quote(e.Column) + ": " + e.Msg
}

// Unwrap returns ErrSchema.
func (e *SchemaError) Unwrap() error { return ErrSchema }

// RowError reports a bad row of an Arrow or Parquet file: Row is its
// 1-based number counted from the start of the file, Column is "label" or
// "features", and Err wraps one of the sentinels ErrIndexZero,
// ErrIndexRange, ErrUnsorted, ErrDuplicate, ErrNonFinite or ErrNull, with
// detail. CreateBlocks returns RowErrors too, Row counting the rows written.
// A row cache's index above WithMaxIndex is a RowError too (any other
// damage of a cache is a *rowcache.Error).
type RowError struct {
	Path   string
	Row    int64
	Column string
	Err    error
}

// Error renders `path: row N: column "features": what is wrong`.
func (e *RowError) Error() string {
	b := make([]byte, 0, 64+len(e.Path))
	b = append(b, e.Path...)
	b = append(b, ": row "...)
	b = strconv.AppendInt(b, e.Row, 10)
	b = append(b, ": column "...)
	b = strconv.AppendQuote(b, e.Column)
	b = append(b, ": "...)
	if e.Err != nil {
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Unwrap returns e.Err, so errors.Is(err, ErrUnsorted) and the like work.
func (e *RowError) Unwrap() error { return e.Err }

// Is reports whether target is ErrBadInput: a bad row is malformed input
// whatever e.Err says of it (a row of more nonzeros than a batch can hold
// wraps no sentinel).
func (e *RowError) Is(target error) bool { return target == ErrBadInput }
