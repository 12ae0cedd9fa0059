package libsvm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// forgetZeroScans empties the memo of auto's scans, so that the next read
// with the decision made ahead scans the file itself.
func forgetZeroScans() {
	zeroMemo.mu.Lock()
	clear(zeroMemo.m)
	zeroMemo.mu.Unlock()
}

// prescanLoad is Load with ZeroBasedAuto decided ahead by the scan of the
// file (fileIndexMap), the way NewStream decides it: the reference for
// Load's single pass.
func prescanLoad(path string, opts ...core.Option) (*sparsevec.CSR, error) {
	forgetZeroScans()
	o := core.BuildOptions(opts)
	rc, err := core.OpenText(path, &o)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	m, _, err := loadReader(rc, path, o, fileIndexMap(path, &o))
	return m, err
}

// streamFile reads the file at path with NewStream (auto decided by its
// scan) in blocks of 3 rows into one CSR.
func streamFile(path string, opts ...core.Option) (*sparsevec.CSR, error) {
	forgetZeroScans()
	s, err := NewStream(path, 3, opts...)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	m := new(sparsevec.CSR)
	for {
		b, err := s.Next()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, err
		}
		m.AppendCSR(b)
		s.Release(b)
	}
}

// sameRead reports how got (Load's) differs from want (a read with the
// decision made ahead): the same error text (path, line, column, token and
// message) and sentinel, or the same rows, query ids and Dim.
func sameRead(got *sparsevec.CSR, gotErr error, want *sparsevec.CSR, wantErr error) string {
	switch {
	case gotErr != nil || wantErr != nil:
		if gotErr == nil || wantErr == nil || gotErr.Error() != wantErr.Error() {
			return fmt.Sprintf("error %v, want %v", gotErr, wantErr)
		}
		var g, w *core.ParseError
		if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) || g.Line != w.Line || g.Col != w.Col {
			return fmt.Sprintf("error %#v, want %#v", gotErr, wantErr)
		}
		for _, s := range []error{core.ErrIndexRange, core.ErrIndexZero, core.ErrSyntax, core.ErrDuplicate, core.ErrUnsorted, core.ErrLineTooLong} {
			if errors.Is(gotErr, s) != errors.Is(wantErr, s) {
				return fmt.Sprintf("error %v and %v differ on %v", gotErr, wantErr, s)
			}
		}
	case !equalCSR(got, want) || !slices.Equal(got.Qid, want.Qid):
		return fmt.Sprintf("rows\n%s(dim %d), want\n%s(dim %d)", formatCSR(got), got.Dim, formatCSR(want), want.Dim)
	}
	return ""
}

