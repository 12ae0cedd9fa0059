package kperceptron

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/learner/learnertest"
	"github.com/polyhedral/cpm/sparsevec"
)

// kernRandVec returns a sparse vector over indices 1..d with about a
// fraction density of nonzeros, values uniform in [-scale, scale).
func kernRandVec(rng *rand.Rand, d int, density, scale float64) sparsevec.Vector {
	var v sparsevec.Vector
	for j := 1; j <= d; j++ {
		if rng.Float64() < density {
			v.Idx = append(v.Idx, uint32(j))
			v.Val = append(v.Val, float32((2*rng.Float64()-1)*scale))
		}
	}
	return v
}

// kernDense returns v as a dense float64 array of length d+1.
func kernDense(v sparsevec.Vector, d int) []float64 {
	x := make([]float64, d+1)
	for i, j := range v.Idx {
		x[j] = float64(v.Val[i])
	}
	return x
}

// kernDenseEval is the reference: the kernel formula on dense float64
// arrays, with ‖x−y‖² summed directly and math.Pow.
func kernDenseEval(k Kernel, x, y []float64) float64 {
	var dot, d2 float64
	for j := range x {
		dot += x[j] * y[j]
		d2 += (x[j] - y[j]) * (x[j] - y[j])
	}
	switch k.Kind {
	case PolyKernel:
		p := k.Degree
		if p == 0 {
			p = 2
		}
		return math.Pow(dot+k.Coef0, float64(p))
	case RBFKernel:
		s := k.Sigma
		if s == 0 {
			s = 1
		}
		return math.Exp(-d2 / (2 * s * s))
	}
	return dot
}

func TestKernelEvalMatchesDense(t *testing.T) {
	kernels := []Kernel{
		{Kind: LinearKernel},
		{Kind: PolyKernel}, // degree defaults to 2
		{Kind: PolyKernel, Degree: 3},
		{Kind: PolyKernel, Degree: 2, Coef0: 1},
		{Kind: PolyKernel, Degree: 5, Coef0: -0.5},
		{Kind: PolyKernel, Degree: 16, Coef0: 0.25},
		{Kind: PolyKernel, Degree: 1, Coef0: 2},
		{Kind: RBFKernel}, // sigma defaults to 1
		{Kind: RBFKernel, Sigma: 0.2},
		{Kind: RBFKernel, Sigma: 3},
	}
	const d = 40
	for _, k := range kernels {
		t.Run(fmt.Sprintf("%v/p=%d/c=%g/s=%g", k.Kind, k.Degree, k.Coef0, k.Sigma), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(k.Kind)*1000+uint64(k.Degree)))
			for trial := range 300 {
				density := []float64{0, 0.05, 0.3, 1}[trial%4]
				x := kernRandVec(rng, d, density, 1)
				y := kernRandVec(rng, d, 0.3, 1)
				if trial%7 == 0 {
					y = x // identical rows: ‖x−y‖² must be exactly 0
				}
				got := k.Eval(x, y, x.SqNorm(), y.SqNorm())
				want := kernDenseEval(k, kernDense(x, d), kernDense(y, d))
				if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
					t.Fatalf("trial %d: Eval = %.17g, dense reference %.17g\nx=%v\ny=%v", trial, got, want, x, y)
				}
				if k.Kind == RBFKernel && trial%7 == 0 && got != 1 {
					t.Fatalf("trial %d: k(x, x) = %.17g, want exactly 1", trial, got)
				}
				// Symmetry.
				if back := k.Eval(y, x, y.SqNorm(), x.SqNorm()); back != got {
					t.Fatalf("trial %d: k(x,y) = %.17g but k(y,x) = %.17g", trial, got, back)
				}
			}
		})
	}
}

func TestKernelEvalRBFClampsRounding(t *testing.T) {
	// Norms passed slightly too small make xx+yy−2x·y negative: the
	// distance must clamp at 0, so the kernel never exceeds 1.
	x := sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{0.1, 0.7}}
	xx := x.SqNorm() * (1 - 1e-15)
	if got := (Kernel{Kind: RBFKernel, Sigma: 0.01}).Eval(x, x, xx, xx); got != 1 {
		t.Fatalf("k(x, x) with rounded norms = %.17g, want 1", got)
	}
}

func TestKernelEvalDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := kernRandVec(rng, 100, 0.5, 1), kernRandVec(rng, 100, 0.5, 1)
	for _, k := range []Kernel{{Kind: LinearKernel}, {Kind: PolyKernel, Degree: 3, Coef0: 1}, {Kind: RBFKernel, Sigma: 0.5}} {
		if a := testing.AllocsPerRun(100, func() { k.Eval(x, y, 1, 2) }); a != 0 {
			t.Errorf("%v: %v allocations per Eval", k.Kind, a)
		}
	}
}

