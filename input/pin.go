package input

import (
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// ErrInputChanged says that an input file of a run is no longer what Open
// kept: rewritten in place, grown or truncated (or, where the kept file
// cannot be reopened, replaced under its name). Every pass would otherwise
// train on other data.
var ErrInputChanged = errors.New("input file changed during training")

// pinEdge is how much of each end of a file a pin checksums.
const pinEdge = 64 << 10

var pinTable = crc64.MakeTable(crc64.ECMA)

// pin keeps one input file open for the whole run, so
// that every pass reads that file whatever happens to its name (a rename
// over it, a cache rebuilt by another run), and records its size,
// modification time and a CRC-64 of its first and last 64 KiB, so that a
// rewrite of the file itself is noticed.
type pin struct {
	path string
	f    *os.File // kept open until close
	info fs.FileInfo
	sum  uint64
	// byName is set where the kept file cannot be reopened through
	// /proc/self/fd (not Linux): passes then open the path, and check
	// makes sure it still names the kept file.
	byName bool
}

// pinFile opens the file at path and records it as it is now.
func pinFile(path string) (*pin, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p := &pin{path: path, f: f}
	if p.info, p.sum, err = p.state(); err != nil {
		f.Close()
		return nil, err
	}
	if g, err := p.reopenFD(); err == nil {
		g.Close()
	} else {
		p.byName = true
	}
	return p, nil
}

// state returns the kept file's information and the CRC-64 of its first
// and last pinEdge bytes, read with ReadAt (the file's offset is not
// used).
func (p *pin) state() (fs.FileInfo, uint64, error) {
	fi, err := p.f.Stat()
	if err != nil {
		return nil, 0, err
	}
	h := crc64.New(pinTable)
	size := fi.Size()
	head := min(size, pinEdge)
	if _, err := io.Copy(h, io.NewSectionReader(p.f, 0, head)); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", p.path, err)
	}
	if tail := max(head, size-pinEdge); tail < size {
		if _, err := io.Copy(h, io.NewSectionReader(p.f, tail, size-tail)); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", p.path, err)
		}
	}
	return fi, h.Sum64(), nil
}

// reopenFD returns a new descriptor, with its own offset, of the kept
// file, through /proc/self/fd; it fails where that does not name the kept
// file.
func (p *pin) reopenFD() (*os.File, error) {
	g, err := os.Open("/proc/self/fd/" + strconv.FormatUint(uint64(p.f.Fd()), 10))
	if err != nil {
		return nil, err
	}
	if gi, err := g.Stat(); err != nil || !os.SameFile(gi, p.info) {
		g.Close()
		return nil, errors.New("/proc/self/fd does not reopen the file")
	}
	return g, nil
}

// open returns a new descriptor of the kept file for one pass.
func (p *pin) open() (*os.File, error) {
	if p.byName {
		return os.Open(p.path)
	}
	return p.reopenFD()
}

// check returns nil if the kept file is as pinFile recorded it (and,
// with byName, the path still names it), or an error wrapping
// ErrInputChanged that names the file and says what differs.
func (p *pin) check() error {
	fi, sum, err := p.state()
	if err != nil {
		return fmt.Errorf("%s: %w: %w", p.path, ErrInputChanged, err)
	}
	stamp := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
	var what string
	switch {
	case fi.Size() != p.info.Size():
		what = fmt.Sprintf("%d bytes, %d when training started", fi.Size(), p.info.Size())
	case !fi.ModTime().Equal(p.info.ModTime()):
		what = fmt.Sprintf("modified at %s, %s when training started", stamp(fi.ModTime()), stamp(p.info.ModTime()))
	case sum != p.sum:
		what = "its first or last 64 KiB differ from when training started"
	case p.byName:
		if now, err := os.Stat(p.path); err != nil || !os.SameFile(now, p.info) {
			what = "another file now has its name (replaced or renamed over)"
		}
	}
	if what == "" {
		return nil
	}
	return fmt.Errorf("%s: %w: %s; every pass must read the same data", p.path, ErrInputChanged, what)
}

// close closes the kept file.
func (p *pin) close() error { return p.f.Close() }
