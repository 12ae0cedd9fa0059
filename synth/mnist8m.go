package synth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// Shape of MNIST and of MNIST8m.
const (
	// MNISTSide is the width and height of an MNIST image.
	MNISTSide = 28
	// MNISTPixels is the number of pixels, and of features, of an image.
	MNISTPixels = MNISTSide * MNISTSide
	// MNIST8mRows is the size of MNIST8m: the 60,000 training images each
	// followed by 134 deformations of it, 60,000 × 135 rows.
	MNIST8mRows = 8_100_000
)

// The MNIST training files LoadMNIST looks for (as unpacked by
// scripts/get-mnist.sh); a ".gz" suffix is also accepted.
const (
	MNISTTrainImages = "train-images-idx3-ubyte"
	MNISTTrainLabels = "train-labels-idx1-ubyte"
)

// ErrNoMNIST is returned, wrapped, by LoadMNIST when the directory does not
// hold the MNIST training files.
var ErrNoMNIST = errors.New("MNIST training files not found")

// Digits holds 28×28 grey-level images and their digits.
type Digits struct {
	// Pix holds the images one after the other, each row-major: pixel
	// (r, c) of image i is Pix[i*MNISTPixels + r*MNISTSide + c].
	Pix []uint8
	// Labels holds the digit 0..9 of each image.
	Labels []uint8
}

// Len returns the number of images.
func (d *Digits) Len() int { return len(d.Labels) }

// Image returns image i, which aliases d.Pix. It panics if i is out of range.
func (d *Digits) Image(i int) []uint8 {
	return d.Pix[i*MNISTPixels : (i+1)*MNISTPixels : (i+1)*MNISTPixels]
}

// DigitsFromCSR turns rows decoded by idx.Read from 28×28 images back
// into pixels: the value p/255 at index 1+r·28+c is pixel p at (r, c). Rows
// with an index above 784, a value that is not k/255 for an integer k in
// 0..255, or a label that is not a digit are errors.
func DigitsFromCSR(m *sparsevec.CSR) (*Digits, error) {
	n := m.Rows()
	d := &Digits{Pix: make([]uint8, n*MNISTPixels), Labels: make([]uint8, n)}
	for i := range n {
		y := m.Labels[i]
		if y < 0 || y > 9 || y != float32(int(y)) {
			return nil, fmt.Errorf("image %d: label %v is not a digit", i, y)
		}
		d.Labels[i] = uint8(y)
		img := d.Image(i)
		x := m.Row(i)
		for k, j := range x.Idx {
			if j < 1 || j > MNISTPixels {
				return nil, fmt.Errorf("image %d: feature %d: not a 28×28 image", i, j)
			}
			v := x.Val[k]
			p := math.Round(float64(v) * 255)
			if p < 0 || p > 255 || pixelValue[int(p)] != v {
				return nil, fmt.Errorf("image %d: feature %d: value %v is not a grey level k/255", i, j, v)
			}
			img[j-1] = uint8(p)
		}
	}
	return d, nil
}

// LoadMNIST reads the MNIST training set from dir, which must hold
// train-images-idx3-ubyte and train-labels-idx1-ubyte (or the same names
// with ".gz"), with reader.LoadIDX. The images must be 28×28. A missing file
// gives an error wrapping ErrNoMNIST and fs.ErrNotExist.
func LoadMNIST(dir string) (*Digits, error) {
	find := func(name string) (string, error) {
		for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, name+".gz")} {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
		}
		return "", fmt.Errorf("%w in %s (want %s and %s): %w", ErrNoMNIST, dir, MNISTTrainImages, MNISTTrainLabels, fs.ErrNotExist)
	}
	images, err := find(MNISTTrainImages)
	if err != nil {
		return nil, err
	}
	labels, err := find(MNISTTrainLabels)
	if err != nil {
		return nil, err
	}
	if err := checkIDXShape(images); err != nil {
		return nil, err
	}
	m, err := reader.LoadIDX(images, labels)
	if err != nil {
		return nil, err
	}
	d, err := DigitsFromCSR(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", images, err)
	}
	return d, nil
}

// checkIDXShape reads the header of an idx image file (compressed or not)
// and checks that its images are 28×28; reader.LoadIDX checks the rest.
func checkIDXShape(path string) error {
	f, err := reader.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var h [16]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return fmt.Errorf("%s: reading the idx header: %w", path, err)
	}
	if r, c := binary.BigEndian.Uint32(h[8:]), binary.BigEndian.Uint32(h[12:]); binary.BigEndian.Uint32(h[0:]) == 0x803 && (r != MNISTSide || c != MNISTSide) {
		return fmt.Errorf("%s: images are %d×%d, want %d×%d", path, r, c, MNISTSide, MNISTSide)
	}
	return nil // a bad magic number is reported by LoadIDX
}

