package main

// The malformed-input catalogue: every class of hostile input is
// fed to the real commands, which must fail with a clear error — a status
// that is neither success nor 2 (usage errors, and Go's status after a
// panic), a message naming the file and, for text, the line and column and
// what is wrong — and must leave no output file behind, half-written or
// whole. The cases that could exhaust memory run the command in a child
// process (this test binary, re-executed) and bound its peak RSS.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/columnar"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// catalogueEnv makes the test binary run cpm with the arguments after "--"
// (see TestCatalogueHelper); hwmEnv names the file where it then writes its
// peak resident memory.
const (
	catalogueEnv = "CPM_CATALOGUE_HELPER"
	hwmEnv       = "CPM_CATALOGUE_HWM"
)

// maxRSS bounds the peak resident memory of a child process fed hostile
// input.
const maxRSS = 100 << 20

// TestCatalogueHelper is not a test: in a child process started by
// cpmProcess it runs cpm, records its peak resident memory and exits with
// cpm's status.
func TestCatalogueHelper(t *testing.T) {
	if os.Getenv(catalogueEnv) != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	code := run(context.Background(), args, os.Stdout, os.Stderr)
	// VmHWM is the peak RSS of this program alone. The Maxrss that wait4
	// reports is at least the parent's peak too: Linux carries the
	// high-water mark of the address space replaced by exec, here the
	// test process's (shared by vfork), into the child's count.
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				os.WriteFile(os.Getenv(hwmEnv), []byte(strings.TrimSpace(v)), 0o644)
			}
		}
	}
	os.Exit(code)
}

// procResult is the outcome of a cpm child process.
type procResult struct {
	code           int
	stdout, stderr string
	rss            int64 // peak resident set size in bytes; 0 if unknown
	maxrss         int64 // wait4's Maxrss in bytes, an upper bound of rss
}

// cpmProcess runs cpm with args in a child process reading stdin (nil for
// none).
func cpmProcess(t *testing.T, stdin io.Reader, args ...string) procResult {
	t.Helper()
	hwm := filepath.Join(t.TempDir(), "hwm")
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestCatalogueHelper$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), catalogueEnv+"=1", hwmEnv+"="+hwm)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && !errors.As(err, new(*exec.ExitError)) {
		t.Fatalf("cpm %s: %v", strings.Join(args, " "), err)
	}
	r := procResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String(), maxrss: peakRSS(cmd.ProcessState)}
	r.rss = r.maxrss
	if b, err := os.ReadFile(hwm); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "%d kB", &kb); err == nil {
			r.rss = kb << 10
		}
	}
	return r
}

// wantFailure checks that a command failed cleanly: a status other than 0
// and 2, no panic, and every want in its error output.
func wantFailure(t *testing.T, args []string, code int, stderr string, want ...string) {
	t.Helper()
	cmd := "cpm " + strings.Join(args, " ")
	switch {
	case code == 0:
		t.Errorf("%s: succeeded, want an error", cmd)
	case code == 2:
		t.Errorf("%s: exit status 2 (usage error or panic), want a data error:\n%s", cmd, stderr)
	case strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine "):
		t.Errorf("%s: panicked:\n%s", cmd, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: error output does not say %q:\n%s", cmd, w, stderr)
		}
	}
}

// wantBoundedRSS checks a child's peak memory, except under the race
// detector, whose shadow memory inflates it.
func wantBoundedRSS(t *testing.T, args []string, r procResult) {
	t.Helper()
	if r.rss > maxRSS && !raceEnabled {
		t.Errorf("cpm %s: peak RSS %d MiB, want under %d MiB", strings.Join(args, " "), r.rss>>20, maxRSS>>20)
	}
	t.Logf("cpm %s: peak RSS %.1f MiB (wait4 Maxrss %.1f MiB)", strings.Join(args, " "), float64(r.rss)/(1<<20), float64(r.maxrss)/(1<<20))
}

