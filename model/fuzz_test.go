package model

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// FuzzRead checks that Read never panics, that it refuses bad input with a
// *FormatError of a known kind, that it agrees with itself whether or not
// it knows the input length, and that whatever it accepts re-encodes to the
// same bytes (the encoding is canonical) and reads back equal. Each input
// is also tried with its last four bytes replaced by the right checksum, so
// that mutations reach the checks behind the CRC.
func FuzzRead(f *testing.F) {
	names := make([]string, 0, 4)
	models := testModels()
	for name := range models {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f.Add(encodeT(f, models[name]))
	}
	f.Add([]byte("CPMMODEL"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkRead(t, b)
		if len(b) >= 4 {
			checkRead(t, fixCRC(bytes.Clone(b)))
		}
	})
}

// checkRead checks the properties of FuzzRead for one input.
func checkRead(t *testing.T, b []byte) {
	t.Helper()
	m, err := Read(bytes.NewReader(b), "test.cpm")
	ms, errs := Read(streamOnly{bytes.NewReader(b)}, "test.cpm")
	if (err == nil) != (errs == nil) {
		t.Fatalf("known length: %v; stream: %v", err, errs)
	}
	if err != nil {
		checkFormatError(t, err, nil)
		checkFormatError(t, errs, nil)
		return
	}
	if d := diff(m, ms); d != "" {
		t.Fatalf("known length and stream read differently: %s", d)
	}
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		t.Fatalf("Write of a model Read accepted: %v", err)
	}
	// Write gives version 2: a version-1 input must read back equal.
	if v1 := binary.LittleEndian.Uint32(b[8:]) == 1; !v1 && !bytes.Equal(buf.Bytes(), b) {
		t.Fatalf("re-encoding differs from the input")
	}
	m2, err := Read(&buf, "rewritten")
	if err != nil {
		t.Fatalf("Read of re-encoded model: %v", err)
	}
	if d := diff(m, m2); d != "" {
		t.Fatalf("re-read differs: %s", d)
	}
	if err := m.ExportText(&bytes.Buffer{}); err != nil {
		t.Fatalf("ExportText: %v", err)
	}
}

// TestWriteFuzzCorpus writes the seed corpus of FuzzRead to
// testdata/fuzz/FuzzRead when CPM_WRITE_FUZZ_CORPUS=1: the test models, and
// each malformed class (empty, magic only, another version, truncated, a
// flipped byte, a header claiming a huge K×D with its checksum fixed,
// trailing bytes, stored rows that Write would not store). The v1-* files
// there are version-1 encodings, written by the version-1 encoder and kept
// as they are. See testdata/fuzz/README.md.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("CPM_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set CPM_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzRead")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	models := testModels()
	for name, m := range models {
		write(name, encodeT(t, m))
	}
	bin := encodeT(t, models["binary"])
	write("empty", nil)
	write("magic-only", []byte("CPMMODEL"))
	version := bytes.Clone(bin)
	binary.LittleEndian.PutUint32(version[8:], Version+1)
	write("other-version", fixCRC(version))
	write("truncated", bin[:len(bin)/2])
	flipped := bytes.Clone(bin)
	flipped[len(flipped)/2] ^= 0x10
	write("flipped", flipped)
	huge := bytes.Clone(bin)
	binary.LittleEndian.PutUint32(huge[20:], 1<<12) // K
	binary.LittleEndian.PutUint64(huge[24:], 1<<24) // D
	write("huge-KxD", fixCRC(huge))
	write("trailing", append(bytes.Clone(bin), 0))
	write("zero-row", storeZeroRow(t, testModels()["compact"], 2))
}

// storeZeroRow returns the encoding of m, a compact model, with its row r
// made all +0 in every matrix and stored anyway (checksum fixed): bytes
// Write never produces.
func storeZeroRow(t testing.TB, m *Model, r int) []byte {
	t.Helper()
	for _, w := range m.Weights {
		clear(w.Row(r))
	}
	const sentinel = 12345.678
	m.Weights[0].Set(r, 0, sentinel) // stored, then set to +0 below
	b := encodeT(t, m)
	at := bytes.Index(b, binary.LittleEndian.AppendUint32(nil, math.Float32bits(sentinel)))
	if at < 0 {
		t.Fatal("sentinel weight not found")
	}
	binary.LittleEndian.PutUint32(b[at:], 0)
	return fixCRC(b)
}
