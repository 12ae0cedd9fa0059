package budget

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge means that a file read whole is larger than its cap.
var ErrTooLarge = errors.New("file larger than its size cap")

// TooLargeError reports a file refused by ReadFile or ReadAll: Name is
// larger than Limit bytes. It wraps ErrTooLarge.
type TooLargeError struct {
	Name  string
	Limit int64
	Size  int64 // the file's size when known (a regular file), else -1
}

func (e *TooLargeError) Error() string {
	if e.Size >= 0 {
		return fmt.Sprintf("%s: %d bytes, more than the cap of %d bytes: %v", e.Name, e.Size, e.Limit, ErrTooLarge)
	}
	return fmt.Sprintf("%s: more than the cap of %d bytes: %v", e.Name, e.Limit, ErrTooLarge)
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// ReadFile reads the file at path whole if it holds at most limit bytes.
// A regular file larger than limit is refused from its size, before any
// byte is read; anything else (a pipe, a character device such as
// /dev/zero) is read through an io.LimitReader of limit+1 bytes and
// refused when the extra byte arrives, so at most limit+1 bytes are ever
// buffered. A refusal is a *TooLargeError naming path.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := CheckSize(f, path, limit); err != nil {
		return nil, err
	}
	return ReadAll(f, path, limit)
}

// CheckSize refuses, with a *TooLargeError, a regular file f larger than
// limit bytes. It returns nil for other files and when Stat fails (the
// read that follows reports the failure).
func CheckSize(f *os.File, name string, limit int64) error {
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return &TooLargeError{Name: name, Limit: limit, Size: fi.Size()}
	}
	return nil
}

// ReadAll reads r to EOF if it holds at most limit bytes, reading at most
// limit+1 bytes; beyond that it returns a *TooLargeError naming name.
func ReadAll(r io.Reader, name string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Name: name, Limit: limit, Size: -1}
	}
	return b, nil
}
