package reader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// fuzzOpts are the reading options of FuzzLoad: small limits and chunks, so
// that short inputs reach the limits and the chunk boundaries.
var fuzzOpts = []Option{WithMaxLineBytes(1 << 12), WithMaxIndex(1 << 20), WithChunkBytes(64), WithWorkers(2)}

// fuzzMaxText bounds the decompressed size FuzzLoad reads, so that a
// decompression bomb makes a skipped input rather than a slow one.
const fuzzMaxText = 256 << 10

// parseSentinels are the errors a malformed line wraps.
var parseSentinels = []error{ErrSyntax, ErrIndexZero, ErrIndexRange, ErrUnsorted, ErrDuplicate, ErrNonFinite, ErrNoLabel, ErrLineTooLong}

// checkTextError checks that err, from reading the file at path, is a
// *ParseError naming path: at a line and column wrapping a parse sentinel,
// or at a line without a column wrapping ErrCorrupt (a damaged compressed
// stream).
func checkTextError(t *testing.T, err error, path string) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Path != path || pe.Line < 1 {
		t.Fatalf("%v: not a *ParseError naming %s at a line", err, path)
	}
	if pe.Col == 0 {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%v: an error without a column that is not ErrCorrupt", err)
		}
		return
	}
	for _, s := range parseSentinels {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("%v: wraps none of the parse sentinels", err)
}

