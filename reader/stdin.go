package reader

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// StdinName is the name under which the readers read standard input and
// name it in errors ("-:7:3: ..."): with the opener of Stdin.Option,
// "-" opens the relay or the temporary copy instead of os.Stdin.
const StdinName = "-"

// stdinPrefix begins the names of the temporary files that hold standard
// input while it is read.
const stdinPrefix = "cpm-stdin-"

// Stdin is standard input (or any one-time stream) made readable by the
// readers of this package under the name StdinName (see OpenStdin).
type Stdin struct {
	format Format

	mu    sync.Mutex
	pipe  *os.File   // LIBSVM: read end of the relay (or the regular file itself), until the reader opens it
	relay chan error // LIBSVM through the relay: its outcome, sent once
	rerr  error      // the relay's outcome once received
	done  bool       // rerr holds it
	spool string     // other formats: the temporary file holding the whole stream
}

// OpenStdin tells the format of the stream r from its first bytes, as
// DetectFormat does for a file, and makes it readable under the name
// StdinName through the option Option:
//
//   - LIBSVM text (plain, zstd, gzip or bzip2) is read as it arrives: a
//     goroutine relays the bytes read so far and the rest of r through a
//     pipe, which the reader opens once; nothing is written to disk. When
//     r is a regular file (standard input redirected from a file), its
//     first bytes are read in place (ReadAt) and the reader reads r
//     itself, as it reads any file;
//   - an Arrow IPC file or stream, Parquet or a row cache is first copied
//     whole to a temporary file in dir (os.TempDir() when dir is "") named
//     cpm-stdin-*: Arrow files and Parquet are read from their footer
//     back, the cache by offset, and the Arrow stream reader bounds each
//     message by the size of its input, which a pipe does not have. A
//     failed copy (a full disk) is an error naming the file, which is
//     then removed.
//
// Close removes the temporary file and stops the relay.
func OpenStdin(r io.Reader, dir string) (*Stdin, error) {
	if f, ok := r.(*os.File); ok {
		if s, ok := openRegular(f); ok {
			return s, nil
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(8)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", StdinName, err)
	}
	s := &Stdin{format: sniff(head)}
	if s.format == LIBSVM {
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", StdinName, err)
		}
		s.pipe, s.relay = pr, make(chan error, 1)
		go func() {
			_, err := io.Copy(pw, br)
			pw.Close()
			s.relay <- err
		}()
		return s, nil
	}
	if err := s.spoolTo(br, dir); err != nil {
		return nil, err
	}
	return s, nil
}

// openRegular is OpenStdin of LIBSVM text in a regular file f, read from
// its current offset; ok is false if f is not a regular file or holds
// another format.
func openRegular(f *os.File) (s *Stdin, ok bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, false
	}
	var head [8]byte
	n, err := f.ReadAt(head[:], off)
	if err != nil && err != io.EOF || sniff(head[:n]) != LIBSVM {
		return nil, false
	}
	return &Stdin{format: LIBSVM, pipe: f}, true
}

// spoolTo copies r to a new temporary file in dir.
func (s *Stdin) spoolTo(r io.Reader, dir string) error {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, stdinPrefix+"*")
	if err != nil {
		return fmt.Errorf("%s (%s) needs a temporary copy: %w", StdinName, s.format, err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%s (%s): copying it to temporary file %s: %w", StdinName, s.format, f.Name(), err)
	}
	s.spool = f.Name()
	return nil
}

// Format is the format of the stream, told from its first bytes.
func (s *Stdin) Format() Format { return s.format }

// Spool is the temporary file holding the stream, or "" for LIBSVM text,
// which is not copied.
func (s *Stdin) Spool() string { return s.spool }

// Option is the WithOpener option under which the readers open the stream
// as StdinName; any other path is opened with os.Open. LIBSVM text can be
// opened once.
func (s *Stdin) Option() Option { return WithOpener(s.open) }

func (s *Stdin) open(path string) (*os.File, error) {
	if path != StdinName {
		return os.Open(path)
	}
	if s.spool != "" {
		return os.Open(s.spool)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pipe
	if p == nil {
		return nil, fmt.Errorf("%s: standard input is read once", StdinName)
	}
	s.pipe = nil
	return p, nil
}

// Err waits for the relay of LIBSVM text to end and returns its error: a
// failed read of the stream, which the reader of the pipe saw as its end.
// Call it once the reader has reached the end; it returns nil for a
// spooled stream.
func (s *Stdin) Err() error {
	if s.relay == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.rerr, s.done = <-s.relay, true
	}
	if s.rerr != nil {
		return &ParseError{Path: StdinName, Err: s.rerr}
	}
	return nil
}

// Close closes the relay's pipe if no reader took it (never a regular
// file read in place) and removes the temporary file.
func (s *Stdin) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pipe != nil && s.relay != nil {
		s.pipe.Close()
		s.pipe = nil
	}
	if s.spool != "" {
		err := os.Remove(s.spool)
		s.spool = ""
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// openStdinBlocks is OpenBlocks of standard input: r read as OpenStdin
// does, in blocks of blockRows rows.
func openStdinBlocks(r io.Reader, blockRows int, opts []Option) (BlockReader, error) {
	s, err := OpenStdin(r, "")
	if err != nil {
		return nil, err
	}
	b, err := openFormat(StdinName, s.format, blockRows, append(opts, s.Option()))
	if err != nil {
		s.Close()
		return nil, err
	}
	return &stdinBlocks{BlockReader: b, s: s}, nil
}

// loadStdin is Load of standard input: r read as OpenStdin does.
func loadStdin(r io.Reader, opts []Option) (*sparsevec.CSR, error) {
	s, err := OpenStdin(r, "")
	if err != nil {
		return nil, err
	}
	defer s.Close()
	opts = append(opts, s.Option())
	if s.format != LIBSVM {
		b, err := openFormat(StdinName, s.format, 1<<16, opts)
		if err != nil {
			return nil, err
		}
		return ReadAll(b)
	}
	m, err := libsvm.Load(StdinName, opts...)
	if err != nil {
		return nil, err
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// stdinBlocks is the BlockReader of standard input: it checks the relay
// at the end and removes the temporary file on Close.
type stdinBlocks struct {
	BlockReader
	s *Stdin
}

func (b *stdinBlocks) Next() (*sparsevec.CSR, error) {
	blk, err := b.BlockReader.Next()
	if err == io.EOF {
		if rerr := b.s.Err(); rerr != nil {
			return nil, rerr
		}
	}
	return blk, err
}

func (b *stdinBlocks) Close() error {
	err := b.BlockReader.Close()
	if serr := b.s.Close(); err == nil {
		err = serr
	}
	return err
}

var _ core.BlockReader = (*stdinBlocks)(nil)
