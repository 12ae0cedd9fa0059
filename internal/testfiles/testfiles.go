// Package testfiles holds the file helpers tests of several packages
// share: writing LIBSVM text as other tools write it (plain, gzip or zstd
// by the file's extension, compressed with Go's encoders and so without
// the zero-based note cpm's zstd outputs carry) and listing what a
// directory holds.
package testfiles

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// ListDir returns the names of the entries of dir. It fails the test on
// an error.
func ListDir(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// WriteNoNote writes text to path: gzip for a .gz extension, zstd for
// .zst, else as it is. It fails the test on an error.
func WriteNoNote(t testing.TB, path string, text []byte) {
	t.Helper()
	var buf bytes.Buffer
	switch filepath.Ext(path) {
	case ".gz":
		w := gzip.NewWriter(&buf)
		w.Write(text)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	case ".zst":
		w, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(text)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	default:
		buf.Write(text)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
