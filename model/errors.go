package model

import (
	"errors"
	"fmt"

	"github.com/polyhedral/cpm/internal/budget"
)

// Kinds of malformed model file. A *FormatError wraps exactly one of them;
// test with errors.Is.
var (
	// ErrNotModel means the input does not start with the magic "CPMMODEL".
	ErrNotModel = errors.New("not a cpm model file")
	// ErrVersion means the format version is not one this build reads.
	ErrVersion = errors.New("unsupported model format version")
	// ErrTruncated means the input ends before the model does.
	ErrTruncated = errors.New("truncated")
	// ErrChecksum means the trailing CRC-32C does not match the contents.
	ErrChecksum = errors.New("checksum mismatch (file is corrupt)")
	// ErrCorrupt means the header is inconsistent: a size beyond its cap,
	// a shape that contradicts another field, a non-canonical encoding,
	// trailing bytes, or a decoded model that fails validation.
	ErrCorrupt = errors.New("corrupt")
	// ErrTooLarge means the model, though well formed, would take more
	// memory than Read allows: more than MemoryFactor times the bytes of
	// its weight sections, or more than the limit given to ReadLimit or
	// LoadLimit.
	ErrTooLarge = errors.New("model too large for memory")
)

// ErrMemoryLimit is wrapped, besides ErrTooLarge, by the refusal of a model
// beyond the limit given to ReadLimit or LoadLimit. It is the same value as
// sgd.ErrMemoryLimit.
var ErrMemoryLimit = budget.ErrMemoryLimit

// ErrInvalid is wrapped by the errors of Model.Validate, and so by Write,
// Save and ExportText when they are given an invalid Model.
var ErrInvalid = errors.New("invalid model")

// FormatError reports a malformed model file: which file, where, and what.
type FormatError struct {
	Name   string // the name given to Read, or the path given to Load
	Offset int64  // byte offset at which the problem was detected
	Err    error  // wraps ErrNotModel, ErrVersion, ErrTruncated, ErrChecksum, ErrCorrupt or ErrTooLarge
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: %v (at byte %d)", e.Name, e.Err, e.Offset)
}

func (e *FormatError) Unwrap() error { return e.Err }

// invalidf returns an error wrapping kind with a formatted explanation.
func invalidf(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)
}