// wantNoFiles checks that dir holds no file (a failed command's outputs go
// there).
func wantNoFiles(t *testing.T, args []string, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("cpm %s: failed but left %s", strings.Join(args, " "), path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fixture holds the files the catalogue derives its bad inputs from.
type fixture struct {
	dir   string
	text  []byte // good LIBSVM text: 40 rows, labels ±1, indices 1..6
	good  string // that text as a file
	model string // a small binary CPM model trained on it
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	fx := &fixture{dir: t.TempDir()}
	var b bytes.Buffer
	for r := range 40 {
		y := 1 - 2*(r%2)
		fmt.Fprintf(&b, "%+d 1:%g %d:0.5 6:%g\n", y, 0.1*float64(r%7), 2+r%4, float64(y)*0.25)
	}
	fx.text = b.Bytes()
	fx.good = fx.write(t, "good.libsvm", fx.text)
	fx.model = filepath.Join(fx.dir, "good.model")
	mustRun(t, "train", "-q", "-k", "2", "-i", "2000", "-C", "1", "-t", fx.good, "-o", fx.model)
	return fx
}

// write writes a file in the fixture's directory and returns its path.
func (fx *fixture) write(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(fx.dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// columnar returns the bytes of m written as an Arrow file, an Arrow
// stream, Parquet and a row cache of fx.good, keyed by extension.
func (fx *fixture) columnar(t *testing.T, m *sparsevec.CSR) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, ext := range []string{".arrow", ".arrows", ".parquet", ".cpmcache"} {
		p := filepath.Join(t.TempDir(), "x"+ext)
		if ext == ".cpmcache" {
			writeCache(t, p, fx.good, m)
		} else {
			writeBlocks(t, p, m)
		}
		files[ext] = fx.read(t, p)
	}
	return files
}

func (fx *fixture) read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compressed returns text compressed as CreateCompressed does for the
// extension ext (.zst or .gz).
func compressed(t *testing.T, text []byte, ext string) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x"+ext)
	o, err := reader.CreateCompressed(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Write(text); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeBlocks writes m with CreateBlocks (format from the extension).
func writeBlocks(t *testing.T, path string, m *sparsevec.CSR) {
	t.Helper()
	w, err := reader.CreateBlocks(path, reader.WithBatchRows(2))
	writeOnce(t, w, err, m)
}

// writeCache writes m as a row cache of source.
func writeCache(t *testing.T, path, source string, m *sparsevec.CSR) {
	t.Helper()
	w, err := rowcache.Create(path, source)
	writeOnce(t, w, err, m)
}

// writeOnce writes m with w, just created with error err, and closes it.
func writeOnce(t *testing.T, w interface {
	Write(*sparsevec.CSR) error
	Close() error
}, err error, m *sparsevec.CSR) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(m); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// readCommands are the commands that read the data file in, each writing
// its outputs (if any) into out.
func readCommands(fx *fixture, in, out string) [][]string {
	return [][]string{
		{"train", "-q", "-k", "2", "-i", "100", "-t", in, "-o", filepath.Join(out, "m.model")},
		// Enough steps to read past any bad row: streamed training reads
		// only as many rows as it takes steps.
		{"train", "-q", "-k", "2", "-i", "1000000", "--stream", "-t", in, "-o", filepath.Join(out, "m.model")},
		{"eval", "-m", fx.model, "--json", filepath.Join(out, "e.json"), in},
		{"predict", "-m", fx.model, "-c", in, "-s", filepath.Join(out, "scores")},
		{"train", "-m", fx.model, "-c", in, "-s", filepath.Join(out, "scores")},
		{"convert", in, "-o", filepath.Join(out, "x.parquet")},
		{"shard", "-n", "2", in, filepath.Join(out, "shards")},
		{"cv", "-q", "-r", "1", "-f", "2", "-k", "2", "-i", "100", in},
	}
}

// runAll runs every read command on in (in-process) and checks that each
// fails cleanly with want in its message and leaves nothing behind.
func runAll(t *testing.T, fx *fixture, in string, want ...string) {
	t.Helper()
	out := t.TempDir()
	for _, args := range readCommands(fx, in, out) {
		code, _, errs := cpm(t, args...)
		wantFailure(t, args, code, errs, want...)
		wantNoFiles(t, args, out)
	}
}

// Truncated and corrupt compressed streams: an error naming the file, never
// a shorter data set.
func TestCatalogueCompressed(t *testing.T) {
	fx := newFixture(t)
	bz2 := fx.read(t, "../../testdata/reader/small.libsvm.bz2")
	for _, c := range []struct {
		codec string
		data  []byte
	}{
		{"zstd", compressed(t, fx.text, ".zst")},
		{"gzip", compressed(t, fx.text, ".gz")},
		{"bzip2", bz2},
	} {
		n := len(c.data)
		// The zstd frame's checksum is its last 4 bytes, which the 28
		// bytes of the note reader.CreateCompressed appends follow.
		sum := n - 2
		if c.codec == "zstd" {
			sum -= 28
		}
		for _, d := range []struct {
			name string
			cut  int // keep data[:cut]
			flip int // or flip the byte at flip
		}{
			{"truncated-header", 5, -1},
			{"truncated-half", n / 2, -1},
			{"truncated-last-byte", n - 1, -1},
			{"corrupt-middle", n, n / 2},
			{"corrupt-checksum", n, sum},
		} {
			t.Run(c.codec+"/"+d.name, func(t *testing.T) {
				data := bytes.Clone(c.data[:d.cut])
				if d.flip >= 0 {
					data[d.flip] ^= 0x55
				}
				in := fx.write(t, c.codec+"-"+d.name, data)
				out := t.TempDir()
				for _, args := range readCommands(fx, in, out) {
					if c.codec == "bzip2" && args[0] == "convert" {
						// The bzip2 fixture's rows have query ids, which
						// Parquet output refuses at its first block,
						// before the damage is read: convert to text.
						args[len(args)-1] = filepath.Join(out, "x.libsvm.zst")
					}
					code, _, errs := cpm(t, args...)
					wantFailure(t, args, code, errs, in+":")
					// A corrupt stream may decode to bad text first; a
					// truncated one always ends in ErrCorrupt.
					if !strings.Contains(errs, "corrupt input: "+c.codec+" stream") && (d.flip < 0 || !textPosition(in).MatchString(errs)) {
						t.Errorf("cpm %s: want a corrupt %s stream:\n%s", strings.Join(args, " "), c.codec, errs)
					}
					wantNoFiles(t, args, out)
				}
			})
		}
	}
}

// textPosition matches "path:line:col: " in an error message.
func textPosition(path string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(path) + `:[0-9]+:[0-9]+: `)
}

// Files with a wrong magic number, or the right one over the wrong
// contents: a model that is not one, data files whose magic is damaged
// (read as LIBSVM text: a syntax error at 1:1) or whose body belongs to
// another format (corrupt).
func TestCatalogueWrongMagic(t *testing.T) {
	fx := newFixture(t)
	m, err := reader.Load(fx.good)
	if err != nil {
		t.Fatal(err)
	}
	files := fx.columnar(t, m)
	with := func(prefix string, body []byte) []byte { return append([]byte(prefix), body...) }
	damaged := func(b []byte, i int) []byte { b = bytes.Clone(b); b[i] ^= 0x20; return b }

	t.Run("model", func(t *testing.T) {
		modelBytes := fx.read(t, fx.model)
		for _, c := range []struct {
			name string
			data []byte
			want string
		}{
			{"text", fx.text, "not a cpm model file"},
			{"parquet", files[".parquet"], "not a cpm model file"},
			{"damaged-magic", damaged(modelBytes, 3), "not a cpm model file"},
			{"magic-only", []byte("CPMMODEL"), "truncated"},
			// The model's magic and version 1, then a cache's bytes.
			{"magic-then-cache", with("CPMMODEL\x01\x00\x00\x00", files[".cpmcache"][12:]), "corrupt"},
			{"wrong-version", func() []byte { b := bytes.Clone(modelBytes); b[8] = 7; return b }(), "unsupported model format version"},
		} {
			p := fx.write(t, c.name+".model", c.data)
			out := t.TempDir()
			for _, args := range [][]string{
				{"eval", "-m", p, fx.good},
				{"predict", "-m", p, "-c", fx.good, "-s", filepath.Join(out, "s")},
				{"train", "-m", p, "-c", fx.good},
				{"export", "-m", p, "-o", filepath.Join(out, "t.txt")},
			} {
				code, _, errs := cpm(t, args...)
				wantFailure(t, args, code, errs, p+": ", c.want)
				wantNoFiles(t, args, out)
			}
		}
	})
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"arrow-damaged-magic", damaged(files[".arrow"], 4), []string{":1:1: "}},
		{"parquet-damaged-magic", damaged(files[".parquet"], 1), []string{":1:1: "}},
		{"cache-damaged-magic", damaged(files[".cpmcache"], 7), []string{":1:1: "}},
		{"arrow-magic-parquet-body", with("ARROW1", files[".parquet"][4:]), []string{"corrupt input"}},
		{"arrows-magic-garbage", with("\xff\xff\xff\xff", fx.text), []string{"corrupt input"}},
		{"parquet-magic-arrow-body", with("PAR1", files[".arrow"][6:]), []string{"corrupt input"}},
		{"cache-magic-text", with("CPMCACHE", fx.text), []string{"corrupt input", "cache byte"}},
		{"cache-wrong-version", func() []byte { b := bytes.Clone(files[".cpmcache"]); b[8] = 9; return b }(), []string{"cache version 9"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := fx.write(t, c.name, c.data)
			runAll(t, fx, in, append([]string{in + ":"}, c.want...)...)
		})
	}
	// A damaged cache named by --cache is rebuilt from its source, not
	// trusted and not fatal.
	t.Run("damaged-cache-flag", func(t *testing.T) {
		cache := fx.write(t, "stale.cpmcache", with("CPMCACHE", fx.text))
		out := filepath.Join(t.TempDir(), "m.model")
		code, _, errs := cpm(t, "train", "-k", "2", "-i", "100", "-t", fx.good, "--cache", cache, "-o", out)
		if code != 0 || !strings.Contains(errs, "rebuilding cache") {
			t.Fatalf("exit %d, want the cache rebuilt:\n%s", code, errs)
		}
		if err := rowcache.Check(cache, fx.good, addLimitFlags(flag.NewFlagSet("x", flag.ContinueOnError)).opts(context.Background())...); err != nil {
			t.Errorf("rebuilt cache: %v", err)
		}
	})
}

// Truncated Arrow and Parquet files, including an Arrow stream cut exactly
// between two messages (without its end-of-stream marker): an error, never
// a shorter data set.
func TestCatalogueTruncatedColumnar(t *testing.T) {
	fx := newFixture(t)
	m, err := reader.Load(fx.good)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ext  string
		keep func(n int) int
		name string
	}{
		{".arrows", func(n int) int { return n - 8 }, "cut-before-end-marker"},
		{".arrows", func(n int) int { return n / 2 }, "cut-half"},
		{".arrow", func(n int) int { return n - 1 }, "cut-last-byte"},
		{".parquet", func(n int) int { return n - 1 }, "cut-last-byte"},
		{".cpmcache", func(n int) int { return n - 32 }, "cut-before-trailer"},
	} {
		t.Run(c.ext+"/"+c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x"+c.ext)
			if c.ext == ".cpmcache" {
				writeCache(t, p, fx.good, m)
			} else {
				writeBlocks(t, p, m)
			}
			data := fx.read(t, p)
			in := fx.write(t, c.name+c.ext, data[:c.keep(len(data))])
			runAll(t, fx, in, in+":", "corrupt input")
		})
	}
}

