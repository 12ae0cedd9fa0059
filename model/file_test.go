package model

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/internal/testfiles"
)

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.cpm")
	for name, m := range testModels() {
		if err := Save(path, m); err != nil {
			t.Fatalf("%s: Save: %v", name, err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatalf("%s: Load: %v", name, err)
		}
		if d := diff(m, got); d != "" {
			t.Fatalf("%s: loaded model differs: %s", name, d)
		}
		onDisk, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(onDisk, encodeT(t, m)) {
			t.Fatalf("%s: file differs from Write", name)
		}
	}
	if names := testfiles.ListDir(t, dir); len(names) != 1 || names[0] != "m.cpm" {
		t.Errorf("directory holds %v, want only m.cpm", names)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

func TestSaveKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.cpm")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Save(path, testModels()["binary"]); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after Save: %v, %v; want mode 0600", fi.Mode(), err)
	}
}

// TestSaveAtomic checks that a Save that fails, before or in the middle of
// writing, leaves the previous model intact and no temporary file behind.
func TestSaveAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.cpm")
	old := testModels()["double"]
	if err := Save(path, old); err != nil {
		t.Fatal(err)
	}
	oldBytes, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	diskFull := errors.New("disk full")
	invalid := testModels()["binary"]
	invalid.K = 0
	tests := []struct {
		name string
		save func() error
		want error
	}{
		{"fails midway", func() error {
			return save(path, func(w io.Writer) error {
				b := encodeT(t, testModels()["ovo"])
				if _, err := w.Write(b[:len(b)/2]); err != nil {
					return err
				}
				return diskFull
			})
		}, diskFull},
		{"invalid model", func() error { return Save(path, invalid) }, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.save()
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("save = %v, want %v naming %s", err, tt.want, path)
			}
			if names := testfiles.ListDir(t, dir); len(names) != 1 || names[0] != "m.cpm" {
				t.Errorf("directory holds %v, want only m.cpm", names)
			}
			now, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(now, oldBytes) {
				t.Errorf("old model changed (%v)", err)
			}
			if _, err := Load(path); err != nil {
				t.Errorf("old model no longer loads: %v", err)
			}
		})
	}
}

func TestSaveMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "m.cpm")
	if err := Save(path, testModels()["binary"]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Save = %v, want ErrNotExist", err)
	}
}

func TestLoadErrorsNameFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.libsvm")
	if err := os.WriteFile(path, []byte("+1 1:0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if !errors.Is(err, ErrNotModel) || err.Error() != path+`: not a cpm model file: input starts with "+1 1:0.5", want "CPMMODEL" (at byte 0)` {
		t.Fatalf("Load = %v", err)
	}

	b := encodeT(t, testModels()["double"])
	short := filepath.Join(dir, "short.cpm")
	if err := os.WriteFile(short, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(short)
	var fe *FormatError
	if !errors.Is(err, ErrTruncated) || !errors.As(err, &fe) || fe.Name != short {
		t.Fatalf("Load = %v, want ErrTruncated naming %s", err, short)
	}

	if _, err := Load(filepath.Join(dir, "missing.cpm")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load of a missing file = %v", err)
	}
}
