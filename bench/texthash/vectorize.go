package main

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/polyhedral/cpm/featurehash"
)

// isWord reports whether r is a word character in the sense of Python's
// re module on str patterns: str.isalnum() or '_'. Letters (L*) and numbers
// (N*) approximate isalnum; Go's regexp \w is ASCII-only, so it is not used.
func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// tokens appends to dst the tokens of text that scikit-learn's default
// token_pattern (?u)\b\w\w+\b finds after lowercasing: every maximal run of
// two or more word characters (counted in code points), in order. text is
// lowercased first with strings.ToLower.
func tokens(dst []string, text string) []string {
	text = strings.ToLower(text)
	start, runes := -1, 0
	for i, r := range text {
		if isWord(r) {
			if start < 0 {
				start, runes = i, 0
			}
			runes++
			continue
		}
		if start >= 0 && runes >= 2 {
			dst = append(dst, text[start:i])
		}
		start = -1
	}
	if start >= 0 && runes >= 2 {
		dst = append(dst, text[start:])
	}
	return dst
}

// feature is one nonzero of a hashed row: a 0-based column and its value.
type feature struct {
	index int
	value float64
}

// vectorizer hashes texts as scikit-learn's
// HashingVectorizer(n_features=n) does with its other defaults
// (lowercase, the default token pattern, alternate_sign=True, norm='l2',
// binary=False). Its scratch buffers are reused between calls.
type vectorizer struct {
	n    int // number of columns, > 0
	toks []string
	acc  map[int]float64
}

func newVectorizer(n int) *vectorizer {
	return &vectorizer{n: n, acc: make(map[int]float64)}
}

// hashToken returns the column of tok and the sign of its count.
func (v *vectorizer) hashToken(tok string) (int, float64) {
	return column(int32(featurehash.Murmur3([]byte(tok), 0)), v.n)
}

// column maps a token's hash h, MurmurHash3 with seed 0 read as int32, to
// its column and sign as sklearn's FeatureHasher does: column = |h| mod n,
// sign = +1 if h >= 0 else -1. |h| is taken in int64, so h = -2^31 gives
// 2^31 mod n, which is what sklearn computes for it.
func column(h int32, n int) (int, float64) {
	a := int64(h)
	sign := 1.0
	if a < 0 {
		a, sign = -a, -1
	}
	return int(a % int64(n)), sign
}

// row appends to dst the nonzeros of text's hashed row, sorted by column:
// signed counts summed per column, then divided by the row's L2 norm.
// Columns whose signed counts cancel to 0 are left out (sklearn keeps them
// as explicit zeros in its CSR matrix). A text with no token gives no
// nonzero.
func (v *vectorizer) row(dst []feature, text string) []feature {
	v.toks = tokens(v.toks[:0], text)
	clear(v.acc)
	for _, t := range v.toks {
		j, s := v.hashToken(t)
		v.acc[j] += s
	}
	start := len(dst)
	for j, x := range v.acc {
		if x != 0 {
			dst = append(dst, feature{j, x})
		}
	}
	out := dst[start:]
	slices.SortFunc(out, func(a, b feature) int { return a.index - b.index })
	var ss float64 // summed in column order, as sklearn sums a sorted CSR row
	for _, f := range out {
		ss += f.value * f.value
	}
	if ss > 0 {
		norm := math.Sqrt(ss)
		for i := range out {
			out[i].value /= norm
		}
	}
	return dst
}
