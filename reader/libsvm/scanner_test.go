package libsvm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// allReaders runs the same input through every way of reading it, so each
// behaviour is checked for all of them.
var allReaders = []struct {
	name string
	read func(data []byte, path string, opts ...core.Option) (*sparsevec.CSR, error)
}{
	{"Scanner", scanAll},
	{"ReadBlock", func(data []byte, path string, opts ...core.Option) (*sparsevec.CSR, error) {
		s := NewScanner(bytes.NewReader(data), path, opts...)
		m := new(sparsevec.CSR)
		for {
			_, err := s.ReadBlock(m, 2)
			if err == io.EOF {
				return m, nil
			}
			if err != nil {
				return m, err
			}
		}
	}},
	{"Load", func(data []byte, path string, opts ...core.Option) (*sparsevec.CSR, error) {
		return LoadReader(bytes.NewReader(data), path, opts...)
	}},
	{"Load/chunk7", func(data []byte, path string, opts ...core.Option) (*sparsevec.CSR, error) {
		return LoadReader(bytes.NewReader(data), path, append(opts, core.WithChunkBytes(7), core.WithWorkers(3))...)
	}},
	{"Stream", func(data []byte, path string, opts ...core.Option) (*sparsevec.CSR, error) {
		return streamAll(bytes.NewReader(data), path, 2, append(opts, core.WithChunkBytes(5))...)
	}},
}