// Headers that lie about sizes: a model claiming a huge K×D, a cache block
// claiming huge lengths, Arrow and Parquet lengths far beyond the file.
// Each is refused without allocating what it claims.
func TestCatalogueLyingHeaders(t *testing.T) {
	fx := newFixture(t)
	m, err := reader.Load(fx.good)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	modelBytes := fx.read(t, fx.model)
	// The stored row count (format version 2) precedes the stored rows,
	// the first of which is row 0.
	mm, err := model.Load(fx.model)
	if err != nil {
		t.Fatal(err)
	}
	stored := len(mm.Compact().Rows)
	if stored == 0 {
		stored = mm.D
	}
	rowsAt := bytes.Index(modelBytes, le.AppendUint32(le.AppendUint64(nil, uint64(stored)), 0))
	if rowsAt < 0 {
		t.Fatal("stored row count not found")
	}
	lyingModel := func(k uint32, d, rows uint64) []byte {
		b := bytes.Clone(modelBytes)
		le.PutUint32(b[20:], k) // after magic, version, flags, sides
		le.PutUint64(b[24:], d)
		if rows > 0 {
			le.PutUint64(b[rowsAt:], rows)
		}
		return b
	}
	for _, c := range []struct {
		name  string
		data  []byte
		stdin bool // give the model on standard input (size unknown)
		want  string
	}{
		// The weights of the stored rows for K = 2^12 faces are missing.
		{"model-KxD-beyond-file", lyingModel(1<<12, 1<<24, 0), false, "truncated"},
		// 2^32 stored rows (16 GiB of indices) in a file of a few KB.
		{"model-rows-beyond-file", lyingModel(1<<16, 1<<32, 1<<32), false, "truncated"},
		// Its length unknown, the stored rows are read as they arrive and
		// end with the input.
		{"model-rows-stream", lyingModel(1<<16, 1<<32, 1<<32), true, "truncated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := fx.write(t, c.name+".model", c.data)
			var stdin io.Reader
			name := p
			if c.stdin {
				if runtime.GOOS == "windows" {
					t.Skip("no /dev/stdin")
				}
				stdin, name = bytes.NewReader(c.data), "/dev/stdin"
			}
			args := []string{"eval", "-m", name, fx.good}
			r := cpmProcess(t, stdin, args...)
			wantFailure(t, args, r.code, r.stderr, name+": ", c.want)
			wantBoundedRSS(t, args, r)
		})
	}

	files := fx.columnar(t, m)
	patch := func(b []byte, at int, v uint32) []byte {
		b = bytes.Clone(b)
		if at < 0 {
			at += len(b)
		}
		le.PutUint32(b[at:], v)
		return b
	}
	cache := files[".cpmcache"]
	blk := 44 + int(le.Uint32(cache[40:])) + 1 + 4 // first block header
	for _, c := range []struct {
		name, ext string
		data      []byte
		want      string
	}{
		// Block header: rows, nonzeros, max index, dictionary, payload length.
		{"cache-block-huge", ".cpmcache", patch(patch(patch(cache, blk, 1<<24), blk+4, 1<<28), blk+16, 0xF0000000), "block header claims"},
		{"cache-block-payload", ".cpmcache", patch(patch(patch(cache, blk, 1<<24), blk+4, 1<<28), blk+16, 1<<30), "runs past the end of the file"},
		{"cache-source-path", ".cpmcache", patch(cache, 40, 0xFFFFFFFF), "source path of"},
		// Arrow stream: the metadata length after the continuation marker.
		{"arrows-metadata-length", ".arrows", patch(files[".arrows"], 4, 0x7FFFFFFF), "corrupt input"},
		// Arrow file: the footer length before the trailing "ARROW1".
		{"arrow-footer-length", ".arrow", patch(files[".arrow"], -10, 0x7FFFFFFF), "corrupt input"},
		// Parquet: the footer length before the trailing "PAR1".
		{"parquet-footer-length", ".parquet", patch(files[".parquet"], -8, 0x7FFFFFFF), "corrupt input"},
		// zstd: a frame header declaring a 256 MiB window (raw block after).
		{"zstd-window", ".zst", append([]byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, 18 << 3, 1 | 6<<3, 0, 0}, "1 1:1\n"...), "window size exceeded (a frame may use a window of at most 128 MiB)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := fx.write(t, c.name+c.ext, c.data)
			for _, args := range [][]string{
				{"train", "-q", "-k", "2", "-i", "100", "-t", in, "-o", filepath.Join(t.TempDir(), "m.model")},
				{"eval", "-m", fx.model, in},
			} {
				r := cpmProcess(t, nil, args...)
				wantFailure(t, args, r.code, r.stderr, in+":", c.want)
				wantBoundedRSS(t, args, r)
			}
		})
	}
}