// pixelValue[p] is the feature value of grey level p, float32(p)/255, as
// idx.Read and LIBSVM's mnist files write it.
var pixelValue = func() (t [256]float32) {
	for p := range t {
		t[p] = float32(p) / 255
	}
	return t
}()

// MNIST8mConfig sets the deformations of NewMNIST8m. The zero value gives the
// defaults, which keep every digit clearly recognisable (see
// TestMNIST8mRecognisable and MNIST8m).
type MNIST8mConfig struct {
	// Binary labels digit 2 with +1 and every other digit with -1 (the
	// CPM paper's MNIST8m-2 task); otherwise the label is the digit.
	Binary bool
	// Sigma is the width, in pixels, of the Gaussian that smooths the
	// displacement field. 0 means 4 (Simard et al. 2003).
	Sigma float64
	// Alpha scales the smoothed displacement field. 0 means 34 (Simard et
	// al. 2003 for 28×28 MNIST).
	Alpha float64
	// Rotate is the largest rotation in degrees; the angle is uniform in
	// [-Rotate, Rotate]. 0 means 10.
	Rotate float64
	// Scale is the largest relative change of size; the factor is uniform
	// in [1-Scale, 1+Scale]. 0 means 0.1.
	Scale float64
	// Shift is the largest translation in pixels along each axis; each is
	// uniform in [-Shift, Shift]. 0 means 1.5.
	Shift float64
	// Thickness is the largest weight of the thickness change; see MNIST8m.
	// 0 means 0.3.
	Thickness float64
}

// MNIST8m is an MNIST8m-like data set (Loosli, Canu and Bottou, "Training
// invariant support vector machines using selective sampling", in Large Scale
// Kernel Machines, MIT Press 2007; LIBSVM's mnist8m: 8,100,000 rows, 784
// features, 10 classes), made from the MNIST training images by random
// deformations as they made it with infimnist.
//
// Row i is made from image s = i mod N (N = 60,000 for MNIST) with
// deformation number t = i div N; deformation 0 is the image itself, so rows
// 0..N-1 are MNIST train as idx.Read reads it, and 8,100,000 rows are
// the original and 134 deformations of each image. Deformation t ≥ 1 is,
// in this order:
//
//  1. Thickness (grey-level morphology with the 3×3 cross B): with τ uniform
//     in [-Thickness, Thickness], I' = I + τ(I⊕B - I) if τ ≥ 0 (dilation,
//     the pixelwise maximum over the cross) and I' = I + |τ|(I⊖B - I)
//     otherwise (erosion, the minimum; outside the image is 0).
//  2. Elastic field (Simard, Steinkraus and Platt, "Best practices for
//     convolutional neural networks applied to visual document analysis",
//     ICDAR 2003): two fields u_x, u_y of independent uniform numbers in
//     [-1, 1], one per pixel, each convolved with the normalised Gaussian
//     of width Sigma truncated at ±3·Sigma (separably, along columns and
//     then rows, taking the field as 0 outside the image), and multiplied
//     by Alpha: d(p) = Alpha·(G_σ * u)(p).
//  3. Affine map about the centre c = (13.5, 13.5): rotation by θ uniform in
//     [-Rotate, Rotate] degrees, scaling by s uniform in [1-Scale, 1+Scale]
//     and translation by t uniform in [-Shift, Shift]², A(x) = s·R_θ(x-c) + c + t.
//  4. Resampling: output pixel p takes the bilinear interpolation of I' at
//     A⁻¹(p + d(p)) (0 outside the image), rounded to the nearest grey level
//     and clamped to 0..255.
//
// The parameters θ, s, t and τ are drawn first, then u_x and u_y pixel by
// pixel in row-major order. Rows are written like the real MNIST LIBSVM
// files: feature 1 + r·28 + c with value p/255, zero pixels omitted.
//
// The defaults are Simard et al.'s Sigma = 4 and Alpha = 34, which give a
// displacement with a standard deviation of about 1.4 pixels in the middle of
// the image, rotations up to 10°, scaling by up to 10%, shifts up to 1.5
// pixels and thickness weights up to 0.3. The digits stay clearly
// recognisable: on the first 1000 MNIST images a deformed image is on average
// at L2 distance 7.5 from its source and 9.9 from an image of another digit,
// the ink (sum of grey levels) is kept on average (ratio 1.00) and fewer than
// 0.5% of the deformations lose half of it (TestMNIST8mRecognisable). Since
// resampling and dilation spread the edges of the strokes, a deformed image
// has about 223 nonzero pixels against 150 for MNIST, so MNIST8m rows are
// about 1.5 times as long as MNIST's.
//
// Loosli et al. built the deformations from tangent vectors and a random
// smooth field (their exact recipe is in infimnist's source, not reproduced
// here); this generator follows the recipe above instead, so its rows are
// alike in kind, not the same.
//
// The random numbers of row i come from a PCG seeded by (seed, i) alone
// (seedPCG with the mnist8m tag), so rows can be made in any order and the
// output is byte-identical whatever the number of workers. Across
// architectures a pixel may differ by one grey level where the compiler
// fuses a multiply and an add.
type MNIST8m struct {
	digits *Digits
	seed   uint64
	binary bool

	alpha, rotate, scale, shift, thick float32
	kern                               []float32 // Gaussian taps, kern[k+radius] for k = -radius..radius
}

