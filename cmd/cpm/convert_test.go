package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// convertFixture writes a tiny idx pair: four 2×2 images with digits 2, 7, 2, 0.
func convertFixture(t *testing.T, dir string) (images, labels string) {
	t.Helper()
	be := binary.BigEndian
	img := be.AppendUint32(nil, 0x803)
	img = be.AppendUint32(img, 4)
	img = be.AppendUint32(img, 2)
	img = be.AppendUint32(img, 2)
	img = append(img,
		0, 255, 0, 0,
		10, 0, 0, 20,
		0, 0, 0, 0,
		1, 2, 3, 4)
	lab := be.AppendUint32(nil, 0x801)
	lab = be.AppendUint32(lab, 4)
	lab = append(lab, 2, 7, 2, 0)
	images, labels = filepath.Join(dir, "img-idx3-ubyte"), filepath.Join(dir, "lab-idx1-ubyte")
	if err := os.WriteFile(images, img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(labels, lab, 0o644); err != nil {
		t.Fatal(err)
	}
	return images, labels
}

// convertReadBack parses a LIBSVM file (compressed or not) with the
// package's Scanner.
func convertReadBack(t *testing.T, path string) *sparsevec.CSR {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := &sparsevec.CSR{}
	s := libsvm.NewScanner(f, path)
	for s.Scan() {
		m.Append(s.Label(), s.Row())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestConvertIDX(t *testing.T) {
	dir := t.TempDir()
	images, labels := convertFixture(t, dir)
	want, err := reader.LoadIDX(images, labels)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		out        string
		digit      []string
		wantLabels []float32
	}{
		{"mnist10.libsvm.zst", nil, []float32{2, 7, 2, 0}},
		{"mnist2.libsvm.zst", []string{"--digit", "2"}, []float32{1, -1, 1, -1}},
		{"mnist7.libsvm.gz", []string{"-digit=7"}, []float32{-1, 1, -1, -1}},
		{"plain.libsvm", nil, []float32{2, 7, 2, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.out, func(t *testing.T) {
			out := filepath.Join(dir, tt.out)
			args := append([]string{"--idx-images", images, "--idx-labels", labels, "-o", out}, tt.digit...)
			var stdout, stderr bytes.Buffer
			if err := runConvert(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			if stdout.Len() != 0 {
				t.Errorf("wrote %d bytes to stdout", stdout.Len())
			}
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			summary := stderr.String()
			for _, s := range []string{"4 rows", "7 nonzeros", out, " " + strconv.FormatInt(fi.Size(), 10) + " bytes"} {
				if !strings.Contains(summary, s) {
					t.Errorf("summary %q lacks %q", summary, s)
				}
			}
			if strings.Count(summary, "\n") != 1 {
				t.Errorf("summary %q is not one line", summary)
			}
			got := convertReadBack(t, out)
			if !slices.Equal(got.Labels, tt.wantLabels) {
				t.Errorf("labels %v, want %v", got.Labels, tt.wantLabels)
			}
			if !slices.Equal(got.Ptr, want.Ptr) || !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) {
				t.Errorf("features differ from LoadIDX:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestConvertStdout(t *testing.T) {
	images, labels := convertFixture(t, t.TempDir())
	var stdout, stderr bytes.Buffer
	if err := runConvert(context.Background(), []string{"-idx-images", images, "-idx-labels", labels, "-digit", "0", "-o", "-"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	const want = "-1 2:1\n-1 1:0.039215688 4:0.078431375\n-1\n1 1:0.003921569 2:0.007843138 3:0.011764706 4:0.015686275\n"
	if stdout.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), want)
	}
}

// TestConvertLIBSVM recompresses a LIBSVM file, with the input given before
// the flags, and checks nothing changes but the compression.
func TestConvertLIBSVM(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.libsvm")
	text := "1 3:0.5 9:-2\n-1\n2 1:1e-45 4294967295:3.4028235e+38\n"
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	zst := filepath.Join(dir, "out.libsvm.zst")
	var stdout, stderr bytes.Buffer
	// Index 4294967295 needs --max-features at its maximum.
	if err := runConvert(context.Background(), []string{in, "-o", zst, "--max-features", "4294967296"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := runConvert(context.Background(), []string{"-o", "-", "--max-features", "4294967296", "--", zst}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != text {
		t.Errorf("round trip through zstd gave\n%s\nwant\n%s", stdout.String(), text)
	}
}

func TestConvertErrors(t *testing.T) {
	dir := t.TempDir()
	images, labels := convertFixture(t, dir)
	out := filepath.Join(dir, "out.libsvm")
	tests := []struct {
		name  string
		args  []string
		usage bool // a usage error (exit status 2) rather than a data error
	}{
		{"no output", []string{"--idx-images", images, "--idx-labels", labels}, true},
		{"images only", []string{"--idx-images", images, "-o", out}, true},
		{"labels only", []string{"--idx-labels", labels, "-o", out}, true},
		{"no input", []string{"-o", out}, true},
		{"two inputs", []string{"a", "b", "-o", out}, true},
		{"idx and input", []string{"--idx-images", images, "--idx-labels", labels, "x", "-o", out}, true},
		{"digit 10", []string{"--idx-images", images, "--idx-labels", labels, "--digit", "10", "-o", out}, true},
		{"digit x", []string{"--idx-images", images, "--idx-labels", labels, "--digit", "x", "-o", out}, true},
		{"digit -1", []string{"--idx-images", images, "--idx-labels", labels, "--digit", "-1", "-o", out}, true},
		{"unknown flag", []string{"--idx-images", images, "--idx-labels", labels, "--bogus", "-o", out}, true},
		{"swapped files", []string{"--idx-images", labels, "--idx-labels", images, "-o", out}, false},
		{"missing file", []string{"--idx-images", images + "x", "--idx-labels", labels, "-o", out}, false},
		{"compressed cache", []string{"--idx-images", images, "--idx-labels", labels, "--compression", "zstd", "-o", out + ".cpmcache"}, true},
		{"bz2 output", []string{"--idx-images", images, "--idx-labels", labels, "-o", out + ".bz2"}, false},
		{"missing output dir", []string{"--idx-images", images, "--idx-labels", labels, "-o", filepath.Join(dir, "no", "x.zst")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runConvert(context.Background(), tt.args, &stdout, &stderr)
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.As(err, new(usageError)); got != tt.usage {
				t.Errorf("usage error = %v, want %v (%v)", got, tt.usage, err)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 2 {
				t.Errorf("directory holds %d entries after a failed convert, want the 2 inputs", len(ents))
			}
		})
	}
}

// convertSample is LIBSVM text with the cases a format can get wrong:
// explicit zeros, empty rows, the largest index, extreme values.
const convertSample = "1 3:0.5 9:-2\n-1\n2 1:1e-45 4294967295:3.4028235e+38\n0 2:0 5:0\n7 1:1\n-0 6:-1 7:1 8:2\n"

// TestConvertFormats converts LIBSVM to every output format and
// compression, then each result back to LIBSVM text on stdout, which must
// equal the input.
func TestConvertFormats(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.libsvm")
	if err := os.WriteFile(in, []byte(convertSample), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		out    string
		flags  []string
		format reader.Format
	}{
		{"a.arrow", nil, reader.ArrowFile},
		{"b.feather", []string{"--compression", "lz4", "--batch-rows", "2"}, reader.ArrowFile},
		{"c.arrows", []string{"--compression", "none", "--batch-rows", "1"}, reader.ArrowStream},
		{"d.parquet", []string{"--compression", "snappy", "--batch-rows", "4"}, reader.Parquet},
		{"e.pq", []string{"--compression=zstd"}, reader.Parquet},
		{"f.libsvm.gz", nil, reader.LIBSVM},
		{"g.cpmcache", nil, reader.Cache},
		{"h.CPMCACHE", []string{"--batch-rows", "2"}, reader.Cache},
	}
	for _, tt := range tests {
		t.Run(tt.out, func(t *testing.T) {
			out := filepath.Join(dir, tt.out)
			var stdout, stderr bytes.Buffer
			if err := runConvert(context.Background(), append([]string{in, "-o", out, "--max-features", "4294967296"}, tt.flags...), &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			if f, err := reader.DetectFormat(out); err != nil || f != tt.format {
				t.Errorf("output format %v (%v), want %v", f, err, tt.format)
			}
			for _, s := range []string{"6 rows", "10 nonzeros", "dim 4294967296", tt.format.String()} {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("summary %q lacks %q", stderr.String(), s)
				}
			}
			stdout.Reset()
			if err := runConvert(context.Background(), []string{out, "-o", "-", "--max-features", "4294967296"}, &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			if stdout.String() != convertSample {
				t.Errorf("round trip through %s gave\n%s\nwant\n%s", tt.out, stdout.String(), convertSample)
			}
		})
	}
}

// TestConvertBatchRows checks that --batch-rows sets the record batch size.
func TestConvertBatchRows(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.libsvm")
	if err := os.WriteFile(in, []byte(convertSample), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.arrow")
	var stdout, stderr bytes.Buffer
	if err := runConvert(context.Background(), []string{in, "-o", out, "--batch-rows", "4", "--max-features", "4294967296"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	br, err := reader.OpenBlocks(out, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	var sizes []int
	for {
		b, err := br.Next()
		if err != nil {
			break
		}
		sizes = append(sizes, b.Rows())
		br.Release(b)
	}
	if !slices.Equal(sizes, []int{4, 2}) {
		t.Errorf("record batches of %v rows, want [4 2]", sizes)
	}
}

// TestConvertDigitColumnar relabels rows read from Arrow and Parquet and
// checks that the input file is left as it was.
func TestConvertDigitColumnar(t *testing.T) {
	dir := t.TempDir()
	images, labels := convertFixture(t, dir)
	for _, ext := range []string{".arrows", ".parquet"} {
		t.Run(ext, func(t *testing.T) {
			mid := filepath.Join(dir, "mnist"+ext)
			var stdout, stderr bytes.Buffer
			if err := runConvert(context.Background(), []string{"--idx-images", images, "--idx-labels", labels, "-o", mid}, &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(mid)
			if err != nil {
				t.Fatal(err)
			}
			stderr.Reset()
			if err := runConvert(context.Background(), []string{mid, "--digit", "2", "-o", "-"}, &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			const want = "1 2:1\n-1 1:0.039215688 4:0.078431375\n1\n-1 1:0.003921569 2:0.007843138 3:0.011764706 4:0.015686275\n"
			if stdout.String() != want {
				t.Errorf("got\n%s\nwant\n%s", stdout.String(), want)
			}
			if !strings.Contains(stderr.String(), "2 positive, 2 negative") {
				t.Errorf("summary %q", stderr.String())
			}
			after, err := os.ReadFile(mid)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the input file changed")
			}
		})
	}
}

// TestConvertColumnarErrors checks usage errors of the new flags, and that
// a bad row in a columnar input leaves no output behind.
func TestConvertColumnarErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.libsvm")
	if err := os.WriteFile(in, []byte(convertSample), 0o644); err != nil {
		t.Fatal(err)
	}
	usage := []struct {
		name string
		args []string
	}{
		{"lz4 parquet", []string{in, "-o", filepath.Join(dir, "x.parquet"), "--compression", "lz4"}},
		{"snappy arrow", []string{in, "-o", filepath.Join(dir, "x.arrow"), "--compression", "snappy"}},
		{"zstd libsvm", []string{in, "-o", filepath.Join(dir, "x.libsvm.zst"), "--compression", "zstd"}},
		{"compression stdout", []string{in, "-o", "-", "--compression", "none"}},
		{"bogus", []string{in, "-o", filepath.Join(dir, "x.arrow"), "--compression", "brotli"}},
		{"negative batch", []string{in, "-o", filepath.Join(dir, "x.arrow"), "--batch-rows", "-1"}},
	}
	for _, tt := range usage {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runConvert(context.Background(), tt.args, &stdout, &stderr)
			if !errors.As(err, new(usageError)) {
				t.Errorf("got %v, want a usage error", err)
			}
		})
	}

	// An Arrow input whose third row has index 0 (written as LIBSVM first
	// would be refused, so flip an index in a converted file).
	good := filepath.Join(dir, "good.arrow")
	var stdout, stderr bytes.Buffer
	if err := runConvert(context.Background(), []string{in, "-o", good, "--compression", "none", "--max-features", "4294967296"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// Row 3's indices 1, 4294967295 are stored as 01 00 00 00 ff ff ff ff;
	// make the 1 a 0.
	i := bytes.Index(data, []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	if i < 0 {
		t.Fatal("row 3's indices not found in the Arrow file")
	}
	data[i] = 0
	bad := filepath.Join(dir, "bad.arrow")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.parquet")
	err = runConvert(context.Background(), []string{bad, "-o", out}, &stdout, &stderr)
	var re *reader.RowError
	if !errors.As(err, &re) || re.Row != 3 || !errors.Is(err, reader.ErrIndexZero) {
		t.Fatalf("got %v, want a RowError at row 3 wrapping ErrIndexZero", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output exists after a failed convert: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("directory holds %d entries, want in, good and bad", len(ents))
	}
}

// A cache written by convert records its input, so train --cache takes it
// as the input's cache; the model is the one trained from the text.
func TestConvertCacheServesTrain(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "heart.libsvm")
	if err := os.WriteFile(in, readFile(t, heart), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "heart.cpmcache")
	mustRun(t, "convert", in, "-o", cache)
	args := []string{"train", "-q", "--stream", "-k", "2", "-i", "2000", "-t", in}
	mustRun(t, append(args, "-o", filepath.Join(dir, "text.model"))...)
	js := filepath.Join(dir, "m.json")
	mustRun(t, append(args, "--cache", cache, "--json", js, "-o", filepath.Join(dir, "cache.model"))...)
	if !bytes.Contains(readFile(t, js), []byte(`"cache_reused": true`)) {
		t.Errorf("train did not read the cache convert wrote: %s", readFile(t, js))
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, "text.model")), readFile(t, filepath.Join(dir, "cache.model"))) {
		t.Error("the model trained through convert's cache differs")
	}
	// From idx files there is no source to record: such a cache reads as
	// data but is never taken as a file's cache.
	images, labels := convertFixture(t, dir)
	idxCache := filepath.Join(dir, "idx.cpmcache")
	mustRun(t, "convert", "--idx-images", images, "--idx-labels", labels, "-o", idxCache)
	direct := mustRun(t, "convert", "--idx-images", images, "--idx-labels", labels, "-o", "-")
	if back := mustRun(t, "convert", idxCache, "-o", "-"); back != direct || direct == "" {
		t.Errorf("idx -> cache -> LIBSVM gave %q, idx -> LIBSVM %q", back, direct)
	}
	if err := rowcache.Check(idxCache, in); !errors.Is(err, rowcache.ErrStale) {
		t.Errorf("rowcache.Check of a cache without a source: %v, want rowcache.ErrStale", err)
	}
}
