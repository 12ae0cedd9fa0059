package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/synth"
)

// writeTestMNIST writes n 28×28 images (a filled rectangle whose size and
// place depend on i, with grey edges) and labels i mod 10 as the MNIST
// training idx files in a new directory, and returns it.
func writeTestMNIST(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	var im, lb bytes.Buffer
	binary.Write(&im, binary.BigEndian, [4]uint32{0x803, uint32(n), 28, 28})
	binary.Write(&lb, binary.BigEndian, [2]uint32{0x801, uint32(n)})
	for i := range n {
		r0, c0 := 4+i%7, 6+i%5
		for r := range 28 {
			for c := range 28 {
				var p byte
				switch {
				case r > r0 && r < r0+12 && c > c0 && c < c0+8:
					p = 255
				case r >= r0 && r <= r0+12 && c >= c0 && c <= c0+8:
					p = byte(60 + 10*(i%10))
				}
				im.WriteByte(p)
			}
		}
		lb.WriteByte(byte(i % 10))
	}
	if err := os.WriteFile(filepath.Join(dir, synth.MNISTTrainImages), im.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, synth.MNISTTrainLabels), lb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// text returns the decompressed content of path.
func text(t *testing.T, path string) []byte {
	t.Helper()
	r, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The generated data sets are deterministic whatever the number of workers,
// read back with the documented shape, and their splits differ.
func TestGenGenerated(t *testing.T) {
	dir := t.TempDir()
	mnist := writeTestMNIST(t, 20)
	tests := []struct {
		name  string
		args  []string
		rows  int
		dim   int
		label func(float32) bool
	}{
		{"url", nil, 700, synth.URLDim, func(y float32) bool { return y == 1 || y == -1 }},
		{"rcv1", []string{"--split", "test"}, 700, synth.RCV1Dim, func(y float32) bool { return y == 1 || y == -1 }},
		{"mnist8m", []string{"--mnist", mnist}, 90, 784, func(y float32) bool { return y >= 0 && y <= 9 && y == float32(int(y)) }},
		{"mnist8m-2", []string{"--mnist", mnist}, 90, 784, func(y float32) bool { return y == 1 || y == -1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := filepath.Join(dir, tc.name+".a.zst"), filepath.Join(dir, tc.name+".b.gz")
			rows := []string{"--rows", strconv.Itoa(tc.rows), "--seed", "3"}
			mustRun(t, append(append([]string{"gen", tc.name}, tc.args...), append(rows, "--workers", "1", "-o", a)...)...)
			mustRun(t, append(append([]string{"gen", tc.name}, tc.args...), append(rows, "--workers", "3", "--level", "best", "-o", b)...)...)
			ta, tb := text(t, a), text(t, b)
			if !bytes.Equal(ta, tb) {
				t.Fatal("1 worker and 3 workers give different text")
			}
			m, err := reader.Load(a)
			if err != nil {
				t.Fatal(err)
			}
			if m.Rows() != tc.rows || m.Dim > tc.dim+1 {
				t.Errorf("%d rows, largest index %d; want %d rows, indices <= %d", m.Rows(), m.Dim-1, tc.rows, tc.dim)
			}
			for r, y := range m.Labels {
				if !tc.label(y) {
					t.Fatalf("row %d: label %v", r, y)
				}
			}
			if tc.name == "rcv1" {
				for r := range m.Rows() {
					if n := m.Row(r).SqNorm(); n < 0.9999 || n > 1.0001 {
						t.Fatalf("row %d: squared norm %v", r, n)
					}
				}
			}
			// Another seed gives other rows.
			c := filepath.Join(dir, tc.name+".c")
			mustRun(t, append(append([]string{"gen", tc.name}, tc.args...), "--rows", strconv.Itoa(tc.rows), "--seed", "4", "-o", c)...)
			if bytes.Equal(text(t, c), ta) {
				t.Error("seeds 3 and 4 give the same rows")
			}
		})
	}
}

// The first rows of mnist8m are the MNIST images as cpm convert writes them.
func TestGenMNIST8mStartsWithMNIST(t *testing.T) {
	dir := t.TempDir()
	mnist := writeTestMNIST(t, 20)
	conv, gen := filepath.Join(dir, "conv.libsvm"), filepath.Join(dir, "gen.libsvm")
	mustRun(t, "convert", "--idx-images", filepath.Join(mnist, synth.MNISTTrainImages),
		"--idx-labels", filepath.Join(mnist, synth.MNISTTrainLabels), "--digit", "2", "-o", conv)
	mustRun(t, "gen", "mnist8m-2", "--mnist", mnist, "--rows", "40", "-o", gen)
	c, g := text(t, conv), text(t, gen)
	if !bytes.HasPrefix(g, c) || bytes.Equal(g, c) || bytes.Count(g, []byte("\n")) != 40 {
		t.Errorf("mnist8m-2 does not start with the converted images followed by deformations:\n%s\n---\n%s", c[:min(len(c), 300)], g[:min(len(g), 300)])
	}
}

func TestGenErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.zst")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gen", "mnist9m", "-o", out}, 2, "polyceptron-d1, polyceptron-d2, mnist8m, mnist8m-2, url, rcv1"},
		{[]string{"gen"}, 2, "name the data set"},
		{[]string{"gen", "url", "--rows", "0", "-o", out}, 2, "--rows 0"},
		{[]string{"gen", "url", "--rows", "-5", "-o", out}, 2, "--rows -5"},
		{[]string{"gen", "polyceptron-d1", "--rows", "0", "-o", out}, 2, "--rows 0"},
		{[]string{"gen", "url", "--rows", "10"}, 2, "-o OUT"},
		{[]string{"gen", "url", "--split", "validation", "-o", out}, 2, "train or test"},
		{[]string{"gen", "url", "--level", "ultra", "-o", out}, 2, "fastest, default, better, best"},
		{[]string{"gen", "url", "--workers", "-1", "-o", out}, 2, "--workers"},
		{[]string{"gen", "url", "extra", "-o", out}, 2, "unexpected argument"},
		{[]string{"gen", "mnist8m", "--split", "test", "-o", out}, 2, "no test split"},
		{[]string{"gen", "polyceptron-d2", "--split", "test", "-o", out}, 2, "no test split"},
		{[]string{"gen", "mnist8m-2", "--mnist", filepath.Join(dir, "nope"), "--rows", "5", "-o", out}, exitIO, "scripts/get-mnist.sh"},
		{[]string{"gen", "url", "--rows", "5", "-o", filepath.Join(dir, "x.bz2")}, 1, "bzip2"},
	}
	for _, tc := range tests {
		code, _, errs := cpm(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("cpm %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, errs, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed gen left %s: %v", out, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed gens left files: %v", entries)
	}
}

func TestGenHelp(t *testing.T) {
	for _, args := range [][]string{{"gen", "-h"}, {"gen", "--help"}} {
		code, out, _ := cpm(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		for _, name := range []string{"polyceptron-d1", "polyceptron-d2", "mnist8m", "mnist8m-2", "url", "rcv1"} {
			line := ""
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), name+" ") {
					line = l
					break
				}
			}
			if !strings.Contains(line, "generated") {
				t.Errorf("%v: the line of %s does not say generated: %q", args, name, line)
			}
		}
		for _, want := range []string{"-level", "-mnist", "-split", "-progress", "Loosli", "Simard", "url_combined", "rcv1.binary", "8,100,000"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: help lacks %q", args, want)
			}
		}
	}
	code, _, errs := cpm(t, "gen", "url", "-h")
	if code != 0 || !strings.Contains(errs, "rcv1.binary") {
		t.Errorf("gen url -h: exit %d, %q", code, errs)
	}
}

