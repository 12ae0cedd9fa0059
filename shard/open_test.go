package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// writeTraceShards writes shards whose row r of shard s has label
// 1000·s + r, in mixed compressions, and returns their paths in lexical
// order.
func writeTraceShards(t *testing.T, dir string, sizes []int) []string {
	t.Helper()
	exts := []string{".libsvm.zst", ".libsvm.gz", ".libsvm"}
	var paths []string
	for s, n := range sizes {
		m := &sparsevec.CSR{}
		for r := range n {
			m.Append(float32(1000*s+r), sparsevec.Vector{Idx: []uint32{uint32(1 + r%4)}, Val: []float32{1}})
		}
		p := filepath.Join(dir, fmt.Sprintf("p-%02d%s", s, exts[s%len(exts)]))
		writeRows(t, p, m)
		paths = append(paths, p)
	}
	return paths
}

// wantInterleave lists the blocks, as label slices, in the order the
// Reader documents: round k holds block k of every shard that has one,
// in shard order.
func wantInterleave(sizes []int, blockRows int) [][]float32 {
	var blocks [][]float32
	for k := 0; ; k++ {
		any := false
		for s, n := range sizes {
			lo := k * blockRows
			if lo >= n {
				continue
			}
			any = true
			var b []float32
			for r := lo; r < min(n, lo+blockRows); r++ {
				b = append(b, float32(1000*s+r))
			}
			blocks = append(blocks, b)
		}
		if !any {
			return blocks
		}
	}
}

// The interleave order is exactly the documented one, for every number of
// reading goroutines, shards of unequal length (one empty) and repeated
// runs.
func TestOpenInterleaveOrder(t *testing.T) {
	sizes := []int{10, 3, 0, 7, 12, 1}
	dir := t.TempDir()
	writeTraceShards(t, dir, sizes)
	const blockRows = 3
	want := wantInterleave(sizes, blockRows)
	for _, readers := range []int{0, 1, 2, 3, 4, 6, 9} {
		for rep := range 3 {
			br, err := Open(filepath.Join(dir, "p-*"), ReadConfig{Readers: readers, BlockRows: blockRows})
			if err != nil {
				t.Fatal(err)
			}
			var got [][]float32
			for {
				b, err := br.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, slices.Clone(b.Labels))
				br.Release(b)
			}
			if _, err := br.Next(); err != io.EOF {
				t.Fatalf("Next after the end: %v, want io.EOF", err)
			}
			if err := br.Close(); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("readers %d, run %d:\n got %v\nwant %v", readers, rep, got, want)
			}
		}
	}
}

// A caller may hold up to MaxHeld blocks; one more Next is refused without
// blocking, and reading the whole set while holding MaxHeld-1 blocks
// neither deadlocks nor changes the order.
func TestOpenHeldBlocks(t *testing.T) {
	sizes := []int{40, 25, 31}
	dir := t.TempDir()
	writeTraceShards(t, dir, sizes)
	want := wantInterleave(sizes, 2)
	br, err := Open(filepath.Join(dir, "p-*"), ReadConfig{BlockRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	var held []*sparsevec.CSR
	var got [][]float32
	for len(held) < MaxHeld {
		b, err := br.Next()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, b)
		got = append(got, slices.Clone(b.Labels))
	}
	if _, err := br.Next(); !errors.Is(err, reader.ErrBlocksHeld) {
		t.Fatalf("Next holding %d blocks: %v, want ErrBlocksHeld", MaxHeld, err)
	}
	for {
		br.Release(held[0])
		held = held[1:]
		b, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, slices.Clone(b.Labels))
		held = append(held, b)
	}
	// Blocks held stay unmodified while later ones are read.
	for i, b := range held {
		if w := want[len(got)-len(held)+i]; !slices.Equal(b.Labels, w) {
			t.Fatalf("held block changed: %v, want %v", b.Labels, w)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Release of a foreign block did not panic")
			}
		}()
		br.Release(&sparsevec.CSR{})
	}()
}