// NewMNIST8m returns the MNIST8m-like data set made from digits with the
// given seed. It returns an error if digits holds no image or its pixels and
// labels disagree, or a setting is negative or not finite.
func NewMNIST8m(digits *Digits, seed uint64, cfg MNIST8mConfig) (*MNIST8m, error) {
	if digits == nil || digits.Len() == 0 {
		return nil, errors.New("mnist8m: no source images")
	}
	if len(digits.Pix) != digits.Len()*MNISTPixels {
		return nil, fmt.Errorf("mnist8m: %d pixels for %d images", len(digits.Pix), digits.Len())
	}
	for i, y := range digits.Labels {
		if y > 9 {
			return nil, fmt.Errorf("mnist8m: image %d: label %d is not a digit", i, y)
		}
	}
	def := func(name string, v, d float64) (float64, error) {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("mnist8m: %s = %v: want a finite value >= 0", name, v)
		}
		if v == 0 {
			return d, nil
		}
		return v, nil
	}
	var err error
	var vals [6]float64
	for k, f := range []struct {
		name string
		v, d float64
	}{
		{"Sigma", cfg.Sigma, 4}, {"Alpha", cfg.Alpha, 34}, {"Rotate", cfg.Rotate, 10},
		{"Scale", cfg.Scale, 0.1}, {"Shift", cfg.Shift, 1.5}, {"Thickness", cfg.Thickness, 0.3},
	} {
		if vals[k], err = def(f.name, f.v, f.d); err != nil {
			return nil, err
		}
	}
	sigma := vals[0]
	if sigma > MNISTSide || vals[3] >= 1 || vals[1] > 1000 || vals[2] > 180 || vals[4] > MNISTSide || vals[5] > 1 {
		return nil, fmt.Errorf("mnist8m: deformation settings out of range: %+v", cfg)
	}
	return &MNIST8m{
		digits: digits, seed: seed, binary: cfg.Binary,
		alpha: float32(vals[1]), rotate: float32(vals[2] * math.Pi / 180), scale: float32(vals[3]),
		shift: float32(vals[4]), thick: float32(vals[5]),
		kern: gaussianKernel(sigma),
	}, nil
}

// gaussianKernel returns the taps exp(-k²/2σ²)/Z for k = -r..r with
// r = ceil(3σ) (at most 27, which covers a 28-pixel image), normalised to
// sum to 1.
func gaussianKernel(sigma float64) []float32 {
	r := min(int(math.Ceil(3*sigma)), MNISTSide-1)
	w := make([]float64, 2*r+1)
	var z float64
	for k := -r; k <= r; k++ {
		w[k+r] = math.Exp(-float64(k*k) / (2 * sigma * sigma))
		z += w[k+r]
	}
	out := make([]float32, len(w))
	for i := range w {
		out[i] = float32(w[i] / z)
	}
	return out
}

// Dim returns 784.
func (m *MNIST8m) Dim() int { return MNISTPixels }

// NewWorker returns a worker making rows of m.
func (m *MNIST8m) NewWorker() Worker {
	w := &mnistWorker{m: m}
	w.idx = make([]uint32, MNISTPixels)
	w.val = make([]float32, MNISTPixels)
	return w
}

// deformation holds the random parameters of one deformation.
type deformation struct {
	theta, scale, tx, ty float32 // affine map
	alpha                float32 // field scale; 0 means no elastic field
	thick                float32 // thickness change τ in [-1, 1]
}

