package kperceptron

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/learner/learnertest"
	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// kpLoadScaled loads a UCI test set and min-max scales every feature to
// [0, 1] over all rows (absent features count as 0), as the paper does
// (section IV.B).
func kpLoadScaled(t testing.TB, name string) *sparsevec.CSR {
	t.Helper()
	raw, err := reader.Load("../testdata/uci/" + name)
	if err != nil {
		t.Fatal(err)
	}
	d := raw.Dim
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range d {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	dense := make([]float64, d)
	for r := range raw.Rows() {
		clear(dense)
		x := raw.Row(r)
		for i, j := range x.Idx {
			dense[j] = float64(x.Val[i])
		}
		for j, v := range dense {
			lo[j], hi[j] = min(lo[j], v), max(hi[j], v)
		}
	}
	var out sparsevec.CSR
	for r := range raw.Rows() {
		clear(dense)
		x := raw.Row(r)
		for i, j := range x.Idx {
			dense[j] = float64(x.Val[i])
		}
		var v sparsevec.Vector
		for j := 1; j < d; j++ {
			if hi[j] > lo[j] {
				if s := (dense[j] - lo[j]) / (hi[j] - lo[j]); s != 0 {
					v.Idx = append(v.Idx, uint32(j))
					v.Val = append(v.Val, float32(s))
				}
			}
		}
		out.Append(raw.Labels[r], v)
	}
	return &out
}

// kpErrors returns the number of rows of data p mispredicts.
func kpErrors(p *Perceptron, data *sparsevec.CSR) int {
	kp := p.NewPredictor()
	errs := 0
	for r := range data.Rows() {
		if y, _, _ := kp.Predict(data.Row(r)); y != data.Labels[r] {
			errs++
		}
	}
	return errs
}

// kpGauss returns n rows of two Gaussian classes (labels neg and pos) in
// d dimensions whose means are sep apart, with about a fifth of the
// coordinates zeroed so the rows are sparse.
func kpGauss(rng *rand.Rand, n, d int, sep float64, neg, pos float32) *sparsevec.CSR {
	pts := make([][]float64, n)
	labels := make([]float32, n)
	for r := range n {
		y := rng.IntN(2)
		labels[r] = []float32{neg, pos}[y]
		p := make([]float64, d)
		for j := range p {
			if rng.IntN(5) == 0 {
				continue
			}
			p[j] = rng.NormFloat64() + sep*(float64(y)-0.5)*float64(j%3-1)
		}
		pts[r] = p
	}
	return learnertest.DenseCSR(pts, labels)
}

// kpPrimal is the reference: the primal perceptron of eq. 3 on dense
// float64 weights, visiting rows in the order Train does
// (the same shuffle on the same PCG). It returns w, b, the mistakes per
// epoch and the set of rows that were ever mistakes.
type kpPrimal struct {
	w        []float64
	b        float64
	mistakes []int
	ever     map[int]bool
}

func kpTrainPrimal(data *sparsevec.CSR, seed uint64, epochs int) *kpPrimal {
	labels := data.DistinctLabels()
	pos := labels[len(labels)-1]
	p := &kpPrimal{w: make([]float64, data.Dim+1), ever: map[int]bool{}}
	order := linear.NewEpochOrder(data.Rows(), seed, kernelStream)
	for range epochs {
		perm := order.Next()
		m := 0
		for _, q := range perm {
			x := data.Row(int(q))
			y := -1.0
			if data.Labels[q] == pos {
				y = 1
			}
			if y*p.f(x) <= 0 {
				for i, j := range x.Idx {
					p.w[j] += y * float64(x.Val[i])
				}
				p.b += y
				p.ever[int(q)] = true
				m++
			}
		}
		p.mistakes = append(p.mistakes, m)
		if m == 0 {
			break
		}
	}
	return p
}

func (p *kpPrimal) f(x sparsevec.Vector) float64 {
	s := p.b
	for i, j := range x.Idx {
		if int(j) < len(p.w) {
			s += p.w[j] * float64(x.Val[i])
		}
	}
	return s
}

// kpEasyData is two well separated clusters (first feature in ±[2, 3])
// plus three hard rows near the gap (+1 at 0.1 and 0.2, −1 at −0.1), still
// linearly separable. After the first update, at a row x_q of either
// cluster, every easy row is classified correctly but at least one hard
// row is not (the boundary is at −1/x_q or 1/|x_q|, 0.33 to 0.5 from 0), so
// only the first row visited and the hard rows (and what they disturb) are
// ever mistakes.
func kpEasyData(rng *rand.Rand) *sparsevec.CSR {
	var pts [][]float64
	var labels []float32
	for range 300 {
		y := float64(rng.IntN(2)*2 - 1)
		pts = append(pts, []float64{y * (2 + rng.Float64()), 0.1 * rng.NormFloat64()})
		labels = append(labels, float32(y))
	}
	for _, u := range []float64{0.1, 0.2, -0.1} {
		pts = append(pts, []float64{u, 0.01 * rng.NormFloat64()})
		labels = append(labels, float32(math.Copysign(1, u)))
	}
	return learnertest.DenseCSR(pts, labels)
}

func TestKernelPerceptronLinearEqualsPrimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	heldOut := kpGauss(rng, 100, 12, 1.0, -1, 1)
	for _, tc := range []struct {
		name   string
		data   *sparsevec.CSR
		epochs int
	}{
		{"overlapping", kpGauss(rng, 200, 12, 1.0, -1, 1), 25},
		{"separable", kpGauss(rng, 200, 12, 6.0, -1, 1), 200},
		{"labels 0 and 3", kpGauss(rng, 150, 12, 2.0, 0, 3), 10},
		{"easy", kpEasyData(rng), 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, seed := range []uint64{1, 99} {
				cfg := Config{Epochs: tc.epochs, Seed: seed}
				p, rep, err := Train(context.Background(), cfg, tc.data)
				if err != nil {
					t.Fatal(err)
				}
				ref := kpTrainPrimal(tc.data, seed, tc.epochs)
				if !slices.Equal(rep.Mistakes, ref.mistakes) {
					t.Fatalf("seed %d: mistakes per epoch %v, primal %v", seed, rep.Mistakes, ref.mistakes)
				}
				if rep.Converged != (ref.mistakes[len(ref.mistakes)-1] == 0) || rep.Epochs != len(ref.mistakes) {
					t.Fatalf("seed %d: converged %v after %d epochs, primal %v", seed, rep.Converged, rep.Epochs, ref.mistakes)
				}
				// Only the rows that were ever mistakes are kept, in data
				// order, with their labels.
				if rep.Support != len(ref.ever) || p.SV.Rows() != len(ref.ever) {
					t.Fatalf("seed %d: %d support rows (report %d), primal made mistakes on %d distinct rows", seed, p.SV.Rows(), rep.Support, len(ref.ever))
				}
				var want sparsevec.CSR
				for r := range tc.data.Rows() {
					if ref.ever[r] {
						want.Append(tc.data.Labels[r], tc.data.Row(r))
					}
				}
				if !reflect.DeepEqual(p.SV.Labels, want.Labels) || !reflect.DeepEqual(p.SV.Idx, want.Idx) || !reflect.DeepEqual(p.SV.Ptr, want.Ptr) {
					t.Fatalf("seed %d: support rows differ from the primal's mistake rows", seed)
				}
				kp := p.NewPredictor()
				for _, set := range []*sparsevec.CSR{tc.data, heldOut} {
					for r := range set.Rows() {
						x := set.Row(r)
						got, want := kp.decisions(x)[0], ref.f(x)
						if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
							t.Fatalf("seed %d: row %d: dual f = %.17g, primal %.17g", seed, r, got, want)
						}
					}
				}
			}
		})
	}
}

