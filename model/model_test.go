package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// filled returns a d×k matrix with seeded random weights, some exact zeros
// and one -0.
func filled(rng *rand.Rand, d, k int) *sparsevec.Matrix {
	w := sparsevec.NewMatrix(d, k)
	for j := range d {
		for f := range k {
			if rng.IntN(3) == 0 {
				continue
			}
			w.Set(j, f, float32(rng.NormFloat64()))
		}
	}
	w.Set(d-1, k-1, float32(math.Copysign(0, -1)))
	return w
}

// testModels returns small valid models covering every section: binary
// one- and two-sided, counts, params, one-vs-one, blobs.
func testModels() map[string]*Model {
	rng := rand.New(rand.NewPCG(1, 2))
	bin := &Model{
		Learner: "cpm", Sides: 1, K: 3, D: 4,
		Lambda: 1e-4, Entropy: 0.5, CostRatio: 1, Bias: 1, Seed: 42, Iterations: 1000,
		Classes: []float32{-1, 1},
		Params:  map[string]string{"epochs": "3"},
		Weights: []*sparsevec.Matrix{filled(rng, 4, 3)},
	}
	double := &Model{
		Learner: "cpm", Sides: 2, K: 9, D: 5,
		Lambda: 1e-5, Entropy: math.Log(9), CostRatio: 2.5, Bias: 0.5, Seed: 7, Iterations: 1 << 40,
		Classes: []float32{0, 1},
		Weights: []*sparsevec.Matrix{filled(rng, 5, 9), filled(rng, 5, 9)},
		Counts:  [][]uint64{{1, 2, 3, 4, 5, 6, 7, 8, math.MaxUint64}, make([]uint64, 9)},
	}
	ovo := &Model{
		Learner: "cpm", Sides: 2, K: 2, D: 3,
		Lambda:  math.Float64frombits(0x7ff8_0000_dead_beef), // NaN with a payload
		Entropy: math.Copysign(0, -1), CostRatio: math.Inf(1), Bias: -1, Seed: math.MaxUint64,
		Classes: []float32{-3, 0.5, 2, 7},
		OvO:     true,
		Params:  map[string]string{"b": "", "a": "x y\nz", "multi.class": "ovo"},
		Extra: []Blob{
			{Name: "f", F32: []float32{math.Float32frombits(0x7fc0_1234), float32(math.Copysign(0, -1)), 1}},
			{Name: "empty"},
			{Name: "all", F32: []float32{2}, U32: []uint32{1, math.MaxUint32}, I64: []int64{-1, math.MinInt64}},
		},
	}
	for range ovo.Matrices() {
		ovo.Weights = append(ovo.Weights, filled(rng, 3, 2))
	}
	kp := &Model{
		Learner: "kperceptron", Sides: 1, K: 1, D: 1,
		Classes: []float32{1, -1},
		Weights: []*sparsevec.Matrix{sparsevec.NewMatrix(1, 1)},
		Extra: []Blob{
			{Name: "alpha", F32: []float32{0.5, -0.25}},
			{Name: "sv", I64: []int64{0, 2, 3}, U32: []uint32{1, 7, 3}, F32: []float32{1, 2, 3}},
		},
	}
	multi := &Model{
		Learner: "perceptron", Sides: 1, K: 3, D: 4,
		Classes:    []float32{1, 2, 3},
		Multiclass: true,
		Weights:    []*sparsevec.Matrix{filled(rng, 4, 3)},
	}
	scaled := &Model{
		Learner: "plume", Sides: 1, K: 2, D: 6, Bias: 1,
		Classes: []float32{1, -1},
		Weights: []*sparsevec.Matrix{filled(rng, 6, 2)},
		Scale:   &Scaling{Mode: "standard", Index: []uint32{1, 3, 5}, Shift: []float64{-2.5, 0, 1e300}, Div: []float64{1, 0.125, math.SmallestNonzeroFloat64}},
	}
	return map[string]*Model{"binary": bin, "double": double, "ovo": ovo, "kperceptron": kp, "multiclass": multi, "scaled": scaled}
}