// Every single-byte change of a model file, and every truncation, is an
// error naming the file and the byte, never a panic or a wrong model.
func TestCatalogueModelBitFlips(t *testing.T) {
	fx := newFixture(t)
	good := fx.read(t, fx.model)
	bad := filepath.Join(fx.dir, "bad.model")
	try := func(data []byte, what string) {
		t.Helper()
		if err := os.WriteFile(bad, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"eval", "-m", bad, fx.good}
		code, _, errs := cpm(t, args...)
		if code == 0 || code == 2 || !strings.Contains(errs, bad+": ") || !strings.Contains(errs, "(at byte ") {
			t.Fatalf("%s: exit %d, want a model error naming the file and byte:\n%s", what, code, errs)
		}
	}
	for i := range good {
		d := bytes.Clone(good)
		d[i] ^= byte(1) << (i % 8) // every byte, every bit position in turn
		try(d, fmt.Sprintf("byte %d ^ %#x", i, byte(1)<<(i%8)))
	}
	for n := range len(good) {
		try(good[:n], fmt.Sprintf("truncated to %d bytes", n))
	}
	try(append(bytes.Clone(good), 0), "trailing byte")
	t.Logf("%d-byte model: %d flips and %d truncations refused", len(good), len(good), len(good))
}

// hugeIndexRows is the fixture's rows with index 4294967295 (the largest
// uint32) in row 3.
func hugeIndexRows(t *testing.T, fx *fixture) *sparsevec.CSR {
	t.Helper()
	m, err := reader.Load(fx.good)
	if err != nil {
		t.Fatal(err)
	}
	h := &sparsevec.CSR{}
	for r := range m.Rows() {
		x := m.Row(r)
		if r == 2 {
			x = sparsevec.Vector{Idx: []uint32{1, math.MaxUint32}, Val: []float32{1, 1}}
		}
		h.Append(m.Labels[r], x)
	}
	return h
}

