package reader

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// writeFormat writes m to a file in dir named name (the extension picks
// the format) and returns its bytes.
func writeFormat(t *testing.T, dir, name string, m []byte) []byte {
	t.Helper()
	rows, err := scanAll(m, "src")
	mustNil(err)
	p := filepath.Join(dir, name)
	if FormatForOutput(p) == Cache {
		writeCache(t, p, "", blocksOf(rows, 50))
	} else {
		w, err := CreateBlocks(p, WithBatchRows(50))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocksOf(rows, 50) {
			mustNil(w.Write(b))
		}
		mustNil(w.Close())
	}
	b, err := os.ReadFile(p)
	mustNil(err)
	return b
}

// Standard input in every format reads as the file does, through Load and
// OpenBlocks; a columnar stream is copied to a temporary file in TMPDIR
// that Close removes, LIBSVM text is not copied.
func TestStdinEveryFormat(t *testing.T) {
	text := genMNIST(testRand(), 64<<10)
	want, err := scanAll(text, "want")
	mustNil(err)
	src := t.TempDir()
	inputs := map[string]struct {
		data  []byte
		f     Format
		spool bool
	}{
		"libsvm":  {text, LIBSVM, false},
		"zstd":    {zstdBytes(text), LIBSVM, false},
		"gzip":    {gzipBytes(text), LIBSVM, false},
		"arrow":   {writeFormat(t, src, "d.arrow", text), ArrowFile, true},
		"arrows":  {writeFormat(t, src, "d.arrows", text), ArrowStream, true},
		"parquet": {writeFormat(t, src, "d.parquet", text), Parquet, true},
		"cache":   {writeFormat(t, src, "d.cpmcache", text), Cache, true},
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			s, err := OpenStdin(bytes.NewReader(in.data), "")
			if err != nil {
				t.Fatal(err)
			}
			if s.Format() != in.f || (s.Spool() != "") != in.spool {
				t.Fatalf("format %v spool %q; want %v, spooled %v", s.Format(), s.Spool(), in.f, in.spool)
			}
			if in.spool && filepath.Dir(s.Spool()) != tmp {
				t.Errorf("spool %s is not in TMPDIR %s", s.Spool(), tmp)
			}
			mustNil(s.Close())

			got, err := loadStdin(bytes.NewReader(in.data), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !equalCSR(got, want) {
				t.Error("loadStdin: rows differ from the file's")
			}
			b, err := openStdinBlocks(bytes.NewReader(in.data), 37, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err = ReadAll(b)
			if err != nil {
				t.Fatal(err)
			}
			if !equalCSR(got, want) {
				t.Error("openStdinBlocks: rows differ from the file's")
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("temporary files left in TMPDIR: %v", left)
			}
		})
	}
}

// Errors in standard input name it and the line; a stream that fails
// while it is relayed is an error, not a shorter input; DetectFormat does
// not consume standard input.
func TestStdinErrors(t *testing.T) {
	_, err := loadStdin(strings.NewReader("1 1:1\n-1 0:2\n"), nil)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Path != StdinName || pe.Line != 2 || !errors.Is(err, ErrIndexZero) {
		t.Errorf("bad line 2 of standard input: %v; want a ParseError at %s:2 wrapping ErrIndexZero", err, StdinName)
	}
	broken := io.MultiReader(strings.NewReader("1 1:1\n-1 2:1\n"), iotest.ErrReader(errors.New("device gone")))
	if _, err := loadStdin(broken, nil); err == nil || !strings.Contains(err.Error(), "device gone") {
		t.Errorf("Load of a failing stream: %v; want its read error", err)
	}
	broken = io.MultiReader(strings.NewReader("1 1:1\n-1 2:1\n"), iotest.ErrReader(errors.New("device gone")))
	b, err := openStdinBlocks(broken, 1, nil)
	mustNil(err)
	if _, err := ReadAll(b); err == nil || !strings.Contains(err.Error(), "device gone") {
		t.Errorf("OpenBlocks of a failing stream: %v; want its read error", err)
	}
	if _, err := DetectFormat("-"); !errors.Is(err, ErrStdinFormat) {
		t.Errorf("DetectFormat(-): %v; want ErrStdinFormat", err)
	}
	// A columnar stream that cannot be copied names the directory.
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	par := writeFormat(t, t.TempDir(), "d.parquet", []byte("1 1:1\n"))
	if _, err := OpenStdin(bytes.NewReader(par), ""); err == nil || !strings.Contains(err.Error(), "temporary copy") {
		t.Errorf("no temporary directory: %v; want an error saying a temporary copy is needed", err)
	}
}

// Standard input redirected from a regular file is read in place, from
// its current offset, with no relay; a columnar file is copied from that
// offset.
func TestStdinRegularFile(t *testing.T) {
	text := []byte("skipped line\n1 1:1\n-1 2:1\n")
	skip := int64(len("skipped line\n"))
	want, err := scanAll(text[skip:], "want")
	mustNil(err)
	f, err := os.Open(writeTempFile(t, "d.libsvm", text))
	mustNil(err)
	defer f.Close()
	_, err = f.Seek(skip, io.SeekStart)
	mustNil(err)
	s, err := OpenStdin(f, "")
	mustNil(err)
	if s.relay != nil || s.pipe != f {
		t.Error("a regular file is relayed through a pipe")
	}
	mustNil(s.Close())
	got, err := loadStdin(f, nil)
	if err != nil || !equalCSR(got, want) {
		t.Errorf("loadStdin of a regular file at offset %d: %v; rows differ or error", skip, err)
	}
	par := writeFormat(t, t.TempDir(), "d.parquet", []byte("1 1:1\n"))
	pf, err := os.Open(writeTempFile(t, "p.parquet", par))
	mustNil(err)
	defer pf.Close()
	t.Setenv("TMPDIR", t.TempDir())
	got, err = loadStdin(pf, nil)
	if err != nil {
		t.Fatalf("loadStdin of a regular Parquet file: %v", err)
	}
	if got.Rows() != 1 {
		t.Errorf("loadStdin of a regular Parquet file: %d rows, want 1", got.Rows())
	}
}
