package shard

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// Every input row lands in exactly one shard exactly once, in every mode,
// compression and shard count; the manifest counts are right; nothing but
// the shards and the manifest is left in the directory.
func TestSplitKeepsEveryRowOnce(t *testing.T) {
	in := genRows(1, 2000, 60, 25)
	// Duplicate some rows, so that multiplicities are tested too.
	for r := range 50 {
		in.Append(in.Labels[r*7], in.Row(r*7))
	}
	tmp := t.TempDir()
	inputs := map[string]string{}
	for _, ext := range []string{".libsvm", ".libsvm.zst", ".libsvm.gz"} {
		p := filepath.Join(tmp, "in"+ext)
		writeRows(t, p, in)
		inputs[ext] = p
	}
	want := multiset(in)
	tests := []struct {
		name    string
		input   string
		cfg     Config
		wantExt string
	}{
		{"zero config", ".libsvm", Config{}, ".libsvm.zst"},
		{"4 shuffled zst from gz", ".libsvm.gz", Config{Shards: 4, Shuffle: true, Seed: 3}, ".libsvm.zst"},
		{"3 shuffled gz", ".libsvm.zst", Config{Shards: 3, Shuffle: true, Seed: 4, Ext: ".libsvm.gz"}, ".libsvm.gz"},
		{"5 in runs plain", ".libsvm", Config{Shards: 5, BlockRows: 37, Ext: ".libsvm"}, ".libsvm"},
		{"more shards than rows per shard", ".libsvm.zst", Config{Shards: 64, Shuffle: true, Seed: 5, BlockRows: 10}, ".libsvm.zst"},
		{"arrow shuffled", ".libsvm.zst", Config{Shards: 3, Shuffle: true, Seed: 6, BlockRows: 100, Ext: ".arrow"}, ".arrow"},
		{"arrow stream in runs", ".libsvm", Config{Shards: 2, BlockRows: 300, Ext: ".arrows"}, ".arrows"},
		{"parquet shuffled", ".libsvm.gz", Config{Shards: 2, Shuffle: true, Seed: 7, Ext: ".parquet"}, ".parquet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			m, err := Split(context.Background(), inputs[tc.input], dir, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			n := max(tc.cfg.Shards, 1)
			if len(m.Shards) != n {
				t.Fatalf("%d shards, want %d", len(m.Shards), n)
			}
			var parts []*sparsevec.CSR
			wantNames := []string{ManifestName}
			for i, s := range m.Shards {
				if want := ShardName(i, n, tc.wantExt); s.Name != want {
					t.Fatalf("shard %d named %s, want %s", i, s.Name, want)
				}
				wantNames = append(wantNames, s.Name)
				p := load(t, filepath.Join(dir, s.Name))
				if int64(p.Rows()) != s.Rows || int64(p.NNZ()) != s.NNZ {
					t.Fatalf("%s: %d rows %d nonzeros, manifest says %d %d", s.Name, p.Rows(), p.NNZ(), s.Rows, s.NNZ)
				}
				parts = append(parts, p)
			}
			got := multiset(parts...)
			if len(got) != len(want) {
				t.Fatalf("%d distinct rows, want %d", len(got), len(want))
			}
			for k, c := range want {
				if got[k] != c {
					t.Fatalf("row %q appears %d times, want %d", k, got[k], c)
				}
			}
			if m.Rows() != int64(in.Rows()) || m.NNZ() != int64(in.NNZ()) {
				t.Fatalf("manifest totals %d rows %d nnz, want %d %d", m.Rows(), m.NNZ(), in.Rows(), in.NNZ())
			}
			slices.Sort(wantNames)
			if got := dirNames(t, dir); !slices.Equal(got, wantNames) {
				t.Fatalf("directory holds %v, want %v", got, wantNames)
			}
			back, err := Check(dir)
			if err != nil {
				t.Fatal(err)
			}
			if string(back.encode()) != string(m.encode()) {
				t.Fatalf("manifest on disk:\n%s\nreturned:\n%s", back.encode(), m.encode())
			}
		})
	}
}