// A huge feature index, in every format and through every reading path, is
// refused by --max-features before any weights are sized by it, in bounded
// memory; the message names the file, the row (line and column for text)
// and the flag to raise.
func TestCatalogueHugeIndex(t *testing.T) {
	fx := newFixture(t)
	lines := bytes.SplitAfter(fx.text, []byte("\n"))
	lines[2] = []byte("+1 1:1 4294967295:1\n")
	text := bytes.Join(lines, nil)
	rows := hugeIndexRows(t, fx)
	textPos := ":3:8: feature index out of range: above the maximum 16777215"
	rowPos := ": row 3: column \"features\": feature index out of range: index 4294967295 above the maximum 16777215"

	inputs := []struct{ name, want string }{
		{"huge.libsvm", textPos},
		{"huge.libsvm.zst", textPos},
		{"huge.arrow", rowPos},
		{"huge.arrows", rowPos},
		{"huge.parquet", rowPos},
		{"huge.cpmcache", rowPos},
		{"shards", ""},
	}
	path := func(name string) string { return filepath.Join(fx.dir, name) }
	fx.write(t, "huge.libsvm", text)
	fx.write(t, "huge.libsvm.zst", compressed(t, text, ".zst"))
	for _, name := range []string{"huge.arrow", "huge.arrows", "huge.parquet"} {
		writeBlocks(t, path(name), rows)
	}
	writeCache(t, path("huge.cpmcache"), path("huge.libsvm"), rows)
	// A shard set written with the limit raised to its maximum.
	mustRun(t, "shard", "-n", "2", "--max-features", "4294967296", path("huge.libsvm"), path("shards"))

	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			out := t.TempDir()
			p := path(in.name)
			cmds := [][]string{
				{"train", "-q", "-k", "2", "-i", "100", "-t", p, "-o", filepath.Join(out, "m.model")},
				{"train", "-q", "-k", "2", "-i", "100", "--stream", "-t", p, "-o", filepath.Join(out, "m.model")},
				{"eval", "-m", fx.model, p},
			}
			if in.name == "huge.libsvm" {
				cmds = append(cmds,
					[]string{"train", "-q", "-k", "2", "-i", "100", "-t", p, "--cache", filepath.Join(out, "c.cpmcache"), "-o", filepath.Join(out, "m.model")},
					[]string{"train", "-q", "-k", "2", "-i", "100", "--stream", "-t", p, "--cache", filepath.Join(out, "c.cpmcache"), "-o", filepath.Join(out, "m.model")},
					[]string{"predict", "-m", fx.model, "-c", p, "-s", filepath.Join(out, "scores")},
					[]string{"convert", p, "-o", filepath.Join(out, "x.arrow")},
					[]string{"shard", "-n", "2", p, filepath.Join(out, "shards")},
					[]string{"cv", "-q", "-r", "1", "-f", "2", "-k", "2", "-i", "100", p},
				)
			}
			if in.name == "shards" {
				cmds = cmds[1:2] // a shard set is read with --stream
			}
			for _, args := range cmds {
				r := cpmProcess(t, nil, args...)
				wantFailure(t, args, r.code, r.stderr, "feature index out of range", "--max-features 16777216")
				if in.want != "" && !strings.Contains(r.stderr, p+in.want) {
					t.Errorf("cpm %s: error does not say %q:\n%s", strings.Join(args, " "), p+in.want, r.stderr)
				}
				wantBoundedRSS(t, args, r)
				wantNoFiles(t, args, out)
			}
		})
	}

	// The limit is --max-features - 1, and raising it lets the row in.
	t.Run("boundary", func(t *testing.T) {
		out := t.TempDir()
		for _, c := range []struct {
			line  string
			flags []string
			ok    bool
		}{
			{"1 16777215:1\n", nil, true},
			{"1 16777216:1\n", nil, false},
			{"1 16777216:1\n", []string{"--max-features", "16777217"}, true},
			{"1 100:1\n", []string{"--max-features", "100"}, false},
			{"1 4294967295:1\n", []string{"--max-features", "4294967296"}, true},
		} {
			in := fx.write(t, "boundary.libsvm", []byte(c.line))
			args := append([]string{"convert", in, "-o", filepath.Join(out, "b.arrow")}, c.flags...)
			code, _, errs := cpm(t, args...)
			if c.ok != (code == 0) {
				t.Errorf("cpm %s on %q: exit %d:\n%s", strings.Join(args, " "), c.line, code, errs)
			}
			if !c.ok {
				wantFailure(t, args, code, errs, in+":1:3: feature index out of range", "--max-features")
			}
		}
	})
}