// mnistWorker holds one goroutine's scratch space; nothing is allocated per
// row.
type mnistWorker struct {
	m   *MNIST8m
	src rand.PCG

	pad    [padPixels]uint8     // source with a border of zeros
	img    [padPixels]float32   // pad after the thickness change
	fx, fy [MNISTPixels]float32 // raw displacement fields, row-major
	tx, ty [MNISTPixels]float32 // scratch of smooth
	dx, dy [MNISTPixels]float32 // smoothed fields, column-major (see smooth)
	out    [MNISTPixels]uint8
	idx    []uint32
	val    []float32
}

// Row returns row i of the data set.
func (w *mnistWorker) Row(i int64) (float32, sparsevec.Vector) {
	if i < 0 {
		panic("synth: mnist8m: negative row")
	}
	m := w.m
	n := int64(m.digits.Len())
	s, t := int(i%n), i/n
	src := m.digits.Image(s)
	if t == 0 {
		w.out = [MNISTPixels]uint8(src)
	} else {
		seedPCG(&w.src, m.seed, tagMNIST8m, i)
		w.deform(&w.out, src, w.draw())
	}
	k := 0
	idx, val := w.idx[:MNISTPixels], w.val[:MNISTPixels]
	for j, p := range w.out {
		if p != 0 {
			idx[k] = uint32(j + 1)
			val[k] = pixelValue[p]
			k++
		}
	}
	d := m.digits.Labels[s]
	y := float32(d)
	if m.binary {
		y = -1
		if d == 2 {
			y = 1
		}
	}
	return y, sparsevec.Vector{Idx: idx[:k], Val: val[:k]}
}

// draw draws the parameters of a deformation, then the raw displacement
// fields (uniform in [-1, 1), into w.fx and w.fy).
func (w *mnistWorker) draw() deformation {
	m := w.m
	a, b := unit32(&w.src)
	c, d := unit32(&w.src)
	e, _ := unit32(&w.src)
	def := deformation{
		theta: a * m.rotate,
		scale: 1 + b*m.scale,
		tx:    c * m.shift,
		ty:    d * m.shift,
		alpha: m.alpha,
		thick: e * m.thick,
	}
	for p := range MNISTPixels {
		w.fx[p], w.fy[p] = unit32(&w.src)
	}
	return def
}

// deform writes to dst the image src deformed by def, with the raw
// displacement fields in w.fx, w.fy (which it smooths in place; they are
// ignored when def.alpha is 0).
func (w *mnistWorker) deform(dst *[MNISTPixels]uint8, src []uint8, def deformation) {
	src = src[:MNISTPixels]
	w.thicken(src, def.thick)
	if def.alpha != 0 {
		w.smooth()
	}
	// Inverse affine map: x = c + R_{-θ}(q - c - t)/s.
	sin, cos := math.Sincos(float64(def.theta))
	inv := 1 / def.scale
	a00, a01 := float32(cos)*inv, float32(sin)*inv // R_{-θ}/s = [[cos, sin], [-sin, cos]]/s
	a10, a11 := -float32(sin)*inv, float32(cos)*inv
	const c = (MNISTSide - 1) / 2.0
	for r := range MNISTSide {
		for col := range MNISTSide {
			p := r*MNISTSide + col
			qx, qy := float32(col)-c-def.tx, float32(r)-c-def.ty
			if def.alpha != 0 {
				t := col*MNISTSide + r // smooth leaves the fields transposed
				qx += def.alpha * w.dx[t]
				qy += def.alpha * w.dy[t]
			}
			x := c + a00*qx + a01*qy
			y := c + a10*qx + a11*qy
			dst[p] = w.bilinear(x, y)
		}
	}
}

// Images padded with a border of one zero pixel, so that neighbours and
// bilinear taps need no bounds tests: pixel (r, c) is at (r+1)·padSide + c+1.
const (
	padSide   = MNISTSide + 2
	padPixels = padSide * padSide
)

// thicken sets w.img to src changed in thickness by τ (see MNIST8m), using
// w.pad; the borders of both stay 0.
func (w *mnistWorker) thicken(src []uint8, tau float32) {
	src = src[:MNISTPixels]
	for r := range MNISTSide {
		copy(w.pad[(r+1)*padSide+1:(r+1)*padSide+1+MNISTSide], src[r*MNISTSide:])
	}
	pad, img := &w.pad, &w.img
	if tau == 0 {
		for q, v := range pad {
			img[q] = float32(v)
		}
		return
	}
	wt := max(tau, -tau)
	for r := 1; r <= MNISTSide; r++ {
		for q := r*padSide + 1; q <= r*padSide+MNISTSide; q++ {
			v := pad[q]
			var ext uint8
			if tau > 0 {
				ext = max(v, pad[q-padSide], pad[q+padSide], pad[q-1], pad[q+1])
			} else {
				ext = min(v, pad[q-padSide], pad[q+padSide], pad[q-1], pad[q+1])
			}
			img[q] = float32(v) + wt*(float32(ext)-float32(v))
		}
	}
}

