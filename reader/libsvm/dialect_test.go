package libsvm

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/internal/cputime"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// qidReaders are allReaders keeping query ids: the Scanner path appends
// them itself.
var qidReaders = append([]struct {
	name string
	read func(data []byte, path string, opts ...core.Option) (*sparsevec.CSR, error)
}{{"Scanner+Qid", func(data []byte, path string, opts ...core.Option) (*sparsevec.CSR, error) {
	s := NewScanner(bytes.NewReader(data), path, opts...)
	m := new(sparsevec.CSR)
	for s.Scan() {
		if q, ok := s.Qid(); ok {
			m.AppendQid(s.Label(), q, s.Row())
		} else {
			m.Append(s.Label(), s.Row())
		}
	}
	return m, s.Err()
}}}, allReaders[1:]...)

// wantParseError checks that err is a *ParseError at line:col wrapping want.
func wantParseError(t *testing.T, err error, line, col int, want error) {
	t.Helper()
	var pe *core.ParseError
	if !errors.As(err, &pe) || pe.Line != line || pe.Col != col || !errors.Is(err, want) {
		t.Fatalf("error %v, want a ParseError at %d:%d wrapping %v", err, line, col, want)
	}
}

func TestQid(t *testing.T) {
	in := "# ranking\n1 qid:3 1:1\r\n2 qid:-4 2:1 # c\n\n3 qid:+5\n0 qid:9223372036854775807 4:2\n"
	for _, rd := range qidReaders {
		t.Run(rd.name, func(t *testing.T) {
			m, err := rd.read([]byte(in), "q.txt")
			if err != nil {
				t.Fatal(err)
			}
			if want := []int64{3, -4, 5, 1<<63 - 1}; !slices.Equal(m.Qid, want) {
				t.Errorf("qid %v, want %v", m.Qid, want)
			}
			if !slices.Equal(m.Labels, []float32{1, 2, 3, 0}) || !slices.Equal(m.Idx, []uint32{1, 2, 4}) {
				t.Errorf("rows %v %v", m.Labels, m.Idx)
			}
		})
	}
	// Without qid, no row has one.
	for _, rd := range qidReaders {
		m, err := rd.read([]byte("1 1:1\n2 2:2\n"), "q.txt")
		if err != nil || m.HasQid() || len(m.Qid) != 0 {
			t.Errorf("%s: no qid in the file: Qid %v, err %v", rd.name, m.Qid, err)
		}
	}
}

func TestQidErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		line, col int
		want      error
	}{
		{"missing", "1 qid:1 1:1\n2 2:1\n", 2, 3, errQIDMissing},
		{"extra", "1 1:1\n# c\n2 qid:1 2:1\n", 3, 3, errQIDExtra},
		{"missing on a label-only row", "1 qid:1\n2\n", 2, 2, errQIDMissing},
		{"extra after a label-only row", "1\n2 qid:7\n", 2, 3, errQIDExtra},
		{"missing far on", strings.Repeat("1 qid:1 1:1 2:1 3:1\n", 40) + "2 5:1\n", 41, 3, errQIDMissing},
		{"extra far on", strings.Repeat("1 1:1 2:1 3:1\n", 40) + "2 qid:2 5:1\n", 41, 3, errQIDExtra},
		{"overflow", "1 qid:9223372036854775808 1:1\n", 1, 3, errBadQID},
		{"no digits", "1 qid:- 1:1\n", 1, 3, errBadQID},
		{"trailing junk", "1 qid:12a 1:1\n", 1, 3, errBadQID},
	}
	for _, tc := range tests {
		for _, rd := range qidReaders {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				m, err := rd.read([]byte(tc.in), "bad.txt")
				wantParseError(t, err, tc.line, tc.col, tc.want)
				if !errors.Is(err, core.ErrBadInput) {
					t.Errorf("%v is not ErrBadInput", err)
				}
				// The rows before the bad line are delivered (Stream) or
				// none (Load); never the bad row.
				if m != nil && m.Rows() >= tc.line {
					t.Errorf("%d rows delivered before an error at line %d", m.Rows(), tc.line)
				}
			})
		}
	}
}