// diff returns "" if a and b are equal bit for bit (floats by their bits,
// nil and empty slices and maps alike, matrix padding ignored), or the first
// difference.
func diff(a, b *Model) string {
	f64 := math.Float64bits
	if a.Learner != b.Learner || a.Sides != b.Sides || a.K != b.K || a.D != b.D ||
		f64(a.Lambda) != f64(b.Lambda) || f64(a.Entropy) != f64(b.Entropy) ||
		f64(a.CostRatio) != f64(b.CostRatio) || f64(a.Bias) != f64(b.Bias) ||
		a.Seed != b.Seed || a.Iterations != b.Iterations || a.OvO != b.OvO || a.Multiclass != b.Multiclass {
		return fmt.Sprintf("scalar fields differ:\n%+v\n%+v", *a, *b)
	}
	if d := diffF32("classes", a.Classes, b.Classes); d != "" {
		return d
	}
	if len(a.Params) != len(b.Params) {
		return fmt.Sprintf("params %v vs %v", a.Params, b.Params)
	}
	for k, v := range a.Params {
		if w, ok := b.Params[k]; !ok || v != w {
			return fmt.Sprintf("param %q: %q vs %q", k, v, w)
		}
	}
	if len(a.Weights) != len(b.Weights) {
		return fmt.Sprintf("%d vs %d matrices", len(a.Weights), len(b.Weights))
	}
	for i := range a.Weights {
		wa, wb := a.Weights[i], b.Weights[i]
		if wa.D != wb.D || wa.K != wb.K || wa.Stride != wb.Stride || len(wa.Data) != len(wb.Data) {
			return fmt.Sprintf("matrix %d shapes differ", i)
		}
		for j := range wa.D {
			if d := diffF32(fmt.Sprintf("matrix %d row %d", i, j), wa.Data[j*wa.Stride:j*wa.Stride+wa.K], wb.Data[j*wb.Stride:j*wb.Stride+wb.K]); d != "" {
				return d
			}
		}
	}
	if (a.Counts == nil) != (b.Counts == nil) || len(a.Counts) != len(b.Counts) {
		return "counts presence differs"
	}
	for i := range a.Counts {
		if !equalSlices(a.Counts[i], b.Counts[i]) {
			return fmt.Sprintf("counts %d: %v vs %v", i, a.Counts[i], b.Counts[i])
		}
	}
	if len(a.Extra) != len(b.Extra) {
		return fmt.Sprintf("%d vs %d blobs", len(a.Extra), len(b.Extra))
	}
	for i, x := range a.Extra {
		y := b.Extra[i]
		if x.Name != y.Name || !equalSlices(x.U32, y.U32) || !equalSlices(x.I64, y.I64) {
			return fmt.Sprintf("blob %d: %+v vs %+v", i, x, y)
		}
		if d := diffF32("blob "+x.Name, x.F32, y.F32); d != "" {
			return d
		}
	}
	if (a.Scale == nil) != (b.Scale == nil) {
		return "scaling presence differs"
	}
	if x, y := a.Scale, b.Scale; x != nil && (x.Mode != y.Mode || !equalSlices(x.Index, y.Index) || !equalSlices(x.Shift, y.Shift) || !equalSlices(x.Div, y.Div)) {
		return fmt.Sprintf("scaling %+v vs %+v", x, y)
	}
	return ""
}

func diffF32(what string, a, b []float32) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%s: length %d vs %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return fmt.Sprintf("%s[%d]: %#x vs %#x", what, i, math.Float32bits(a[i]), math.Float32bits(b[i]))
		}
	}
	return ""
}

