//go:build !unix

package atomicfile

import (
	"errors"
	"os"
)

// alive reports whether process pid exists, as far as os.FindProcess can
// tell; where it cannot, the process counts as alive and its temporaries
// are kept.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// writable reports whether the process may create files in the directory
// path by creating and removing one; other files are assumed writable.
func writable(path string, isDir bool) error {
	if !isDir {
		return nil
	}
	f, err := createTemp(path, "probe")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// dupFD reports that descriptors cannot be named by path here.
func dupFD(n int, name string) (*os.File, error) {
	return nil, &os.PathError{Op: "dup", Path: name, Err: errors.ErrUnsupported}
}