// kpPrimalMulti is the reference for the multiclass case: the linear
// multiclass perceptron of eq. 5 (Kesler) on dense float64 weights, in the
// order Train visits the rows.
type kpPrimalMulti struct {
	w        [][]float64 // per class
	b        []float64
	mistakes []int
	ever     map[int]bool
}

func kpTrainPrimalMulti(data *sparsevec.CSR, seed uint64, epochs int) *kpPrimalMulti {
	classes := data.DistinctLabels()
	p := &kpPrimalMulti{b: make([]float64, len(classes)), ever: map[int]bool{}}
	for range classes {
		p.w = append(p.w, make([]float64, data.Dim+1))
	}
	order := linear.NewEpochOrder(data.Rows(), seed, kernelStream)
	f := make([]float64, len(classes))
	for range epochs {
		perm := order.Next()
		m := 0
		for _, q := range perm {
			x := data.Row(int(q))
			i := slices.Index(classes, data.Labels[q])
			p.f(f, x)
			j := -1
			for c := range f {
				if c != i && (j < 0 || f[c] > f[j]) {
					j = c
				}
			}
			if f[i] <= f[j] {
				for k, idx := range x.Idx {
					p.w[i][idx] += float64(x.Val[k])
					p.w[j][idx] -= float64(x.Val[k])
				}
				p.b[i]++
				p.b[j]--
				p.ever[int(q)] = true
				m++
			}
		}
		p.mistakes = append(p.mistakes, m)
		if m == 0 {
			break
		}
	}
	return p
}

