package shard

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// Rows with query ids keep them through the buckets (copied, shuffled,
// and re-scattered past MaxBucketBytes) into LIBSVM text shards.
func TestSplitKeepsQid(t *testing.T) {
	dir := t.TempDir()
	in := &sparsevec.CSR{}
	const n = 3000
	for i := range n {
		// Feature 10+i names the row; its query id is a function of i.
		in.AppendQid(float32(i%2), int64(i/5)-100, sparsevec.Vector{Idx: []uint32{uint32(1 + i%9), uint32(10 + i)}, Val: []float32{1, 0.5}})
	}
	src := filepath.Join(dir, "in.libsvm.zst")
	w, err := reader.CreateBlocks(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	budget := memBytes(n, 2*n) / 10
	for _, cfg := range []Config{
		{Shards: 3, BlockRows: 40},
		{Shards: 2, Shuffle: true, Seed: 5},
		{Shards: 2, Shuffle: true, Seed: 5, MaxBucketBytes: budget, Ext: ".libsvm"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		m, err := Split(context.Background(), src, out, cfg)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, p := range shardPaths(out, m) {
			part := load(t, p)
			if !part.HasQid() {
				t.Fatalf("%+v: shard %s has no query ids", cfg, p)
			}
			for r := range part.Rows() {
				i := int(part.Row(r).Idx[1]) - 10
				if want := int64(i/5) - 100; part.Qid[r] != want {
					t.Fatalf("%+v: row %d has query id %d, want %d", cfg, i, part.Qid[r], want)
				}
				seen++
			}
		}
		if seen != n {
			t.Fatalf("%+v: %d rows in the shards, want %d", cfg, seen, n)
		}
	}
}

// Arrow and Parquet shards have no column for query ids: Split refuses
// rather than drop them.
func TestSplitQidNeedsText(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm")
	if err := os.WriteFile(src, []byte("1 qid:1 1:1\n0 qid:1 2:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".arrow", ".parquet"} {
		out := filepath.Join(dir, "out"+ext)
		_, err := Split(context.Background(), src, out, Config{Shards: 2, Ext: ext})
		if err == nil || !strings.Contains(err.Error(), "query ids") {
			t.Errorf("%s: %v, want a refusal naming the query ids", ext, err)
		}
		if _, serr := os.Stat(out); !errors.Is(serr, fs.ErrNotExist) {
			t.Errorf("%s: output directory left behind: %v", ext, serr)
		}
	}
}
