package budget

import (
	"bytes"
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
	size, err := CheckSize(f, path, limit)
	if err != nil {
		return nil, err
	}
	return ReadAllSize(nil, f, path, limit, size)
}

// CheckSize refuses, with a *TooLargeError, a regular file f larger than
// limit bytes. It returns the size of a regular file, and -1 for other
// files and when Stat fails (the read that follows reports the failure).
func CheckSize(f *os.File, name string, limit int64) (int64, error) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return -1, nil
	}
	if fi.Size() > limit {
		return fi.Size(), &TooLargeError{Name: name, Limit: limit, Size: fi.Size()}
	}
	return fi.Size(), nil
}

// ReadAll reads r to EOF if it holds at most limit bytes, reading at most
// limit+1 bytes; beyond that it returns a *TooLargeError naming name.
func ReadAll(r io.Reader, name string, limit int64) ([]byte, error) {
	return ReadAllSize(nil, r, name, limit, -1)
}

// ReadAllSize is ReadAll for an r expected to hold size bytes (-1:
// unknown), returned after prefix (bytes already read from the same
// input, which count toward limit): it allocates the result at once,
// rather than growing a buffer through several copies, when the size is
// known and within limit.
func ReadAllSize(prefix []byte, r io.Reader, name string, limit, size int64) ([]byte, error) {
	p := int64(len(prefix))
	lr := io.LimitReader(r, max(limit+1-p, 0))
	var b []byte
	if size >= 0 && p+size <= limit {
		b = make([]byte, p+size+1) // +1: a file that grew is read on
		copy(b, prefix)
		n, err := io.ReadFull(lr, b[p:])
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			b = b[:p+int64(n)]
		case err != nil:
			return nil, err
		default:
			more, err := io.ReadAll(lr)
			if err != nil {
				return nil, err
			}
			b = append(b, more...)
		}
	} else {
		buf := bytes.NewBuffer(append([]byte(nil), prefix...))
		if _, err := buf.ReadFrom(lr); err != nil {
			return nil, err
		}
		b = buf.Bytes()
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Name: name, Limit: limit, Size: -1}
	}
	return b, nil
}