func (p *kpPrimalMulti) f(dst []float64, x sparsevec.Vector) {
	for c := range dst {
		dst[c] = p.b[c]
		for k, j := range x.Idx {
			if int(j) < len(p.w[c]) {
				dst[c] += p.w[c][j] * float64(x.Val[k])
			}
		}
	}
}

func TestKernelPerceptronLinearMulticlassEqualsPrimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	var four sparsevec.CSR
	four.AppendCSR(kpGauss(rng, 100, 8, 3, 1, 2))
	four.AppendCSR(kpGauss(rng, 100, 8, -3, 3, 4))
	iris := kpLoadScaled(t, "iris.libsvm")
	for _, tc := range []struct {
		name   string
		data   *sparsevec.CSR
		epochs int
	}{
		{"iris", iris, 60},
		{"four gaussians", &four, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, seed := range []uint64{1, 7} {
				p, rep, err := Train(context.Background(), Config{Epochs: tc.epochs, Seed: seed}, tc.data)
				if err != nil {
					t.Fatal(err)
				}
				ref := kpTrainPrimalMulti(tc.data, seed, tc.epochs)
				if !slices.Equal(rep.Mistakes, ref.mistakes) {
					t.Fatalf("seed %d: mistakes per epoch %v, primal %v", seed, rep.Mistakes, ref.mistakes)
				}
				if rep.Support != len(ref.ever) {
					t.Fatalf("seed %d: %d support rows, primal made mistakes on %d distinct rows", seed, rep.Support, len(ref.ever))
				}
				kp := p.NewPredictor()
				want := make([]float64, len(p.Classes))
				for r := range tc.data.Rows() {
					x := tc.data.Row(r)
					got := kp.decisions(x)
					ref.f(want, x)
					for c := range want {
						if math.Abs(got[c]-want[c]) > 1e-9*math.Max(1, math.Abs(want[c])) {
							t.Fatalf("seed %d: row %d class %d: dual f = %.17g, primal %.17g", seed, r, c, got[c], want[c])
						}
					}
				}
			}
		})
	}
}

func TestKernelPerceptronKeepsOnlyUpdatedRows(t *testing.T) {
	data := kpEasyData(rand.New(rand.NewPCG(7, 8)))
	p, rep, err := Train(context.Background(), Config{Seed: 3, Epochs: 100}, data)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Converged {
		t.Fatalf("did not converge: %v", rep.Mistakes)
	}
	// The first row visited, some of the three hard rows, and few others.
	t.Logf("%d support rows of %d, mistakes per epoch %v", rep.Support, data.Rows(), rep.Mistakes)
	if rep.Support < 2 || rep.Support > 10 {
		t.Fatalf("%d support rows of %d (mistakes %v), want the first row, the hard rows and few more", rep.Support, data.Rows(), rep.Mistakes)
	}
	n := data.Rows()
	hard := 0
	for s := range p.SV.Rows() {
		x := p.SV.Row(s)
		if math.Abs(float64(x.Val[0])) < 1 && x.Idx[0] == 1 {
			hard++
		}
		// Every kept row has a nonzero coefficient of its own sign.
		if a := p.Alpha[s]; a == 0 || (a > 0) != (p.SV.Labels[s] > 0) {
			t.Errorf("support row %d: alpha %v, label %v", s, a, p.SV.Labels[s])
		}
	}
	if hard < 1 {
		t.Errorf("none of the 3 hard rows kept")
	}
	if total := kpSum(rep.Mistakes); rep.Support > total {
		t.Errorf("%d support rows but only %d mistakes", rep.Support, total)
	}
	if kpErrors(p, data) != 0 {
		t.Errorf("converged but %d training errors of %d", kpErrors(p, data), n)
	}
}

func kpSum(s []int) int {
	t := 0
	for _, v := range s {
		t += v
	}
	return t
}

// kpXOR returns n points around the four corners (±1, ±1), labelled by the
// sign of x·y.
func kpXOR(rng *rand.Rand, n int) *sparsevec.CSR {
	pts := make([][]float64, n)
	labels := make([]float32, n)
	for r := range n {
		sx, sy := float64(rng.IntN(2)*2-1), float64(rng.IntN(2)*2-1)
		pts[r] = []float64{sx + 0.3*rng.NormFloat64(), sy + 0.3*rng.NormFloat64()}
		labels[r] = float32(sx * sy)
	}
	return learnertest.DenseCSR(pts, labels)
}