// longLine is a reader of one enormous line: a few good lines, then n bytes
// of "index:value" pairs with no newline, made as they are read so that
// nothing is held or written to disk.
type longLine struct {
	head []byte
	n    int64
}

func (l *longLine) Read(p []byte) (int, error) {
	if len(l.head) > 0 {
		k := copy(p, l.head)
		l.head = l.head[k:]
		return k, nil
	}
	if l.n <= 0 {
		return 0, io.EOF
	}
	const pat = "7:0.25 "
	k := 0
	for k < len(p) && int64(k) < l.n {
		p[k] = pat[k%len(pat)]
		k++
	}
	l.n -= int64(k)
	return k, nil
}

// An enormous line (300 MB without a newline) on standard input is refused
// at --max-line-bytes, in bounded memory, by every command that reads
// data, with the line number.
func TestCatalogueEnormousLine(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 300 MB through pipes")
	}
	fx := newFixture(t)
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "-q", "-k", "2", "-t", "-", "-o", filepath.Join(out, "m.model")}, "-:3:8388609: line too long: more than 8388608 bytes"},
		{[]string{"train", "-q", "-k", "2", "--stream", "-t", "-", "-o", filepath.Join(out, "m.model")}, "-:3:8388609: line too long"},
		{[]string{"eval", "-m", fx.model, "-"}, "-:3:8388609: line too long"},
		{[]string{"predict", "-m", fx.model, "-c", "-", "-s", filepath.Join(out, "scores")}, "-:3:8388609: line too long"},
		{[]string{"convert", "-", "-o", filepath.Join(out, "x.arrow")}, "-:3:8388609: line too long"},
		{[]string{"shard", "-n", "2", "-", filepath.Join(out, "shards")}, "-:3:8388609: line too long"},
		{[]string{"cv", "-q", "-r", "1", "-f", "2", "-"}, "-:3:8388609: line too long"},
		{[]string{"convert", "--max-line-bytes", "1MiB", "-", "-o", filepath.Join(out, "x.arrow")}, "-:3:1048577: line too long: more than 1048576 bytes"},
	} {
		in := &longLine{head: []byte("1 1:1\n-1 2:1\n"), n: 300 << 20}
		r := cpmProcess(t, in, c.args...)
		wantFailure(t, c.args, r.code, r.stderr, c.want, "raise --max-line-bytes")
		wantBoundedRSS(t, c.args, r)
		if in.n == 0 {
			t.Errorf("cpm %s read all 300 MB", strings.Join(c.args, " "))
		}
		wantNoFiles(t, c.args, out)
	}
}

