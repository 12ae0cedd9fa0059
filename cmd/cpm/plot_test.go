package main

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/synth"
)

// hexagonData writes 2-D rows uniform in [-1,1]², +1 inside a regular
// hexagon, as scripts/plane2d does.
func hexagonData(t *testing.T, path string, rows int) {
	t.Helper()
	var region synth.Polyhedron
	for i := range 6 {
		a := 2 * math.Pi * (float64(i) + 0.5) / 6
		region = append(region, synth.Halfspace{W: []float64{-math.Cos(a), -math.Sin(a)}, B: 0.75 * math.Cos(math.Pi/6)})
	}
	var b bytes.Buffer
	if err := (synth.Dataset{Name: "hexagon", Dim: 2, Region: region}).Write(&b, rows, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readPNG decodes a PNG file.
func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// countColor returns how many pixels of img are exactly c's RGB.
func countColor(img image.Image, r, g, b uint8) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if uint8(pr>>8) == r && uint8(pg>>8) == g && uint8(pb>>8) == b {
				n++
			}
		}
	}
	return n
}

func TestPlotRegions(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "hex.libsvm")
	hexagonData(t, data, 300)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"cpm", []string{"-k", "6", "-i", "100000", "--outer_label", "-1"}},
		{"cpm-double", []string{"-k", "4", "-i", "50000", "-C", "1", "--double-sided"}},
		{"perceptron-lift", []string{"--learner", "perceptron", "--lift", "quadratic"}},
		{"kperceptron", []string{"--learner", "kperceptron", "--kernel", "rbf", "--sigma", "0.3", "--epochs", "5"}},
		{"polyceptron", []string{"--learner", "polyceptron-batch", "-k", "6", "--gamma", "5"}},
		{"spla1", []string{"--learner", "spla1", "-k", "6", "--max-iter", "20"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := filepath.Join(dir, tc.name+".model")
			mustRun(t, append([]string{"train", "-q", "-t", data, "-o", mp}, tc.flags...)...)
			out := filepath.Join(dir, tc.name+".png")
			mustRun(t, "plot", "regions", "--model", mp, "--data", data, "-o", out, "--grid", "100", "--width", "6", "--height", "4")
			img := readPNG(t, out)
			if b := img.Bounds(); b.Dx() != 600 || b.Dy() != 400 {
				t.Fatalf("image is %v, want 600×400 (6×4 inches at 100 dpi)", b)
			}
			// Both labels' regions are painted: label -1 first (blue),
			// label 1 second (orange).
			for i := range 2 {
				c := lighten(labelColors[i], 0.3)
				if n := countColor(img, c.R, c.G, c.B); n < 5000 {
					t.Errorf("region of label %d: %d pixels", 2*i-1, n)
				}
			}
		})
	}
	// The same command twice gives the same bytes.
	again := filepath.Join(dir, "again.png")
	mustRun(t, "plot", "regions", "--model", filepath.Join(dir, "cpm.model"), "--data", data, "-o", again, "--grid", "100", "--width", "6", "--height", "4")
	a, _ := os.ReadFile(again)
	b, _ := os.ReadFile(filepath.Join(dir, "cpm.png"))
	if !bytes.Equal(a, b) {
		t.Error("two identical plot regions commands wrote different PNGs")
	}

	d3 := filepath.Join(dir, "d3.libsvm")
	os.WriteFile(d3, []byte("1 1:0.5 3:1\n-1 2:1\n"), 0o644)
	heartModel := filepath.Join(dir, "heart.model")
	mustRun(t, "train", "-q", "-k", "2", "-i", "1000", "-t", heart, "-o", heartModel)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--model", heartModel, "--data", data}, exitError, "the model has 13 features; regions are drawn for 2-D models"},
		{[]string{"--model", filepath.Join(dir, "cpm.model"), "--data", d3}, exitError, "feature index 3; regions are drawn for 2-D data"},
		{[]string{"--model", filepath.Join(dir, "cpm.model")}, exitUsage, "need --model MODEL, --data FILE and -o OUT.png"},
		{[]string{"--model", filepath.Join(dir, "cpm.model"), "--data", data, "--grid", "1"}, exitUsage, "--grid"},
	} {
		args := append([]string{"plot", "regions", "-o", filepath.Join(dir, "bad.png")}, tc.args...)
		code, _, errs := cpm(t, args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("cpm %s: exit %d, stderr %q; want %d and %q", strings.Join(args, " "), code, errs, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.png")); err == nil {
		t.Error("a failed plot left its output")
	}
	if code, _, _ := cpm(t, "plot", "scatter"); code != exitUsage {
		t.Errorf("unknown plot: exit %d, want 2", code)
	}
}

func TestPlotCurve(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "m.jsonl")
	mustRun(t, "train", "-q", "-k", "3", "-i", "20000", "--double-sided", "--progress-every", "2000", "-t", heart, "-o", filepath.Join(dir, "m"), "--metrics-log", log)
	out := filepath.Join(dir, "curve.png")
	mustRun(t, "plot", "curve", "--log", log, "-o", out)
	img := readPNG(t, out)
	if b := img.Bounds(); b.Dx() != 700 || b.Dy() != 560 {
		t.Errorf("image is %v, want 700×560 (two panels)", b)
	}
	// Both polytopes' lines are drawn in their colours.
	for i := range 2 {
		c := labelColors[i]
		if n := countColor(img, c.R, c.G, c.B); n < 100 {
			t.Errorf("task %d's colour: %d pixels", i, n)
		}
	}

	// The interleaving of concurrent polytopes' records does not change
	// the picture.
	b, _ := os.ReadFile(log)
	lines := strings.SplitAfter(string(b), "\n")
	slices.Reverse(lines)
	rev := filepath.Join(dir, "rev.jsonl")
	os.WriteFile(rev, []byte(strings.Join(lines, "")), 0o644)
	out2 := filepath.Join(dir, "rev.png")
	mustRun(t, "plot", "curve", "--log", rev, "-o", out2, "--title", "cpm training curve (m.jsonl)")
	p1, _ := os.ReadFile(out)
	p2, _ := os.ReadFile(out2)
	if !bytes.Equal(p1, p2) {
		t.Error("reordering the log's records changed the PNG")
	}

	// Other learners' logs plot against the pass or iteration.
	plog := filepath.Join(dir, "p.jsonl")
	mustRun(t, "train", "-q", "--learner", "plume", "-k", "2", "--max-iter", "5", "-t", heart, "-o", filepath.Join(dir, "p"), "--metrics-log", plog)
	mustRun(t, "plot", "curve", "--log", plog, "-o", filepath.Join(dir, "p.png"), "--x", "epoch", "--width", "5")
	if b := readPNG(t, filepath.Join(dir, "p.png")).Bounds(); b.Dx() != 500 || b.Dy() != 300 {
		t.Errorf("plume curve is %v, want 500×300 (one panel)", b)
	}

	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--log", empty}, exitError, "holds no records"},
		{[]string{"--log", filepath.Join(dir, "none.jsonl")}, exitIO, "no such file"},
		{[]string{"--log", log, "--x", "time"}, exitUsage, "--x"},
		{[]string{}, exitUsage, "need --log"},
	} {
		args := append([]string{"plot", "curve", "-o", filepath.Join(dir, "bad.png")}, tc.args...)
		code, _, errs := cpm(t, args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("cpm %s: exit %d, stderr %q; want %d and %q", strings.Join(args, " "), code, errs, tc.code, tc.want)
		}
	}
}
