package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"
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
	// compact stays compact when read: its dense matrices would take 250
	// times the memory.
	compact := &Model{
		Learner: "cpm", Sides: 2, K: 3, D: 1000, Bias: 1,
		Classes: []float32{1, -1},
		Rows:    []uint32{0, 5, 17, 999},
		Hash:    &Hashing{Bits: 9, Seed: 0xdeadbeef},
		Calibration: &Calibration{Method: "platt", A: []float64{-2}, B: []float64{math.Copysign(0, -1)},
			Rows: 1 << 40, LogLoss: 0.125},
	}
	for range 2 {
		w := filled(rng, 4, 3)
		for j := range 4 {
			w.Set(j, 0, float32(j+1)) // every row stored
		}
		compact.Weights = append(compact.Weights, w)
	}
	calibrated := &Model{
		Learner: "perceptron", Sides: 1, K: 3, D: 3,
		Classes:     []float32{1, 2, 3},
		Multiclass:  true,
		Weights:     []*sparsevec.Matrix{filled(rng, 3, 3)},
		Calibration: &Calibration{Method: "platt", A: []float64{-1, -2, -3}, B: []float64{0.5, 0, -0.5}, Rows: 7, LogLoss: 0.75},
	}
	return map[string]*Model{"binary": bin, "double": double, "ovo": ovo, "kperceptron": kp, "multiclass": multi, "scaled": scaled,
		"compact": compact, "calibrated": calibrated}
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
	if (a.Rows == nil) != (b.Rows == nil) || !equalSlices(a.Rows, b.Rows) {
		return fmt.Sprintf("stored rows %v vs %v", a.Rows, b.Rows)
	}
	if (a.Hash == nil) != (b.Hash == nil) || (a.Hash != nil && *a.Hash != *b.Hash) {
		return fmt.Sprintf("hashing %+v vs %+v", a.Hash, b.Hash)
	}
	if (a.Calibration == nil) != (b.Calibration == nil) {
		return "calibration presence differs"
	}
	if x, y := a.Calibration, b.Calibration; x != nil {
		same := func(a, b []float64) bool {
			return slices.EqualFunc(a, b, func(u, v float64) bool { return f64(u) == f64(v) })
		}
		if x.Method != y.Method || !same(x.A, y.A) || !same(x.B, y.B) || x.Rows != y.Rows || f64(x.LogLoss) != f64(y.LogLoss) {
			return fmt.Sprintf("calibration %+v vs %+v", x, y)
		}
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

// goldenModel is the model of TestGoldenBytes: D = 4 with feature row 2
// all zero, so version 2 stores rows 0, 1 and 3.
func goldenModel() *Model {
	w := sparsevec.NewMatrix(4, 2)
	w.Set(0, 1, 0.5)
	w.Set(1, 0, -2)
	w.Set(3, 1, 1)
	return &Model{
		Learner: "cpm", Sides: 1, K: 2, D: 4,
		Lambda: 0.25, Entropy: 1, CostRatio: 2, Bias: 3, Seed: 9, Iterations: 11,
		Classes: []float32{-1, 1},
		Params:  map[string]string{"z": "1", "a": "22"},
		Weights: []*sparsevec.Matrix{w},
		Counts:  [][]uint64{{5, 6}},
		Extra:   []Blob{{Name: "x", U32: []uint32{4}}},
	}
}

// goldenEncoder appends the fields of the layout in doc.go.
type goldenEncoder struct{ b []byte }

func (e *goldenEncoder) u32(v uint32)  { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *goldenEncoder) u64(v uint64)  { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *goldenEncoder) f32(v float32) { e.u32(math.Float32bits(v)) }
func (e *goldenEncoder) f64(v float64) { e.u64(math.Float64bits(v)) }
func (e *goldenEncoder) str(s string)  { e.u32(uint32(len(s))); e.b = append(e.b, s...) }

// head appends the fixed header, the learner, the classes and the params
// of goldenModel in the given version, with the given flags.
func (e *goldenEncoder) head(t *testing.T, version, flags uint32) {
	e.b = append(e.b, "CPMMODEL"...)
	e.u32(version)
	e.u32(flags)
	e.u32(1) // sides
	e.u32(2) // K
	e.u64(4) // D
	e.f64(0.25)
	e.f64(1)
	e.f64(2)
	e.f64(3)
	e.u64(9)  // seed
	e.u64(11) // iterations
	if len(e.b) != 80 {
		t.Fatalf("fixed header is %d bytes, doc says 80", len(e.b))
	}
	e.str("cpm")
	e.u32(2) // classes
	e.f32(-1)
	e.f32(1)
	e.u32(2) // params, sorted
	e.str("a")
	e.str("22")
	e.str("z")
	e.str("1")
}

// tail appends the counts and blobs of goldenModel.
func (e *goldenEncoder) tail() {
	e.u64(5) // counts
	e.u64(6)
	e.u32(1) // blobs
	e.str("x")
	e.u64(0) // f32
	e.u64(1) // u32
	e.u32(4)
	e.u64(0) // i64
}

func (e *goldenEncoder) crc() []byte {
	return binary.LittleEndian.AppendUint32(e.b, crc32.Checksum(e.b, crc32.MakeTable(crc32.Castagnoli)))
}

// TestGoldenBytes pins format version 2 against an independent encoder
// written from the layout in doc.go, field by field.
func TestGoldenBytes(t *testing.T) {
	m := goldenModel()
	m.Hash = &Hashing{Bits: 18, Seed: 7}
	m.Calibration = &Calibration{Method: "platt", A: []float64{-1.5}, B: []float64{0.25}, Rows: 100, LogLoss: 0.3}
	var e goldenEncoder
	e.head(t, 2, 0b110_0010) // flags: counts, hash, calibration
	e.u64(3)                 // stored rows
	e.u32(0)
	e.u32(1)
	e.u32(3)
	e.u32(1)  // matrices
	e.f32(0)  // feature 0 face 0
	e.f32(.5) // feature 0 face 1
	e.f32(-2) // feature 1 face 0
	e.f32(0)  // feature 1 face 1
	e.f32(0)  // feature 3 face 0
	e.f32(1)  // feature 3 face 1
	e.tail()
	e.u32(18) // hash bits
	e.u32(7)  // hash seed
	e.str("platt")
	e.u32(1)
	e.f64(-1.5)
	e.f64(0.25)
	e.u64(100)
	e.f64(0.3)
	want := e.crc()

	got := encodeT(t, m)
	if !bytes.Equal(got, want) {
		t.Fatalf("Write gives\n% x\nwant\n% x", got, want)
	}
	c := m.Compact()
	if !slices.Equal(c.Rows, []uint32{0, 1, 3}) {
		t.Fatalf("Compact rows %v, want [0 1 3]", c.Rows)
	}
	if b := encodeT(t, c); !bytes.Equal(b, want) {
		t.Fatalf("the compact model encodes differently from the dense one")
	}
	if d := diff(m, c.Dense()); d != "" {
		t.Fatalf("Dense(Compact(m)) differs from m: %s", d)
	}
}

// TestReadVersion1 reads version-1 bytes built field by field from the
// version-1 layout in doc.go (every feature row, no stored-row list), and
// checks that Write turns the model into the version-2 bytes of the same
// weights.
func TestReadVersion1(t *testing.T) {
	m := goldenModel()
	var e goldenEncoder
	e.head(t, 1, 0b10) // flags: counts
	e.u32(1)           // matrices
	for j := range 4 {
		e.f32(m.Weights[0].At(j, 0))
		e.f32(m.Weights[0].At(j, 1))
	}
	e.tail()
	v1 := e.crc()
	for how, read := range readers(v1) {
		got, err := read()
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if got.Rows != nil {
			t.Fatalf("%s: a version-1 model reads compact", how)
		}
		if d := diff(m, got); d != "" {
			t.Fatalf("%s: %s", how, d)
		}
		if !bytes.Equal(encodeT(t, got), encodeT(t, m)) {
			t.Fatalf("%s: a version-1 model re-encodes differently", how)
		}
	}
	// Version 1 knows neither hashing nor calibration.
	for _, flag := range []uint32{flagHash, flagCalib} {
		b := bytes.Clone(v1)
		binary.LittleEndian.PutUint32(b[12:], 0b10|flag)
		_, err := Read(bytes.NewReader(fixCRC(b)), "test.cpm")
		checkFormatError(t, err, ErrCorrupt)
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
		// binary is 4×3: Rows of length 4 keep the matrix shape.
		{"rows empty", func(m *Model) { m.Rows = []uint32{} }, "0 stored feature rows"},
		{"rows over D", func(m *Model) { m.Rows = []uint32{0, 1, 2, 3, 4} }, "5 stored feature rows"},
		{"rows without 0", func(m *Model) { m.Rows = []uint32{1, 2, 3, 4} }, "start at 1"},
		{"rows unsorted", func(m *Model) { m.D = 10; m.Rows = []uint32{0, 3, 2, 5} }, "not strictly ascending at 2: 3 then 2"},
		{"rows beyond D", func(m *Model) { m.Rows = []uint32{0, 1, 2, 4} }, "row 4 is not below D = 4"},
		{"rows and shape", func(m *Model) { m.D = 10; m.Rows = []uint32{0, 5} }, "is 4×3, want 2×3"},
		{"hash 0 bits", func(m *Model) { m.Hash = &Hashing{} }, "0 bits"},
		{"hash 32 bits", func(m *Model) { m.Hash = &Hashing{Bits: 32} }, "32 bits"},
		{"calibration method", func(m *Model) { m.Calibration = &Calibration{Method: "isotonic", A: []float64{1}, B: []float64{1}} }, `method "isotonic"`},
		{"calibration length", func(m *Model) { m.Calibration = &Calibration{Method: "platt", A: []float64{1, 2}, B: []float64{1, 2}} }, "want 1 of each"},
		{"calibration ovo length", func(m *Model) {
			m.Calibration = &Calibration{Method: "platt", A: []float64{1}, B: []float64{1}}
			m.OvO, m.Classes, m.Weights = true, []float32{1, 2}, m.Weights[:1]
		}, "want 2 of each"},
		{"calibration NaN", func(m *Model) {
			m.Calibration = &Calibration{Method: "platt", A: []float64{1}, B: []float64{math.NaN()}}
		}, "want finite"},
		{"calibration rows", func(m *Model) {
			m.Calibration = &Calibration{Method: "platt", A: []float64{1}, B: []float64{1}, Rows: -1}
		}, "-1 rows"},
		{"calibration log-loss", func(m *Model) {
			m.Calibration = &Calibration{Method: "platt", A: []float64{1}, B: []float64{1}, LogLoss: math.Inf(1)}
		}, "log-loss +Inf"},
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