// FuzzLoad feeds arbitrary file contents through the whole reading path:
// Open's sniffing and decompression (zstd, gzip, bzip2 or none), Load's
// parallel chunked parser, Stream, and a Scanner over Open. The three must
// agree: the same rows, or errors of the documented types at the same
// place, with Stream handing out every row before the error (none
// dropped). What reads without error must come back unchanged through the
// Writer and a zstd file. Inputs in another format (Arrow, Parquet, the
// cache) must end in rows or a documented error; FuzzColumnar and FuzzCache
// go deeper into those.
func FuzzLoad(f *testing.F) {
	text := []byte("1 1:0.5 3:2\n-1 2:1e-3 4:0\n\n# comment\n2 qid:3 1:1 784:0.992157\n0.5\n")
	for _, seed := range fuzzLoadSeeds(f, text) {
		f.Add(seed.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := writeTempFile(t, "in", data)
		if sniff(data) != LIBSVM {
			got, _, err := readAllBlocks(t, path, fuzzOpts...)
			if err != nil && !knownError(err) {
				t.Fatalf("unexpected error %v", err)
			}
			if err == nil {
				if _, _, _, err := core.CheckRows(got.Labels, got.Ptr, got.Idx, got.Val, 1<<20); err != nil {
					t.Fatalf("rows read without error are invalid: %v", err)
				}
			}
			return
		}
		rc, oerr := Open(path)
		if oerr != nil {
			// A compressed stream whose header is cut or damaged: Open,
			// Load and NewStream refuse it alike, naming the file.
			var pe *ParseError
			if !errors.As(oerr, &pe) || pe.Path != path || pe.Line != 0 || !errors.Is(oerr, ErrCorrupt) {
				t.Fatalf("Open: %v: not a *ParseError naming the file and wrapping ErrCorrupt", oerr)
			}
			_, lerr := Load(path, fuzzOpts...)
			_, terr := libsvm.NewStream(path, 3, fuzzOpts...)
			if lerr == nil || terr == nil || lerr.Error() != oerr.Error() || terr.Error() != oerr.Error() {
				t.Fatalf("Open: %v; Load: %v; NewStream: %v", oerr, lerr, terr)
			}
			return
		}
		// Skip bombs: inputs that decompress to more than fuzzMaxText.
		n, _ := io.Copy(io.Discard, io.LimitReader(rc, fuzzMaxText+1))
		rc.Close()
		if n > fuzzMaxText {
			t.Skip("decompresses to more than 256 KiB")
		}

		loaded, lerr := Load(path, fuzzOpts...)
		rc, err := Open(path)
		if err != nil {
			t.Fatalf("Open once, then not: %v", err)
		}
		// The Scanner reads an io.Reader, which auto cannot scan ahead: give
		// it the file's own decision, as Load and Stream make it.
		zb, err := IsZeroBased(path, fuzzOpts...)
		if err != nil {
			t.Fatalf("IsZeroBased: %v", err)
		}
		mode := ZeroBasedNo
		if zb {
			mode = ZeroBasedYes
		}
		s := libsvm.NewScanner(rc, path, append(fuzzOpts[:len(fuzzOpts):len(fuzzOpts)], WithZeroBased(mode))...)
		scanned := new(sparsevec.CSR)
		for s.Scan() {
			scanned.Append(s.Label(), s.Row())
		}
		serr := s.Err()
		rc.Close()
		streamed, terr := streamFile(path, 3)

		if (lerr == nil) != (serr == nil) || (terr == nil) != (serr == nil) {
			t.Fatalf("Load: %v; Scanner: %v; Stream: %v", lerr, serr, terr)
		}
		if serr != nil {
			for _, err := range []error{serr, lerr, terr} {
				checkTextError(t, err, path)
			}
			if lerr.Error() != serr.Error() || terr.Error() != serr.Error() {
				t.Fatalf("errors differ:\nLoad:    %v\nScanner: %v\nStream:  %v", lerr, serr, terr)
			}
			if !equalCSR(streamed, scanned) {
				t.Fatalf("Stream handed out %d rows before the error, the Scanner %d", streamed.Rows(), scanned.Rows())
			}
			return
		}
		if !equalCSR(loaded, scanned) || !equalCSR(streamed, scanned) {
			t.Fatalf("rows differ: Load %d, Scanner %d, Stream %d", loaded.Rows(), scanned.Rows(), streamed.Rows())
		}
		// Round trip through the Writer and a zstd file.
		var text bytes.Buffer
		w := libsvm.NewWriter(&text)
		for r := range loaded.Rows() {
			if err := w.Write(loaded.Labels[r], loaded.Row(r)); err != nil {
				t.Fatalf("Write of row %d: %v", r, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		back, err := Load(writeTempFile(t, "out.libsvm.zst", zstdBytes(text.Bytes())), fuzzOpts...)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if !equalCSR(back, loaded) {
			t.Fatalf("round trip changed the rows")
		}
	})
}

// streamFile reads the file at path with a Stream of blockRows rows into
// one CSR, returning the rows before an error with it.
func streamFile(path string, blockRows int) (*sparsevec.CSR, error) {
	s, err := libsvm.NewStream(path, blockRows, fuzzOpts...)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	m := new(sparsevec.CSR)
	for {
		b, err := s.Next()
		if err == io.EOF {
			return m, s.Close()
		}
		if err != nil {
			return m, err
		}
		m.AppendCSR(b)
		s.Release(b)
	}
}

// fuzzSeed is a named seed input.
type fuzzSeed struct {
	name string
	data []byte
}

// fuzzLoadSeeds are the seeds of FuzzLoad: good text plain and compressed
// three ways, each compressed form truncated and corrupted, and each
// malformed-line class.
func fuzzLoadSeeds(t testing.TB, text []byte) []fuzzSeed {
	bz2, err := os.ReadFile("../testdata/reader/small.libsvm.bz2")
	if err != nil {
		t.Fatal(err)
	}
	seeds := []fuzzSeed{
		{"plain", text},
		{"empty", nil},
		{"crlf", []byte("1 1:1\r\n-1 2:1\r\n")},
		{"nan-label", []byte("1 1:1\nnan 2:1\n")},
		{"inf-value", []byte("1 1:1\n1 2:-Inf\n")},
		{"huge-index", []byte("1 4294967295:1\n")},
		{"index-above-max", []byte("1 1048577:1\n")},
		{"unsorted", []byte("1 3:1 2:1\n")},
		{"long-line", append([]byte("1 1:1\n1"), bytes.Repeat([]byte(" 7:0.25"), 700)...)},
		{"binary", []byte("\x00\x01\x02\xff\xfe")},
		{"zstd-window-27", zstdFrame(27, text)},
		{"zstd-window-28", zstdFrame(28, text)},
	}
	z, g := zstdBytes(text), gzipBytes(text)
	for _, c := range []fuzzSeed{{"zstd", z}, {"gzip", g}, {"bzip2", bz2}} {
		n := len(c.data)
		flipped := bytes.Clone(c.data)
		flipped[n/2] ^= 0x55
		seeds = append(seeds,
			fuzzSeed{c.name, c.data},
			fuzzSeed{c.name + "-truncated", c.data[:n/2]},
			fuzzSeed{c.name + "-header-only", c.data[:min(n, 6)]},
			fuzzSeed{c.name + "-corrupt", flipped},
			fuzzSeed{c.name + "-concatenated", append(bytes.Clone(c.data), c.data...)},
		)
	}
	return seeds
}

// TestWriteFuzzCorpus writes the seed corpora of this package's fuzz
// targets to testdata/fuzz when CPM_WRITE_FUZZ_CORPUS=1; see
// testdata/fuzz/README.md.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("CPM_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set CPM_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz")
	}
	text := []byte("1 1:0.5 3:2\n-1 2:1e-3 4:0\n\n# comment\n2 qid:3 1:1 784:0.992157\n0.5\n")
	corpora := map[string][]fuzzSeed{
		"FuzzLoad": fuzzLoadSeeds(t, text),
	}
	for target, seeds := range corpora {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(s.data)))
			if err := os.WriteFile(filepath.Join(dir, s.name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// compressionsOf lists the codecs of a columnar extension.
func compressionsOf(ext string) []string {
	if ext == ".parquet" {
		return []string{"none", "snappy"}
	}
	return []string{"none", "zstd"}
}

// knownError reports whether err is one of the documented kinds.
func knownError(err error) bool {
	var re *core.RowError
	var pe *core.ParseError
	return errors.Is(err, core.ErrCorrupt) || errors.Is(err, core.ErrSchema) || errors.As(err, &re) || errors.As(err, &pe)
}