// streamAll reads r with a Stream of blockRows rows into one CSR.
func streamAll(r io.Reader, path string, blockRows int, opts ...core.Option) (*sparsevec.CSR, error) {
	s := newStream(r, io.NopCloser(nil), path, blockRows, opts)
	defer s.Close()
	m := new(sparsevec.CSR)
	for {
		b, err := s.Next()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return m, err
		}
		if b.Rows() == 0 || b.Rows() > blockRows {
			return m, fmt.Errorf("block of %d rows", b.Rows())
		}
		m.AppendCSR(b)
		s.Release(b)
	}
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		opts      []core.Option
		line, col int
		want      error
	}{
		{"bad value", "1 2:x\n", nil, 1, 3, core.ErrSyntax},
		{"empty value", "1 2:\n", nil, 1, 3, core.ErrSyntax},
		{"value then space", "1 2: 3\n", nil, 1, 3, core.ErrSyntax},
		{"missing colon", "1 2\n", nil, 1, 3, core.ErrSyntax},
		{"missing index", "1 :3\n", nil, 1, 3, core.ErrSyntax},
		{"negative index", "1 -2:3\n", nil, 1, 3, core.ErrSyntax},
		// A comment where a value is due: scikit-learn's
		// load_svmlight_file strips the comment first and then fails to
		// read "" as a float.
		{"comment for a value", "1 1:#c\n", nil, 1, 3, core.ErrSyntax},
		{"comment for a slow-path value", "1 1:1e#c\n", nil, 1, 3, core.ErrSyntax},
		{"comment after an index", "1 2#c\n", nil, 1, 3, core.ErrSyntax},
		{"comment for a label", "#c\n-#c\n", nil, 2, 1, core.ErrSyntax},
		{"bad label", "abc 1:2\n", nil, 1, 1, core.ErrSyntax},
		{"bad qid", "1 qid:x 1:2\n", nil, 1, 3, core.ErrSyntax},
		{"qid after feature", "1 1:2 qid:3\n", nil, 1, 7, core.ErrSyntax},
		{"index zero", "1 0:1\n", nil, 1, 3, core.ErrIndexZero},
		{"index 00", "1 00:1\n", nil, 1, 3, core.ErrIndexZero},
		{"index overflow", "1 4294967296:1\n", nil, 1, 3, core.ErrIndexRange},
		{"index huge", "1 99999999999999999999999999:1\n", nil, 1, 3, core.ErrIndexRange},
		{"index above max", "1 784:1 785:1\n", []core.Option{core.WithMaxIndex(784)}, 1, 9, core.ErrIndexRange},
		{"unsorted", "1 3:1 2:1\n", nil, 1, 7, core.ErrUnsorted},
		{"duplicate", "1 3:1 3:2\n", nil, 1, 7, core.ErrDuplicate},
		{"nan value", "1 3:nan\n", nil, 1, 3, core.ErrNonFinite},
		{"inf value", "1 3:-Inf\n", nil, 1, 3, core.ErrNonFinite},
		{"overflow value", "1 3:1e39\n", nil, 1, 3, core.ErrNonFinite},
		{"nan label", "NaN 1:1\n", nil, 1, 1, core.ErrNonFinite},
		{"inf label", "inf\n", nil, 1, 1, core.ErrNonFinite},
		{"no label", "3:1 4:2\n", nil, 1, 1, core.ErrNoLabel},
		{"qid without label", "qid:1 1:2\n", nil, 1, 1, core.ErrNoLabel},
		{"too long", "1 1:1 2:1 3:1 4:1 5:1\n", []core.Option{core.WithMaxLineBytes(16)}, 1, 17, core.ErrLineTooLong},
		{"too long at EOF", "1 1:1\n1 1:1 2:1 3:1 4:1 5:1", []core.Option{core.WithMaxLineBytes(16)}, 2, 17, core.ErrLineTooLong},
		{"too long huge", "1 1:1\n" + strings.Repeat("1 ", 1000) + "\n", []core.Option{core.WithMaxLineBytes(100)}, 2, 101, core.ErrLineTooLong},
		{"counts blank and comment lines", "\n# c\n\n  \n1 0:1\n", nil, 5, 3, core.ErrIndexZero},
		{"crlf", "1 1:1\r\n1 0:1\r\n", nil, 2, 3, core.ErrIndexZero},
		{"tabs", "1\t1:1\t0:2\n", nil, 1, 7, core.ErrIndexZero},
		{"leading space", "  1 0:1\n", nil, 1, 5, core.ErrIndexZero},
		{"no final newline", "1 1:1\n1 2:1 1:1", nil, 2, 7, core.ErrUnsorted},
		{"first error wins", "1 1:1\n1 0:1\n1 2:1 1:1\n", nil, 2, 3, core.ErrIndexZero},
	}
	for _, tc := range tests {
		for _, rd := range allReaders {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				_, err := rd.read([]byte(tc.in), "bad.txt", tc.opts...)
				if err == nil {
					t.Fatalf("no error")
				}
				if !errors.Is(err, tc.want) {
					t.Errorf("error %q is not %q", err, tc.want)
				}
				pos := fmt.Sprintf("bad.txt:%d:%d: ", tc.line, tc.col)
				if !strings.HasPrefix(err.Error(), pos) {
					t.Errorf("error %q does not start with %q", err, pos)
				}
				var pe *core.ParseError
				if !errors.As(err, &pe) || pe.Line != tc.line || pe.Col != tc.col || pe.Path != "bad.txt" {
					t.Errorf("error %#v, want *ParseError at %d:%d", err, tc.line, tc.col)
				}
			})
		}
	}
}

// row is one expected row.
type wantRow struct {
	label float32
	idx   []uint32
	val   []float32
}

func csrOf(rows ...wantRow) *sparsevec.CSR {
	m := new(sparsevec.CSR)
	for _, r := range rows {
		m.Append(r.label, sparsevec.Vector{Idx: r.idx, Val: r.val})
	}
	return m
}