// autoCases are files whose reading depends on auto's decision, read with
// MaxIndex 5.
var autoCases = []struct {
	name, text string
	line, col  int   // the error's place, 0 for none
	err        error // its sentinel
	dim        int
}{
	{"1-based, index at the limit", "1 1:1 3:2\n-1 2:1 5:3\n", 0, 0, nil, 6},
	{"0-based", "1 0:1 3:2\n-1 2:1 4:3\n", 0, 0, nil, 6},
	{"0-based, index at the limit", "1 0:1\n-1 2:1 5:3 # 5:1\n1 5:2\n", 2, 8, core.ErrIndexRange, 0},
	{"index at the limit before the index 0", "-1 2:1 5:3\n# c\n1 0:1\n", 1, 8, core.ErrIndexRange, 0},
	{"index 0 in a comment only", "1 1:1 5:1 # 0:1\n#0:1\n", 0, 0, nil, 6},
	{"index over the limit before the index 0", "1 7:1\n1 0:1\n", 1, 3, core.ErrIndexRange, 0},
	{"index over the limit before the index 0 on its line", "1 1:1 7:1 0:1\n", 1, 7, core.ErrIndexRange, 0},
	{"index over the limit, 1-based", "1 1:1\n1 7:1\n", 2, 3, core.ErrIndexRange, 0},
	{"index over the limit after the index 0", "1 0:1\n1 7:1\n", 2, 3, core.ErrIndexRange, 0},
	{"11 digits", "1 99999999999:1\n1 0:1\n", 1, 3, core.ErrIndexRange, 0},
	{"limit token with a bad value", "1 5:x\n1 0:1\n", 1, 3, core.ErrIndexRange, 0},
	{"bad value, 1-based", "1 5:x\n1 1:1\n", 1, 3, core.ErrSyntax, 0},
	{"limit then unsorted", "1 5:1 3:1\n1 0:1\n", 1, 3, core.ErrIndexRange, 0},
	{"limit then duplicate", "1 5:1 5:2\n1 0:1\n", 1, 3, core.ErrIndexRange, 0},
	{"limit, syntax error, index 0 after it", "1 5:1\n1 2:x\n1 0:1\n", 1, 3, core.ErrIndexRange, 0},
	{"limit, syntax error, no index 0", "1 5:1\n1 2:x\n", 2, 3, core.ErrSyntax, 0},
	{"syntax error, limit, index 0", "1 2:x\n1 5:1\n1 0:1\n", 1, 3, core.ErrSyntax, 0},
	{"duplicate 0", "1 0:1 0:2\n", 1, 7, core.ErrDuplicate, 0},
	{"0 after an index", "1 3:1 0:2\n", 1, 7, core.ErrUnsorted, 0},
	{"leading zeros", "1 000:1 0002:1\n2 0005:1\n", 2, 3, core.ErrIndexRange, 0},
	{"qid missing on a row at the limit", "1 qid:1 1:1\n1 2:1 5:1\n1 qid:2 0:1\n", 2, 7, core.ErrIndexRange, 0},
	{"qid missing before the limit", "1 qid:1 1:1\n1 2:1\n1 qid:1 5:1\n1 qid:3 0:1\n", 2, 3, core.ErrSyntax, 0},
	{"qid, 0-based", "1 qid:1 0:1\n1 qid:1 4:1\n", 0, 0, nil, 6},
	{"qid, 0-based, index at the limit", "1 qid:1 0:1\n1 qid:2\t2:1  5:1#c\n", 2, 14, core.ErrIndexRange, 0},
	{"CRLF, no final newline", "1 0:1\r\n\r\n1 5:1", 3, 3, core.ErrIndexRange, 0},
	{"no rows", "# header 0:1\n\n", 0, 0, nil, 0},
	{"no label", "  0:1 2:1\n", 1, 3, core.ErrNoLabel, 0},
}

// Load decides auto in its one pass and gives exactly the rows and errors
// of the reads that decide it ahead (Load's own read with the scan, and
// NewStream), whatever the chunks, workers and compression.
func TestLoadAutoSinglePass(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range autoCases {
		for _, codec := range []string{"plain", "zstd"} {
			p := zeroFile(t, dir, fmt.Sprintf("case%d-%s", i, codec), codec, []byte(tc.text))
			for _, chunk := range []int{0, 7} {
				for _, workers := range []int{1, 3} {
					opts := []core.Option{core.WithMaxIndex(5), core.WithChunkBytes(chunk), core.WithWorkers(workers)}
					name := fmt.Sprintf("%s/%s/chunk%d/workers%d", tc.name, codec, chunk, workers)
					got, err := Load(p, opts...)
					want, werr := prescanLoad(p, opts...)
					if d := sameRead(got, err, want, werr); d != "" {
						t.Errorf("%s: Load and the read with the scan: %s", name, d)
					}
					swant, serr := streamFile(p, opts...)
					if d := sameRead(got, err, swant, serr); d != "" {
						t.Errorf("%s: Load and NewStream: %s", name, d)
					}
					if tc.err != nil {
						wantParseError(t, err, tc.line, tc.col, tc.err)
						continue
					}
					if err != nil {
						t.Errorf("%s: %v", name, err)
					} else if got.Dim != tc.dim {
						t.Errorf("%s: Dim %d, want %d", name, got.Dim, tc.dim)
					}
				}
			}
		}
	}
}

