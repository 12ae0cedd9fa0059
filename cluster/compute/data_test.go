package compute_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/polyhedral/cpm/cluster/compute"
	"github.com/polyhedral/cpm/sparsevec"
)

// sameRows reports the first difference between two CSRs: labels, row
// pointers, indices and values bit for bit, and Dim.
func sameRows(t *testing.T, got, want *sparsevec.CSR) {
	t.Helper()
	if got.Rows() != want.Rows() || got.NNZ() != want.NNZ() || got.Dim != want.Dim {
		t.Fatalf("%d rows, %d nonzeros, Dim %d; want %d, %d, %d", got.Rows(), got.NNZ(), got.Dim, want.Rows(), want.NNZ(), want.Dim)
	}
	for r := range want.Rows() {
		if math.Float32bits(got.Labels[r]) != math.Float32bits(want.Labels[r]) {
			t.Fatalf("row %d: label %v, want %v", r, got.Labels[r], want.Labels[r])
		}
	}
	if want.Rows() == 0 {
		return // no rows: Ptr is nil or [0]
	}
	if len(got.Ptr) != len(want.Ptr) {
		t.Fatalf("%d row pointers, want %d", len(got.Ptr), len(want.Ptr))
	}
	for i := range want.Ptr {
		if got.Ptr[i] != want.Ptr[i] {
			t.Fatalf("Ptr[%d] = %d, want %d", i, got.Ptr[i], want.Ptr[i])
		}
	}
	for k := range want.Idx {
		if got.Idx[k] != want.Idx[k] || math.Float32bits(got.Val[k]) != math.Float32bits(want.Val[k]) {
			t.Fatalf("nonzero %d: %d:%v (bits %#x), want %d:%v (bits %#x)", k,
				got.Idx[k], got.Val[k], math.Float32bits(got.Val[k]), want.Idx[k], want.Val[k], math.Float32bits(want.Val[k]))
		}
	}
}

// synthetic returns n seeded rows over features 1..dim-1 with labels of
// several classes, values of a small set (dictionary-coded blocks) in
// some rows and arbitrary floats in others, and rows without nonzeros at
// the first row, at both sides of the block boundaries and at the end.
func synthetic(n, dim int, seed uint64) *sparsevec.CSR {
	rng := rand.New(rand.NewPCG(seed, 99))
	labels := []float32{-1, 1, 2.5, -7, 1e6}
	levels := []float32{0.25, 0.5, 1, 1.5, -3}
	empty := map[int]bool{0: true, 4095: true, 4096: true, 8191: true, 8192: true, n - 1: true}
	data := &sparsevec.CSR{}
	var x sparsevec.Vector
	for r := range n {
		x.Idx, x.Val = x.Idx[:0], x.Val[:0]
		if !empty[r] {
			dense := r/4096%2 == 1 // whole blocks of few distinct values
			for j := 1 + rng.IntN(5); j < dim; j += 1 + rng.IntN(40) {
				v := float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(12)-6)))
				if dense {
					v = levels[rng.IntN(len(levels))]
				}
				if rng.IntN(500) == 0 {
					v = math.Float32frombits(1 + rng.Uint32N(1<<23-1)) // subnormal
				}
				x.Idx = append(x.Idx, uint32(j))
				x.Val = append(x.Val, v)
			}
		}
		data.Append(labels[rng.IntN(len(labels))], x)
	}
	return data
}

func TestDataRoundTrip(t *testing.T) {
	cases := map[string]func(t *testing.T) *sparsevec.CSR{
		"iris":        func(t *testing.T) *sparsevec.CSR { return load(t, "iris.libsvm") },  // 3 classes
		"vowel":       func(t *testing.T) *sparsevec.CSR { return load(t, "vowel.libsvm") }, // 11 classes
		"heart_scale": func(t *testing.T) *sparsevec.CSR { return load(t, "heart_scale.libsvm") },
		"pima":        func(t *testing.T) *sparsevec.CSR { return load(t, "pima.libsvm") },
		"synthetic":   func(*testing.T) *sparsevec.CSR { return synthetic(3*4096+123, 1000, 1) },
	}
	for name, get := range cases {
		t.Run(name, func(t *testing.T) {
			want := get(t)
			if name == "synthetic" {
				if want.Rows() <= 3*4096 || want.Ptr[4097] != want.Ptr[4096] {
					t.Fatal("the synthetic rows do not span several blocks with an empty row")
				}
			}
			path, _ := writeData(t, want)
			got, err := compute.ReadData(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			sameRows(t, got, want)
		})
	}
}

// Rows with no nonzero at all round-trip, and so does data without rows.
func TestDataRoundTripEmptyRows(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4097} {
		want := &sparsevec.CSR{}
		for r := range n {
			want.Append(float32(r%2*2-1), sparsevec.Vector{})
		}
		path, _ := writeData(t, want)
		got, err := compute.ReadData(path, 0)
		if err != nil {
			t.Fatalf("%d empty rows: %v", n, err)
		}
		sameRows(t, got, want)
	}
}