func TestValid(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	tests := []struct {
		name string
		in   string
		want *sparsevec.CSR
	}{
		{"empty", "", csrOf()},
		{"only comments", "# a\n\n   \n\t# b\r\n", csrOf()},
		{"basic", "1 1:0.5 3:2\n-1 2:1e3\n", csrOf(wantRow{1, []uint32{1, 3}, []float32{0.5, 2}}, wantRow{-1, []uint32{2}, []float32{1000}})},
		{"labels", "+1\n-1\n2\n0.5\n1e-3\n-0\n", csrOf(wantRow{label: 1}, wantRow{label: -1}, wantRow{label: 2}, wantRow{label: 0.5}, wantRow{label: 1e-3}, wantRow{label: negZero})},
		{"qid", "3 qid:12 1:1 7:2\n", csrOf(wantRow{3, []uint32{1, 7}, []float32{1, 2}})},
		{"qid only", "3 qid:12\n", csrOf(wantRow{label: 3})},
		{"comments", "1 1:1 # note 0:0\n# whole line\n2 # just label\n", csrOf(wantRow{1, []uint32{1}, []float32{1}}, wantRow{label: 2})},
		// '#' starts a comment glued to a token too, as in scikit-learn.
		{"comment glued to a value", "1 1:2#c\n-1 1:2 #c\n2 3:0.99215686#x:y 4:1\n", csrOf(wantRow{1, []uint32{1}, []float32{2}}, wantRow{-1, []uint32{1}, []float32{2}}, wantRow{2, []uint32{3}, []float32{0.99215686}})},
		{"comment glued to a label", "1#c\n-1# 1:1\n", csrOf(wantRow{label: 1}, wantRow{label: -1})},
		{"comment glued to a qid", "3 qid:12#c 1:1\n", csrOf(wantRow{label: 3})},
		{"crlf", "1 1:1\r\n\r\n2 2:2\r\n", csrOf(wantRow{1, []uint32{1}, []float32{1}}, wantRow{2, []uint32{2}, []float32{2}})},
		{"trailing space", "1 1:1  \t \n2 2:2 \r\n", csrOf(wantRow{1, []uint32{1}, []float32{1}}, wantRow{2, []uint32{2}, []float32{2}})},
		{"no final newline", "1 1:1\n2 2:2", csrOf(wantRow{1, []uint32{1}, []float32{1}}, wantRow{2, []uint32{2}, []float32{2}})},
		{"explicit zeros kept", "1 1:0 2:0.0 3:-0\n", csrOf(wantRow{1, []uint32{1, 2, 3}, []float32{0, 0, negZero}})},
		{"max index", "1 4294967295:1\n", csrOf(wantRow{1, []uint32{1<<32 - 1}, []float32{1}})},
		{"leading zeros", "1 007:1 00000000000000000000008:2\n", csrOf(wantRow{1, []uint32{7, 8}, []float32{1, 2}})},
		{"mnist values", "5 153:0.0117647 154:0.0705882 155:1\n", csrOf(wantRow{5, []uint32{153, 154, 155}, []float32{0.0117647, 0.0705882, 1}})},
		{"slow path values", "1 1:0.99215686 2:1e-20 3:0x1p-2\n", csrOf(wantRow{1, []uint32{1, 2, 3}, []float32{0.99215686, 1e-20, 0.25}})},
	}
	for _, tc := range tests {
		for _, rd := range allReaders {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				got, err := rd.read([]byte(tc.in), "ok.txt")
				if err != nil {
					t.Fatal(err)
				}
				if !equalCSR(got, tc.want) {
					t.Errorf("got %+v\nwant %+v", got, tc.want)
				}
			})
		}
	}
}

func TestScannerLines(t *testing.T) {
	s := NewScanner(strings.NewReader("# c\n1 1:1\n\n2 2:2\n"), "x")
	var lines []int
	for s.Scan() {
		lines = append(lines, s.Line())
	}
	if s.Err() != nil || fmt.Sprint(lines) != "[2 4]" {
		t.Errorf("lines %v, err %v; want [2 4], nil", lines, s.Err())
	}
	if s.Scan() {
		t.Error("Scan after the end returned true")
	}
}

// TestScannerErrSticky checks that the error stays and rows before it were
// delivered.
func TestScannerErrSticky(t *testing.T) {
	s := NewScanner(strings.NewReader("1 1:1\n1 0:1\n1 1:1\n"), "x")
	n := 0
	for s.Scan() {
		n++
	}
	err := s.Err()
	if n != 1 || !errors.Is(err, core.ErrIndexZero) {
		t.Fatalf("rows %d, err %v", n, err)
	}
	if s.Scan() || s.Err() != err {
		t.Error("error not sticky")
	}
}

