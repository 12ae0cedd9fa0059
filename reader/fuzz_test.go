package reader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
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
			_, terr := NewStream(path, 3, fuzzOpts...)
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
		s := NewScanner(rc, path, fuzzOpts...)
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
		w := NewWriter(&text)
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
	s, err := NewStream(path, blockRows, fuzzOpts...)
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

// cacheFile writes blocks as a cache of a one-line source and returns its
// bytes.
func cacheFile(t testing.TB, blocks []*sparsevec.CSR) []byte {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.libsvm")
	if err := os.WriteFile(src, []byte("1 1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c.cpmcache")
	writeCache(t, path, src, blocks)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixCacheCRCs recomputes every checksum of a cache file's bytes that it
// can find (header, blocks, trailer), so that fuzzed changes reach the
// checks behind them.
func fixCacheCRCs(b []byte) []byte {
	le := binary.LittleEndian
	if len(b) < 44 {
		return b
	}
	n := int(le.Uint32(b[40:]))
	if n > len(b) || 44+n+4 > len(b) {
		return b
	}
	le.PutUint32(b[44+n:], crc32.Checksum(b[:44+n], castagnoli))
	off := 44 + n + 4
	for off+4 <= len(b) {
		if le.Uint32(b[off:]) == 0 {
			if off+32 <= len(b) {
				le.PutUint32(b[off+28:], crc32.Checksum(b[off:off+28], castagnoli))
			}
			return b
		}
		if off+24 > len(b) {
			return b
		}
		plen := int(le.Uint32(b[off+16:]))
		if plen > len(b)-off-24 {
			return b
		}
		h := b[off : off+24]
		le.PutUint32(h[20:], crc32.Update(crc32.Checksum(h[:20], castagnoli), castagnoli, b[off+24:off+24+plen]))
		off += 24 + plen
	}
	return b
}

// fuzzCacheMaxIndex is the WithMaxIndex of FuzzCache, below some of the
// seeds' indices.
const fuzzCacheMaxIndex = 1 << 31

// FuzzCache reads arbitrary bytes as a row cache, as they are and with
// their checksums recomputed (so that mutations reach the checks behind
// them). Reading must end in rows or in a *CacheError wrapping ErrCorrupt
// or a *RowError wrapping ErrIndexRange, never a panic. Rows read without
// error must be valid (indices ascending within 1..fuzzCacheMaxIndex,
// finite numbers, each block's Dim its largest index + 1), and must read
// back the same after being written to a new cache.
func FuzzCache(f *testing.F) {
	for _, s := range fuzzCacheSeeds(f) {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCache(t, data)
		checkCache(t, fixCacheCRCs(bytes.Clone(data)))
	})
}

func checkCache(t *testing.T, data []byte) {
	t.Helper()
	path := writeTempFile(t, "x.cpmcache", data)
	b, err := OpenCache(path, 0, WithMaxIndex(fuzzCacheMaxIndex))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []*sparsevec.CSR
	for {
		blk, err2 := b.Next()
		if err2 == io.EOF {
			break
		}
		if err2 != nil {
			err = err2
			break
		}
		if want := dimOf(blk); blk.Dim != want {
			t.Fatalf("block Dim %d, want %d", blk.Dim, want)
		}
		c := &sparsevec.CSR{}
		core.AppendRows(c, blk, 0, blk.Rows())
		blocks = append(blocks, c)
		b.Release(blk)
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var ce *CacheError
		var re *RowError
		switch {
		case errors.As(err, &ce) && ce.Path == path && errors.Is(err, ErrCorrupt):
		case errors.As(err, &re) && re.Path == path && re.Row >= 1 && errors.Is(err, ErrIndexRange):
		default:
			t.Fatalf("%v: neither a *CacheError wrapping ErrCorrupt nor a *RowError wrapping ErrIndexRange", err)
		}
		return
	}
	all := &sparsevec.CSR{Ptr: []int{0}}
	for _, blk := range blocks {
		if _, _, _, err := core.CheckRows(blk.Labels, blk.Ptr, blk.Idx, blk.Val, fuzzCacheMaxIndex); err != nil {
			t.Fatalf("rows read without error are invalid: %v", err)
		}
		all.AppendCSR(blk)
	}
	again := cacheFile(t, blocks)
	back, _, err := readAll(t, mustOpenCache(t, writeTempFile(t, "y.cpmcache", again)))
	if err != nil {
		t.Fatalf("reading the rewritten cache: %v", err)
	}
	if !equalCSR(back, all) {
		t.Fatalf("rewritten cache reads differently")
	}
}

func mustOpenCache(t *testing.T, path string) BlockReader {
	t.Helper()
	b, err := OpenCache(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fuzzCacheSeeds are valid caches (dictionary and raw values, one and many
// blocks, empty rows, index 4294967295 beyond FuzzCache's limit, no rows)
// and damaged ones (truncated, a flipped byte, block headers that lie
// about sizes with their checksums fixed).
func fuzzCacheSeeds(t testing.TB) []fuzzSeed {
	small := &sparsevec.CSR{}
	for r := range 6 {
		small.Append(float32(r%2*2-1), sparsevec.Vector{Idx: []uint32{1, uint32(3 + r)}, Val: []float32{0.5, 1}})
	}
	good := cacheFile(t, []*sparsevec.CSR{small})
	mixed := cacheRows(30, 9)
	seeds := []fuzzSeed{
		{"small", good},
		{"mixed-blocks", cacheFile(t, blocksOf(mixed, 7))},
		{"empty", cacheFile(t, nil)},
		{"truncated", good[:len(good)/2]},
		{"no-trailer", good[:len(good)-32]},
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x10
	seeds = append(seeds, fuzzSeed{"flipped", flipped})
	le := binary.LittleEndian
	h := 44 + int(le.Uint32(good[40:])) + 4
	lie := func(name string, at int, v uint32) {
		d := bytes.Clone(good)
		le.PutUint32(d[h+at:], v)
		seeds = append(seeds, fuzzSeed{name, fixCacheCRCs(d)})
	}
	lie("lying-rows", 0, 1<<24)
	lie("lying-nnz", 4, 1<<28)
	lie("lying-max-index", 8, 1<<31)
	lie("lying-dict", 12, 300)
	lie("lying-payload", 16, 1<<30)
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
		"FuzzLoad":  fuzzLoadSeeds(t, text),
		"FuzzCache": fuzzCacheSeeds(t),
		"FuzzScanner": {
			{"valid", []byte("1 1:0.5 3:2\n-1 2:1e3 # c\n\n3 qid:1 1:1\r\n")},
			{"no-label", []byte("3:1 4:2\n")},
			{"index-zero", []byte("1 0:1\n")},
			{"huge-index", []byte("1 4294967295:1 4294967296:1\n")},
			{"unsorted", []byte("1 3:1 2:1\n")},
			{"duplicate", []byte("1 2:1 2:1\n")},
			{"nan-label", []byte("NaN 1:1\n")},
			{"inf-value", []byte("1 1:inf\n")},
			{"overflow", []byte("1e39 1:3.5e38\n")},
			{"bad-qid", []byte("1 qid:x 1:1\n")},
			{"hash-in-token", []byte("1 1:1#c\n")},
			{"binary", []byte("\x00\xff\n\x80")},
		},
	}
	for _, ext := range []string{".arrow", ".arrows", ".parquet"} {
		m := sampleCSR(testRand(), 12)
		for _, comp := range compressionsOf(ext) {
			p := filepath.Join(t.TempDir(), "x"+ext)
			writeAll(t, p, m, 12, WithCompression(comp), WithBatchRows(5))
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimPrefix(ext, ".") + "-" + comp
			n := len(data)
			flipped := bytes.Clone(data)
			flipped[n/2] ^= 0x55
			corpora["FuzzColumnar"] = append(corpora["FuzzColumnar"],
				fuzzSeed{name, data},
				fuzzSeed{name + "-truncated", data[:n*2/3]},
				fuzzSeed{name + "-flipped", flipped},
			)
		}
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
