//go:build unix

package shard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadManifestCapped checks that a manifest is read through its size
// cap: /dev/zero in its place, or a regular file beyond the cap, is
// refused as an incomplete shard set naming the file, not read whole.
func TestReadManifestCapped(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(path string) error
	}{
		{"dev-zero", func(path string) error { return os.Symlink("/dev/zero", path) }},
		{"regular", func(path string) error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(maxManifestBytes + 1) // sparse: costs no disk
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ManifestName)
			if err := c.make(path); err != nil {
				t.Fatal(err)
			}
			_, err := ReadManifest(dir)
			if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "larger than") {
				t.Fatalf("got %v, want ErrIncomplete naming %s and the cap", err, path)
			}
		})
	}
}
