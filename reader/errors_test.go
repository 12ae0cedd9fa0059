package reader

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/polyhedral/cpm/reader/rowcache"
)

// Every sentinel of malformed input is of the ErrBadInput class, and so is
// every position error wrapping one, and every RowError; a position error
// carrying an I/O error is not.
func TestErrBadInputClass(t *testing.T) {
	for _, s := range []error{
		ErrSyntax, ErrIndexZero, ErrIndexRange, ErrUnsorted, ErrDuplicate, ErrNonFinite,
		ErrNoLabel, ErrLineTooLong, ErrCorrupt, ErrSchema, ErrNull,
	} {
		if !errors.Is(s, ErrBadInput) {
			t.Errorf("%v: not ErrBadInput", s)
		}
		if errors.Is(s, ErrCorrupt) != (s == ErrCorrupt) {
			t.Errorf("%v: errors.Is(_, ErrCorrupt) = %v", s, !(s == ErrCorrupt))
		}
	}
	pathErr := &fs.PathError{Op: "read", Path: "x", Err: syscall.EIO}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&ParseError{Path: "x", Line: 2, Col: 3, Err: ErrSyntax}, true},
		{&ParseError{Path: "x", Err: fmt.Errorf("%w: zstd stream: bad", ErrCorrupt)}, true},
		{&ParseError{Path: "x", Line: 9, Err: pathErr}, false},
		{&RowError{Path: "x", Row: 3, Column: "features", Err: ErrUnsorted}, true},
		{&RowError{Path: "x", Row: 3, Column: "features", Err: errors.New("3000000000 nonzeros")}, true},
		{&SchemaError{Path: "x", Column: "label", Msg: "type int64"}, true},
		{&rowcache.Error{Path: "x", Offset: 8, Err: ErrCorrupt}, true},
		{&rowcache.Error{Path: "x", Offset: 8, Err: pathErr}, false},
		{rowcache.ErrStale, false},
		{ErrBlocksHeld, false},
		{pathErr, false},
	} {
		if got := errors.Is(tc.err, ErrBadInput); got != tc.want {
			t.Errorf("errors.Is(%v, ErrBadInput) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
