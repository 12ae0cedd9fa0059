package kperceptron

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/polyhedral/cpm/internal/cputime"
	"github.com/polyhedral/cpm/learner/learnertest"
	"github.com/polyhedral/cpm/sparsevec"
)

// refKernelRow is the kernel row as one scalar evaluation per pair: the
// sparse·sparse merge sparsevec.Dot and math.Exp through kernelFn.eval,
// the computation the trainer's kernelRow must reproduce bit for bit.
func refKernelRow(t *kernelTrainer, q int) []float64 {
	row := make([]float64, t.n)
	for r := range row {
		row[r] = t.kf.eval(t.data.Row(r), t.data.Row(q), t.sq[r], t.sq[q])
	}
	return row
}

// refDecisions is Predictor.decisions as one scalar evaluation per support
// row, in support-row order.
func refDecisions(kp *Predictor, x sparsevec.Vector) []float64 {
	var xx float64
	if kp.kf.kind == RBFKernel {
		xx = x.SqNorm()
	}
	f := make([]float64, kp.nc)
	for s, ss := range kp.sq {
		k := kp.kf.eval(kp.p.SV.Row(s), x, ss, xx)
		for i, v := range kp.p.Alpha[s*kp.nc : (s+1)*kp.nc] {
			f[i] += float64(v) * k
		}
	}
	for i, b := range kp.p.Beta {
		f[i] += float64(b)
	}
	return f
}

func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// dotsData returns n random rows with features below d, each present with
// probability density, values of the given scale, some of them exact
// zeros of either sign, and labels from nc classes (at least 2 present).
func dotsData(rng *rand.Rand, n, d int, density, scale float64, nc int) *sparsevec.CSR {
	m := &sparsevec.CSR{Ptr: []int{0}}
	for r := range n {
		var x sparsevec.Vector
		for j := 1; j < d; j++ {
			if rng.Float64() >= density {
				continue
			}
			v := float32(rng.NormFloat64() * scale)
			switch rng.IntN(10) {
			case 0:
				v = 0
			case 1:
				v = float32(math.Copysign(0, -1))
			}
			x.Idx = append(x.Idx, uint32(j))
			x.Val = append(x.Val, v)
		}
		m.Append(float32(r%nc), x)
	}
	return m
}

// dotsKernels are the kernels the differential tests run; the RBF widths
// put the exponent arguments both inside the vector path of kvec.Exp and
// below it (kernel values in the denormal range and exact zeros).
func dotsKernels() []Kernel {
	return []Kernel{
		{Kind: LinearKernel},
		{Kind: PolyKernel, Degree: 3, Coef0: 1},
		{Kind: PolyKernel, Degree: 2, Coef0: -0.5},
		{Kind: RBFKernel, Sigma: 1},
		{Kind: RBFKernel, Sigma: 0.05},
		{Kind: RBFKernel, Sigma: 20},
	}
}

// checkRowsAgainstScalar computes kernel rows for the rows in qs with a cache of
// cacheRows rows, as training does (so that cached rows serve the
// symmetric entries), and compares each with refKernelRow bit for bit.
func checkRowsAgainstScalar(t *testing.T, k Kernel, data *sparsevec.CSR, cacheRows int, qs []int) {
	t.Helper()
	cfg, err := Config{Kernel: k}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := newKernelTrainer(cfg, data, cacheRows, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		want := refKernelRow(tr, q)
		got := tr.kernelRow(q)
		if tr.err != nil {
			return // a kernel value overflowed: training stops there
		}
		for r := range want {
			if !sameBits(got[r], want[r]) {
				t.Fatalf("%+v, cache %d: k(x_%d, x_%d) = %v (%#x), scalar merge %v (%#x)", k, cacheRows, r, q, got[r], math.Float64bits(got[r]), want[r], math.Float64bits(want[r]))
			}
		}
	}
}

func TestKernelRowMatchesScalarEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	for _, k := range dotsKernels() {
		for _, cacheRows := range []int{1, 3, 1000} {
			data := dotsData(rng, 60, 40, rng.Float64(), 1, 2)
			qs := make([]int, 200)
			for i := range qs {
				qs[i] = rng.IntN(data.Rows())
			}
			checkRowsAgainstScalar(t, k, data, cacheRows, qs)
		}
	}
}

// A wide, sparse matrix gets no column-major copy; the merge then gives
// the same values.
func TestKernelRowWideMatrix(t *testing.T) {
	var data sparsevec.CSR
	data.Append(1, sparsevec.Vector{Idx: []uint32{3, 1 << 30}, Val: []float32{1, 2}})
	data.Append(-1, sparsevec.Vector{Idx: []uint32{3, 5}, Val: []float32{-1, 0.5}})
	data.Append(1, sparsevec.Vector{Idx: []uint32{1 << 30}, Val: []float32{0.25}})
	if d := newRowDots(&data, nil); d.colPtr != nil {
		t.Fatalf("column-major copy with %d columns for 5 nonzeros", len(d.colPtr)-1)
	}
	for _, k := range dotsKernels() {
		checkRowsAgainstScalar(t, k, &data, 2, []int{0, 1, 2, 0, 2, 1})
	}
}

func FuzzKernelRow(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(10), uint8(3), 0.5, 1.0)
	f.Add(uint64(2), uint8(5), uint8(30), uint8(1), 0.1, 100.0)
	f.Add(uint64(3), uint8(3), uint8(7), uint8(200), 0.9, 1e-3)
	f.Fuzz(func(t *testing.T, seed uint64, kind, n, cacheRows uint8, density, scale float64) {
		if !(density >= 0 && density <= 1) || !(scale > 0 && scale < 1e18) {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		ks := dotsKernels()
		k := ks[int(kind)%len(ks)]
		data := dotsData(rng, int(n)%64+2, rng.IntN(50)+2, density, scale, 2)
		qs := make([]int, 3*data.Rows())
		for i := range qs {
			qs[i] = rng.IntN(data.Rows())
		}
		checkRowsAgainstScalar(t, k, data, int(cacheRows)%8+1, qs)
	})
}