func TestKernelPerceptronRBFSolvesXOR(t *testing.T) {
	data := kpXOR(rand.New(rand.NewPCG(1, 2)), 200)
	for _, tc := range []struct {
		k         Kernel
		converges bool
	}{
		{Kernel{Kind: RBFKernel, Sigma: 0.5}, true},
		{Kernel{Kind: PolyKernel, Degree: 2, Coef0: 1}, true},
		{Kernel{Kind: LinearKernel}, false},
	} {
		t.Run(tc.k.Kind.String(), func(t *testing.T) {
			p, rep, err := Train(context.Background(), Config{Kernel: tc.k, Epochs: 200, Seed: 5}, data)
			if err != nil {
				t.Fatal(err)
			}
			errs := kpErrors(p, data)
			t.Logf("%v: %d epochs, %d training errors of %d, %d support rows", tc.k.Kind, rep.Epochs, errs, data.Rows(), rep.Support)
			if tc.converges {
				if !rep.Converged || errs != 0 {
					t.Fatalf("converged %v, %d training errors; want 0", rep.Converged, errs)
				}
			} else if rep.Converged || errs < data.Rows()/10 {
				t.Fatalf("the linear kernel separated XOR: converged %v, %d errors", rep.Converged, errs)
			}
		})
	}
}

func TestKernelPerceptronUCI(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on UCI sets")
	}
	iris := kpLoadScaled(t, "iris.libsvm")
	vowel := kpLoadScaled(t, "vowel.libsvm")
	// Error bounds measured with these seeds (see the log lines) plus a
	// little slack; the paper's Table III reports 3.33% (p=2) and 3.78%
	// (σ=0.3) mean training error on 9/10 of Iris and 0% on Vowel.
	for _, tc := range []struct {
		name      string
		data      *sparsevec.CSR
		k         Kernel
		epochs    int
		maxErrPct float64
	}{
		{"iris/poly2", iris, Kernel{Kind: PolyKernel, Degree: 2}, 5000, 4},
		{"iris/rbf0.3", iris, Kernel{Kind: RBFKernel, Sigma: 0.3}, 2000, 2},
		{"vowel/rbf0.2", vowel, Kernel{Kind: RBFKernel, Sigma: 0.2}, 500, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, rep, err := Train(context.Background(), Config{Kernel: tc.k, Epochs: tc.epochs, Seed: 1}, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Multiclass || len(p.Classes) != len(tc.data.DistinctLabels()) {
				t.Fatalf("multiclass %v with classes %v", p.Multiclass, p.Classes)
			}
			errs := kpErrors(p, tc.data)
			pct := 100 * float64(errs) / float64(tc.data.Rows())
			t.Logf("%s: %d epochs (converged %v) in %.3fs, %d kernel evals, %d support rows, training error %d/%d = %.2f%%",
				tc.name, rep.Epochs, rep.Converged, rep.Seconds, rep.KernelEvals, rep.Support, errs, tc.data.Rows(), pct)
			if pct > tc.maxErrPct {
				t.Fatalf("training error %.2f%%, want <= %.2f%%", pct, tc.maxErrPct)
			}
			if rep.Converged && errs != 0 {
				t.Fatalf("converged but %d training errors", errs)
			}
		})
	}
}