// failingReader returns data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReadError checks that a read error after some lines keeps the rows
// before it, drops the partial line, and is positioned at that line.
func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	for _, rd := range []string{"Scanner", "Load", "Stream"} {
		t.Run(rd, func(t *testing.T) {
			r := &failingReader{data: []byte("1 1:1\n\n2 2:2\n3 3:"), err: boom}
			var err error
			var m *sparsevec.CSR
			switch rd {
			case "Scanner":
				s := NewScanner(r, "in")
				m = new(sparsevec.CSR)
				for s.Scan() {
					m.Append(s.Label(), s.Row())
				}
				err = s.Err()
			case "Load":
				_, err = LoadReader(r, "in", core.WithChunkBytes(4))
			case "Stream":
				m, err = streamAll(r, "in", 1, core.WithChunkBytes(4))
			}
			if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "in:4: boom") {
				t.Errorf("err %v, want in:4: boom", err)
			}
			if m != nil && m.Rows() != 2 {
				t.Errorf("%d rows before the error, want 2", m.Rows())
			}
		})
	}
}

// endlessReader yields the same line forever without allocating.
type endlessReader struct {
	line []byte
	off  int
}

func (r *endlessReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.line[r.off:])
		n += k
		r.off = (r.off + k) % len(r.line)
	}
	return n, nil
}

func TestScanAllocs(t *testing.T) {
	rng := testRand()
	line := appendMNISTRow(nil, rng)
	s := NewScanner(&endlessReader{line: line}, "x")
	for range 1000 {
		s.Scan()
	}
	allocs := testing.AllocsPerRun(10000, func() {
		if !s.Scan() {
			t.Fatal(s.Err())
		}
	})
	if allocs != 0 {
		t.Errorf("Scan allocates %v per row, want 0", allocs)
	}
}

// FuzzScanner checks that parsing never panics, that every reader agrees
// with the Scanner (rows, query ids or error) with and without the shift
// of 0-based indices, and that parse → format → parse gives identical
// rows.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		"1 1:0.5 3:2\n-1 2:1e3\n", "3 qid:1 1:1 # c\n\n", "1 0:1\n", "3:1\n", "1 3:1 2:1\n",
		"1 1:1\r\n2 2:-0\r\n", "nan 1:1", "1 4294967296:1", "+1 7:0.0117647 8:1", "1 1:0x1p-3",
		"1 qid:1 1:1\n2 2:1\n", "1 qid:-3 0:1 4294967294:2\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range [][]core.Option{nil, {core.WithZeroBased(core.ZeroBasedYes)}} {
			want, werr := qidReaders[0].read(data, "f", opts...)
			for _, rd := range qidReaders[1:] {
				got, err := rd.read(data, "f", opts...)
				if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
					t.Fatalf("%s %v: error %v, Scanner: %v", rd.name, opts, err, werr)
				}
				if err == nil && (!equalCSR(got, want) || !slices.Equal(got.Qid, want.Qid)) {
					t.Fatalf("%s %v: rows differ from the Scanner's", rd.name, opts)
				}
			}
		}
		want, werr := scanAll(data, "f")
		if werr != nil {
			var pe *core.ParseError
			if !errors.As(werr, &pe) || pe.Line < 1 || pe.Col < 1 {
				t.Fatalf("error without position: %v", werr)
			}
			return
		}
		text := formatCSR(want)
		again, err := scanAll(text, "g")
		if err != nil {
			t.Fatalf("reparse of %q: %v", text, err)
		}
		if !equalCSR(again, want) {
			t.Fatalf("round trip differs:\n%q\n%q", data, text)
		}
	})
}

func BenchmarkScan(b *testing.B) {
	loadBenchData(b)
	for _, tc := range []struct{ name, path string }{
		{"plain", benchData.plainPath},
		{"zstd", benchData.zstPath},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(benchData.text)))
			b.ReportAllocs()
			for b.Loop() {
				rc, err := core.Open(tc.path)
				if err != nil {
					b.Fatal(err)
				}
				s := NewScanner(rc, tc.path)
				n := 0
				for s.Scan() {
					n += len(s.Row().Idx)
				}
				rc.Close()
				if s.Err() != nil || n == 0 {
					b.Fatal(s.Err())
				}
			}
		})
	}
}
