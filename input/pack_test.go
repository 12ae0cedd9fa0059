package input

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// Pack gives Load's rows, or Load's error: 1-based text (read once, as
// 1-based), 0-based text with its index 0 only in the last row (the
// 1-based pass fails there and the file is read again), a bad row, and an
// explicit --zero-based mode.
func TestPackMatchesLoad(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"one.libsvm":  "1 1:0.5 3:2\n-1 2:1\n1 4:0.25 700:3\n",
		"zero.libsvm": "1 1:0.5 3:2\n-1 2:1\n1 0:0.25 700:3\n",
		"bad.libsvm":  "1 1:0.5 3:2\n-1 2:x\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		opts []reader.Option
	}{
		{"one.libsvm", nil}, {"zero.libsvm", nil}, {"bad.libsvm", nil},
		{"zero.libsvm", []reader.Option{reader.WithZeroBased(reader.ZeroBasedYes)}},
		{"zero.libsvm", []reader.Option{reader.WithZeroBased(reader.ZeroBasedNo)}},
	} {
		path := filepath.Join(dir, c.name)
		want, werr := reader.Load(path, c.opts...)
		src, err := Resolve(path)
		if err != nil {
			t.Fatal(err)
		}
		p, gerr := src.Pack(sparsevec.PackCompact, c.opts...)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("%s %d options: Pack error %v, Load error %v", c.name, len(c.opts), gerr, werr)
		}
		if werr != nil {
			continue
		}
		var got sparsevec.CSR
		for b := range p.Blocks() {
			got.AppendCSR(b)
		}
		if !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) || !slices.Equal(got.Labels, want.Labels) || got.Dim != want.Dim {
			t.Errorf("%s %d options: Pack gives %v %v, Load %v %v", c.name, len(c.opts), got.Idx, got.Val, want.Idx, want.Val)
		}
	}
}