// Close mid-stream, with blocks held and shard readers running ahead,
// leaves no goroutine behind; Next then says ErrClosed; Close is
// idempotent.
func TestOpenCloseLeaksNothing(t *testing.T) {
	in := genRows(5, 20000, 50, 30)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm")
	writeRows(t, src, in)
	out := filepath.Join(dir, "set")
	if _, err := Split(context.Background(), src, out, Config{Shards: 5, Ext: ".libsvm", BlockRows: 100}); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	for _, reads := range []int{0, 1, 7, 30} {
		br, err := Open(out, ReadConfig{BlockRows: 64, Readers: 3})
		if err != nil {
			t.Fatal(err)
		}
		var held *sparsevec.CSR
		for i := range reads {
			b, err := br.Next()
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				if held != nil {
					br.Release(held)
				}
				held = b
			} else {
				br.Release(b)
			}
		}
		if err := br.Close(); err != nil {
			t.Fatal(err)
		}
		if err := br.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if _, err := br.Next(); !errors.Is(err, reader.ErrClosed) {
			t.Fatalf("Next after Close: %v, want ErrClosed", err)
		}
		if held != nil {
			br.Release(held) // after Close: must not block or panic
		}
		waitGoroutines(t, base)
	}
}

// Close from another goroutine while Next waits.
func TestOpenCloseWhileReading(t *testing.T) {
	in := genRows(6, 30000, 50, 30)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm.zst")
	writeRows(t, src, in)
	out := filepath.Join(dir, "set")
	if _, err := Split(context.Background(), src, out, Config{Shards: 2}); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	br, err := Open(out, ReadConfig{BlockRows: 16})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		for {
			b, err := br.Next()
			if err != nil {
				done <- err
				return
			}
			br.Release(b)
		}
	}()
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != io.EOF && !errors.Is(err, reader.ErrClosed) {
		t.Fatalf("reader ended with %v", err)
	}
	waitGoroutines(t, base)
}

// A bad row in one shard: Next delivers the blocks before it, then a
// sticky error naming the shard file and line.
func TestOpenErrorNamesShard(t *testing.T) {
	dir := t.TempDir()
	writeTraceShards(t, dir, []int{9, 9})
	var text strings.Builder
	for r := range 9 {
		if r == 4 {
			text.WriteString("1 2:1 1:1\n") // unsorted
			continue
		}
		fmt.Fprintf(&text, "%d 1:1\n", 2000+r)
	}
	bad := filepath.Join(dir, "p-02.libsvm")
	if err := os.WriteFile(bad, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	br, err := Open(filepath.Join(dir, "p-*"), ReadConfig{BlockRows: 2, Readers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	rows := 0
	for {
		b, err := br.Next()
		if err != nil {
			var pe *reader.ParseError
			if !errors.As(err, &pe) || pe.Path != bad || pe.Line != 5 || !errors.Is(err, reader.ErrUnsorted) {
				t.Fatalf("error %v, want a ParseError at %s:5", err, bad)
			}
			if !strings.Contains(err.Error(), "shard 2 of 3") {
				t.Fatalf("error %q does not say which shard", err)
			}
			if _, err2 := br.Next(); err2 != err {
				t.Fatalf("error not sticky: then %v", err2)
			}
			break
		}
		rows += b.Rows()
		br.Release(b)
	}
	// Rounds 0 and 1 are whole (2+2+2 rows each); shard 2 fails in its
	// third block, after shards 0 and 1 have given theirs.
	if rows != 16 {
		t.Fatalf("%d rows before the error, want 16", rows)
	}
}

// Open on a directory needs a complete manifest; on a glob, a match.
func TestOpenRefusesIncomplete(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm")
	writeRows(t, src, idRows(500))
	out := filepath.Join(dir, "set")
	m, err := Split(context.Background(), src, out, Config{Shards: 3, Shuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	if !IsShardSet(out) || IsShardSet(src) || IsShardSet(dir) {
		t.Fatal("IsShardSet wrong")
	}
	files, err := Files(out)
	if err != nil || !slices.Equal(files, shardPaths(out, m)) {
		t.Fatalf("Files(dir) = %v, %v", files, err)
	}
	glob, err := Files(filepath.Join(out, "*"))
	if err != nil || !slices.Equal(glob, files) {
		t.Fatalf("Files(dir/*) = %v, %v; want the shards only", glob, err)
	}

	// A truncated shard.
	p := files[1]
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data[:len(data)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(out, ReadConfig{}); !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), p) {
		t.Fatalf("truncated shard: %v, want ErrIncomplete naming %s", err, p)
	}
	if IsShardSet(out) {
		t.Fatal("IsShardSet true with a truncated shard")
	}
	// A missing shard.
	os.Remove(p)
	if _, err := Open(out, ReadConfig{}); !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), p) {
		t.Fatalf("missing shard: %v, want ErrIncomplete naming %s", err, p)
	}
	// No manifest.
	os.Remove(filepath.Join(out, ManifestName))
	if _, err := Open(out, ReadConfig{}); !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), ManifestName) {
		t.Fatalf("no manifest: %v, want ErrIncomplete", err)
	}
	if _, err := Open(filepath.Join(out, "*.nothing"), ReadConfig{}); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("empty glob: %v, want ErrNoMatch", err)
	}
	if _, err := Files("["); err == nil {
		t.Fatal("bad pattern accepted")
	}
}

