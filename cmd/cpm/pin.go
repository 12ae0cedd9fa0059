package main

import (
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"io/fs"
	"os"
	"time"
)

// errInputChanged says that an input file of a streamed run is no longer
// the file the run started with: replaced (a rename over it, a cache
// rebuilt by another run), rewritten, grown or truncated. Every pass
// would otherwise train on whatever the name holds then.
var errInputChanged = errors.New("input file changed during training")

// pinEdge is how much of each end of a file pinFile checksums.
const pinEdge = 64 << 10

var pinTable = crc64.MakeTable(crc64.ECMA)

// pin is what a streamed run records of one input file when it starts
// reading it: the file (device and inode, through os.SameFile), its size,
// its modification time and a CRC-64 of its first and last 64 KiB.
type pin struct {
	path string
	info fs.FileInfo
	sum  uint64
}

// pinFile records the file at path as it is now.
func pinFile(path string) (pin, error) {
	f, err := os.Open(path)
	if err != nil {
		return pin{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return pin{}, err
	}
	h := crc64.New(pinTable)
	size := fi.Size()
	head := min(size, pinEdge)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, head)); err != nil {
		return pin{}, fmt.Errorf("%s: %w", path, err)
	}
	if tail := max(head, size-pinEdge); tail < size {
		if _, err := io.Copy(h, io.NewSectionReader(f, tail, size-tail)); err != nil {
			return pin{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	return pin{path: path, info: fi, sum: h.Sum64()}, nil
}

// check returns nil if the file at p.path is still the one p recorded, or
// an error wrapping errInputChanged that names the file and says what
// differs.
func (p pin) check() error {
	now, err := pinFile(p.path)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", p.path, errInputChanged, err)
	}
	stamp := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
	var what string
	switch {
	case !os.SameFile(p.info, now.info):
		what = "another file now has its name (replaced or renamed over)"
	case now.info.Size() != p.info.Size():
		what = fmt.Sprintf("%d bytes, %d when training started", now.info.Size(), p.info.Size())
	case !now.info.ModTime().Equal(p.info.ModTime()):
		what = fmt.Sprintf("modified at %s, %s when training started", stamp(now.info.ModTime()), stamp(p.info.ModTime()))
	case now.sum != p.sum:
		what = "its first or last 64 KiB differ from when training started"
	default:
		return nil
	}
	return fmt.Errorf("%s: %w: %s; every pass must read the same data", p.path, errInputChanged, what)
}