func equalSlices[T comparable](a, b []T) bool {
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

func encodeT(t testing.TB, m *Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

// streamOnly hides the Len method of a reader, so Read cannot know the
// input length and must take the incremental path.
type streamOnly struct{ r *bytes.Reader }

func (s streamOnly) Read(p []byte) (int, error) { return s.r.Read(p) }

// readers returns the two ways Read can see b: with a known length and as a
// stream of unknown length.
func readers(b []byte) map[string]func() (*Model, error) {
	return map[string]func() (*Model, error){
		"known":  func() (*Model, error) { return Read(bytes.NewReader(b), "test.cpm") },
		"stream": func() (*Model, error) { return Read(streamOnly{bytes.NewReader(b)}, "test.cpm") },
	}
}

func TestRoundTrip(t *testing.T) {
	for name, m := range testModels() {
		t.Run(name, func(t *testing.T) {
			b := encodeT(t, m)
			for how, read := range readers(b) {
				got, err := read()
				if err != nil {
					t.Fatalf("%s: Read: %v", how, err)
				}
				if d := diff(m, got); d != "" {
					t.Fatalf("%s: read back differs: %s", how, d)
				}
				if b2 := encodeT(t, got); !bytes.Equal(b, b2) {
					t.Fatalf("%s: re-encoding differs", how)
				}
			}
		})
	}
}

// TestRoundTripLarge crosses the chunk boundaries of the incremental reader:
// rows longer than a chunk (K > chunkSize/4) and many chunks per matrix.
func TestRoundTripLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, shape := range []struct{ d, k int }{{3, chunkSize/4 + 5}, {5000, 7}, {chunkSize / 4, 1}} {
		m := &Model{Learner: "cpm", Sides: 1, K: shape.k, D: shape.d, Classes: []float32{-1, 1},
			Weights: []*sparsevec.Matrix{filled(rng, shape.d, shape.k)},
			Counts:  [][]uint64{make([]uint64, shape.k)},
			Extra:   []Blob{{Name: "big", F32: make([]float32, chunkSize), I64: make([]int64, chunkSize/3)}},
		}
		t.Run(fmt.Sprintf("%dx%d", shape.d, shape.k), func(t *testing.T) {
			b := encodeT(t, m)
			for how, read := range readers(b) {
				got, err := read()
				if err != nil {
					t.Fatalf("%s: Read: %v", how, err)
				}
				if d := diff(m, got); d != "" {
					t.Fatalf("%s: read back differs: %s", how, d)
				}
				if w := got.Weights[0]; cap(w.Data) != w.D*w.Stride {
					t.Errorf("%s: matrix capacity %d, want exactly %d", how, cap(w.Data), w.D*w.Stride)
				}
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	// The same params inserted in two different orders into maps of many
	// keys, so map iteration order would show if it leaked.
	keys := make([]string, 300)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%03d", (i*7919)%300)
	}
	build := func(order []string) *Model {
		m := testModels()["double"]
		m.Params = make(map[string]string)
		for _, k := range order {
			m.Params[k] = "v" + k
		}
		return m
	}
	rev := make([]string, len(keys))
	for i, k := range keys {
		rev[len(keys)-1-i] = k
	}
	want := encodeT(t, build(keys))
	for i := range 20 {
		order := keys
		if i%2 == 1 {
			order = rev
		}
		if got := encodeT(t, build(order)); !bytes.Equal(got, want) {
			t.Fatalf("write %d differs from the first", i)
		}
	}
}

// TestPreservesBits checks -0 and NaN payloads survive, and that -0
// padding (as left by Matrix.Scale(-1)) is accepted.
func TestPreservesBits(t *testing.T) {
	m := testModels()["ovo"]
	m.Weights[0].Scale(-1)
	got, err := Read(bytes.NewReader(encodeT(t, m)), "bits")
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(m, got); d != "" {
		t.Fatal(d)
	}
	if math.Float64bits(got.Lambda) != 0x7ff8_0000_dead_beef || math.Float64bits(got.Entropy) != 1<<63 {
		t.Errorf("header float bits changed: %#x %#x", math.Float64bits(got.Lambda), math.Float64bits(got.Entropy))
	}
	if math.Float32bits(got.Extra[0].F32[0]) != 0x7fc0_1234 || math.Float32bits(got.Extra[0].F32[1]) != 1<<31 {
		t.Errorf("blob float bits changed")
	}
}

// TestGoldenBytes pins the format against an independent encoder written
// from the layout in doc.go, field by field.
func TestGoldenBytes(t *testing.T) {
	w := sparsevec.NewMatrix(2, 2)
	w.Set(0, 1, 0.5)
	w.Set(1, 0, -2)
	m := &Model{
		Learner: "cpm", Sides: 1, K: 2, D: 2,
		Lambda: 0.25, Entropy: 1, CostRatio: 2, Bias: 3, Seed: 9, Iterations: 11,
		Classes: []float32{-1, 1},
		Params:  map[string]string{"z": "1", "a": "22"},
		Weights: []*sparsevec.Matrix{w},
		Counts:  [][]uint64{{5, 6}},
		Extra:   []Blob{{Name: "x", U32: []uint32{4}}},
	}
	le := binary.LittleEndian
	var b []byte
	str := func(s string) { b = append(le.AppendUint32(b, uint32(len(s))), s...) }
	f32 := func(v float32) { b = le.AppendUint32(b, math.Float32bits(v)) }
	f64 := func(v float64) { b = le.AppendUint64(b, math.Float64bits(v)) }
	b = append(b, "CPMMODEL"...)
	b = le.AppendUint32(b, 1)    // version
	b = le.AppendUint32(b, 0b10) // flags: counts, not OvO
	b = le.AppendUint32(b, 1)    // sides
	b = le.AppendUint32(b, 2)    // K
	b = le.AppendUint64(b, 2)    // D
	f64(0.25)                    // lambda
	f64(1)                       // entropy
	f64(2)                       // cost ratio
	f64(3)                       // bias
	b = le.AppendUint64(b, 9)    // seed
	b = le.AppendUint64(b, 11)   // iterations
	if len(b) != 80 {
		t.Fatalf("fixed header is %d bytes, doc says 80", len(b))
	}
	str("cpm")
	b = le.AppendUint32(b, 2) // classes
	f32(-1)
	f32(1)
	b = le.AppendUint32(b, 2) // params, sorted
	str("a")
	str("22")
	str("z")
	str("1")
	b = le.AppendUint32(b, 1) // matrices
	f32(0)                    // feature 0 face 0
	f32(0.5)                  // feature 0 face 1
	f32(-2)                   // feature 1 face 0
	f32(0)                    // feature 1 face 1
	b = le.AppendUint64(b, 5) // counts
	b = le.AppendUint64(b, 6)
	b = le.AppendUint32(b, 1) // blobs
	str("x")
	b = le.AppendUint64(b, 0) // f32
	b = le.AppendUint64(b, 1) // u32
	b = le.AppendUint32(b, 4)
	b = le.AppendUint64(b, 0) // i64
	b = le.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))

	if got := encodeT(t, m); !bytes.Equal(got, b) {
		t.Fatalf("Write gives\n% x\nwant\n% x", got, b)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(m *Model)
		want   string // substring of the error
	}{
		{"empty learner", func(m *Model) { m.Learner = "" }, "learner name"},
		{"long learner", func(m *Model) { m.Learner = strings.Repeat("a", 65) }, "learner name"},
		{"learner with space", func(m *Model) { m.Learner = "c pm" }, "learner name"},
		{"sides 3", func(m *Model) { m.Sides = 3 }, "sides = 3"},
		{"K 0", func(m *Model) { m.K = 0 }, "K = 0"},
		{"D 0", func(m *Model) { m.D = 0 }, "D = 0"},
		{"negative iterations", func(m *Model) { m.Iterations = -1 }, "iterations"},
		{"one class", func(m *Model) { m.Classes = m.Classes[:1] }, "want 2"},
		{"same classes", func(m *Model) { m.Classes = []float32{1, 1} }, "outer label == inner"},
		{"NaN class", func(m *Model) { m.Classes[0] = float32(math.NaN()) }, "class label 0"},
		{"ovo unsorted", func(m *Model) { m.OvO = true; m.Classes = []float32{1, -1} }, "ascending"},
		{"ovo wrong count", func(m *Model) { m.OvO = true; m.Classes = []float32{1, 2, 3} }, "want 3"},
		{"multiclass unsorted", func(m *Model) { m.Multiclass = true; m.Classes = []float32{2, 1, 3} }, "ascending"},
		{"multiclass one label", func(m *Model) { m.Multiclass = true; m.Classes = []float32{2} }, "1 class labels"},
		{"ovo and multiclass", func(m *Model) { m.OvO, m.Multiclass = true, true; m.Classes = []float32{1, 2} }, "both"},
		{"bad param key", func(m *Model) { m.Params["a:b"] = "" }, "param key"},
		{"bad param value", func(m *Model) { m.Params["a"] = "\xff" }, "UTF-8"},
		{"missing matrix", func(m *Model) { m.Weights = nil }, "0 weight matrices, want 1"},
		{"nil matrix", func(m *Model) { m.Weights[0] = nil }, "is nil"},
		{"wrong shape", func(m *Model) { m.Weights[0] = sparsevec.NewMatrix(4, 2) }, "is 4×2, want 4×3"},
		{"short data", func(m *Model) { m.Weights[0].Data = m.Weights[0].Data[:8] }, "stride"},
		{"NaN weight", func(m *Model) { m.Weights[0].Set(1, 2, float32(math.NaN())) }, "feature 1 face 2 is NaN"},
		{"Inf weight", func(m *Model) { m.Weights[0].Set(0, 0, float32(math.Inf(-1))) }, "is -Inf"},
		{"padding", func(m *Model) { m.Weights[0].Data[5] = 1 }, "padding"},
		{"counts length", func(m *Model) { m.Counts = [][]uint64{} }, "counts for 0"},
		{"counts K", func(m *Model) { m.Counts = [][]uint64{{1}} }, "length 1, want K = 3"},
		{"blob name", func(m *Model) { m.Extra = []Blob{{Name: ""}} }, "blob 0 name"},
		{"duplicate blob", func(m *Model) { m.Extra = []Blob{{Name: "a"}, {Name: "a"}} }, "duplicate blob"},
		{"scaling mode", func(m *Model) { m.Scale = &Scaling{Mode: ""} }, "scaling mode"},
		{"scaling lengths", func(m *Model) { m.Scale = &Scaling{Mode: "maxabs", Index: []uint32{1}} }, "one length"},
		{"scaling order", func(m *Model) {
			m.Scale = &Scaling{Mode: "maxabs", Index: []uint32{2, 2}, Shift: []float64{0, 0}, Div: []float64{1, 1}}
		}, "ascending"},
		{"scaling divisor", func(m *Model) {
			m.Scale = &Scaling{Mode: "maxabs", Index: []uint32{2}, Shift: []float64{0}, Div: []float64{0}}
		}, "divisor 0"},
		{"scaling NaN shift", func(m *Model) {
			m.Scale = &Scaling{Mode: "maxabs", Index: []uint32{2}, Shift: []float64{math.NaN()}, Div: []float64{1}}
		}, "shift NaN"},
	}
	if err := testModels()["binary"].Validate(); err != nil {
		t.Fatalf("valid model: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModels()["binary"]
			tt.modify(m)
			err := m.Validate()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want ErrInvalid containing %q", err, tt.want)
			}
			if werr := Write(&bytes.Buffer{}, m); !errors.Is(werr, ErrInvalid) {
				t.Errorf("Write = %v, want ErrInvalid", werr)
			}
			if eerr := m.ExportText(&bytes.Buffer{}); !errors.Is(eerr, ErrInvalid) {
				t.Errorf("ExportText = %v, want ErrInvalid", eerr)
			}
		})
	}
	var nilModel *Model
	if err := nilModel.Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil model: Validate = %v", err)
	}
}
