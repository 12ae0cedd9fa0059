package libsvm

import (
	"math"
	"strconv"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// pow10f holds the powers of ten that float32 represents exactly: 10^10 =
// 2^10·5^10 and 5^10 < 2^24.
var pow10f = [11]float32{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}

// pow10d holds the powers of ten that float64 represents exactly (5^22 < 2^53).
var pow10d = [23]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// isSpace reports the token separators (core.IsSpace).
var isSpace = core.IsSpace

// isEnd reports the bytes that end a token: the separators and '#', which
// starts a comment wherever it appears, glued to a token or not (as
// scikit-learn's load_svmlight_file reads it).
var isEnd = [256]bool{' ': true, '\t': true, '\r': true, '\v': true, '\f': true, '#': true}

// scanFloat parses the float32 token that starts at b[i] and ends at the
// next separator or '#' (isEnd) or at len(b). It returns the value and the index
// just past the token.
//
// Fast path (Clinger 1990, "How to read floating point numbers accurately"):
// the decimal mantissa m and exponent e are read directly; when m < 2^24 and
// |e| <= 10, float32(m) and 10^|e| are both exact float32 values, so one IEEE
// multiplication or division gives the correctly rounded result, which is
// what strconv.ParseFloat(s, 32) returns. A second exact path covers
// m < 2^53 and |e| <= 22 through float64 (see the comment there). Every
// other token (more digits,
// larger exponents, hex floats, "inf", "nan", junk) goes to
// strconv.ParseFloat.
//
// The error is ErrSyntax for a token that is not a number and ErrNonFinite
// for NaN, ±Inf, or a magnitude that overflows float32.
func scanFloat(b []byte, i int) (float32, int, error) {
	start := i
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	// m collects the digits before and after the point; nd counts them,
	// leading zeros included.
	i, m, nd := scanDigits(b, i, 0, 0)
	e := 0
	if i < len(b) && b[i] == '.' {
		k := nd
		i, m, nd = scanDigits(b, i+1, m, nd)
		e = k - nd
	}
	// nd > 19 may have overflowed m; nd == 0 is not a number ("." or "-").
	fast := nd > 0 && nd <= 19
	if fast && i < len(b) && b[i]|0x20 == 'e' {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		var xm uint64
		var ne int
		i, xm, ne = scanDigits(b, i, 0, 0)
		if ne == 0 || ne > 4 {
			fast = false
		}
		x := int(xm) // at most 4 digits on the fast path
		if eneg {
			x = -x
		}
		e += x
	}
	if fast && (i == len(b) || isEnd[b[i]]) {
		var f float32
		switch {
		case m == 0:
			f = 0
		case m < 1<<24 && e >= -10 && e <= 10:
			f = float32(m)
			if e < 0 {
				f /= pow10f[-e]
			} else {
				f *= pow10f[e]
			}
		case m < 1<<53 && e >= -22 && e <= 22:
			// float64 path: r is the correctly rounded float64 of the
			// decimal. Rounding r to float32 equals rounding the decimal
			// directly unless r sits exactly on a float32 midpoint (a
			// midpoint strictly between them would be a closer float64);
			// midpoints, subnormal float32 results and overflow go to
			// strconv.
			r := float64(m)
			if e < 0 {
				r /= pow10d[-e]
			} else {
				r *= pow10d[e]
			}
			if math.Float64bits(r)&(1<<29-1) == 1<<28 || r < 0x1p-126 || r > math.MaxFloat32 {
				return slowFloat(b, start, i)
			}
			f = float32(r)
		default:
			return slowFloat(b, start, i)
		}
		if neg {
			f = -f
		}
		return f, i, nil
	}
	for i < len(b) && !isEnd[b[i]] {
		i++
	}
	return slowFloat(b, start, i)
}

// slowFloat parses b[start:end] with strconv.
func slowFloat(b []byte, start, end int) (float32, int, error) {
	x, err := strconv.ParseFloat(string(b[start:end]), 32)
	f := float32(x)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, end, core.ErrNonFinite
		}
		return 0, end, core.ErrSyntax
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return f, end, core.ErrNonFinite
	}
	return f, end, nil
}

// parseFloat32 parses all of tok as a float32 with the rules of scanFloat.
// A separator or '#' inside tok is a syntax error.
func parseFloat32(tok []byte) (float32, error) {
	f, end, err := scanFloat(tok, 0)
	if err == nil && end != len(tok) {
		return 0, core.ErrSyntax
	}
	return f, err
}

// scanDigits reads the run of ASCII digits at b[i:] and returns the index
// past it, m*10^n + (its value) and nd+n, where n is its length. m
// overflows past 19 digits in all: callers check nd. It is small enough to
// be inlined; a branch-free 8-bytes-at-a-time (SWAR) version measured ~25%
// slower on MNIST-like text, whose numbers are short.
func scanDigits(b []byte, i int, m uint64, nd int) (int, uint64, int) {
	for ; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		m = m*10 + uint64(c)
		nd++
	}
	return i, m, nd
}