// kpTrainWithCache trains with a cache of exactly rows kernel rows.
func kpTrainWithCache(t *testing.T, cfg Config, data *sparsevec.CSR, rows int) (*Perceptron, *Report) {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := newKernelTrainer(cfg, data, rows, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := tr.run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr.result(cfg.Kernel), rep
}

func TestKernelPerceptronCacheSizeDoesNotMatter(t *testing.T) {
	vowel := kpLoadScaled(t, "vowel.libsvm")
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range []struct {
		name string
		data *sparsevec.CSR
		cfg  Config
	}{
		{"vowel/rbf", vowel, Config{Kernel: Kernel{Kind: RBFKernel, Sigma: 0.2}, Epochs: 30, Seed: 2}},
		{"gauss/poly", kpGauss(rng, 300, 10, 1, -1, 1), Config{Kernel: Kernel{Kind: PolyKernel, Degree: 3, Coef0: 1}, Epochs: 20, Seed: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, refRep := kpTrainWithCache(t, tc.cfg, tc.data, tc.data.Rows())
			if nsv := ref.SV.Rows(); refRep.KernelEvals != int64(nsv)*int64(tc.data.Rows()) {
				t.Errorf("full cache: %d kernel evals, want one row per support row = %d", refRep.KernelEvals, nsv*tc.data.Rows())
			}
			for _, rows := range []int{1, 2, 17} {
				p, rep := kpTrainWithCache(t, tc.cfg, tc.data, rows)
				if !reflect.DeepEqual(p, ref) || !slices.Equal(rep.Mistakes, refRep.Mistakes) {
					t.Fatalf("cache of %d rows: model differs from a full cache", rows)
				}
				if rep.KernelEvals <= refRep.KernelEvals {
					t.Errorf("cache of %d rows computed %d kernel values, full cache %d: the small cache was not exercised", rows, rep.KernelEvals, refRep.KernelEvals)
				}
			}
			// Through the public API: 1 MiB holds about 130 vowel rows.
			for _, mb := range []int{1, 1024} {
				cfg := tc.cfg
				cfg.CacheMB = mb
				p, _, err := Train(context.Background(), cfg, tc.data)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(p, ref) {
					t.Fatalf("CacheMB %d: model differs", mb)
				}
			}
		})
	}
}

func TestKernelCacheLRU(t *testing.T) {
	var c kernelCache
	c.init(4, 2, new(trainMemory))
	miss := func(q int, wantHit bool) {
		t.Helper()
		row, hit := c.get(q)
		if hit != wantHit {
			t.Fatalf("get(%d): hit %v, want %v", q, hit, wantHit)
		}
		if !hit {
			row[0] = float64(q)
		} else if row[0] != float64(q) {
			t.Fatalf("get(%d) returned the row of %v", q, row[0])
		}
	}
	miss(0, false)
	miss(1, false)
	miss(0, true)
	miss(2, false) // evicts 1, the least recent
	miss(0, true)
	miss(1, false) // evicts 2
	miss(2, false) // evicts 0
	miss(1, true)
	c.drop(1)
	miss(1, false)
	miss(2, true)
	if len(c.rows) != 2 {
		t.Fatalf("%d slots allocated, want 2", len(c.rows))
	}
}

func TestKernelPerceptronDeterministic(t *testing.T) {
	data := kpGauss(rand.New(rand.NewPCG(9, 9)), 300, 8, 0.5, 1, 2)
	cfg := Config{Kernel: Kernel{Kind: RBFKernel, Sigma: 0.7}, Epochs: 15, Seed: 11}
	a, _, err := Train(context.Background(), cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := Train(context.Background(), cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different models")
	}
	cfg.Seed = 12
	c, _, err := Train(context.Background(), cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("the seed does not change the model")
	}
}

func TestKernelPerceptronRejectsBadInput(t *testing.T) {
	good := kpGauss(rand.New(rand.NewPCG(1, 1)), 20, 3, 1, -1, 1)
	withVal := func(v float32) *sparsevec.CSR {
		d := kpGauss(rand.New(rand.NewPCG(1, 1)), 20, 3, 1, -1, 1)
		d.Val[5] = v
		return d
	}
	withLabel := func(y float32) *sparsevec.CSR {
		d := kpGauss(rand.New(rand.NewPCG(1, 1)), 20, 3, 1, -1, 1)
		d.Labels[3] = y
		return d
	}
	oneLabel := kpGauss(rand.New(rand.NewPCG(1, 1)), 20, 3, 1, 1, 1)
	unsorted := learnertest.DenseCSR([][]float64{{1, 2}, {3, 4}}, []float32{1, 2})
	unsorted.Idx[0], unsorted.Idx[1] = 2, 1
	badPtr := learnertest.DenseCSR([][]float64{{1, 2}, {3, 4}}, []float32{1, 2})
	badPtr.Ptr[2] = 99
	shortPtr := learnertest.DenseCSR([][]float64{{1, 2}, {3, 4}}, []float32{1, 2})
	shortPtr.Ptr = shortPtr.Ptr[:2]
	huge := learnertest.DenseCSR([][]float64{{1e30}, {-1e30}}, []float32{1, 2})
	var regression sparsevec.CSR
	for r := range kernelMaxClasses + 1 {
		regression.Append(float32(r), sparsevec.Vector{})
	}
	var manyCells sparsevec.CSR // 60000 rows × 40000 classes > 2^31
	for r := range 60000 {
		manyCells.Append(float32(r%40000), sparsevec.Vector{})
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		data *sparsevec.CSR
		want string
	}{
		{"nil data", Config{}, nil, "no training rows"},
		{"empty", Config{}, &sparsevec.CSR{}, "no training rows"},
		{"one label", Config{}, oneLabel, "at least 2"},
		{"NaN value", Config{}, withVal(float32(math.NaN())), "NaN"},
		{"Inf value", Config{}, withVal(float32(math.Inf(-1))), "Inf"},
		{"NaN label", Config{}, withLabel(float32(math.NaN())), "label"},
		{"Inf label", Config{}, withLabel(float32(math.Inf(1))), "label"},
		{"unsorted indices", Config{}, unsorted, "ascending"},
		{"bad pointers", Config{}, badPtr, "pointers"},
		{"short pointers", Config{}, shortPtr, "pointers"},
		{"degree < 0", Config{Kernel: Kernel{Kind: PolyKernel, Degree: -2}}, good, "degree"},
		{"sigma < 0", Config{Kernel: Kernel{Kind: RBFKernel, Sigma: -1}}, good, "sigma"},
		{"NaN sigma", Config{Kernel: Kernel{Kind: RBFKernel, Sigma: math.NaN()}}, good, "sigma"},
		{"NaN coef0", Config{Kernel: Kernel{Kind: PolyKernel, Coef0: math.NaN()}}, good, "coef0"},
		{"bad kind", Config{Kernel: Kernel{Kind: 9}}, good, "kind"},
		{"epochs < 0", Config{Epochs: -1}, good, "Epochs"},
		{"cache < 0", Config{CacheMB: -1}, good, "CacheMB"},
		{"too many labels", Config{}, &regression, "distinct labels"},
		{"too many rows × classes", Config{}, &manyCells, "decision values"},
		{"kernel overflow", Config{Kernel: Kernel{Kind: PolyKernel, Degree: 12}}, huge, "overflow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, rep, err := Train(context.Background(), tc.cfg, tc.data)
			if err == nil {
				t.Fatalf("no error (model %v, report %v)", p, rep)
			}
			if !strings.HasPrefix(err.Error(), "kperceptron: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want the prefix and %q", err, tc.want)
			}
		})
	}
}

