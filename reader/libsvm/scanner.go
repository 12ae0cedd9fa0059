package libsvm

import (
	"bytes"
	"io"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// scanBufBytes is the Scanner's initial buffer. It grows only to hold a
// line longer than that, and then to at most MaxLineBytes+1 bytes.
const scanBufBytes = 256 << 10

// Scanner reads LIBSVM rows one at a time, in the shape of bufio.Scanner:
//
//	s := libsvm.NewScanner(r, path)
//	for s.Scan() {
//		use(s.Label(), s.Row())
//	}
//	if err := s.Err(); err != nil { ... }
//
// It reuses its buffers, so Scan makes no allocation per row once the
// buffers have grown to the longest line. A Scanner is not safe for
// concurrent use.
type Scanner struct {
	r       io.Reader
	path    string
	maxLine int
	p       lineParser

	buf     []byte
	lo, hi  int   // unread bytes are buf[lo:hi]
	scanned int   // buf[lo:lo+scanned] holds no '\n'
	rerr    error // error of the last Read, pending after the buffered data
	empties int   // consecutive Reads that returned nothing

	line int
	err  error
	done bool
	// qids is 0 before the first row, then 1 if it had no qid, 2 if it had.
	qids int8
}

// NewScanner returns a Scanner reading LIBSVM text from r. path names the
// input in error messages only; r is not closed. Use Open to read files,
// compressed or not. The options WithMaxLineBytes, WithMaxIndex and
// WithZeroBased apply; r is read in one pass, so ZeroBasedAuto reads it as
// 1-based (see IsZeroBased).
func NewScanner(r io.Reader, path string, opts ...core.Option) *Scanner {
	o := core.BuildOptions(opts)
	return &Scanner{
		r:       r,
		path:    path,
		maxLine: o.MaxLineBytes,
		p:       lineParser{maxIndex: o.MaxIndex, im: oneShot(o.ZeroBased)},
		buf:     make([]byte, scanBufBytes),
	}
}

// Scan advances to the next row, skipping blank and comment lines. It
// returns false at the end of the input or on the first error; Err tells
// which. After Scan returns false it keeps returning false.
func (s *Scanner) Scan() bool {
	if s.done {
		return false
	}
	for {
		line, ok := s.nextLine()
		if !ok {
			s.done = true
			return false
		}
		s.line++
		s.p.idx, s.p.val = s.p.idx[:0], s.p.val[:0]
		r := s.p.parse(line)
		if r == lineRow {
			q := int8(1)
			if s.p.hasQID {
				q = 2
			}
			if s.qids == 0 {
				s.qids = q
			}
			if q != s.qids {
				r = s.p.qidMismatch(line, s.qids == 2)
			}
		}
		switch r {
		case lineRow:
			return true
		case lineErr:
			s.err = s.p.parseError(s.path, s.line)
			s.done = true
			s.p.idx, s.p.val = s.p.idx[:0], s.p.val[:0]
			return false
		}
	}
}

// Label returns the label of the current row.
func (s *Scanner) Label() float32 { return s.p.label }

// Qid returns the query id of the current row (its qid:N) and whether it
// has one. Either every row of the input has one or none does; a row that
// breaks that rule is an error.
func (s *Scanner) Qid() (int64, bool) { return s.p.qid, s.p.hasQID }

// Row returns the features of the current row. The vector aliases the
// Scanner's buffers: it is valid only until the next call to Scan. Copy it,
// or use ReadBlock, to keep it.
func (s *Scanner) Row() sparsevec.Vector {
	n := len(s.p.idx)
	return sparsevec.Vector{Idx: s.p.idx[:n:n], Val: s.p.val[:n:n]}
}

// Line returns the 1-based line number of the current row, counting blank
// and comment lines.
func (s *Scanner) Line() int { return s.line }

// Err returns the first error met, or nil if the input ended cleanly. Parse
// and read errors are *ParseError values.
func (s *Scanner) Err() error { return s.err }

// ReadBlock appends up to maxRows rows to dst (which the caller resets when
// it wants) and returns how many it appended. It returns io.EOF, with n ==
// 0, once the input is exhausted. On any other error the n rows appended
// before it are valid and err is Err(). It panics if maxRows < 1.
func (s *Scanner) ReadBlock(dst *sparsevec.CSR, maxRows int) (n int, err error) {
	if maxRows < 1 {
		panic("reader: ReadBlock with maxRows < 1")
	}
	for n < maxRows && s.Scan() {
		if s.p.hasQID {
			dst.AppendQid(s.p.label, s.p.qid, s.Row())
		} else {
			dst.Append(s.p.label, s.Row())
		}
		n++
	}
	if n < maxRows {
		if s.err != nil {
			return n, s.err
		}
		if n == 0 {
			return 0, io.EOF
		}
	}
	return n, nil
}

// nextLine returns the next line without its '\n', reading more input as
// needed. It returns false at the end of input or on error (setting s.err).
func (s *Scanner) nextLine() ([]byte, bool) {
	for {
		if k := bytes.IndexByte(s.buf[s.lo+s.scanned:s.hi], '\n'); k >= 0 {
			k += s.scanned
			line := s.buf[s.lo : s.lo+k]
			s.lo += k + 1
			s.scanned = 0
			if len(line) > s.maxLine {
				s.err = s.tooLong()
				return nil, false
			}
			return line, true
		}
		s.scanned = s.hi - s.lo
		if s.hi-s.lo > s.maxLine {
			s.err = s.tooLong()
			return nil, false
		}
		if s.rerr != nil {
			if s.rerr == io.EOF && s.lo < s.hi {
				line := s.buf[s.lo:s.hi]
				s.lo, s.scanned = s.hi, 0
				return line, true
			}
			if s.rerr != io.EOF {
				s.err = core.ReadError(s.path, s.line+1, s.rerr)
			}
			return nil, false
		}
		s.fill()
	}
}

// fill makes room in buf and reads once, recording a read error in s.rerr.
func (s *Scanner) fill() {
	if s.lo > 0 {
		s.hi = copy(s.buf, s.buf[s.lo:s.hi])
		s.lo = 0
	}
	if s.hi == len(s.buf) {
		// One partial line fills buf, and nextLine has checked that it
		// is at most maxLine bytes, so maxLine+1 > len(buf).
		nb := make([]byte, growLine(len(s.buf), s.maxLine))
		copy(nb, s.buf[:s.hi])
		s.buf = nb
	}
	n, err := s.r.Read(s.buf[s.hi:])
	if n < 0 || n > len(s.buf)-s.hi {
		err = core.ErrBadRead
		n = 0
	}
	s.hi += n
	if err != nil {
		s.rerr = err
		return
	}
	if n > 0 {
		s.empties = 0
	} else if s.empties++; s.empties >= 100 {
		s.rerr = io.ErrNoProgress
	}
}

// tooLong reports the line after s.line as too long.
func (s *Scanner) tooLong() error {
	return &core.ParseError{Path: s.path, Line: s.line + 1, Col: s.maxLine + 1, Err: core.LineTooLongError(s.maxLine)}
}
