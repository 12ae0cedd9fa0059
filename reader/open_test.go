package reader

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

const fixtureDir = "../testdata/reader"

// compressedForms returns text in every format Open knows, keyed by name.
func compressedForms(t *testing.T, text []byte) map[string][]byte {
	t.Helper()
	half := bytes.LastIndexByte(text[:len(text)/2], '\n') + 1
	return map[string][]byte{
		"plain": text,
		"gzip":  gzipBytes(text),
		"zstd":  zstdBytes(text),
		// Concatenated members and frames, as pigz and zstd -T write.
		"gzip-multi": append(gzipBytes(text[:half]), gzipBytes(text[half:])...),
		"zstd-multi": append(zstdBytes(text[:half]), zstdBytes(text[half:])...),
	}
}

// TestOpenFormats checks detection by content: every file is named
// misleadingly.
func TestOpenFormats(t *testing.T) {
	text := genMNIST(testRand(), 200<<10)
	want, err := scanAll(text, "want")
	if err != nil {
		t.Fatal(err)
	}
	for format, data := range compressedForms(t, text) {
		t.Run(format, func(t *testing.T) {
			path := writeTempFile(t, "data.bz2", data)
			got, err := Load(path, WithChunkBytes(16<<10))
			if err != nil {
				t.Fatal(err)
			}
			if !equalCSR(got, want) {
				t.Error("Load: rows differ")
			}
			rc, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			all, err := io.ReadAll(rc)
			if err != nil || !bytes.Equal(all, text) {
				t.Errorf("Open: read %d bytes, err %v; want the %d bytes of text", len(all), err, len(text))
			}
		})
	}
}

func TestOpenBzip2Fixture(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(fixtureDir, "small.libsvm"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := scanAll(text, "small.libsvm")
	if err != nil || want.Rows() != 4 {
		t.Fatalf("fixture: %d rows, %v", want.Rows(), err)
	}
	got, err := Load(filepath.Join(fixtureDir, "small.libsvm.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	if !equalCSR(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestTruncated cuts compressedForms streams short at many points: every cut
// mustNil be an error wrapping ErrCorrupt that names the file, from Load and
// from a Scanner on Open, never a clean early end.
func TestTruncated(t *testing.T) {
	text := genMNIST(testRand(), 300<<10)
	inputs := compressedForms(t, text)
	// A cut between members or frames is a valid shorter stream: leave
	// the concatenations to TestOpenFormats.
	delete(inputs, "plain")
	delete(inputs, "gzip-multi")
	delete(inputs, "zstd-multi")
	bz, err := os.ReadFile(filepath.Join(fixtureDir, "small.libsvm.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	inputs["bzip2"] = bz
	for format, data := range inputs {
		magic := map[string]int{"gzip": 2, "zstd": 4, "bzip2": 3}[format]
		cuts := []int{magic, magic + 1, magic + 5, len(data) - 1, len(data) - 2, len(data) - 4, len(data) - 8}
		for k := 1; k < 16; k++ {
			cuts = append(cuts, len(data)*k/16)
		}
		for _, cut := range cuts {
			path := writeTempFile(t, "cut.dat", data[:cut])
			_, err := Load(path)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s cut at %d of %d: Load error %v, want ErrCorrupt naming the file", format, cut, len(data), err)
			}
			rc, err := Open(path)
			if err == nil {
				s := libsvm.NewScanner(rc, path)
				for s.Scan() {
				}
				err = s.Err()
				rc.Close()
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s cut at %d of %d: Scanner error %v, want ErrCorrupt naming the file", format, cut, len(data), err)
			}
		}
	}
}

// TestCorrupt flips bytes inside compressedForms streams: the checksums mustNil
// turn that into an error (ErrCorrupt, or a parse error if the garbage
// comes out first).
func TestCorrupt(t *testing.T) {
	text := genMNIST(testRand(), 100<<10)
	for format, data := range compressedForms(t, text) {
		if format == "plain" || strings.HasSuffix(format, "multi") {
			continue
		}
		for _, at := range []int{len(data) / 3, len(data) / 2, len(data) - 6} {
			bad := bytes.Clone(data)
			bad[at] ^= 0x55
			if _, err := Load(writeTempFile(t, "bad.dat", bad)); err == nil {
				t.Errorf("%s with byte %d flipped: no error", format, at)
			}
		}
	}
}

func TestOpenStdin(t *testing.T) {
	text := []byte("1 1:1\n2 2:2\n")
	f, err := os.Open(writeTempFile(t, "in.gz", gzipBytes(text)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()

	m, err := Load("-")
	if err != nil || m.Rows() != 2 {
		t.Fatalf("Load(-): %d rows, %v", m.Rows(), err)
	}
	if _, err := f.Stat(); err != nil {
		t.Errorf("Load(-) closed stdin: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	m, err := Load(writeTempFile(t, "empty", nil))
	if err != nil || m.Rows() != 0 {
		t.Errorf("empty file: %d rows, %v", m.Rows(), err)
	}
	rc, err := Open(writeTempFile(t, "x", []byte("1\n")))
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Error(err)
	}
	if err := rc.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// WithOpener opens the input of every format, and of Load and NewStream,
// with the caller's function: here the name given to the readers holds
// other rows than the file the opener returns, and the rows read are the
// opener's while errors still name the path given.
func TestWithOpener(t *testing.T) {
	dir := t.TempDir()
	want, err := scanAll([]byte("1 1:0.5 3:2\n-1 2:4\n2 7:1\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	decoy, err := scanAll([]byte("5 9:9\n"), "y")
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".libsvm", ".libsvm.zst", ".arrow", ".arrows", ".parquet", ".cpmcache"} {
		t.Run(ext, func(t *testing.T) {
			real, named := filepath.Join(dir, "real"+ext), filepath.Join(dir, "named"+ext)
			for _, f := range []struct {
				path string
				m    *sparsevec.CSR
			}{{real, want}, {named, decoy}} {
				if ext == ".cpmcache" {
					w, err := rowcache.Create(f.path, "")
					if err != nil {
						t.Fatal(err)
					}
					if err := w.Write(f.m); err != nil {
						t.Fatal(err)
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					continue
				}
				writeAll(t, f.path, f.m, 2)
			}
			var opened []string
			opener := WithOpener(func(path string) (*os.File, error) {
				opened = append(opened, path)
				return os.Open(real)
			})
			got, _, err := readAllBlocks(t, named, opener)
			if err != nil || !equalCSR(got, want) {
				t.Fatalf("OpenBlocks: %v rows, %v; want the opener's file", got.Rows(), err)
			}
			if len(opened) == 0 || opened[0] != named {
				t.Fatalf("opener called with %q, want %q", opened, named)
			}
			if !strings.HasPrefix(ext, ".libsvm") {
				return
			}
			if got, err := Load(named, opener); err != nil || !equalCSR(got, want) {
				t.Fatalf("Load: %v", err)
			}
			_, _, err = readAllBlocks(t, named, WithMaxIndex(2), opener)
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != named {
				t.Fatalf("error %v does not name %s", err, named)
			}
		})
	}
}
