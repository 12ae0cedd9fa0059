package model

import (
	"bytes"
	"slices"
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
	if !bytes.Equal(buf.Bytes(), b) {
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