// Without shuffle, shard i holds runs i, i+N, i+2N, ... of BlockRows input
// rows, in order; reading the set back with the same BlockRows gives the
// input order exactly.
func TestSplitRunsRoundRobin(t *testing.T) {
	in := idRows(1000)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm")
	writeRows(t, src, in)
	const n, run = 3, 40
	out := filepath.Join(dir, "out")
	m, err := Split(context.Background(), src, out, Config{Shards: n, BlockRows: run})
	if err != nil {
		t.Fatal(err)
	}
	for s, p := range shardPaths(out, m) {
		got := load(t, p)
		var ids []float32
		for i := range in.Rows() {
			if (i/run)%n == s {
				ids = append(ids, float32(i))
			}
		}
		if !slices.Equal(got.Labels, ids) {
			t.Fatalf("shard %d holds rows %v..., want %v...", s, got.Labels[:min(10, len(got.Labels))], ids[:min(10, len(ids))])
		}
	}
	for _, readers := range []int{1, 2, 3} {
		br, err := Open(out, ReadConfig{BlockRows: run, Readers: readers})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := readAll(t, br)
		sameRows(t, got, in)
	}
	// Arrow and Parquet shards hold record batches of BlockRows rows, so
	// the same holds for them.
	for _, ext := range []string{".arrow", ".parquet"} {
		out := filepath.Join(dir, "out"+ext)
		if _, err := Split(context.Background(), src, out, Config{Shards: n, BlockRows: run, Ext: ext}); err != nil {
			t.Fatal(err)
		}
		br, err := Open(out, ReadConfig{})
		if err != nil {
			t.Fatal(err)
		}
		got, sizes := readAll(t, br)
		sameRows(t, got, in)
		if sizes[0] != run {
			t.Fatalf("%s: first block of %d rows, want %d", ext, sizes[0], run)
		}
	}
}

// shardBytes reads every shard file of a manifest.
func shardBytes(t *testing.T, dir string, m *Manifest) [][]byte {
	t.Helper()
	var b [][]byte
	for _, p := range shardPaths(dir, m) {
		d, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, d)
	}
	return b
}

// The shuffle is a pure function of the input, the seed and the shard
// count: the same seed gives byte-identical shards whatever the block size
// or the input's compression; another seed gives another order; the
// output is not in input order.
func TestShuffleDeterministic(t *testing.T) {
	in := idRows(3000)
	dir := t.TempDir()
	plain, zst := filepath.Join(dir, "in.libsvm"), filepath.Join(dir, "in.libsvm.zst")
	writeRows(t, plain, in)
	writeRows(t, zst, in)
	run := func(src string, cfg Config) (*Manifest, [][]byte, string) {
		out, err := os.MkdirTemp(dir, "out")
		if err != nil {
			t.Fatal(err)
		}
		m, err := Split(context.Background(), src, out, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m, shardBytes(t, out, m), out
	}
	cfg := Config{Shards: 3, Shuffle: true, Seed: 11}
	m1, a, out := run(plain, cfg)
	cfg2 := cfg
	cfg2.BlockRows = 17
	m2, b, _ := run(zst, cfg2)
	if string(m1.encode()) != string(m2.encode()) {
		t.Fatalf("manifests differ:\n%s\n%s", m1.encode(), m2.encode())
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("shard %d differs between two runs with seed 11", i)
		}
	}
	cfg3 := cfg
	cfg3.Seed = 12
	_, c, _ := run(plain, cfg3)
	same := 0
	for i := range a {
		if bytes.Equal(a[i], c[i]) {
			same++
		}
	}
	if same > 0 {
		t.Fatalf("%d shards identical under seeds 11 and 12", same)
	}
	// Within a shard the rows are not in input order: count ascents.
	for i, p := range shardPaths(out, m1) {
		got := load(t, p)
		asc := 0
		for r := 1; r < got.Rows(); r++ {
			if got.Labels[r] > got.Labels[r-1] {
				asc++
			}
		}
		// A random order has (n-1)/2 ascents, sd about sqrt(n/12).
		nr := float64(got.Rows())
		if d := math.Abs(float64(asc) - (nr-1)/2); d > 5*math.Sqrt(nr/12) {
			t.Fatalf("shard %d: %d ascents in %d rows: not a random order", i, asc, got.Rows())
		}
	}
}

// Shard sizes of a shuffled split are binomial(rows, 1/N): each within
// 5 standard deviations of rows/N, and the counts pass a chi-square test.
func TestShuffleBalanced(t *testing.T) {
	const rows, n = 20000, 8
	in := idRows(rows)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm")
	writeRows(t, src, in)
	m, err := Split(context.Background(), src, filepath.Join(dir, "out"), Config{Shards: n, Shuffle: true, Seed: 1, Ext: ".libsvm"})
	if err != nil {
		t.Fatal(err)
	}
	mean, sd := float64(rows)/n, math.Sqrt(rows*(1.0/n)*(1-1.0/n))
	chi := 0.0
	for _, s := range m.Shards {
		d := float64(s.Rows) - mean
		if math.Abs(d) > 5*sd {
			t.Errorf("%s: %d rows, want %.0f ± %.0f", s.Name, s.Rows, mean, 5*sd)
		}
		chi += d * d / mean
	}
	// 7 degrees of freedom: P(chi² > 24.3) = 0.001.
	if chi > 24.3 {
		t.Errorf("chi² = %.1f over %d shards: unbalanced", chi, n)
	}
}