// Predictions equal the scalar sum over the support rows bit for bit,
// for rows of any values (NaN and ±Inf included: only the indices
// shared with a support row count) and indices beyond the support rows'.
func TestDecisionsMatchScalarEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(83, 84))
	for _, k := range dotsKernels() {
		for _, nc := range []int{2, 4} {
			// Dense enough for dense columns (some support rows lack a
			// feature all the same) and sparse columns.
			data := dotsData(rng, 80, 30, 0.5, 1, nc)
			for r := range 40 {
				x := data.Row(r)
				for i := range x.Idx {
					x.Idx[i] = uint32(i + 1) // rows 0-39: the first features
				}
			}
			p, _, err := trainForTest(k, data)
			if err != nil {
				t.Fatal(err)
			}
			kp := p.NewPredictor()
			probes := dotsData(rng, 50, 40, 0.6, 1, 2)
			for r := range probes.Rows() {
				x := probes.Row(r)
				if r%3 == 0 && x.Len() > 0 {
					x.Val[rng.IntN(x.Len())] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e30}[r/3%4]
				}
				want := refDecisions(kp, x)
				got := kp.decisions(x)
				for i := range want {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("%+v, %d classes, probe %d: f_%d = %v, scalar %v", k, nc, r, i, got[i], want[i])
					}
				}
			}
		}
	}
}

func trainForTest(k Kernel, data *sparsevec.CSR) (*Perceptron, *Report, error) {
	return Train(context.Background(), Config{Kernel: k, Epochs: 5, Seed: 3}, data)
}

// The kernel-row computation (inner products and kernel values) allocates
// nothing.
func TestKernelRowDoesNotAllocate(t *testing.T) {
	data := learnertest.MNISTLike(300)
	for _, k := range dotsKernels() {
		cfg, _ := Config{Kernel: k}.withDefaults()
		tr, err := newKernelTrainer(cfg, data, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		for q := range 8 { // fill the cache
			tr.kernelRow(q)
		}
		i := 0
		if a := testing.AllocsPerRun(50, func() { tr.kernelRow(i % 300); i += 7 }); a != 0 {
			t.Errorf("%+v: %v allocations per kernel row", k, a)
		}
	}
}

// BenchmarkKernelRow computes kernel rows with a one-row cache, so that
// every call computes a whole row: of 2048 MNIST-shaped rows (~150
// nonzeros each, "mnist") and of breast-cancer scaled to [0, 1] (683
// rows, 9 features, "breast"). ns/eval is the time per kernel evaluation.
func BenchmarkKernelRow(b *testing.B) {
	for _, set := range []struct {
		name string
		data *sparsevec.CSR
	}{
		{"mnist", learnertest.MNISTLike(2048)},
		{"breast", kpLoadScaled(b, "breast-cancer.libsvm")},
	} {
		for _, k := range []Kernel{
			{Kind: LinearKernel},
			{Kind: PolyKernel, Degree: 3, Coef0: 1},
			{Kind: RBFKernel, Sigma: 2},
		} {
			b.Run(set.name+"/"+k.Kind.String(), func(b *testing.B) {
				cfg, _ := Config{Kernel: k}.withDefaults()
				n := set.data.Rows()
				tr, err := newKernelTrainer(cfg, set.data, 1, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := cputime.Thread()
				q := 0
				for b.Loop() {
					tr.kernelRow(q)
					q = (q + 7) % n
				}
				evals := float64(b.N) * float64(n)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/evals, "ns/eval")
				// The thread's CPU time: on a shared machine it varies less
				// than the wall time.
				b.ReportMetric(float64(cputime.Thread()-cpu0)/evals, "cpu-ns/eval")
			})
		}
	}
}

// rowDots equals sparsevec.Dot row by row bit for bit, for matrices with
// dense and sparse columns and for rows y of any values (a non-finite y_j
// must meet only the rows that have feature j).
func TestRowDotsMatchesMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(85, 86))
	for range 200 {
		m := dotsData(rng, 1+rng.IntN(40), 2+rng.IntN(30), rng.Float64(), 1, 2)
		d := newRowDots(m, nil)
		dst := make([]float64, m.Rows())
		for range 20 {
			y := dotsData(rng, 1, 40, rng.Float64(), 1, 2).Row(0)
			if y.Len() > 0 && rng.IntN(3) == 0 {
				y.Val[rng.IntN(y.Len())] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[rng.IntN(3)]
			}
			d.dots(dst, y)
			for r := range dst {
				if want := sparsevec.Dot(m.Row(r), y); !sameBits(dst[r], want) {
					t.Fatalf("row %d: %v, merge %v\nx %v\ny %v", r, dst[r], want, m.Row(r), y)
				}
			}
		}
	}
}

func TestAllFinite(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		want bool
	}{
		{nil, true},
		{[]float64{1, 2, 3}, true},
		{[]float64{1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308}, false}, // overflow: a false alarm the scan settles
		{[]float64{1, 2, 3, 4, 5, math.NaN()}, false},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, math.Inf(-1)}, false},
		{[]float64{math.Inf(1), 0, 0, 0, math.Inf(-1)}, false},
	} {
		if got := allFinite(tc.x); got != tc.want {
			t.Errorf("allFinite(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}
