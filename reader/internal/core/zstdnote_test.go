package core

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeOutput writes the pieces to a new output at dir/name and returns
// its path.
func writeOutput(t *testing.T, dir, name string, pieces ...string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	o, err := CreateCompressed(path, WithZstdLevel(ZstdFastest))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pieces {
		if _, err := o.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// note returns ZstdNote of the file at path.
func note(t *testing.T, path string) (zero, ok bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return ZstdNote(f, st.Size())
}

// A .zst output ends with a note of whether its text holds an index 0
// (pieces cut anywhere, "0" | ":" included), and decompresses to exactly
// the text written; other outputs have none.
func TestZstdNote(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		pieces []string
		zero   bool
	}{
		{"one.zst", []string{"1 1:2 10:3\n", "-1 100:0.5\n"}, false},
		{"zero.zst", []string{"1 1:2\n", "2 0:1 3:4\n"}, true},
		{"cut.zst", []string{"1 0", ":1\n"}, true},
		{"comment.zst", []string{"1 1:2 # 0:1\n"}, false},
		{"empty.zst", nil, false},
	} {
		path := writeOutput(t, dir, tc.name, tc.pieces...)
		zero, ok := note(t, path)
		if !ok || zero != tc.zero {
			t.Errorf("%s: note (zero %v, ok %v), want (%v, true)", tc.name, zero, ok, tc.zero)
		}
		rc, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if want := strings.Join(tc.pieces, ""); err != nil || string(got) != want {
			t.Errorf("%s: read back %q (%v), want %q", tc.name, got, err, want)
		}
	}
	// Concatenated outputs (a note in the middle) read as both texts.
	a, err := os.ReadFile(writeOutput(t, dir, "a.zst", "1 1:2\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(writeOutput(t, dir, "b.zst", "-1 3:4\n"))
	if err != nil {
		t.Fatal(err)
	}
	ab := filepath.Join(dir, "ab.zst")
	if err := os.WriteFile(ab, append(a, b...), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := Open(ab)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(got) != "1 1:2\n-1 3:4\n" {
		t.Errorf("concatenated outputs read back %q (%v)", got, err)
	}
	for _, name := range []string{"a.gz", "a.libsvm"} {
		if _, ok := note(t, writeOutput(t, dir, name, "1 1:2\n")); ok {
			t.Errorf("%s has a zstd note", name)
		}
	}
}

// A note is believed only intact, at the very end of a file it covers
// whole: a file appended to, cut short, or with any byte of the note
// changed has none.
func TestZstdNoteDamaged(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(writeOutput(t, dir, "a.zst", "1 1:2 3:4\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"appended":    append(bytes.Clone(good), good...),
		"cut":         good[:len(good)-1],
		"note only":   good[len(good)-zstdNoteSize:],
		"covered+1":   append(append(bytes.Clone(good[:len(good)-zstdNoteSize]), 0), good[len(good)-zstdNoteSize:]...),
		"covered-1":   append(bytes.Clone(good[1:len(good)-zstdNoteSize]), good[len(good)-zstdNoteSize:]...),
		"extra byte":  append(bytes.Clone(good), 0),
		"zero-length": nil,
	}
	for i := len(good) - zstdNoteSize; i < len(good); i++ {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		cases["flip "+string(rune('A'+i-(len(good)-zstdNoteSize)))] = b
	}
	for name, b := range cases {
		path := filepath.Join(dir, "x.zst")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := note(t, path); ok {
			t.Errorf("%s: note believed", name)
		}
	}
}