// kpCountCtx is a context that reports Canceled from its n-th Err call.
type kpCountCtx struct {
	context.Context
	calls, n int
}

func (c *kpCountCtx) Err() error {
	c.calls++
	if c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

func TestKernelPerceptronCancel(t *testing.T) {
	// The linear kernel never converges on XOR: all 100 epochs run, with
	// a poll at the start of each and one within (1100 rows).
	data := kpXOR(rand.New(rand.NewPCG(1, 2)), 1100)
	for _, n := range []int{1, 2, 5, 150} {
		ctx := &kpCountCtx{Context: context.Background(), n: n}
		_, _, err := Train(ctx, Config{}, data)
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "kperceptron: epoch ") {
			t.Fatalf("cancelled at poll %d: err = %v", n, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Train(ctx, Config{}, data); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: err = %v", err)
	}
}

// kpModels returns a trained binary and a trained multiclass perceptron.
func kpModels(t testing.TB) map[string]*Perceptron {
	rng := rand.New(rand.NewPCG(31, 32))
	out := map[string]*Perceptron{}
	var three sparsevec.CSR
	three.AppendCSR(kpGauss(rng, 60, 5, 2, 0, 1))
	three.AppendCSR(kpGauss(rng, 60, 5, 2, 2, 1))
	for name, tc := range map[string]struct {
		data *sparsevec.CSR
		k    Kernel
	}{
		"binary/rbf":      {kpXOR(rng, 100), Kernel{Kind: RBFKernel, Sigma: 0.5}},
		"binary/poly":     {kpXOR(rng, 100), Kernel{Kind: PolyKernel, Degree: 2, Coef0: 0.5}},
		"multi/linear":    {&three, Kernel{}},
		"multi/poly-zero": {&three, Kernel{Kind: PolyKernel}}, // defaults resolved
	} {
		p, _, err := Train(context.Background(), Config{Kernel: tc.k, Epochs: 30, Seed: 1}, tc.data)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}

func TestKernelPerceptronModelRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	probe := kpGauss(rng, 200, 5, 1, 0, 1)
	for name, p := range kpModels(t) {
		t.Run(name, func(t *testing.T) {
			m := p.Model()
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := model.Write(&buf, m); err != nil {
				t.Fatal(err)
			}
			m2, err := model.Read(&buf, name)
			if err != nil {
				t.Fatal(err)
			}
			q, err := FromModel(m2)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, q) {
				t.Fatalf("round trip changed the perceptron:\n%+v\n%+v", p, q)
			}
			a, b := p.NewPredictor(), q.NewPredictor()
			for r := range probe.Rows() {
				la, sa, _ := a.Predict(probe.Row(r))
				lb, sb, _ := b.Predict(probe.Row(r))
				if la != lb || math.Float32bits(sa) != math.Float32bits(sb) {
					t.Fatalf("row %d: %v %v before, %v %v after", r, la, sa, lb, sb)
				}
			}
		})
	}
}

func TestFromModelRefusesCorruption(t *testing.T) {
	base := kpModels(t)["multi/linear"].Model()
	bin := kpModels(t)["binary/rbf"].Model()
	blob := func(m *model.Model, name string) *model.Blob {
		for i := range m.Extra {
			if m.Extra[i].Name == name {
				return &m.Extra[i]
			}
		}
		t.Fatalf("no blob %q", name)
		return nil
	}
	for _, tc := range []struct {
		name    string
		from    *model.Model
		corrupt func(m *model.Model)
	}{
		{"wrong learner", base, func(m *model.Model) { m.Learner = "cpm" }},
		{"unknown kernel", base, func(m *model.Model) { m.Params["kernel"] = "sigmoid" }},
		{"missing kernel", base, func(m *model.Model) { delete(m.Params, "kernel") }},
		{"NaN sigma", base, func(m *model.Model) { m.Params["sigma"] = "NaN" }},
		{"negative sigma", base, func(m *model.Model) { m.Params["sigma"] = "-1" }},
		{"bad degree", base, func(m *model.Model) { m.Params["degree"] = "2.5" }},
		{"negative degree", base, func(m *model.Model) { m.Params["degree"] = "-3" }},
		{"Inf coef0", base, func(m *model.Model) { m.Params["coef0"] = "+Inf" }},
		{"wrong K", base, func(m *model.Model) { m.K = 1; m.Weights = []*sparsevec.Matrix{sparsevec.NewMatrix(1, 1)} }},
		{"wrong D", base, func(m *model.Model) { m.D = 2; m.Weights = []*sparsevec.Matrix{sparsevec.NewMatrix(2, m.K)} }},
		{"two sides", bin, func(m *model.Model) { m.Sides = 2; m.Weights = append(m.Weights, sparsevec.NewMatrix(1, 1)) }},
		{"invalid model", base, func(m *model.Model) { m.Classes[0], m.Classes[1] = m.Classes[1], m.Classes[0] }},
		{"missing alpha", base, func(m *model.Model) { m.Extra = m.Extra[1:] }},
		{"extra blob", base, func(m *model.Model) { m.Extra = append(m.Extra, model.Blob{Name: "junk"}) }},
		{"short alpha", base, func(m *model.Model) { a := blob(m, "alpha"); a.F32 = a.F32[:len(a.F32)-1] }},
		{"long alpha", bin, func(m *model.Model) { a := blob(m, "alpha"); a.F32 = append(a.F32, 1) }},
		{"NaN alpha", base, func(m *model.Model) { blob(m, "alpha").F32[2] = float32(math.NaN()) }},
		{"alpha with U32", base, func(m *model.Model) { blob(m, "alpha").U32 = []uint32{1} }},
		{"no pointers", base, func(m *model.Model) { blob(m, "sv").I64 = nil }},
		{"first pointer", base, func(m *model.Model) { blob(m, "sv").I64[0] = 1 }},
		{"pointer decreasing", base, func(m *model.Model) { p := blob(m, "sv").I64; p[1], p[2] = p[2], p[1] }},
		{"pointer negative", base, func(m *model.Model) { blob(m, "sv").I64[1] = -5 }},
		{"pointer beyond", base, func(m *model.Model) { p := blob(m, "sv").I64; p[len(p)-1]++ }},
		{"pointer short of end", base, func(m *model.Model) { p := blob(m, "sv").I64; p[len(p)-1]-- }},
		{"values short", base, func(m *model.Model) { b := blob(m, "sv"); b.F32 = b.F32[:len(b.F32)-1] }},
		{"unsorted indices", base, func(m *model.Model) { u := blob(m, "sv").U32; u[0], u[1] = u[1], u[0] }},
		{"duplicate index", base, func(m *model.Model) { u := blob(m, "sv").U32; u[1] = u[0] }},
		{"Inf sv value", base, func(m *model.Model) { blob(m, "sv").F32[3] = float32(math.Inf(1)) }},
		{"labels short", base, func(m *model.Model) { l := blob(m, "sv.labels"); l.F32 = l.F32[:len(l.F32)-1] }},
		{"label not a class", base, func(m *model.Model) { blob(m, "sv.labels").F32[0] = 7 }},
		{"NaN label", bin, func(m *model.Model) { blob(m, "sv.labels").F32[0] = float32(math.NaN()) }},
		{"nil", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m *model.Model
			if tc.from != nil {
				m = kpCloneModel(tc.from)
				if _, err := FromModel(m); err != nil {
					t.Fatalf("clone of the good model refused: %v", err)
				}
				tc.corrupt(m)
			}
			p, err := FromModel(m)
			if err == nil {
				t.Fatalf("corrupted model accepted: %+v", p)
			}
			if !errors.Is(err, model.ErrInvalid) || !strings.HasPrefix(err.Error(), "kperceptron: ") {
				t.Fatalf("error %q does not wrap model.ErrInvalid with the prefix", err)
			}
		})
	}
}