func TestZeroBasedOnePass(t *testing.T) {
	yes := []core.Option{core.WithZeroBased(core.ZeroBasedYes)}
	for _, rd := range allReaders {
		t.Run(rd.name, func(t *testing.T) {
			m, err := rd.read([]byte("1 0:1 4:2\n# 0:9\n2 00:3\n"), "z.txt", yes...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(m.Idx, []uint32{1, 5, 1}) || m.Dim != 6 {
				t.Errorf("yes: indices %v dim %d, want [1 5 1] dim 6", m.Idx, m.Dim)
			}
			_, err = rd.read([]byte("1 1:1\n1 0:1\n"), "z.txt", core.WithZeroBased(core.ZeroBasedNo))
			wantParseError(t, err, 2, 3, core.ErrIndexZero)
			// Input read in one pass: auto is 1-based, and says so.
			_, err = rd.read([]byte("1 1:1\n1 0:1\n"), "z.txt")
			wantParseError(t, err, 2, 3, core.ErrIndexZero)
			if !strings.Contains(err.Error(), "zero-based yes") {
				t.Errorf("auto on one-pass input: error %q does not say to use zero-based yes", err)
			}
			// The maximum holds after the shift.
			_, err = rd.read([]byte("1 4:1 5:1\n"), "z.txt", append(yes, core.WithMaxIndex(5))...)
			wantParseError(t, err, 1, 7, core.ErrIndexRange)
			if !strings.Contains(err.Error(), "0-based index 5, read as 6") {
				t.Errorf("error %q does not give the index before and after the shift", err)
			}
			for _, in := range []string{"1 4294967295:1\n", "1 99999999999:1\n", "1 99999999999999999999999:1\n"} {
				_, err = rd.read([]byte(in), "z.txt", yes...)
				wantParseError(t, err, 1, 3, core.ErrIndexRange)
			}
			if m, err := rd.read([]byte("1 4294967294:1\n"), "z.txt", yes...); err != nil || m.Idx[0] != 1<<32-1 {
				t.Errorf("yes: largest 0-based index: %v, %v", m, err)
			}
		})
	}
}

func TestLineZero(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"1 0:1\n", true},
		{"1 1:1 0:2\n", true}, // unsorted, but an index 0 all the same
		{"1\t0:1\n", true},
		{"1 000:1\n", true},
		{"1 1:1 0000000000000000000000000000000:1\n", true},
		{"1 1:1\n0000:1\n", false},
		{"1 1:1 #\n2 0:1\n", true},
		{"# a\n# b 0:1\n1 1:1\n", false},
		{"1 qid:2 0:1\n", true},
		{"# c\n1 1:1\n2 0:1\n", true},
		{"1 1:1\r\n2 0:1\r\n", true},
		{"1 10:1 20:0 100:1\n", false},
		{"1 qid:0 1:1\n", false},
		{"1 1:0\n", false},
		{"0:1\n", false}, // no label: the parser reports it
		{"1 1:1 # 0:1\n", false},
		{"1 1:1#x 0:1\n", false},
		{"# Column indices are 0: zero-based\n", false},
		{"1 1:1 # c\n2 0:1\n", true},
		{"", false},
	}
	for _, tc := range tests {
		if got := lineZero([]byte(tc.in)); got != tc.want {
			t.Errorf("lineZero(%q) = %v, want %v", tc.in, got, tc.want)
		}
		// Cut anywhere into two or three pieces, the text gives the same
		// answer.
		b := []byte(tc.in)
		for i := 0; i <= len(b); i++ {
			for j := i; j <= len(b); j++ {
				var z zeroScanner
				got := z.Scan(b[:i]) || z.Scan(b[i:j]) || z.Scan(b[j:])
				if got != tc.want {
					t.Errorf("%q cut at %d and %d: %v, want %v", tc.in, i, j, got, tc.want)
				}
			}
		}
	}
}

