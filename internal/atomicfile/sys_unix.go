//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// alive reports whether process pid exists: kill(pid, 0) fails with ESRCH
// only for a process that does not. A process of another user (EPERM) is
// alive.
func alive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// writable reports whether the process may write path (a directory: create
// files in it), by access(2), which also sees a read-only file system.
func writable(path string, _ bool) error {
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return &os.PathError{Op: "access", Path: path, Err: err}
	}
	return nil
}

// dupFD returns a new descriptor for the open file of descriptor n, which
// shares its offset and flags (O_APPEND of a shell's >>), named name.
func dupFD(n int, name string) (*os.File, error) {
	d, err := syscall.Dup(n)
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: name, Err: err}
	}
	syscall.CloseOnExec(d)
	return os.NewFile(uintptr(d), name), nil
}