// The error of an index at the limit of a 0-based file, and of one over
// it, says how the index was read.
func TestLoadAutoLimitMessage(t *testing.T) {
	p := zeroFile(t, t.TempDir(), "lim", "plain", []byte("1 0:1\n1 1:1 5:2\n"))
	_, err := Load(p, core.WithMaxIndex(5))
	want := p + ":2:7: feature index out of range: above the maximum 5 (0-based index 5, read as 6) (near \"5:2\")"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
}

// Load shifts a 0-based file once it has read it (Dim included), calls
// the notice once for it and for no 1-based file, and remembers its
// decision for the streams that follow.
func TestLoadAutoShiftAndNotice(t *testing.T) {
	dir := t.TempDir()
	rows := 80000 // past minShiftParallel nonzeros with 3 workers
	zero, one := shiftPair(rows, rows/2)
	for i := 0; i < rows/2; i++ {
		one = append(one, "1 1:1 2:1 3:1 4:1 5:1 6:1 7:1 8:1 9:1 10:1 11:1 12:1 13:1 14:1 15:1 16:1 17:1 18:1 19:1 20:1 21:1 22:1 23:1 24:1 25:1\n"...)
		zero = append(zero, "1 0:1 1:1 2:1 3:1 4:1 5:1 6:1 7:1 8:1 9:1 10:1 11:1 12:1 13:1 14:1 15:1 16:1 17:1 18:1 19:1 20:1 21:1 22:1 23:1 24:1\n"...)
	}
	zp := zeroFile(t, dir, "zero", "plain", zero)
	op := zeroFile(t, dir, "one", "plain", one)
	var noticed []string
	notice := core.WithZeroBasedNotice(func(p string) { noticed = append(noticed, p) })
	want, err := LoadReader(bytes.NewReader(one), "one")
	noErr(t, err)
	if want.NNZ() < minShiftParallel {
		t.Fatalf("%d nonzeros: too few to split the shift", want.NNZ())
	}
	forgetZeroScans()
	got, err := Load(zp, notice, core.WithWorkers(3))
	noErr(t, err)
	if !equalCSR(got, want) || got.Dim != 26 {
		t.Errorf("0-based file: Load does not give the 1-based rows (dim %d)", got.Dim)
	}
	if len(noticed) != 1 || noticed[0] != zp {
		t.Errorf("notices %q, want %s once", noticed, zp)
	}
	if !isMemoized(t, zp, true) {
		t.Errorf("Load's decision for the 0-based file is not remembered")
	}
	noticed = nil
	got, err = Load(op, notice)
	noErr(t, err)
	if !equalCSR(got, want) || len(noticed) != 0 {
		t.Errorf("1-based file: rows differ, or noticed %q", noticed)
	}
	if !isMemoized(t, op, false) {
		t.Errorf("Load's decision for the 1-based file is not remembered")
	}
}

// isMemoized reports whether the memo holds decision zero for path.
func isMemoized(t *testing.T, path string, zero bool) bool {
	t.Helper()
	o := core.BuildOptions(nil)
	f, err := o.OpenFile(path)
	noErr(t, err)
	defer f.Close()
	st, err := f.Stat()
	noErr(t, err)
	z, ok := zeroMemo.get(path, st)
	return ok && z == zero
}