// Progress lines go to stderr only with --progress (stderr is not a
// terminal in tests).
func TestGenProgress(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := cpm(t, "gen", "rcv1", "--rows", "3000", "-o", filepath.Join(dir, "a.zst"))
	if code != 0 || errs != "" {
		t.Errorf("without --progress: exit %d, stderr %q", code, errs)
	}
	code, _, errs = cpm(t, "gen", "rcv1", "--rows", "3000", "--progress", "-o", filepath.Join(dir, "b.zst"))
	if code != 0 || !strings.Contains(errs, "wrote 3000 rows") || !strings.Contains(errs, "rows/s") {
		t.Errorf("with --progress: exit %d, stderr %q", code, errs)
	}
}

// --level changes the compression, never the text; the zstd levels are
// ordered by size on repetitive text.
func TestGenLevels(t *testing.T) {
	dir := t.TempDir()
	var want []byte
	size := map[string]int64{}
	for _, level := range []string{"fastest", "default", "better", "best"} {
		out := filepath.Join(dir, level+".zst")
		mustRun(t, "gen", "rcv1", "--rows", "4000", "--level", level, "-o", out)
		st, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		size[level] = st.Size()
		got := text(t, out)
		if want == nil {
			want = got
		} else if !bytes.Equal(got, want) {
			t.Errorf("--level %s changes the text", level)
		}
	}
	if !(size["best"] < size["better"] && size["better"] < size["fastest"]) {
		t.Errorf("compressed sizes %v", size)
	}
	// The option itself rejects values outside the enum.
	if _, err := reader.CreateCompressed(filepath.Join(dir, "x.zst"), reader.WithZstdLevel(reader.ZstdLevel(42))); err == nil {
		t.Error("CreateCompressed with level 42: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.zst")); !os.IsNotExist(err) {
		t.Error("CreateCompressed with a bad level created the file")
	}
	for _, l := range zstdLevels {
		if got, err := parseZstdLevel(l.String()); err != nil || got != l {
			t.Errorf("parseZstdLevel(%v) = %v, %v", l, got, err)
		}
	}
	if reader.ZstdLevel(0) != reader.ZstdBetter || reader.ZstdLevel(42).String() != "ZstdLevel(42)" {
		t.Error("the zero ZstdLevel is not ZstdBetter, or String of a bad level")
	}
}
