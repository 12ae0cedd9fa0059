package libsvm

import (
	"bytes"
	"fmt"
	"math"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// Detail errors wrap ErrSyntax to say which part failed.
var (
	errBadLabel = fmt.Errorf("%w: bad label", core.ErrSyntax)
	errBadIndex = fmt.Errorf("%w: bad feature index", core.ErrSyntax)
	errNoColon  = fmt.Errorf("%w: missing ':' in feature", core.ErrSyntax)
	errBadValue = fmt.Errorf("%w: bad feature value", core.ErrSyntax)
	errBadQID   = fmt.Errorf("%w: bad qid", core.ErrSyntax)
	// A file has qid:N on every row or on none.
	errQIDMissing = fmt.Errorf("%w: row without qid:N after rows with one (a file has qid on every row or on none)", core.ErrSyntax)
	errQIDExtra   = fmt.Errorf("%w: row with qid:N after rows without one (a file has qid on every row or on none)", core.ErrSyntax)
	errNFLabel    = fmt.Errorf("%w label", core.ErrNonFinite)
	errNFValue    = fmt.Errorf("%w value", core.ErrNonFinite)
)

// lineParser parses one LIBSVM line at a time, appending features to idx and
// val. It keeps no per-line allocation: the caller owns and reuses idx and
// val.
type lineParser struct {
	maxIndex uint32
	im       indexMap
	idx      []uint32
	val      []float32
	label    float32
	// Set on lineRow: hasQID tells whether the row has qid:N, qid is N,
	// qidCol the 0-based offset of the qid token or, without one, of the
	// first token after the label (the line's length if none).
	hasQID bool
	qid    int64
	qidCol int

	// zero is set when an index 0 is read with a deferring indexMap (see
	// indexMap.auto); the caller clears it.
	zero bool

	// Set when parse returns lineErr.
	errCol int
	errTok []byte
	err    error
	// errRange is the index (after the shift) of an ErrIndexRange error,
	// 0 for any other error.
	errRange uint64
}

// Results of lineParser.parse.
const (
	lineErr   = -1 // p.err, p.errCol and p.errTok describe the error
	lineEmpty = 0  // blank or comment-only line: no row
	lineRow   = 1  // p.label holds the label, the features were appended
)

// parse parses line, which holds no '\n'. A '#' starts a comment that runs
// to the end of the line, at the start of a token or glued to its end
// ("1 1:2#c" is the row 1 1:2, "1#c" a row with no features); a '#' where a
// value is due ("1 1:#") is a bad value. On lineRow the features have been
// appended to p.idx and p.val. On lineErr p.idx and p.val are left as they
// were before the call (the caller discards the row).
func (p *lineParser) parse(line []byte) int {
	n := len(line)
	i := 0
	for i < n && isSpace[line[i]] {
		i++
	}
	if i == n || line[i] == '#' {
		return lineEmpty
	}

	// Label.
	tok := i
	label, j, err := scanFloat(line, i)
	if err != nil {
		if err == core.ErrSyntax {
			if bytes.IndexByte(line[tok:j], ':') >= 0 {
				err = core.ErrNoLabel
			} else {
				err = errBadLabel
			}
		} else {
			err = errNFLabel
		}
		return p.fail(line, tok, err)
	}
	p.label = label
	i = j
	p.hasQID = false
	p.qidCol = -1

	idx, val := p.idx, p.val
	maxIndex := uint64(p.maxIndex)
	shift := p.im.shift
	var prev uint64 // indices are >= 1, so 0 means none yet (or, with auto, an index 0)
	first := true
	for {
		for i < n && isSpace[line[i]] {
			i++
		}
		if i == n || line[i] == '#' {
			break
		}
		tok = i
		if first {
			p.qidCol = tok
		}

		// Index: decimal digits, read again by bigIndex past 10.
		var v uint64
		var nd int
		i, v, nd = scanDigits(line, i, 0, 0)
		if nd > 10 {
			v = bigIndex(line[tok:i])
		}
		if i == n || line[i] != ':' {
			if first && bytes.HasPrefix(line[tok:], qidPrefix) {
				if q, j, ok := scanQID(line, tok+len(qidPrefix)); ok {
					first = false
					p.hasQID, p.qid = true, q
					i = j
					continue
				}
				return p.fail(line, tok, errBadQID)
			}
			if i > tok && (i == n || isEnd[line[i]]) {
				return p.fail(line, tok, errNoColon)
			}
			return p.fail(line, tok, errBadIndex)
		}
		first = false
		if i == tok {
			return p.fail(line, tok, errBadIndex)
		}
		i++ // ':'
		v += shift
		switch {
		case v == 0:
			if !p.im.auto {
				return p.fail(line, tok, p.im.zeroErr)
			}
			// An index 0 read as it is: it must come first in its row,
			// as the 1 it becomes if the file is 0-based would.
			if len(idx) > len(p.idx) {
				if prev == 0 {
					return p.fail(line, tok, core.ErrDuplicate)
				}
				return p.fail(line, tok, core.ErrUnsorted)
			}
			p.zero = true
		case v > maxIndex:
			r := p.fail(line, tok, p.im.rangeError(p.maxIndex, v))
			p.errRange = v
			return r
		case v == prev:
			return p.fail(line, tok, core.ErrDuplicate)
		case v < prev:
			return p.fail(line, tok, core.ErrUnsorted)
		}
		prev = v

		f, j, err := scanFloat(line, i)
		if err != nil {
			if err == core.ErrNonFinite {
				return p.fail(line, tok, errNFValue)
			}
			return p.fail(line, tok, errBadValue)
		}
		i = j
		idx = append(idx, uint32(v))
		val = append(val, f)
	}
	if p.qidCol < 0 {
		p.qidCol = n
	}
	p.idx, p.val = idx, val
	return lineRow
}

// bigIndex returns the value of a run of more than 10 digits, leading zeros
// aside, or outOfRange if it is out of range anyway.
func bigIndex(digits []byte) uint64 {
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	if len(digits) > 10 {
		return outOfRange
	}
	_, v, _ := scanDigits(digits, 0, 0, 0)
	return v
}

// outOfRange stands for an index of more than 10 digits: above every
// maximum, even after the shift of 0-based indices, and far from overflow.
const outOfRange = 1 << 40

var qidPrefix = []byte("qid:")

// scanQID parses N of "qid:N" starting at b[i]: an optional sign and
// decimal digits, within int64, ending at a separator, '#' or the end of
// the line. It returns N and the index past it.
func scanQID(b []byte, i int) (int64, int, bool) {
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	start := i
	var v uint64
	for i < len(b) && b[i]-'0' <= 9 {
		d := uint64(b[i] - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, i, false
		}
		v = v*10 + d
		i++
	}
	if i == start || (i < len(b) && !isEnd[b[i]]) {
		return 0, i, false
	}
	if neg {
		return -int64(v), i, true
	}
	return int64(v), i, true
}

// qidMismatch fails the row just parsed, whose query id presence
// disagrees with the rows before it (which had one if had).
func (p *lineParser) qidMismatch(line []byte, had bool) int {
	err := errQIDExtra
	if had {
		err = errQIDMissing
	}
	return p.fail(line, p.qidCol, err)
}

// fail records an error on the token starting at line[tok].
func (p *lineParser) fail(line []byte, tok int, err error) int {
	end := tok
	for end < len(line) && !isSpace[line[end]] {
		end++
	}
	p.errCol = tok + 1
	p.errTok = line[tok:end]
	p.err = err
	p.errRange = 0
	return lineErr
}

// parseError builds the *ParseError for the last lineErr.
func (p *lineParser) parseError(path string, line int) *core.ParseError {
	return &core.ParseError{Path: path, Line: line, Col: p.errCol, Near: core.NearText(p.errTok), Err: p.err}
}

// tokenStart returns the offset in line of its token t, counting from 0
// for the label, where tokens are runs of non-space bytes. It is for lines
// that parse as rows, whose label, qid and features before the last one
// are separated by spaces (a '#' glued to a token ends the row's
// features).
func tokenStart(line []byte, t int) int {
	i := 0
	for {
		for i < len(line) && isSpace[line[i]] {
			i++
		}
		if t == 0 || i == len(line) {
			return i
		}
		for i < len(line) && !isSpace[line[i]] {
			i++
		}
		t--
	}
}

// limitToken returns the offset in line of its first token after the label,
// at an offset up to end, whose feature index (the digits before a ':') is
// lim, for a line whose tokens before end parsed.
func limitToken(line []byte, end int, lim uint32) (int, bool) {
	i := 0
	for i < len(line) && isSpace[line[i]] {
		i++
	}
	for i < len(line) && !isSpace[line[i]] {
		i++ // the label
	}
	for {
		for i < len(line) && isSpace[line[i]] {
			i++
		}
		if i >= len(line) || i > end {
			return 0, false
		}
		tok := i
		j, v, nd := scanDigits(line, i, 0, 0)
		if nd > 10 {
			v = bigIndex(line[tok:j])
		}
		if j > tok && j < len(line) && line[j] == ':' && v == uint64(lim) {
			return tok, true
		}
		for i < len(line) && !isSpace[line[i]] {
			i++
		}
	}
}
