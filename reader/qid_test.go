package reader

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// qidRows returns n rows with query ids (several rows per query, some
// negative), in blocks of blockRows.
func qidRows(n, blockRows int) []*sparsevec.CSR {
	var blocks []*sparsevec.CSR
	for r := 0; r < n; r += blockRows {
		b := &sparsevec.CSR{}
		for i := r; i < min(n, r+blockRows); i++ {
			b.AppendQid(float32(i%3), int64(i/4-5), sparsevec.Vector{Idx: []uint32{uint32(1 + i%7), uint32(9 + i)}, Val: []float32{0.5, float32(i)}})
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// Query ids survive LIBSVM text (written by CreateBlocks, read by Load and
// OpenBlocks/ReadAll) and a block writer refuses a block that would mix
// rows with and without them in one file.
func TestQidRoundTrip(t *testing.T) {
	dir := t.TempDir()
	blocks := qidRows(50, 7)
	want := &sparsevec.CSR{}
	for _, b := range blocks {
		want.AppendCSR(b)
	}
	for _, name := range []string{"q.libsvm", "q.libsvm.zst"} {
		p := filepath.Join(dir, name)
		w, err := CreateBlocks(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if err := w.Write(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		m, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		br, err := OpenBlocks(p, 8)
		if err != nil {
			t.Fatal(err)
		}
		all, err := ReadAll(br)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []*sparsevec.CSR{m, all} {
			if !slices.Equal(got.Qid, want.Qid) || !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Labels, want.Labels) {
				t.Errorf("%s: query ids %v\nwant %v", name, got.Qid, want.Qid)
			}
		}
	}
	w, err := CreateBlocks(filepath.Join(dir, "mixed.libsvm"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Write(blocks[0]); err != nil {
		t.Fatal(err)
	}
	plain := &sparsevec.CSR{}
	plain.Append(1, sparsevec.Vector{Idx: []uint32{1}, Val: []float32{1}})
	if err := w.Write(plain); !errors.Is(err, libsvm.ErrMixedQID) || !strings.Contains(err.Error(), "mixed.libsvm") {
		t.Errorf("a block without query ids after one with: %v", err)
	}
	bad := &sparsevec.CSR{}
	bad.Append(1, sparsevec.Vector{})
	bad.Append(1, sparsevec.Vector{})
	bad.Qid = []int64{1}
	if err := w.Write(bad); err == nil || !strings.Contains(err.Error(), "1 query ids") {
		t.Errorf("a block of 2 rows and 1 query id: %v", err)
	}
}

// Auto reads a 0-based file so that the model-facing rows equal those of
// the same data written 1-based; IsZeroBased says so, and the other
// formats follow WithZeroBased only.
func TestIsZeroBased(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "z.libsvm")
	if err := os.WriteFile(p, []byte("1 0:1 3:2\n-1 2:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if z, err := IsZeroBased(p); err != nil || !z {
		t.Fatalf("IsZeroBased %v, %v", z, err)
	}
	if z, err := IsZeroBased(p, WithZeroBased(ZeroBasedNo)); err != nil || z {
		t.Fatalf("IsZeroBased no: %v, %v", z, err)
	}
	m, err := Load(p)
	if err != nil || !slices.Equal(m.Idx, []uint32{1, 4, 3}) {
		t.Fatalf("Load: %v, %v", m, err)
	}
	for _, s := range []string{"auto", "", "no", "yes"} {
		z, err := ParseZeroBased(s)
		if err != nil || (s != "" && z.String() != s) {
			t.Errorf("ParseZeroBased(%q) = %v, %v", s, z, err)
		}
	}
	if _, err := ParseZeroBased("1"); err == nil {
		t.Error("ParseZeroBased(\"1\") accepted")
	}
}
