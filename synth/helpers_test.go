package synth

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/polyhedral/cpm/reader/libsvm"
)

// glyphs are polylines, in pixel coordinates (x = column, y = row) of a
// 28×28 image, that draw the ten digits roughly as handwritten; an ellipse is
// a closed polyline. They stand in for MNIST in tests (CI has no MNIST files).
var glyphs = [10][][][2]float64{
	{ellipse(14, 14, 5, 8)},
	{{{14, 5}, {14, 23}}},
	{{{9, 9}, {12, 6}, {16, 6}, {19, 9}, {9, 22}, {20, 22}}},
	{{{9, 6}, {19, 6}, {14, 13}, {19, 17}, {17, 22}, {9, 22}}},
	{{{17, 23}, {17, 5}, {8, 17}, {21, 17}}},
	{{{19, 5}, {9, 5}, {9, 13}, {17, 13}, {19, 18}, {16, 22}, {8, 22}}},
	{{{18, 5}, {10, 13}, {9, 19}, {13, 23}, {18, 20}, {17, 15}, {10, 15}}},
	{{{8, 5}, {20, 5}, {12, 23}}},
	{ellipse(14, 9.5, 4, 4), ellipse(14, 18, 5, 5)},
	{ellipse(14, 10, 4.5, 4.5), {{18.5, 10}, {17, 23}}},
}

func ellipse(cx, cy, rx, ry float64) [][2]float64 {
	var p [][2]float64
	for k := 0; k <= 24; k++ {
		a := 2 * math.Pi * float64(k) / 24
		p = append(p, [2]float64{cx + rx*math.Cos(a), cy + ry*math.Sin(a)})
	}
	return p
}

// testDigits draws n images, image i of digit i mod 10, each glyph moved by up
// to one pixel and with its points jittered by up to half a pixel, as grey
// levels 255·clamp(1.7 - d, 0, 1) of the distance d to the strokes.
func testDigits(n int, seed uint64) *Digits {
	rng := rand.New(rand.NewPCG(seed, 7))
	d := &Digits{Pix: make([]uint8, n*MNISTPixels), Labels: make([]uint8, n)}
	for i := range n {
		digit := i % 10
		d.Labels[i] = uint8(digit)
		dx, dy := 2*rng.Float64()-1, 2*rng.Float64()-1
		var strokes [][][2]float64
		for _, s := range glyphs[digit] {
			var t [][2]float64
			for _, p := range s {
				t = append(t, [2]float64{p[0] + dx + rng.Float64() - 0.5, p[1] + dy + rng.Float64() - 0.5})
			}
			strokes = append(strokes, t)
		}
		img := d.Image(i)
		for r := range MNISTSide {
			for c := range MNISTSide {
				dist := math.Inf(1)
				for _, s := range strokes {
					for k := 1; k < len(s); k++ {
						dist = min(dist, segmentDistance(float64(c), float64(r), s[k-1], s[k]))
					}
				}
				img[r*MNISTSide+c] = uint8(math.Round(255 * min(max(1.7-dist, 0), 1)))
			}
		}
	}
	return d
}

func segmentDistance(x, y float64, a, b [2]float64) float64 {
	vx, vy := b[0]-a[0], b[1]-a[1]
	t := ((x-a[0])*vx + (y-a[1])*vy) / (vx*vx + vy*vy)
	t = min(max(t, 0), 1)
	return math.Hypot(x-a[0]-t*vx, y-a[1]-t*vy)
}

// idxFiles returns the idx image and label files of d, with images of
// side×side pixels (side != 28 only to test rejection; the pixels are then
// cut or padded).
func idxFiles(d *Digits, side int) (images, labels []byte) {
	var im, lb bytes.Buffer
	n := uint32(d.Len())
	binary.Write(&im, binary.BigEndian, [4]uint32{0x803, n, uint32(side), uint32(side)})
	for i := range d.Len() {
		img := d.Image(i)
		for r := range side {
			for c := range side {
				var p uint8
				if r < MNISTSide && c < MNISTSide {
					p = img[r*MNISTSide+c]
				}
				im.WriteByte(p)
			}
		}
	}
	binary.Write(&lb, binary.BigEndian, [2]uint32{0x801, n})
	lb.Write(d.Labels)
	return im.Bytes(), lb.Bytes()
}

// writeMNISTDir writes d as dir/train-images-idx3-ubyte and
// dir/train-labels-idx1-ubyte and returns dir.
func writeMNISTDir(t testing.TB, d *Digits, side int) string {
	t.Helper()
	dir := t.TempDir()
	im, lb := idxFiles(d, side)
	if err := os.WriteFile(filepath.Join(dir, MNISTTrainImages), im, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, MNISTTrainLabels), lb, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// textOf formats rows lo..hi-1 of src one at a time with a libsvm.Writer:
// the reference for WriteStream.
func textOf(t testing.TB, src Source, lo, hi int64) []byte {
	t.Helper()
	var b bytes.Buffer
	w := libsvm.NewWriter(&b)
	rows := src.NewWorker()
	for i := lo; i < hi; i++ {
		y, x := rows.Row(i)
		if err := w.Write(y, x); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