// NaN and infinite labels and values, in text (after more than a chunk of
// good rows, so that no reader stops early and keeps the rows before), in
// an Arrow file and in a cache: an error at the row, never a row dropped.
func TestCatalogueNonFinite(t *testing.T) {
	fx := newFixture(t)
	var prefix bytes.Buffer
	for prefix.Len() < 1200<<10 { // more than one 1 MiB chunk
		prefix.Write(fx.text)
	}
	line := bytes.Count(prefix.Bytes(), []byte("\n")) + 1
	for _, c := range []struct{ name, row, tok, want string }{
		{"nan-label", "nan 1:1", "nan", "non-finite number label"},
		{"inf-label", "-Inf 1:1", "-Inf", "non-finite number label"},
		{"overflow-label", "1e39 1:1", "1e39", "non-finite number label"},
		{"nan-value", "1 1:1 2:NaN", "2:NaN", "non-finite number value"},
		{"inf-value", "1 1:+inf", "1:+inf", "non-finite number value"},
		{"overflow-value", "-1 3:-3.5e38", "3:-3.5e38", "non-finite number value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := fx.write(t, c.name+".libsvm", append(bytes.Clone(prefix.Bytes()), c.row+"\n"...))
			col := strings.Index(c.row, c.tok) + 1
			runAll(t, fx, in, fmt.Sprintf("%s:%d:%d: %s (near %q)", in, line, col, c.want, c.tok))
		})
	}

	nan := float32(math.NaN())
	t.Run("arrow", func(t *testing.T) {
		in := filepath.Join(fx.dir, "nan.arrow")
		f, err := os.Create(in)
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewRecordBuilder(memory.NewGoAllocator(), columnar.Schema())
		defer b.Release()
		lb := b.Field(1).(*array.ListBuilder)
		sb := lb.ValueBuilder().(*array.StructBuilder)
		for r, y := range []float32{1, -1, 1, -1} {
			v := float32(r)
			if r == 2 {
				v = nan
			}
			b.Field(0).(*array.Float32Builder).Append(y)
			lb.Append(true)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Uint32Builder).Append(uint32(r + 1))
			sb.FieldBuilder(1).(*array.Float32Builder).Append(v)
		}
		rec := b.NewRecord()
		defer rec.Release()
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(columnar.Schema()))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		runAll(t, fx, in, in+`: row 3: column "features": non-finite number: value NaN at index 3`)
	})
	t.Run("cache", func(t *testing.T) {
		m := &sparsevec.CSR{}
		m.Append(1, sparsevec.Vector{Idx: []uint32{1}, Val: []float32{1}})
		m.Append(nan, sparsevec.Vector{Idx: []uint32{2}, Val: []float32{1}})
		in := filepath.Join(fx.dir, "nan.cpmcache")
		writeCache(t, in, fx.good, m)
		runAll(t, fx, in, in+": cache byte", "non-finite label")
	})
}

