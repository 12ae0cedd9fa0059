package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
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
	s := reader.NewScanner(f, path)
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
			if err := runConvert(args, &stdout, &stderr); err != nil {
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
	if err := runConvert([]string{"-idx-images", images, "-idx-labels", labels, "-digit", "0", "-o", "-"}, &stdout, &stderr); err != nil {
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
	if err := runConvert([]string{in, "-o", zst}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := runConvert([]string{"-o", "-", "--", zst}, &stdout, &stderr); err != nil {
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
		{"bz2 output", []string{"--idx-images", images, "--idx-labels", labels, "-o", out + ".bz2"}, false},
		{"missing output dir", []string{"--idx-images", images, "--idx-labels", labels, "-o", filepath.Join(dir, "no", "x.zst")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runConvert(tt.args, &stdout, &stderr)
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