// smooth convolves the raw fields in w.fx and w.fy with the Gaussian kernel,
// separably, taking the field as 0 outside the image, and leaves the result
// transposed in w.dx and w.dy: the displacement of pixel (r, c) is
// (w.dx[c·28+r], w.dy[c·28+r]). It first convolves along columns
// (t = G·u), transposes t, and convolves along columns again (G·tᵀ = (t·G)ᵀ,
// G being symmetric), so both passes are axpys over whole 28-pixel rows, and
// pairs the taps ±k of the symmetric kernel; w.fx and w.fy are overwritten.
func (w *mnistWorker) smooth() {
	convolveColumns(&w.tx, &w.ty, &w.fx, &w.fy, w.m.kern)
	for r := range MNISTSide {
		for c := range MNISTSide {
			w.fx[c*MNISTSide+r] = w.tx[r*MNISTSide+c]
			w.fy[c*MNISTSide+r] = w.ty[r*MNISTSide+c]
		}
	}
	convolveColumns(&w.dx, &w.dy, &w.fx, &w.fy, w.m.kern)
}

// convolveColumns sets dx and dy to sx and sy convolved along each column
// with kern (2R+1 taps, symmetric), taking pixels outside the image as 0:
// d[r][c] = Σ_k kern[R+k]·s[r+k][c] over 0 ≤ r+k < 28.
func convolveColumns(dx, dy, sx, sy *[MNISTPixels]float32, kern []float32) {
	rad := len(kern) / 2
	g0 := kern[rad]
	for r := range MNISTSide {
		o := r * MNISTSide
		ox, oy := dx[o:o+MNISTSide], dy[o:o+MNISTSide]
		ax, ay := sx[o:o+MNISTSide], sy[o:o+MNISTSide]
		ax, ay, oy = ax[:len(ox)], ay[:len(ox)], oy[:len(ox)]
		for c := range ox {
			ox[c] = g0 * ax[c]
			oy[c] = g0 * ay[c]
		}
		for k := 1; k <= rad; k++ {
			g := kern[rad+k]
			up, down := r-k, r+k
			switch {
			case up >= 0 && down < MNISTSide:
				ax, ay := sx[up*MNISTSide:up*MNISTSide+MNISTSide], sy[up*MNISTSide:up*MNISTSide+MNISTSide]
				bx, by := sx[down*MNISTSide:down*MNISTSide+MNISTSide], sy[down*MNISTSide:down*MNISTSide+MNISTSide]
				ax, ay, bx, by = ax[:len(ox)], ay[:len(ox)], bx[:len(ox)], by[:len(ox)]
				for c := range ox {
					ox[c] += g * (ax[c] + bx[c])
					oy[c] += g * (ay[c] + by[c])
				}
			case up >= 0 || down < MNISTSide:
				j := max(up, down)
				if up >= 0 {
					j = up
				}
				ax, ay := sx[j*MNISTSide:j*MNISTSide+MNISTSide], sy[j*MNISTSide:j*MNISTSide+MNISTSide]
				ax, ay = ax[:len(ox)], ay[:len(ox)]
				for c := range ox {
					ox[c] += g * ax[c]
					oy[c] += g * ay[c]
				}
			default:
				// Both taps outside: so are all further ones.
				k = rad
			}
		}
	}
}

// bilinear returns w.img interpolated bilinearly at column x, row y of the
// unpadded image (pixels outside it are 0), rounded to the nearest grey level
// in 0..255.
func (w *mnistWorker) bilinear(x, y float32) uint8 {
	if !(x > -1 && x < MNISTSide && y > -1 && y < MNISTSide) { // also NaN
		return 0
	}
	x, y = x+1, y+1 // padded coordinates, in (0, 29)
	x0, y0 := int(x), int(y)
	fx, fy := x-float32(x0), y-float32(y0)
	q := y0*padSide + x0
	img := &w.img
	a, b, c, d := img[q], img[q+1], img[q+padSide], img[q+padSide+1]
	top := a + fx*(b-a)
	bot := c + fx*(d-c)
	v := top + fy*(bot-top)
	switch {
	case v <= 0:
		return 0
	case v >= 255:
		return 255
	}
	return uint8(v + 0.5)
}