// Empty inputs: no rows to train on or to score is an error naming the
// file (an empty model file is a truncated one); converting or sharding
// nothing writes empty outputs, which read back as empty.
func TestCatalogueEmpty(t *testing.T) {
	fx := newFixture(t)
	empty := fx.write(t, "empty.libsvm", nil)
	emptyZst := fx.write(t, "empty.libsvm.zst", compressed(t, nil, ".zst"))
	emptyArrow := filepath.Join(fx.dir, "empty.arrow")
	writeBlocks(t, emptyArrow, &sparsevec.CSR{})
	comments := fx.write(t, "comments.libsvm", []byte("# nothing but a comment\n\n   \n"))
	for _, in := range []string{empty, emptyZst, emptyArrow, comments} {
		out := t.TempDir()
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"train", "-q", "-t", in, "-o", filepath.Join(out, "m.model")}, in + ": no rows to train on"},
			{[]string{"train", "-q", "--stream", "-t", in, "-o", filepath.Join(out, "m.model")}, "no rows"},
			{[]string{"eval", "-m", fx.model, in}, in + ": no rows to score"},
			{[]string{"predict", "-m", fx.model, "-c", in, "-s", filepath.Join(out, "s")}, in + ": no rows to score"},
			{[]string{"cv", "-q", in}, "no rows"},
		} {
			code, _, errs := cpm(t, c.args...)
			wantFailure(t, c.args, code, errs, c.want)
			wantNoFiles(t, c.args, out)
		}
		dst := filepath.Join(out, "e.parquet")
		mustRun(t, "convert", in, "-o", dst)
		if m, err := reader.Load(dst); err != nil || m.Rows() != 0 {
			t.Errorf("convert of empty %s: %v, %v", in, m, err)
		}
	}
	emptyModel := fx.write(t, "empty.model", nil)
	args := []string{"eval", "-m", emptyModel, fx.good}
	code, _, errs := cpm(t, args...)
	wantFailure(t, args, code, errs, emptyModel+": truncated: empty input")
}
