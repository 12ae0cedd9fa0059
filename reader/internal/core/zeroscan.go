package core

import "bytes"

// IsSpace reports the separators of LIBSVM tokens: space, tab, and the
// carriage return, vertical tab and form feed that C's isspace also
// accepts.
var IsSpace = [256]bool{' ': true, '\t': true, '\r': true, '\v': true, '\f': true}

var zeroColon = []byte("0:")

// ZeroScanner finds a feature index 0 in LIBSVM text handed to Scan in pieces
// cut anywhere: a run of '0' digits followed by ':', preceded by a
// separator (so not "10:", "qid:0" or a line that starts "0:", which has
// no label) and with no '#' before it on its line (so not in a comment).
// It keeps what it needs of the pieces before: whether the current line
// has had a '#', and whether the text so far ends with a separator and
// zeros.
type ZeroScanner struct {
	hash     bool // the current line has a '#' before the scanned point
	sepZeros bool // the text scanned so far ends with a separator and 0 or more '0's
	lastZero bool // the text scanned so far ends with '0'
}

// Scan scans the next piece b and reports whether an index 0 has been
// found. Each byte of b is looked at a bounded number of times: a match's
// line is followed from the previous match on, not from its start.
func (z *ZeroScanner) Scan(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if b[0] == ':' && z.lastZero && z.sepZeros && !z.hash {
		return true // "0" | ":" cut between the pieces
	}
	if !z.hash && spacesOnly(b) {
		return z.scanSpaces(b)
	}
	pos := 0 // z.hash describes the line up to b[pos]
	for i := 0; ; {
		k := bytes.Index(b[i:], zeroColon)
		if k < 0 {
			break
		}
		k += i
		i = k + 2
		j := k
		for j > 0 && b[j-1] == '0' {
			j--
		}
		var sep bool
		if j > 0 {
			sep = IsSpace[b[j-1]]
		} else {
			sep = z.sepZeros
		}
		if !sep {
			continue
		}
		z.follow(b[pos:j])
		pos = j
		if !z.hash {
			return true
		}
	}
	z.follow(b[pos:])
	e := len(b)
	for e > 0 && b[e-1] == '0' {
		e--
	}
	if e > 0 {
		z.sepZeros = IsSpace[b[e-1]]
	} // else b is all zeros: sepZeros holds if it held before b
	z.lastZero = b[len(b)-1] == '0'
	return false
}

// spacesOnly reports whether b holds no '#' and no separator but ' ' and
// '\n', as LIBSVM files mostly are: each byte is then looked for with
// bytes.IndexByte, many times faster than scan's general loop.
func spacesOnly(b []byte) bool {
	for _, c := range []byte("#\t\r\v\f") {
		if bytes.IndexByte(b, c) >= 0 {
			return false
		}
	}
	return true
}

var spaceZero = []byte(" 0")

// scanSpaces is scan of a piece b for which spacesOnly holds, scanned from
// a point outside a comment: an index 0 is " ", one or more '0's and ':'
// (or zeros and ':' continuing the separator and zeros that ended the
// text before b). b has no '#', so the text stays outside a comment.
func (z *ZeroScanner) scanSpaces(b []byte) bool {
	if z.sepZeros {
		k := 0
		for k < len(b) && b[k] == '0' {
			k++
		}
		if k > 0 && k < len(b) && b[k] == ':' {
			return true
		}
	}
	// bytes.Index looks for " 0" by its first byte, which is every few
	// bytes here, unless the text is at most bytealg.MaxBruteForce (64)
	// bytes long: then it compares both bytes at once in vector registers.
	// So the piece is searched in windows of 64 bytes overlapping by one.
	for i := 0; i+1 < len(b); {
		w := b[i:min(len(b), i+64)]
		k := bytes.Index(w, spaceZero)
		if k < 0 {
			i += len(w) - 1
			continue
		}
		j := i + k + 1
		for j < len(b) && b[j] == '0' {
			j++
		}
		if j < len(b) && b[j] == ':' {
			return true
		}
		i = j
	}
	e := len(b)
	for e > 0 && b[e-1] == '0' {
		e--
	}
	if e > 0 {
		z.sepZeros = b[e-1] == ' '
	}
	z.lastZero = b[len(b)-1] == '0'
	return false
}

// follow moves the line state past b.
func (z *ZeroScanner) follow(b []byte) {
	if nl := bytes.LastIndexByte(b, '\n'); nl >= 0 {
		z.hash = bytes.IndexByte(b[nl+1:], '#') >= 0
	} else if !z.hash {
		z.hash = bytes.IndexByte(b, '#') >= 0
	}
}