// kpCloneModel deep-copies the fields a kernel perceptron model uses.
func kpCloneModel(m *model.Model) *model.Model {
	c := *m
	c.Classes = slices.Clone(m.Classes)
	c.Params = map[string]string{}
	for k, v := range m.Params {
		c.Params[k] = v
	}
	c.Weights = nil
	for _, w := range m.Weights {
		w2 := *w
		w2.Data = slices.Clone(w.Data)
		c.Weights = append(c.Weights, &w2)
	}
	c.Extra = nil
	for _, b := range m.Extra {
		c.Extra = append(c.Extra, model.Blob{Name: b.Name, F32: slices.Clone(b.F32), U32: slices.Clone(b.U32), I64: slices.Clone(b.I64)})
	}
	return &c
}

func TestKernelPredictDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	probe := kpGauss(rng, 10, 5, 1, 0, 1)
	for name, p := range kpModels(t) {
		kp := p.NewPredictor()
		i := 0
		if a := testing.AllocsPerRun(200, func() { kp.Predict(probe.Row(i % 10)); i++ }); a != 0 {
			t.Errorf("%s: %v allocations per Predict", name, a)
		}
	}
}

func TestKernelPredictTiesAndSign(t *testing.T) {
	// No support rows: every score is β. Binary: f = 0 is not > 0.
	bin := &Perceptron{Classes: []float32{5, 2}, SV: &sparsevec.CSR{Ptr: []int{0}}, Beta: []float32{0}}
	if y, s, _ := bin.NewPredictor().Predict(sparsevec.Vector{}); y != 2 || s != 0 {
		t.Errorf("binary f = 0: %v %v, want 2 0", y, s)
	}
	bin.Beta[0] = 0.5
	if y, _, _ := bin.NewPredictor().Predict(sparsevec.Vector{}); y != 5 {
		t.Errorf("binary f > 0: %v, want 5", y)
	}
	multi := &Perceptron{Multiclass: true, Classes: []float32{1, 2, 3}, SV: &sparsevec.CSR{Ptr: []int{0}}, Beta: []float32{-1, 4, 4}}
	if y, s, _ := multi.NewPredictor().Predict(sparsevec.Vector{}); y != 2 || s != 4 {
		t.Errorf("multiclass tie: %v %v, want the lower class index: 2 4", y, s)
	}
}