// randomAutoText returns lines of random features with indices in 0..7,
// mostly valid, some 0-based, some with qid:N (a row now and then
// breaking the file's rule), comments, blank lines,
// duplicates, bad values and missing labels.
func randomAutoText(rng *rand.Rand) []byte {
	var b []byte
	zeroP := rng.Float64() * 0.3
	qids := rng.IntN(3) == 0 // qid:N on every row but a few
	for range 1 + rng.IntN(12) {
		switch rng.IntN(20) {
		case 0:
			b = append(b, "# 0:1 c\n"...)
			continue
		case 1:
			b = append(b, '\n')
			continue
		case 2:
			b = append(b, "  0:1\n"...)
			continue
		}
		b = append(b, "1"...)
		if qids != (rng.IntN(30) == 0) {
			b = append(b, " qid:3"...)
		}
		k := 1
		if rng.Float64() < zeroP {
			k = 0
		}
		for k <= 7 {
			if rng.IntN(2) == 0 {
				b = append(b, ' ')
				if rng.IntN(10) == 0 {
					b = append(b, '0')
				}
				b = appendUint(b, k)
				b = append(b, ':')
				if rng.IntN(40) == 0 {
					b = append(b, 'x')
				} else {
					b = append(b, '1')
				}
			}
			switch rng.IntN(30) {
			case 0: // a duplicate or an unsorted index next
			case 1:
				k = max(0, k-2)
			default:
				k++
			}
		}
		if rng.IntN(10) == 0 {
			b = append(b, " # 0:2"...)
		}
		b = append(b, '\n')
	}
	return b
}

// Random files, seeded: Load and the reads that decide ahead agree on rows
// and errors, with MaxIndex at, above and below the largest index.
func TestLoadAutoRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	dir := t.TempDir()
	kinds := map[string]int{}
	for i := range 1000 {
		text := randomAutoText(rng)
		p := zeroFile(t, dir, fmt.Sprintf("r%d", i%4), "plain", text)
		opts := []core.Option{
			core.WithMaxIndex(uint32(5 + rng.IntN(4))),
			core.WithChunkBytes(1 + rng.IntN(40)),
			core.WithWorkers(1 + rng.IntN(3)),
		}
		got, err := Load(p, opts...)
		want, werr := prescanLoad(p, opts...)
		if d := sameRead(got, err, want, werr); d != "" {
			t.Fatalf("file %d:\n%s\n%s", i, text, d)
		}
		switch {
		case err == nil:
			kinds["rows"]++
		case strings.Contains(err.Error(), "0-based index"):
			kinds["index over the limit once shifted"]++
		default:
			kinds["other error"]++
		}
	}
	for _, k := range []string{"rows", "index over the limit once shifted", "other error"} {
		if kinds[k] < 50 {
			t.Errorf("%d of the files give %s: the test covers too little", kinds[k], k)
		}
	}
}

// Parsing a chunk with the deferring indexMap allocates nothing, with
// indices 0 and at the limit in it.
func TestParseChunkAutoAllocs(t *testing.T) {
	text := strings.Repeat("1 0:1 3:0.5 9:2\n-1 qid:2 1:1 7:1\n2 4:1 9:1\n", 50)
	c := &chunk{data: []byte(text), last: true}
	lp := lineParser{maxIndex: 9, im: indexMap{auto: true}}
	parseChunk(c, &lp, "x", 1<<20)
	if c.err == nil || !errors.Is(c.err, core.ErrSyntax) {
		t.Fatalf("mixed qid: %v", c.err) // the second row breaks the first's rule
	}
	text = strings.Repeat("1 0:1 3:0.5 9:2\n-1 1:1 7:1\n2 4:1 9:1\n", 50)
	c = &chunk{data: []byte(text), last: true}
	parseChunk(c, &lp, "x", 1<<20)
	if c.err != nil || !c.zero || c.limLine != 1 || c.limCol != 12 || c.blk.Rows() != 150 {
		t.Fatalf("err %v, zero %v, limit at %d:%d, %d rows", c.err, c.zero, c.limLine, c.limCol, c.blk.Rows())
	}
	if n := testing.AllocsPerRun(20, func() { parseChunk(c, &lp, "x", 1<<20) }); n != 0 {
		t.Errorf("%v allocations per chunk", n)
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
