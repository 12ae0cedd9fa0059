package synth

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestGenerated(t *testing.T) {
	var names []string
	for _, in := range Generated() {
		names = append(names, in.Name)
		if !strings.HasPrefix(in.Doc, "generated ") || strings.Contains(in.Doc, "\n") {
			t.Errorf("%s: doc %q is not one line starting with generated", in.Name, in.Doc)
		}
		if in.Dim <= 0 || in.TrainRows <= 0 || in.Rows(Train) != in.TrainRows || in.Rows(Test) != in.TestRows || in.Rows(7) != 0 {
			t.Errorf("%s: %+v", in.Name, in)
		}
		got, err := LookupGenerated(in.Name)
		if err != nil || got != in {
			t.Errorf("LookupGenerated(%q) = %+v, %v", in.Name, got, err)
		}
	}
	if want := []string{"mnist8m", "mnist8m-2", "url", "rcv1"}; !slices.Equal(names, want) {
		t.Errorf("Generated names %v, want %v", names, want)
	}
	g := Generated()
	g[0].Name = "changed"
	if Generated()[0].Name != "mnist8m" {
		t.Error("Generated returns the package's slice")
	}
	for _, d := range datasets() {
		if !strings.HasPrefix(d.Doc, "generated ") {
			t.Errorf("%s: doc %q does not say generated", d.Name, d.Doc)
		}
	}
	if _, err := LookupGenerated("mnist"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "mnist8m-2, url, rcv1") {
		t.Errorf("LookupGenerated(mnist): %v", err)
	}
}

func TestNewSource(t *testing.T) {
	d := testDigits(10, 1)
	for _, tc := range []struct {
		name   string
		split  Split
		digits *Digits
		dim    int
		err    error
	}{
		{"mnist8m", Train, d, 784, nil},
		{"mnist8m-2", Train, d, 784, nil},
		{"url", Train, nil, URLDim, nil},
		{"url", Test, nil, URLDim, nil},
		{"rcv1", Test, nil, RCV1Dim, nil},
		{"mnist8m", Test, d, 0, ErrNoSplit},
		{"url", Split(5), nil, 0, ErrNoSplit},
		{"polyceptron-d1", Train, nil, 0, ErrUnknown},
		{"mnist8m", Train, nil, 0, nil},
	} {
		src, err := NewSource(tc.name, 1, tc.split, tc.digits)
		switch {
		case tc.dim > 0 && (err != nil || src.Dim() != tc.dim):
			t.Errorf("NewSource(%s, %v): %v", tc.name, tc.split, err)
		case tc.dim == 0 && err == nil:
			t.Errorf("NewSource(%s, %v, %v): no error", tc.name, tc.split, tc.digits != nil)
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("NewSource(%s, %v): %v, want %v", tc.name, tc.split, err, tc.err)
		}
	}
	// mnist8m-2 labels are ±1, mnist8m's the digits.
	for name, want := range map[string]float32{"mnist8m": 2, "mnist8m-2": 1} {
		src, _ := NewSource(name, 1, Train, d)
		if y, _ := src.NewWorker().Row(12); y != want {
			t.Errorf("%s: label of a 2 is %v, want %v", name, y, want)
		}
	}
}

func TestSplitString(t *testing.T) {
	if Train.String() != "train" || Test.String() != "test" || Split(3).String() != "Split(3)" {
		t.Error(Train, Test, Split(3))
	}
}

// seedPCG gives unrelated streams for neighbouring rows and seeds.
func TestSeedPCG(t *testing.T) {
	seen := map[uint64]bool{}
	var src rand.PCG
	for seed := range uint64(4) {
		for _, tag := range []uint64{tagMNIST8m, tagURLTrain, tagURLTest, tagRCV1Train} {
			for i := range int64(50) {
				seedPCG(&src, seed, tag, i)
				v := src.Uint64()
				if seen[v] {
					t.Fatalf("seed %d tag %x row %d repeats a first output", seed, tag, i)
				}
				seen[v] = true
			}
		}
	}
}