// bucketOf is uniform over buckets for every seed, including consecutive
// ones, and a row's bucket under one seed says nothing about another.
func TestBucketOfUniform(t *testing.T) {
	const n, rows = 10, 100000
	for _, seed := range []uint64{0, 1, 2, 1 << 63} {
		var c [n]int
		for i := range uint64(rows) {
			c[bucketOf(seed, i, n)]++
		}
		chi := 0.0
		for _, v := range c {
			d := float64(v) - rows/n
			chi += d * d / (rows / n)
		}
		// 9 degrees of freedom: P(chi² > 27.9) = 0.001.
		if chi > 27.9 {
			t.Errorf("seed %d: counts %v, chi² %.1f", seed, c, chi)
		}
	}
	// Independence of two seeds: the joint table of buckets.
	var joint [n][n]int
	for i := range uint64(rows) {
		joint[bucketOf(5, i, n)][bucketOf(6, i, n)]++
	}
	chi, e := 0.0, float64(rows)/(n*n)
	for a := range joint {
		for _, v := range joint[a] {
			chi += (float64(v) - e) * (float64(v) - e) / e
		}
	}
	// 81 degrees of freedom: P(chi² > 124.8) ≈ 0.001.
	if chi > 124.8 {
		t.Errorf("buckets under seeds 5 and 6 are dependent: chi² %.1f", chi)
	}
}

// An input larger than the memory budget: the scatter holds one block at a
// time, no bucket loaded exceeds MaxBucketBytes, and the result is still a
// deterministic permutation of the input.
func TestSplitLargerThanBudget(t *testing.T) {
	in := genRows(7, 3000, 40, 20)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm.zst")
	writeRows(t, src, in)
	total := memBytes(int64(in.Rows()), int64(in.NNZ()))
	budget := total / 20
	runOnce := func(out string) (*Manifest, [][]byte) {
		var peakLoad, loadedRows int64
		var counter *heldCounter
		h := hooks{
			open: func(path string, blockRows int) (reader.BlockReader, error) {
				br, err := reader.OpenBlocks(path, blockRows)
				counter = &heldCounter{BlockReader: br}
				return counter, err
			},
			onLoad: func(rows, nnz int64) {
				if rows > 1 {
					peakLoad = max(peakLoad, memBytes(rows, nnz))
				}
				loadedRows += rows
			},
		}
		m, err := split(context.Background(), src, out, Config{Shards: 2, Shuffle: true, Seed: 9, BlockRows: 50, MaxBucketBytes: budget}, h)
		if err != nil {
			t.Fatal(err)
		}
		if counter.peak != 1 {
			t.Errorf("scatter held %d input blocks at once, want 1", counter.peak)
		}
		if peakLoad == 0 || peakLoad > budget {
			t.Errorf("largest bucket loaded takes %d bytes; budget %d (input %d)", peakLoad, budget, total)
		}
		if loadedRows != int64(in.Rows()) {
			t.Errorf("loaded %d rows in all, want %d", loadedRows, in.Rows())
		}
		return m, shardBytes(t, out, m)
	}
	m, a := runOnce(filepath.Join(dir, "a"))
	_, b := runOnce(filepath.Join(dir, "b"))
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("shard %d differs between two runs", i)
		}
	}
	var parts []*sparsevec.CSR
	for _, p := range shardPaths(filepath.Join(dir, "a"), m) {
		parts = append(parts, load(t, p))
	}
	got, want := multiset(parts...), multiset(in)
	for k, c := range want {
		if got[k] != c {
			t.Fatalf("row %q appears %d times, want %d", k, got[k], c)
		}
	}
	if names := dirNames(t, filepath.Join(dir, "a")); len(names) != 3 {
		t.Fatalf("directory holds %v, want 2 shards and the manifest", names)
	}
}

