package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"strings"
	"testing"
)

// Steps (flag bit 3) round-trips through Write and Read, with the input
// length known and unknown, and shows in ExportText.
func TestStepsRoundTrip(t *testing.T) {
	m := testModels()["double"]
	m.Steps = []int64{5, 1 << 41}
	b := encodeT(t, m)
	if flags := binary.LittleEndian.Uint32(b[12:]); flags&flagSteps == 0 {
		t.Fatalf("flags %#x: steps bit not set", flags)
	}
	for _, r := range []func() (*Model, error){
		func() (*Model, error) { return Read(bytes.NewReader(b), "m") },
		func() (*Model, error) { return Read(streamOnly{bytes.NewReader(b)}, "m") },
	} {
		got, err := r()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Steps, m.Steps) || got.StepsOf(1) != 1<<41 {
			t.Fatalf("steps %v, want %v", got.Steps, m.Steps)
		}
		if !bytes.Equal(encodeT(t, got), b) {
			t.Fatal("re-encoding differs")
		}
	}
	var text strings.Builder
	if err := m.ExportText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\nsteps: 5 2199023255552\n") {
		t.Fatalf("export lacks the steps line:\n%s", text.String())
	}
}

// A model without Steps is encoded with no flag bit and no Steps section,
// and reads back with StepsOf giving Iterations.
func TestStepsAbsent(t *testing.T) {
	m := testModels()["double"]
	b := encodeT(t, m)
	m.Steps = []int64{1, 2}
	withSteps := encodeT(t, m)
	if flags := binary.LittleEndian.Uint32(b[12:]); flags&flagSteps != 0 || len(withSteps)-len(b) != 8*len(m.Weights) {
		t.Fatalf("flags %#x, %d bytes vs %d with steps", flags, len(b), len(withSteps))
	}
	got, err := Read(bytes.NewReader(b), "old")
	if err != nil {
		t.Fatal(err)
	}
	if got.Steps != nil || got.StepsOf(0) != m.Iterations || got.StepsOf(1) != m.Iterations {
		t.Fatalf("steps %v, StepsOf(0) = %d, want nil and %d", got.Steps, got.StepsOf(0), m.Iterations)
	}
	var text strings.Builder
	if err := got.ExportText(&text); err != nil || strings.Contains(text.String(), "steps:") {
		t.Fatalf("export of a model without steps: %v\n%s", err, text.String())
	}
}

func TestStepsValidation(t *testing.T) {
	for _, tt := range []struct {
		steps []int64
		want  string
	}{
		{[]int64{1}, "steps for 1 matrices, want 2"},
		{[]int64{}, "steps for 0 matrices, want 2"},
		{[]int64{3, -1}, "steps of matrix 1 = -1"},
	} {
		m := testModels()["double"]
		m.Steps = tt.steps
		if err := m.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("steps %v: %v, want %q", tt.steps, err, tt.want)
		}
	}
	// A file with a negative step count (and a valid checksum) is corrupt.
	m := testModels()["double"]
	m.Steps = []int64{3, 4}
	b := encodeT(t, m)
	// The steps are the last 16 bytes before the blob count and checksum.
	at := len(b) - 4 - 4 - 8
	binary.LittleEndian.PutUint64(b[at:], uint64(1)<<63)
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	if _, err := Read(bytes.NewReader(b), "neg"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "steps of matrix 1") {
		t.Fatalf("negative steps: %v", err)
	}
}