// The same rows give the same bytes, whatever the CSR holding them looks
// like (capacity, Dim beyond the rows, a permuted copy put back in order),
// so that a data set's digest names its rows.
func TestDataDeterministic(t *testing.T) {
	for _, data := range []*sparsevec.CSR{load(t, "vowel.libsvm"), synthetic(2*4096+5, 300, 2)} {
		_, d1 := writeData(t, data)
		p2, d2 := writeData(t, data)
		if d1 != d2 {
			t.Fatalf("the same rows written twice: digests %s and %s", d1, d2)
		}
		perm := make([]int32, data.Rows())
		for i := range perm {
			perm[i] = int32(i)
		}
		copied := data.Permute(perm)
		copied.Dim += 17
		copied.Labels = append(make([]float32, 0, 2*len(copied.Labels)), copied.Labels...)
		p3, d3 := writeData(t, copied)
		if d3 != d1 {
			t.Fatalf("a copy of the rows: digest %s, want %s", d3, d1)
		}
		b2, _ := os.ReadFile(p2)
		b3, _ := os.ReadFile(p3)
		if !bytes.Equal(b2, b3) {
			t.Fatal("equal digests, different bytes")
		}
		// One value changed by one ulp changes the digest.
		copied.Val[len(copied.Val)/2] = math.Nextafter32(copied.Val[len(copied.Val)/2], float32(math.Inf(1)))
		if _, d4 := writeData(t, copied); d4 == d1 {
			t.Fatal("changed rows kept the digest")
		}
	}
}

// ReadData gives the data the feature count it is asked for; the file
// alone gives one more than the largest index of its rows.
func TestReadDataDim(t *testing.T) {
	data := load(t, "heart_scale.libsvm") // features 1..13
	path, _ := writeData(t, data)
	for _, tc := range []struct {
		dim, want int
		ok        bool
	}{{0, 14, true}, {14, 14, true}, {40, 40, true}, {13, 0, false}, {1, 0, false}} {
		got, err := compute.ReadData(path, tc.dim)
		switch {
		case tc.ok && err != nil:
			t.Errorf("dim %d: %v", tc.dim, err)
		case tc.ok && got.Dim != tc.want:
			t.Errorf("dim %d: Dim %d, want %d", tc.dim, got.Dim, tc.want)
		case !tc.ok && err == nil:
			t.Errorf("dim %d: rows with feature 13 were accepted", tc.dim)
		}
	}
}

// A damaged or truncated file is an error, never a panic or other rows:
// every block and the header and trailer carry a CRC.
func TestReadDataDamaged(t *testing.T) {
	data := synthetic(4096+300, 200, 3)
	path, _ := writeData(t, data)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	try := func(what string, b []byte) {
		t.Helper()
		if err := os.WriteFile(bad, b, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := compute.ReadData(bad, 0)
		if err == nil {
			t.Errorf("%s: read %d rows without an error", what, got.Rows())
		}
	}
	step := max(len(orig)/300, 1)
	for off := 0; off < len(orig); off += step {
		b := bytes.Clone(orig)
		b[off] ^= 0x5a
		try("byte "+strconv.Itoa(off)+" flipped", b)
	}
	// (An empty file is not a damaged cache but no file at all: reader.Load
	// reads it as LIBSVM text of zero rows, which no task trains on.)
	for _, n := range []int{1, 8, 40, len(orig) / 2, len(orig) - 1} {
		try("truncated to "+strconv.Itoa(n)+" bytes", orig[:n])
	}
	try("trailing garbage", append(bytes.Clone(orig), "junk"...))
	if _, err := compute.ReadData(filepath.Join(dir, "missing"), 0); err == nil {
		t.Error("a missing file was read")
	}
}