func TestParseManifest(t *testing.T) {
	good := (&Manifest{Seed: 7, Shuffled: true, Shards: []ShardInfo{
		{Name: "part-00000-of-00002.libsvm.zst", Rows: 3, NNZ: 10, Bytes: 99},
		{Name: "part-00001-of-00002.libsvm.zst", Rows: 4, NNZ: 0, Bytes: 12},
	}}).encode()
	m, _, err := parseManifest(good)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.encode()) != string(good) {
		t.Fatalf("round trip:\n%s\nwant\n%s", m.encode(), good)
	}
	mutate := func(old, new string) []byte {
		if !strings.Contains(string(good), old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return []byte(strings.Replace(string(good), old, new, 1))
	}
	bad := map[string][]byte{
		"magic":          mutate("cpm-shards 1", "cpm-shards 2"),
		"total rows":     mutate("rows 7", "rows 8"),
		"count":          mutate("shards 2", "shards 3"),
		"no end":         mutate("end\n", ""),
		"after end":      mutate("end\n", "end\nmore\n"),
		"path":           mutate("part-00001", "../x"),
		"duplicate":      mutate("part-00001-of-00002", "part-00000-of-00002"),
		"negative":       mutate(" 12\n", " -12\n"),
		"shuffled":       mutate("shuffled true", "shuffled maybe"),
		"missing key":    mutate("run-rows 0\n", ""),
		"manifest named": mutate("part-00001-of-00002.libsvm.zst", ManifestName),
	}
	for name, data := range bad {
		if _, _, err := parseManifest(data); err == nil {
			t.Errorf("%s: accepted:\n%s", name, data)
		}
	}
}

// A shard whose rows, as read, are not the manifest's counts (here 13 lines
// turned into comments of the same length, so the file size still matches)
// is an error naming the shard and both counts, at the end of the shard.
func TestOpenChecksManifestCounts(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm")
	writeRows(t, src, genRows(3, 270, 20, 6))
	out := filepath.Join(dir, "set")
	m, err := Split(context.Background(), src, out, Config{Shards: 2, Shuffle: true, Seed: 7, Ext: ".libsvm"})
	if err != nil {
		t.Fatal(err)
	}
	files := shardPaths(out, m)
	data, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	nnz := 0
	for i := range 13 {
		nnz += bytes.Count(lines[i], []byte(":"))
		lines[i] = append(append([]byte("#"), bytes.Repeat([]byte("x"), len(lines[i])-2)...), '\n')
	}
	if err := os.WriteFile(files[1], bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(out); err != nil {
		t.Fatalf("the edit changed the shard's size: %v", err)
	}
	br, err := Open(out, ReadConfig{BlockRows: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	for {
		b, err := br.Next()
		if err == nil {
			br.Release(b)
			continue
		}
		want := fmt.Sprintf("read %d rows and %d nonzeros, the manifest records %d rows and %d nonzeros",
			m.Shards[1].Rows-13, m.Shards[1].NNZ-int64(nnz), m.Shards[1].Rows, m.Shards[1].NNZ)
		if !errors.Is(err, ErrManifestMismatch) || !strings.Contains(err.Error(), files[1]) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v; want ErrManifestMismatch naming %s and %q", err, files[1], want)
		}
		break
	}
	// A glob has no manifest: the same shards read without complaint.
	br, err = Open(filepath.Join(out, "part-*"), ReadConfig{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(t, br)
	if got.Rows() != 270-13 {
		t.Fatalf("glob: %d rows, want %d", got.Rows(), 270-13)
	}
}