// zeroFile writes text to dir/name in the named compression.
func zeroFile(t *testing.T, dir, name, codec string, text []byte) string {
	t.Helper()
	data := text
	switch codec {
	case "gzip":
		data = gzipBytes(text)
	case "zstd":
		data = zstdBytes(text)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// shiftPair returns the text of rows rows of three features, 0-based
// with an index 0 in row zeroAt, and the same rows 1-based.
func shiftPair(rows int, zeroAt int) (zero, one []byte) {
	for r := range rows {
		var z, o []byte
		z, o = append(z, "1"...), append(o, "1"...)
		first := 1
		if r == zeroAt {
			first = 0
		}
		for j := first; j < first+3; j++ {
			z = append(z, ' ')
			z = appendUint(z, j)
			z = append(z, ":0.5"...)
			o = append(o, ' ')
			o = appendUint(o, j+1)
			o = append(o, ":0.5"...)
		}
		zero = append(append(zero, z...), '\n')
		one = append(append(one, o...), '\n')
	}
	return zero, one
}

func appendUint(b []byte, v int) []byte {
	if v >= 10 {
		b = appendUint(b, v/10)
	}
	return append(b, byte('0'+v%10))
}

// Load and NewStream of a regular file, plain or compressed: auto shifts a
// file with an index 0 (wherever it is, the first row or past the scan
// buffer) and only such a file, and calls the notice for it.
func TestZeroBasedAutoFile(t *testing.T) {
	dir := t.TempDir()
	rows := 3 * zeroScanBytes / 20 // past the first buffer of the scan
	for _, codec := range []string{"plain", "gzip", "zstd"} {
		for _, at := range []int{0, rows - 1} {
			zero, one := shiftPair(rows, at)
			zp := zeroFile(t, dir, codec+"-zero", codec, zero)
			onep := zeroFile(t, dir, codec+"-one", codec, one)
			var noticed []string
			notice := core.WithZeroBasedNotice(func(p string) { noticed = append(noticed, p) })
			if z, err := IsZeroBased(zp); err != nil || !z {
				t.Errorf("%s, zero at row %d: IsZeroBased %v, %v", codec, at, z, err)
			}
			got, err := Load(zp, notice)
			if err != nil {
				t.Fatal(err)
			}
			want, err := LoadReader(bytes.NewReader(zero), "x", core.WithZeroBased(core.ZeroBasedYes))
			if err != nil {
				t.Fatal(err)
			}
			if !equalCSR(got, want) {
				t.Errorf("%s, zero at row %d: Load auto differs from yes", codec, at)
			}
			st, err := NewStream(zp, 1000, notice)
			if err != nil {
				t.Fatal(err)
			}
			sgot := new(sparsevec.CSR)
			for {
				b, err := st.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				sgot.AppendCSR(b)
				st.Release(b)
			}
			st.Close()
			if !equalCSR(sgot, want) {
				t.Errorf("%s, zero at row %d: Stream auto differs from yes", codec, at)
			}
			if len(noticed) != 2 || noticed[0] != zp {
				t.Errorf("notices %q, want %s twice", noticed, zp)
			}
			noticed = nil
			gotOne, err := Load(onep, notice)
			if err != nil {
				t.Fatal(err)
			}
			if !equalCSR(gotOne, want) || len(noticed) != 0 {
				t.Errorf("%s: the 1-based file does not read as the shifted 0-based one, or is noticed (%q)", codec, noticed)
			}
			if z, err := IsZeroBased(onep); err != nil || z {
				t.Errorf("%s: IsZeroBased of a 1-based file %v, %v", codec, z, err)
			}
			// no and yes do not scan.
			if _, err := Load(zp, core.WithZeroBased(core.ZeroBasedNo)); !errors.Is(err, core.ErrIndexZero) {
				t.Errorf("%s: no on a 0-based file: %v", codec, err)
			}
			if z, _ := IsZeroBased(onep, core.WithZeroBased(core.ZeroBasedYes)); !z {
				t.Errorf("IsZeroBased with yes is false")
			}
		}
	}
}

// The scan's result is remembered by the file's identity: a file rewritten
// in place is scanned again.
func TestZeroBasedMemo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.libsvm")
	if err := os.WriteFile(p, []byte("1 0:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if z, err := IsZeroBased(p); err != nil || !z {
			t.Fatalf("IsZeroBased %v, %v", z, err)
		}
	}
	if err := os.WriteFile(p, []byte("1 1:1 2:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if z, err := IsZeroBased(p); err != nil || z {
		t.Fatalf("rewritten 1-based: IsZeroBased %v, %v", z, err)
	}
	m, err := Load(p)
	if err != nil || !slices.Equal(m.Idx, []uint32{1, 2}) {
		t.Fatalf("rewritten 1-based: Load %v, %v", m, err)
	}
	if _, err := IsZeroBased(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// A line longer than MaxLineBytes, before an index 0: the scan reads past
// it (its buffer does not hold lines), and the read reports the line.
func TestZeroBasedLongLine(t *testing.T) {
	text := []byte("1 1:1\n" + strings.Repeat("1 ", 200) + "\n2 0:1\n")
	p := zeroFile(t, t.TempDir(), "long", "plain", text)
	_, err := Load(p, core.WithMaxLineBytes(100))
	wantParseError(t, err, 2, 101, core.ErrLineTooLong)
}

func TestScanAllocsZeroBased(t *testing.T) {
	line := []byte("1 qid:7 0:0.5 3:0.25 150:1 783:0.0117647\n")
	s := NewScanner(&endlessReader{line: line}, "x", core.WithZeroBased(core.ZeroBasedYes))
	for range 1000 {
		s.Scan()
	}
	allocs := testing.AllocsPerRun(10000, func() {
		if !s.Scan() {
			t.Fatal(s.Err())
		}
	})
	if allocs != 0 {
		t.Errorf("Scan with the shift and qid allocates %v per row, want 0", allocs)
	}
	if q, ok := s.Qid(); !ok || q != 7 || s.Row().Idx[0] != 1 {
		t.Errorf("qid %d %v, first index %d", q, ok, s.Row().Idx[0])
	}
}

// A file in the form scikit-learn's dump_svmlight_file writes (header
// comment, 0-based indices, %.16g numbers, qid, a row without features
// ending in a space); see testdata/README.md.
func TestScikitLearnDump(t *testing.T) {
	p := filepath.Join("testdata", "sklearn-dump.svmlight")
	for _, name := range []string{"Load", "Stream"} {
		var m *sparsevec.CSR
		var err error
		if name == "Load" {
			m, err = Load(p)
		} else {
			var st *Stream
			if st, err = NewStream(p, 2); err == nil {
				m = new(sparsevec.CSR)
				for {
					b, e := st.Next()
					if e == io.EOF {
						break
					}
					if e != nil {
						err = e
						break
					}
					m.AppendCSR(b)
					st.Release(b)
				}
				st.Close()
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := &sparsevec.CSR{}
		want.AppendQid(1, 1, sparsevec.Vector{Idx: []uint32{1, 3, 8}, Val: []float32{0.1, 0.3333333333333333, 1}})
		want.AppendQid(0, 1, sparsevec.Vector{Idx: []uint32{2, 4, 8}, Val: []float32{2.5e-05, -1.5, 123456789.125}})
		want.AppendQid(2, 2, sparsevec.Vector{Idx: []uint32{1, 6}, Val: []float32{0.6666666666666666, 1e+20}})
		want.AppendQid(0.5, 2, sparsevec.Vector{})
		want.AppendQid(1, 3, sparsevec.Vector{Idx: []uint32{5, 7}, Val: []float32{3.141592653589793, -0.0001}})
		if !equalCSR(m, want) || !slices.Equal(m.Qid, want.Qid) {
			t.Errorf("%s: got %s qid %v\nwant %s qid %v", name, formatCSR(m), m.Qid, formatCSR(want), want.Qid)
		}
	}
}

// BenchmarkLoadZeroBased is BenchmarkLoad/plain with each mode: no (the
// parser without the shift), yes (the shift on every index) and auto (the
// scan, remembered after the first iteration).
func BenchmarkLoadZeroBased(b *testing.B) {
	loadBenchData(b)
	for _, z := range []core.ZeroBased{core.ZeroBasedNo, core.ZeroBasedYes, core.ZeroBasedAuto} {
		b.Run(z.String(), func(b *testing.B) {
			b.SetBytes(int64(len(benchData.text)))
			b.ReportAllocs()
			for b.Loop() {
				m, err := Load(benchData.plainPath, core.WithZeroBased(z))
				if err != nil || m.Rows() == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchZeroScan times ZeroBasedAuto's scan alone of the 1-based file at
// path, of textBytes bytes of text, read to its end.
func benchZeroScan(b *testing.B, path string, textBytes int) {
	b.SetBytes(int64(textBytes))
	cpu0 := cputime.Process()
	for b.Loop() {
		rc, err := core.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		zero, complete := hasIndexZero(nil, rc)
		rc.Close()
		if zero || !complete {
			b.Fatal("scan of 1-based data found an index 0 or stopped")
		}
	}
	reportCPU(b, cpu0, textBytes)
}

// BenchmarkZeroScan is auto's scan of a 1-based file (read to the end),
// plain and zstd, without the memo.
func BenchmarkZeroScan(b *testing.B) {
	loadBenchData(b)
	for _, tc := range []struct{ name, path string }{
		{"plain", benchData.plainPath},
		{"zstd", benchData.zstPath},
	} {
		b.Run(tc.name, func(b *testing.B) { benchZeroScan(b, tc.path, len(benchData.text)) })
	}
}

// zeroRef is zeroScanner's rule written plainly: some line, cut at its
// first '#', holds a separator, one or more '0's and ':'.
func zeroRef(b []byte) bool {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if k := bytes.IndexByte(line, '#'); k >= 0 {
			line = line[:k]
		}
		for i := 1; i < len(line); i++ {
			if !isSpace[line[i-1]] || line[i] != '0' {
				continue
			}
			j := i
			for j < len(line) && line[j] == '0' {
				j++
			}
			if j < len(line) && line[j] == ':' {
				return true
			}
		}
	}
	return false
}

// Random texts over the bytes that matter, cut into random pieces: the
// scanner agrees with zeroRef. The second alphabet has no '#' and no
// separator but ' ', so that pieces take scanSpaces; texts of the third
// kind alternate 8-byte stretches of both, so that such pieces follow
// the state the general loop leaves (a comment, a separator and zeros).
func TestZeroScannerRandom(t *testing.T) {
	rng := testRand()
	alphabets := [][]byte{[]byte("0001: \t#\n\rq"), []byte("00001: \nq")}
	for n := range 60000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			alphabet := alphabets[n%3%2]
			if n%3 == 2 {
				alphabet = alphabets[i/8%2]
			}
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		want := zeroRef(b)
		var z zeroScanner
		got := false
		for rest := b; ; {
			k := min(len(rest), rng.IntN(6))
			if z.Scan(rest[:k]) {
				got = true
				break
			}
			if rest = rest[k:]; len(rest) == 0 {
				break
			}
		}
		if got != want {
			t.Fatalf("case %d: %q: %v, want %v", n, b, got, want)
		}
	}
}

// Long 1-based texts with at most one index 0 (or a near miss: "10:",
// " 0.5", "qid:0") put at a random place and cut into pieces of up to 300
// bytes, so that the match falls at every offset of scanSpaces' 64-byte
// windows and across pieces: the scanner agrees with zeroRef.
func TestZeroScannerLong(t *testing.T) {
	rng := testRand()
	inserts := []string{" 0:1", " 00:2", " 000:0", " 10:1", " 0.5", " qid:0", " 0", ""}
	for n := range 3000 {
		var b []byte
		for len(b) < 200+rng.IntN(800) {
			row := appendMNIST8mRow(nil, rng)
			b = append(append(b, row[:rng.IntN(120)]...), '\n')
		}
		ins := inserts[n%len(inserts)]
		at := rng.IntN(len(b))
		for at > 0 && b[at-1] != ' ' && b[at-1] != '\n' {
			at--
		}
		b = slices.Concat(b[:at], []byte(ins), []byte(" "), b[at:])
		want := zeroRef(b)
		var z zeroScanner
		got := false
		for rest := b; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(300))
			if z.Scan(rest[:k]) {
				got = true
				break
			}
			rest = rest[k:]
		}
		if got != want {
			t.Fatalf("case %d (%q at %d): %v, want %v", n, ins, at, got, want)
		}
	}
}

// BenchmarkScanZeroBased is the Scanner over in-memory text without and
// with the shift of 0-based indices: the cost of the shift in the parser.
func BenchmarkScanZeroBased(b *testing.B) {
	loadBenchData(b)
	for _, z := range []core.ZeroBased{core.ZeroBasedNo, core.ZeroBasedYes} {
		b.Run(z.String(), func(b *testing.B) {
			b.SetBytes(int64(len(benchData.text)))
			for b.Loop() {
				s := NewScanner(bytes.NewReader(benchData.text), "x", core.WithZeroBased(z))
				n := 0
				for s.Scan() {
					n += len(s.Row().Idx)
				}
				if s.Err() != nil || n == 0 {
					b.Fatal(s.Err())
				}
			}
		})
	}
}