func TestKernelPowi(t *testing.T) {
	for _, b := range []float64{0, 1, -1, 0.5, -1.5, 3, 1e-3} {
		for n := range 20 {
			want := math.Pow(b, float64(n))
			if got := kernelPowi(b, n); math.Abs(got-want) > 1e-14*math.Max(1, math.Abs(want)) {
				t.Errorf("kernelPowi(%v, %d) = %v, want %v", b, n, got, want)
			}
		}
	}
}

func TestKernelKindStringParse(t *testing.T) {
	for _, k := range []KernelKind{LinearKernel, PolyKernel, RBFKernel} {
		got, err := ParseKernelKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseKernelKind(%q) = %v, %v; want %v", k.String(), got, err, k)
		}
	}
	if s := KernelKind(7).String(); s != "KernelKind(7)" {
		t.Errorf("KernelKind(7).String() = %q", s)
	}
	for _, s := range []string{"", "RBF", "gaussian", "poly ", "KernelKind(1)"} {
		_, err := ParseKernelKind(s)
		if err == nil {
			t.Errorf("ParseKernelKind(%q) succeeded", s)
		} else if !strings.Contains(err.Error(), "linear, poly or rbf") {
			t.Errorf("ParseKernelKind(%q) error %q does not list the valid names", s, err)
		}
	}
}

func TestKernelParamsChecked(t *testing.T) {
	for _, tc := range []struct {
		k  Kernel
		ok bool
	}{
		{Kernel{}, true},
		{Kernel{Kind: PolyKernel, Degree: 3, Coef0: -1}, true},
		{Kernel{Kind: RBFKernel, Sigma: 0.2}, true},
		{Kernel{Kind: PolyKernel, Degree: -1}, false},
		{Kernel{Kind: PolyKernel, Coef0: math.NaN()}, false},
		{Kernel{Kind: PolyKernel, Coef0: math.Inf(1)}, false},
		{Kernel{Kind: RBFKernel, Sigma: -1}, false},
		{Kernel{Kind: RBFKernel, Sigma: math.NaN()}, false},
		{Kernel{Kind: RBFKernel, Sigma: math.Inf(1)}, false},
		{Kernel{Kind: RBFKernel, Sigma: 1e-300}, false}, // 1/(2σ²) overflows
		{Kernel{Kind: KernelKind(3)}, false},
		{Kernel{Kind: KernelKind(-1)}, false},
	} {
		r, err := tc.k.withDefaults()
		if (err == nil) != tc.ok {
			t.Errorf("%+v: err = %v, want ok = %v", tc.k, err, tc.ok)
		}
		if err == nil && (r.Degree < 1 || !(r.Sigma > 0)) {
			t.Errorf("%+v: defaults not resolved: %+v", tc.k, r)
		}
	}
}

// BenchmarkKernelEval measures one kernel evaluation between two
// MNIST-shaped rows (~150 nonzeros each, overlapping supports), cycling
// over 2048 rows so that the branch predictor cannot learn the merges.
func BenchmarkKernelEval(b *testing.B) {
	const rows = 2048
	data := learnertest.MNISTLike(rows)
	sq := make([]float64, data.Rows())
	for r := range sq {
		sq[r] = data.Row(r).SqNorm()
	}
	for _, k := range []Kernel{
		{Kind: LinearKernel},
		{Kind: PolyKernel, Degree: 3, Coef0: 1},
		{Kind: RBFKernel, Sigma: 2},
	} {
		b.Run(k.Kind.String(), func(b *testing.B) {
			b.ReportAllocs()
			var s float64
			i := 0
			for b.Loop() {
				r, q := i%rows, (i*7+1)%rows
				s += k.Eval(data.Row(r), data.Row(q), sq[r], sq[q])
				i++
			}
			if math.IsNaN(s) {
				b.Fatal("NaN")
			}
		})
	}
}

// SigmaFromData: σ = sqrt(d·Var/2) over all n·d entries, zeros included,
// recorded in the model; an explicit Sigma wins.
func TestSigmaFromData(t *testing.T) {
	data := &sparsevec.CSR{Dim: 3}
	data.Append(1, sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{2, 2}})
	data.Append(-1, sparsevec.Vector{})
	// Entries 2, 2, 0, 0: mean 1, variance 1; d = 2: σ = 1.
	if got := sigmaFromData(data); got != 1 {
		t.Fatalf("sigmaFromData = %v, want 1", got)
	}
	data.Val[0], data.Val[1] = 6, 6 // mean 3, variance 9: σ = 3
	p, _, err := Train(context.Background(), Config{Kernel: Kernel{Kind: RBFKernel}, SigmaFromData: true}, data)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kernel.Sigma != 3 {
		t.Errorf("trained with σ = %v, want 3", p.Kernel.Sigma)
	}
	p, _, err = Train(context.Background(), Config{Kernel: Kernel{Kind: RBFKernel, Sigma: 0.5}, SigmaFromData: true}, data)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kernel.Sigma != 0.5 {
		t.Errorf("explicit σ 0.5 became %v", p.Kernel.Sigma)
	}
}