func TestKernelTrainStepDoesNotAllocate(t *testing.T) {
	// Random labels: mistakes never stop, and a cache of 3 rows keeps
	// evicting and recomputing.
	rng := rand.New(rand.NewPCG(61, 62))
	for _, tc := range []struct {
		name string
		data *sparsevec.CSR
	}{
		{"binary", kpGauss(rng, 200, 6, 0, -1, 1)},
		{"multiclass", kpLoadScaled(t, "iris.libsvm")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := Config{Kernel: Kernel{Kind: RBFKernel, Sigma: 0.05}}.withDefaults()
			tr, err := newKernelTrainer(cfg, tc.data, 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			n := tc.data.Rows()
			for q := range 2 * n { // warm-up: fill the cache
				tr.step(q % n)
			}
			evals, i := tr.evals, 0
			if a := testing.AllocsPerRun(5*n, func() { tr.step(i % n); i++ }); a != 0 {
				t.Errorf("%v allocations per step", a)
			}
			if tr.evals == evals || tr.err != nil {
				t.Errorf("no kernel rows computed during the measurement (err %v)", tr.err)
			}
		})
	}
}

// BenchmarkTrainKernelPerceptronVowel trains the paper's best Vowel setup
// (RBF σ = 0.2, 500 epochs at most, features scaled to [0, 1]).
func BenchmarkTrainKernelPerceptronVowel(b *testing.B) {
	data := kpLoadScaled(b, "vowel.libsvm")
	cfg := Config{Kernel: Kernel{Kind: RBFKernel, Sigma: 0.2}, Epochs: 500, Seed: 1}
	b.ReportAllocs()
	var rep *Report
	for b.Loop() {
		var err error
		if _, rep, err = Train(context.Background(), cfg, data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rep.Epochs), "epochs")
	b.ReportMetric(float64(rep.Support), "SVs")
	b.ReportMetric(float64(rep.KernelEvals), "kevals")
}

// Train an RBF kernel perceptron on XOR, which no linear classifier
// separates, and classify the four corners.
func ExampleTrain() {
	var data sparsevec.CSR
	for _, p := range [][3]float32{{1, 1, 1}, {-1, -1, 1}, {1, -1, -1}, {-1, 1, -1}} {
		data.Append(p[2], sparsevec.Vector{Idx: []uint32{1, 2}, Val: []float32{p[0], p[1]}})
	}
	p, rep, err := Train(context.Background(), Config{Kernel: Kernel{Kind: RBFKernel, Sigma: 0.5}}, &data)
	if err != nil {
		fmt.Println(err)
		return
	}
	kp := p.NewPredictor()
	for r := range data.Rows() {
		y, _, _ := kp.Predict(data.Row(r))
		fmt.Print(y, " ")
	}
	fmt.Println(rep.Converged)
	// Output: 1 1 -1 -1 true
}
