package main

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/featurehash"
)

func TestTokens(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"a b c", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"I'm an e-mail: x_y z9 42 a1b2", []string{"an", "mail", "x_y", "z9", "42", "a1b2"}},
		{"__ _a", []string{"__", "_a"}},
		{"Straße über ÉCOLE", []string{"straße", "über", "école"}},
		{"日本語 ж Ωμέγα", []string{"日本語", "ωμέγα"}},
		{"déjà-vu\ttab\nnew", []string{"déjà", "vu", "tab", "new"}},
		{"x²y ٣٤", []string{"x²y", "٣٤"}},       // No and Nd count as \w in Python
		{"e\u0301t\u00e9", []string{"t\u00e9"}}, // a combining mark (Mn) is not \w
		{"<a href=3D\"http://x.com/\">", []string{"href", "3d", "http", "com"}},
	} {
		got := tokens(nil, c.text)
		if !slices.Equal(got, c.want) {
			t.Errorf("tokens(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestRow checks the hashed row against a direct transcription of
// HashingVectorizer for a text with repeated and cancelling tokens.
func TestRow(t *testing.T) {
	v := newVectorizer(1 << 18)
	text := "The cat and THE dog; the end."
	got := v.row(nil, text)
	want := map[int]float64{}
	for _, tok := range []string{"the", "cat", "and", "the", "dog", "the", "end"} {
		h := int32(featurehash.Murmur3([]byte(tok), 0))
		j := int(math.Abs(float64(h))) % (1 << 18)
		if h >= 0 {
			want[j]++
		} else {
			want[j]--
		}
	}
	var ss float64
	for _, x := range want {
		ss += x * x
	}
	if len(got) != len(want) {
		t.Fatalf("row has %d nonzeros, want %d", len(got), len(want))
	}
	for i, f := range got {
		if i > 0 && got[i-1].index >= f.index {
			t.Fatalf("columns not ascending: %v", got)
		}
		if w := want[f.index] / math.Sqrt(ss); math.Abs(f.value-w) > 1e-15 {
			t.Errorf("column %d = %v, want %v", f.index, f.value, w)
		}
	}
	if n := v.row(nil, "a ! b"); len(n) != 0 {
		t.Errorf("row of a text without tokens = %v, want empty", n)
	}
}

// TestColumn: sklearn's FeatureHasher maps h = -2^31, which has no int32
// absolute value, to column (2^31-1 - (n-1)) mod n, that is 2^31 mod n.
func TestColumn(t *testing.T) {
	for _, c := range []struct {
		h        int32
		n        int
		col      int
		negative bool
	}{
		{0, 1 << 18, 0, false},
		{5, 3, 2, false},
		{-5, 3, 2, true},
		{math.MaxInt32, 1 << 18, 1<<18 - 1, false},
		{math.MinInt32, 1 << 18, 0, true},
		{math.MinInt32, 3, 2, true},
		{-156908512, 1 << 18, 156908512 % (1 << 18), true},
	} {
		col, sign := column(c.h, c.n)
		if col != c.col || (sign < 0) != c.negative {
			t.Errorf("column(%d, %d) = %d, %v; want %d, negative %v", c.h, c.n, col, sign, c.col, c.negative)
		}
	}
}

func TestWriteRows(t *testing.T) {
	v := newVectorizer(1 << 18)
	docs := []document{
		{label: 1, text: "win money now now"},
		{label: -1, text: "x"},
	}
	var b bytes.Buffer
	st, err := writeRows(&b, v, docs)
	if err != nil {
		t.Fatal(err)
	}
	if st.rows != 2 || st.positive != 1 || st.empty != 1 || st.nnz != 3 {
		t.Errorf("stats = %+v", st)
	}
	lines := bytes.Split(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != 2 || string(lines[1]) != "-1" || !bytes.HasPrefix(lines[0], []byte("1 ")) {
		t.Errorf("output:\n%s", b.Bytes())
	}
}

func TestSplitKey(t *testing.T) {
	// FNV-1a 64 offset basis and a published vector ("a").
	if got := splitKey(""); got != 0xcbf29ce484222325 {
		t.Errorf("splitKey(\"\") = %#x", got)
	}
	if got := splitKey("a"); got != 0xaf63dc4c8601ec8c {
		t.Errorf("splitKey(\"a\") = %#x", got)
	}
}