// A bad row stops Split with the reader's error naming the input file and
// line, and leaves the output directory empty: no bucket, shard or
// manifest.
func TestSplitBadRowCleansUp(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	for i := range 5000 {
		if i == 4321 {
			text.WriteString("+1 3:0.5 2:0.25\n") // indices not ascending
			continue
		}
		text.WriteString("-1 1:0.5 7:2\n")
	}
	src := filepath.Join(dir, "bad.libsvm")
	if err := os.WriteFile(src, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, shuffle := range []bool{false, true} {
		out := filepath.Join(dir, "out")
		_, err := Split(context.Background(), src, out, Config{Shards: 3, Shuffle: shuffle, BlockRows: 100})
		var pe *reader.ParseError
		if !errors.As(err, &pe) || pe.Path != src || pe.Line != 4322 || !errors.Is(err, reader.ErrUnsorted) {
			t.Fatalf("shuffle %v: error %v, want a ParseError at %s:4322 wrapping ErrUnsorted", shuffle, err, src)
		}
		if !strings.Contains(err.Error(), src+":4322:") {
			t.Fatalf("error %q does not name %s:4322", err, src)
		}
		if names := dirNames(t, out); len(names) != 0 {
			t.Fatalf("shuffle %v: left %v behind", shuffle, names)
		}
	}
}

// A failure during pass 2 (here: cancellation after the second shard)
// removes the shards already written and every bucket file.
func TestSplitCancelInPass2CleansUp(t *testing.T) {
	in := genRows(3, 4000, 30, 10)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm")
	writeRows(t, src, in)
	// An unrelated file that Force lets Split write beside, and keeps.
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "notes.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sawWrite := false
	cfg := Config{Shards: 4, Shuffle: true, Force: true, ProgressEvery: 100, Progress: func(p Progress) {
		if p.Phase == WriteShards && p.Shard == 1 {
			sawWrite = true
			cancel()
		}
	}}
	_, err := Split(ctx, src, out, cfg)
	if !errors.Is(err, context.Canceled) || !sawWrite {
		t.Fatalf("error %v (progress seen: %v), want context.Canceled during pass 2", err, sawWrite)
	}
	if names := dirNames(t, out); !slices.Equal(names, []string{"notes.txt"}) {
		t.Fatalf("left %v behind", names)
	}
}

// A directory holding other files or another shard set is refused unless
// Force; Force removes the other set's files and keeps unrelated files; a
// rerun over the same set needs no Force.
func TestSplitOutputDirRules(t *testing.T) {
	in := idRows(100)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm")
	writeRows(t, src, in)
	ctx := context.Background()

	out := filepath.Join(dir, "set")
	if _, err := Split(ctx, src, out, Config{Shards: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := Split(ctx, src, out, Config{Shards: 3, Shuffle: true}); err != nil {
		t.Fatalf("rewriting the same shard names: %v", err)
	}
	if _, err := Split(ctx, src, out, Config{Shards: 2}); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("writing 2 shards over 3: error %v, want ErrNotEmpty", err)
	}
	if !IsShardSet(out) {
		t.Fatal("a refused Split spoiled the existing set")
	}
	if err := os.WriteFile(filepath.Join(out, "README"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Split(ctx, src, out, Config{Shards: 2, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"README", ManifestName, m.Shards[0].Name, m.Shards[1].Name}
	slices.Sort(want)
	if got := dirNames(t, out); !slices.Equal(got, want) {
		t.Fatalf("after Force: %v, want %v", got, want)
	}

	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "data.csv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Split(ctx, src, other, Config{}); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("non-empty directory: error %v, want ErrNotEmpty", err)
	}
	// Stale temporary files of a crashed run are not "other files": they
	// are removed.
	clean := filepath.Join(dir, "clean")
	if _, err := Split(ctx, src, clean, Config{Shards: 2}); err != nil {
		t.Fatal(err)
	}
	stale := []string{bucketPrefix + "00001-123", "." + ShardName(0, 2, DefaultExt) + ".tmp-456", "." + ManifestName + ".tmp-7"}
	for _, name := range stale {
		if err := os.WriteFile(filepath.Join(clean, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Split(ctx, src, clean, Config{Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, clean); len(got) != 3 {
		t.Fatalf("stale temporary files not removed: %v", got)
	}
}

func TestConfigRefusals(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm")
	writeRows(t, src, idRows(10))
	tests := []struct {
		cfg  Config
		want error
	}{
		{Config{Ext: ".cpmcache"}, ErrFormat},
		{Config{Ext: ".libsvm.bz2"}, reader.ErrNoBzip2Writer},
		{Config{Shards: -1}, nil},
		{Config{Shards: MaxShards + 1}, nil},
		{Config{Ext: "zst"}, nil},
		{Config{Ext: ".a/b"}, nil},
		{Config{BlockRows: -1}, nil},
		{Config{MaxBucketBytes: -1}, nil},
	}
	for _, tc := range tests {
		_, err := Split(context.Background(), src, filepath.Join(dir, "out"), tc.cfg)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%+v: error %v, want %v", tc.cfg, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("a refused config created the output directory")
	}
	_, err := Split(context.Background(), filepath.Join(dir, "missing.libsvm"), filepath.Join(dir, "out2"), Config{})
	if err == nil || !strings.Contains(err.Error(), "missing.libsvm") {
		t.Errorf("missing input: error %v, want one naming the file", err)
	}
	if names := dirNames(t, filepath.Join(dir, "out2")); len(names) != 0 {
		t.Errorf("missing input left %v", names)
	}
}
