package kperceptron

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/polyhedral/cpm/kperceptron/internal/kvec"
	"github.com/polyhedral/cpm/linear"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// kernelStream is the PCG stream of the kernel perceptron's epoch order
// ("kern").
const kernelStream = 0x6b65726e

// Defaults of Config.
const (
	defaultKernelEpochs  = 100
	defaultKernelCacheMB = 256
)

// Limits on the training problem (see newKernelTrainer).
const (
	kernelMaxClasses = 1 << 16
	kernelMaxCells   = 1 << 31
)

// Learner is the Learner name of kernel perceptron model files.
const Learner = "kperceptron"

// errKernel prefixes every error of this file.
const errKernel = "kperceptron: "

// Config holds the hyperparameters of kernel perceptron training.
// The zero value is usable: every field documents its default.
type Config struct {
	// Kernel is the kernel function; the zero value is the linear kernel.
	Kernel Kernel
	// Epochs is the maximum number of passes over the data (the paper's
	// "iterations"); training stops earlier after a pass without a
	// mistake. If 0, it defaults to 100.
	Epochs int
	// CacheMB bounds the kernel-row cache in MiB (2^20 bytes). A kernel
	// row holds 8 bytes per training row; at least one row is always held.
	// It changes only the speed, never the result. If 0, it defaults to
	// 256.
	CacheMB int
	// Seed seeds the row order of every epoch (a PCG on (Seed, a fixed
	// stream)). The same data, config and seed give an identical model.
	Seed uint64
	// SigmaFromData, with an RBF kernel whose Sigma is 0, sets the width
	// from the training rows instead of the default 1:
	//
	//	σ = sqrt(d·Var(x)/2)
	//
	// with d the number of features (Dim - 1) and Var the variance of all
	// n·d entries, absent ones counting as zeros. Then 1/(2σ²) =
	// 1/(d·Var), scikit-learn's gamma = "scale": ‖x - y‖² of two rows is
	// about 2·d·Var, so the kernel stays away from 0 and 1 whatever the
	// number and the scale of the features. The model records the σ used.
	SigmaFromData bool
}

// sigmaFromData returns σ = sqrt(d·Var/2) of data (see
// Config.SigmaFromData), or 0 (the default 1) when the entries do not vary.
func sigmaFromData(data *sparsevec.CSR) float64 {
	d := data.Dim - 1
	if d < 1 || data.Rows() == 0 {
		return 0
	}
	var sum, sq float64
	for _, v := range data.Val[:len(data.Idx)] {
		sum += float64(v)
		sq += float64(v) * float64(v)
	}
	n := float64(data.Rows()) * float64(d)
	mean := sum / n
	variance := sq/n - mean*mean
	if !(variance > 0) || math.IsInf(variance, 0) {
		return 0
	}
	return math.Sqrt(float64(d) * variance / 2)
}

// withDefaults returns c with defaults filled in and the kernel resolved,
// or an error if a field is out of range.
func (c Config) withDefaults() (Config, error) {
	c.Epochs = cmp.Or(c.Epochs, defaultKernelEpochs)
	c.CacheMB = cmp.Or(c.CacheMB, defaultKernelCacheMB)
	switch {
	case c.Epochs < 0:
		return c, fmt.Errorf("Epochs = %d, want >= 0 (0 means %d)", c.Epochs, defaultKernelEpochs)
	case c.CacheMB < 0:
		return c, fmt.Errorf("CacheMB = %d, want >= 0 (0 means %d)", c.CacheMB, defaultKernelCacheMB)
	}
	k, err := c.Kernel.withDefaults()
	if err != nil {
		return c, err
	}
	c.Kernel = k
	return c, nil
}

// Perceptron is a binary or all-together multiclass kernel
// perceptron: Jianhua Xu and Xuegong Zhang, "A Multiclass Kernel
// Perceptron Algorithm", section III (the binary rule is their refs. [13],
// [14]; the multiclass one combines it with Kesler's construction, Duda,
// Hart and Stork, Pattern Classification, 2nd ed.).
//
// Binary (eq. 6-9), with y = +1 for Classes[0] and y = −1 for Classes[1]:
//
//	f(x) = Σ_m α_m k(x_m, x) + β,   predict Classes[0] iff f(x) > 0.
//
// A training row q is a mistake if y_q f(x_q) <= 0; then
//
//	α_q ← α_q + y_q,   β ← β + y_q.
//
// Multiclass (eq. 10-11, Kesler's construction of eq. 5):
//
//	f_i(x) = Σ_m α_m^i k(x_m, x) + β_i,   predict argmax_i f_i(x),
//
// ties to the lowest class index. Row q of true class i is a mistake if
// f_i(x_q) <= f_j(x_q) for some j ≠ i; then, with j = argmax_{j≠i} f_j(x_q)
// (ties to the lowest index),
//
//	α_q^i ← α_q^i + 1, β_i ← β_i + 1,   α_q^j ← α_q^j − 1, β_j ← β_j − 1.
//
// Kernels: see KernelKind (eq. 7 and 8).
//
// Deviation from the paper. Eq. 9 is printed as α_i ← α_i + y_q k(x_i, x_q)
// for every i, and eq. 11 likewise. Taken literally that changes every
// coefficient on every mistake: it is the perceptron in the feature space
// of the kernel k² (f gains y_q Σ_i k(x_i,x_q) k(x_i,x)), and it contradicts
// the paper's own derivation from the linear rule (eq. 3 and 5), whose dual
// form, w = Σ_m α_m φ(x_m), changes only the coefficient of the mistaken
// row. We implement the dual form above: with the linear kernel it makes
// exactly the decisions of the primal perceptron of eq. 3.
//
// Training (Train) visits the rows of each epoch in a fresh
// seeded permutation and stops after an epoch without a mistake or after
// Config.Epochs epochs (the paper's "maximal iterations"); the last
// coefficients are the model. The paper starts from arbitrary initial
// values; we start from α = 0, β = 0, so the first row visited is always a
// mistake.
//
// Only rows whose coefficients were ever updated are kept, as SV, in the
// order of the training data. Their coefficients are integers; they are
// stored as float32, which is exact below 2^24 updates per row.
//
// # Model file
//
// Model and FromModel use the shared model file
// (package model) with:
//
//	Learner     "kperceptron"
//	Sides 1, D 1, K = nc (1 binary, len(Classes) multiclass)
//	Multiclass  as the field; Classes as the field
//	Weights     one 1×nc matrix whose row 0 holds β (Beta)
//	Params      "kernel": "linear", "poly" or "rbf";
//	            "degree": p (decimal integer), "coef0": c, "sigma": σ
//	            (strconv 'g', shortest), defaults resolved
//	Extra       "alpha":     F32 = Alpha (nSV·nc, row-major)
//	            "sv":        the support rows in CSR form: I64 = row
//	                         pointers (nSV+1, from 0), U32 = indices,
//	                         F32 = values
//	            "sv.labels": F32 = the support rows' labels
//
// Other model fields are zero.
type Perceptron struct {
	Kernel     Kernel
	Multiclass bool           // false: binary eq. 6-9; true: all-together multiclass eq. 10-11
	Classes    []float32      // binary: [label predicted when f(x) > 0, the other] = [larger label, smaller label]; multiclass: all labels ascending
	SV         *sparsevec.CSR // support rows: training rows whose coefficients were ever updated, in training-data order, with their true labels
	Alpha      []float32      // len SV.Rows()*nc, row-major: Alpha[s*nc+i]; nc = 1 (binary) or len(Classes)
	Beta       []float32      // len nc: thresholds β (binary: β; multiclass: β_i)
}

// Report summarises a kernel perceptron training run.
type Report struct {
	Epochs      int   // passes run
	Mistakes    []int // mistakes per epoch
	Converged   bool  // an epoch made no mistake
	Support     int   // support rows kept
	Seconds     float64
	KernelEvals int64 // kernel evaluations computed (not served from cache)
}

// Train trains a kernel perceptron on data: binary if data
// has 2 distinct labels (Classes = [larger, smaller]), all-together
// multiclass if it has more. See Perceptron for the algorithm.
//
// Besides the kernel-row cache (Config.CacheMB) training holds, per
// training row and class, the current decision value (8 bytes) and the
// coefficient (4 bytes), and a column-major copy of the data (about 8
// bytes per nonzero; see rowDots). A row visit costs O(nc); a mistake
// costs one kernel row on a cache miss (a sweep over the nonzeros of the
// data that share a feature with the mistaken row, then n kernel values)
// and O(n) additions.
//
// Bad input is an error, never a panic: no rows, fewer than 2 distinct
// labels, more than 2^16 labels or 2^31 rows × classes, non-finite labels
// or values, inconsistent row pointers,
// indices not strictly ascending within a row, bad kernel parameters, a
// kernel value that overflows. Training polls ctx every 1024 row visits and
// every 2^18 kernel evaluations, and stops with an error wrapping
// ctx.Err().
func Train(ctx context.Context, cfg Config, data *sparsevec.CSR) (*Perceptron, *Report, error) {
	start := time.Now()
	if cfg.SigmaFromData && cfg.Kernel.Kind == RBFKernel && cfg.Kernel.Sigma == 0 {
		cfg.Kernel.Sigma = sigmaFromData(data)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, fmt.Errorf(errKernel+"%w", err)
	}
	t, err := newKernelTrainer(cfg, data, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf(errKernel+"%w", err)
	}
	defer t.release()
	rep, err := t.run(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf(errKernel+"%w", err)
	}
	p := t.result(cfg.Kernel)
	rep.Support = p.SV.Rows()
	rep.Seconds = time.Since(start).Seconds()
	return p, rep, nil
}

// kernelTrainer is the training state. The decision values are kept up to
// date for every training row, so visiting a row is O(nc) and a mistake is
// one kernel row added into one or two columns.
type kernelTrainer struct {
	data    *sparsevec.CSR
	kf      kernelFn
	n, nc   int
	classes []float32 // as Perceptron.Classes
	cls     []int32   // class index of each row (binary: 0 is y = +1)
	sq      []float64 // ‖x_q‖² of each row
	// f is column-major: f[i*n+q] = Σ_m α_m^i k(x_m, x_q), without β, so
	// a mistake adds a kernel row into contiguous columns.
	f     []float64
	beta  []float64
	alpha []int32 // row-major: alpha[q*nc+i]
	cache kernelCache
	dots  rowDots      // inner products of one row with every training row
	mem   *trainMemory // where the arrays above live
	evals int64
	err   error // sticky: a kernel value or decision value went non-finite
}

// newKernelTrainer checks data and sets up training in mem (nil: memory
// from trainPool); cacheRows, if > 0, overrides the cache size derived
// from cfg.CacheMB (for tests). cfg must have been completed by
// withDefaults.
func newKernelTrainer(cfg Config, data *sparsevec.CSR, cacheRows int, mem *trainMemory) (*kernelTrainer, error) {
	if data == nil || data.Rows() == 0 {
		return nil, errors.New("no training rows")
	}
	n := data.Rows()
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("%d training rows, more than %d", n, math.MaxInt32)
	}
	for q, y := range data.Labels {
		if !kernelFinite(y) {
			return nil, fmt.Errorf("row %d: label is %v", q, y)
		}
	}
	if err := checkKernelRows(data); err != nil {
		return nil, err
	}
	labels := data.DistinctLabels()
	if len(labels) < 2 {
		return nil, fmt.Errorf("the data has %d distinct label (%v), want at least 2", len(labels), labels)
	}
	// The model file holds at most 2^16 classes; the n×nc decision values
	// and coefficients take 12 bytes each. Both limits catch, before any
	// large allocation, regression targets given as labels.
	if len(labels) > kernelMaxClasses {
		return nil, fmt.Errorf("the data has %d distinct labels, more than %d", len(labels), kernelMaxClasses)
	}
	if cells := int64(n) * int64(len(labels)); len(labels) > 2 && cells > kernelMaxCells {
		return nil, fmt.Errorf("%d rows × %d classes = %d decision values, more than %d", n, len(labels), cells, int64(kernelMaxCells))
	}
	if mem == nil {
		mem = getTrainMemory()
	}
	t := &kernelTrainer{data: data, kf: cfg.Kernel.fn(), n: n, cls: grow(&mem.cls, n), sq: grow(&mem.sq, n), dots: newRowDots(data, mem), mem: mem}
	clear(t.cls)
	if len(labels) == 2 {
		t.classes, t.nc = []float32{labels[1], labels[0]}, 1
		for q, y := range data.Labels {
			if y != labels[1] {
				t.cls[q] = 1
			}
		}
	} else {
		t.classes, t.nc = labels, len(labels)
		for q, y := range data.Labels {
			i, _ := slices.BinarySearch(labels, y)
			t.cls[q] = int32(i)
		}
	}
	for q := range n {
		t.sq[q] = data.Row(q).SqNorm()
	}
	t.f = grow(&mem.f, t.nc*n)
	clear(t.f)
	t.beta = make([]float64, t.nc)
	t.alpha = grow(&mem.alpha, n*t.nc)
	clear(t.alpha)
	if cacheRows <= 0 {
		budget := int64(min(cfg.CacheMB, 1<<30)) << 20
		cacheRows = int(min(budget/(8*int64(n)), int64(n)))
	}
	t.cache.init(n, max(cacheRows, 1), mem)
	return t, nil
}

// release hands the trainer's memory to later runs (trainPool); the
// trainer must not be used afterwards (result copies what it returns).
func (t *kernelTrainer) release() {
	t.cache.keep(t.mem)
	putTrainMemory(t.mem)
	*t = kernelTrainer{}
}

// run trains for up to cfg.Epochs epochs.
func (t *kernelTrainer) run(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{}
	order := linear.NewEpochOrder(t.n, cfg.Seed, kernelStream)
	var polled int64 // t.evals when ctx was last polled
	binary := t.nc == 1
	for ep := range cfg.Epochs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("epoch %d: %w", ep+1, err)
		}
		perm := order.Next()
		mistakes := 0
		for k, q := range perm {
			// Poll ctx every 1024 visits and every 2^18 kernel
			// evaluations (a fraction of a second either way).
			if k&1023 == 1023 || t.evals-polled >= 1<<18 {
				polled = t.evals
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("epoch %d: %w", ep+1, err)
				}
			}
			if binary && t.binaryCorrect(int(q)) {
				continue
			}
			if t.step(int(q)) {
				mistakes++
			}
			if t.err != nil {
				return nil, fmt.Errorf("epoch %d: %w", ep+1, t.err)
			}
		}
		rep.Epochs++
		rep.Mistakes = append(rep.Mistakes, mistakes)
		if mistakes == 0 {
			rep.Converged = true
			break
		}
	}
	rep.KernelEvals = t.evals
	return rep, nil
}

// binaryCorrect reports whether binary training row q is on its side,
// y_q·(f(x_q) + β) > 0: no mistake, nothing to update (false for a NaN
// decision value, which step reports). y_q = 1 − 2·cls[q] needs no
// branch, where the row order would make a branch on the label a coin
// toss.
func (t *kernelTrainer) binaryCorrect(q int) bool {
	y := float64(1 - 2*t.cls[q])
	return y*(t.f[q]+t.beta[0]) > 0
}

// step visits training row q: it reports whether q is a mistake and, if so,
// applies the update. It does not allocate once the cache is full or holds
// every row that will be a mistake.
func (t *kernelTrainer) step(q int) bool {
	n := t.n
	if t.nc == 1 {
		y := float64(1 - 2*t.cls[q])
		fq := t.f[q] + t.beta[0]
		if math.IsNaN(fq) {
			t.err = fmt.Errorf("row %d: decision value is NaN", q)
			return false
		}
		if y*fq > 0 {
			return false
		}
		krow := t.kernelRow(q)
		t.alpha[q] += int32(y)
		t.beta[0] += y
		if y > 0 {
			kvec.Add(t.f[:len(krow)], krow)
		} else {
			kvec.Sub(t.f[:len(krow)], krow)
		}
		return true
	}
	i := int(t.cls[q])
	fi := t.f[i*n+q] + t.beta[i]
	j, fj := -1, 0.0
	nan := math.IsNaN(fi)
	for c := range t.nc {
		if c == i {
			continue
		}
		v := t.f[c*n+q] + t.beta[c]
		nan = nan || math.IsNaN(v)
		if j < 0 || v > fj {
			j, fj = c, v
		}
	}
	if nan {
		t.err = fmt.Errorf("row %d: decision value is NaN", q)
		return false
	}
	if fi > fj {
		return false
	}
	krow := t.kernelRow(q)
	t.alpha[q*t.nc+i]++
	t.alpha[q*t.nc+j]--
	t.beta[i]++
	t.beta[j]--
	kvec.Add(t.f[i*n:i*n+n], krow)
	kvec.Sub(t.f[j*n:j*n+n], krow)
	return true
}

// kernelRow returns k(x_r, x_q) for every training row r, from the cache
// or computed into it. The row is valid until the next call. A computed
// row takes the inner products x_r·x_q by one sweep (rowDots), then the
// kernel values (kernelFn.finish); each value equals
// kernelFn.eval(x_r, x_q, ‖x_r‖², ‖x_q‖²) bit for bit.
func (t *kernelTrainer) kernelRow(q int) []float64 {
	row, hit := t.cache.get(q)
	if hit {
		return row
	}
	t.dots.dots(row, t.data.Row(q))
	t.kf.finish(row, t.sq, t.sq[q])
	t.evals += int64(len(row))
	if !allFinite(row) {
		for r, k := range row {
			if math.IsNaN(k) || math.IsInf(k, 0) {
				t.err = fmt.Errorf("kernel value of rows %d and %d is %v (overflow: scale the features or lower the degree)", r, q, k)
				t.cache.drop(q)
				break
			}
		}
	}
	return row
}

// allFinite reports true if no value of x is NaN or ±Inf, and false if
// one is; it may also report false for finite values whose sum
// overflows, which the caller's scan then settles. It keeps four running
// sums, each over every fourth value (independent chains of additions):
// a non-finite value makes its sum non-finite, and s·0 is NaN exactly
// for a non-finite s.
func allFinite(x []float64) bool {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := (*[4]float64)(x[i : i+4])
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
	}
	for _, v := range x[i:] {
		s0 += v
	}
	s := s0*0 + s1*0 + s2*0 + s3*0 // NaN iff some sum is not finite
	return s == 0
}

// result returns the trained model: the rows with a nonzero coefficient
// (exactly the rows that were ever mistakes, since a row's own-class
// coefficient only moves away from 0) in data order.
func (t *kernelTrainer) result(k Kernel) *Perceptron {
	p := &Perceptron{
		Kernel:     k,
		Multiclass: t.nc > 1,
		Classes:    t.classes,
		SV:         &sparsevec.CSR{Ptr: []int{0}},
		Beta:       make([]float32, t.nc),
	}
	for i, b := range t.beta {
		p.Beta[i] = float32(b)
	}
	for q := range t.n {
		a := t.alpha[q*t.nc : (q+1)*t.nc]
		if !slices.ContainsFunc(a, func(v int32) bool { return v != 0 }) {
			continue
		}
		p.SV.Append(t.data.Labels[q], t.data.Row(q))
		for _, v := range a {
			p.Alpha = append(p.Alpha, float32(v))
		}
	}
	return p
}

// Predictor predicts with a Perceptron. It holds scratch space, the
// support rows' squared norms and a column-major copy of the support rows
// (about 8 bytes per nonzero), so it is not safe for concurrent
// use; make one per goroutine (they share the perceptron read-only). The
// perceptron must not change while a predictor uses it.
type Predictor struct {
	p      *Perceptron
	kf     kernelFn
	nc     int
	sq     []float64 // ‖sv_s‖²
	scores []float64 // nc decision values
	ks     []float64 // k(sv_s, x) of the row being predicted
	dots   rowDots   // inner products of x with the support rows
}

// NewPredictor returns a predictor for p, which must be consistent
// as Train and FromModel return it
// (len(Alpha) = SV.Rows()·len(Beta)); it panics otherwise, as that is a
// programmer error.
func (p *Perceptron) NewPredictor() *Predictor {
	nc := len(p.Beta)
	nsv := 0
	if p.SV != nil {
		nsv = p.SV.Rows()
	}
	if nc < 1 || len(p.Alpha) != nsv*nc || (!p.Multiclass && nc != 1) || len(p.Classes) < 2 {
		panic(fmt.Sprintf("kperceptron: inconsistent kernel perceptron: %d support rows, %d alphas, %d betas, %d classes", nsv, len(p.Alpha), nc, len(p.Classes)))
	}
	kp := &Predictor{p: p, kf: p.Kernel.fn(), nc: nc, sq: make([]float64, nsv), scores: make([]float64, nc), ks: make([]float64, nsv)}
	if nsv > 0 {
		kp.dots = newRowDots(p.SV, nil)
	}
	for s := range nsv {
		kp.sq[s] = p.SV.Row(s).SqNorm()
	}
	return kp
}

// Predict returns the predicted label of x, the decision score and face
// -1 (a kernel perceptron has no faces): binary f(x), with label
// Classes[0] iff f(x) > 0; multiclass max_i f_i(x), with ties to the
// lowest class index. x's indices must be strictly ascending (as a reader
// yields them). Predict does not allocate.
func (kp *Predictor) Predict(x sparsevec.Vector) (label float32, score float32, face int) {
	f := kp.decisions(x)
	if !kp.p.Multiclass {
		if f[0] > 0 {
			return kp.p.Classes[0], float32(f[0]), -1
		}
		return kp.p.Classes[1], float32(f[0]), -1
	}
	best := 0
	for i := 1; i < len(f); i++ {
		if f[i] > f[best] {
			best = i
		}
	}
	return kp.p.Classes[best], float32(f[best]), -1
}

// decisions returns the nc decision values f_i(x) in float64, in the
// predictor's scratch (valid until the next call).
func (kp *Predictor) decisions(x sparsevec.Vector) []float64 {
	var xx float64
	if kp.kf.kind == RBFKernel {
		xx = x.SqNorm()
	}
	f := kp.scores
	clear(f)
	nc := kp.nc
	alpha := kp.p.Alpha
	if ks := kp.ks; len(ks) > 0 {
		kp.dots.dots(ks, x)
		// f_i = Σ_s α_s^i k(sv_s, x), summed in support-row order: binary
		// with the RBF kernel in the pass that computes the kernel values
		// (kvec.RBFDot), else in a register for each class in turn.
		if nc == 1 && kp.kf.kind == RBFKernel {
			f[0] = kvec.RBFDot(ks, kp.sq, xx, kp.kf.gamma, alpha)
		} else {
			kp.kf.finish(ks, kp.sq, xx)
			for i := range f {
				var fi float64
				for s, k := range ks {
					fi += float64(alpha[s*nc+i]) * k
				}
				f[i] = fi
			}
		}
	}
	for i, b := range kp.p.Beta[:len(f)] {
		f[i] += float64(b)
	}
	return f
}

// Model returns p in the shared model file layout documented on
// Perceptron. The model shares no memory with p.
func (p *Perceptron) Model() *model.Model {
	nc := len(p.Beta)
	w := sparsevec.NewMatrix(1, max(nc, 1))
	copy(w.Row(0), p.Beta)
	k := p.Kernel.fn()
	sigma := p.Kernel.Sigma
	if sigma == 0 {
		sigma = kernelDefaultSigma
	}
	sv := p.SV
	if sv == nil {
		sv = &sparsevec.CSR{}
	}
	nsv := sv.Rows()
	ptr := make([]int64, nsv+1)
	lo, hi := 0, 0
	if nsv > 0 {
		lo, hi = sv.Ptr[0], sv.Ptr[nsv]
		for r := range nsv {
			ptr[r+1] = int64(sv.Ptr[r+1] - lo)
		}
	}
	return &model.Model{
		Learner:    Learner,
		Sides:      1,
		K:          nc,
		D:          1,
		Multiclass: p.Multiclass,
		Classes:    slices.Clone(p.Classes),
		Weights:    []*sparsevec.Matrix{w},
		Params: map[string]string{
			"kernel": p.Kernel.Kind.String(),
			"degree": strconv.Itoa(k.degree),
			"coef0":  strconv.FormatFloat(p.Kernel.Coef0, 'g', -1, 64),
			"sigma":  strconv.FormatFloat(sigma, 'g', -1, 64),
		},
		Extra: []model.Blob{
			{Name: "alpha", F32: slices.Clone(p.Alpha)},
			{Name: "sv", I64: ptr, U32: slices.Clone(sv.Idx[lo:hi]), F32: slices.Clone(sv.Val[lo:hi])},
			{Name: "sv.labels", F32: slices.Clone(sv.Labels)},
		},
	}
}

// FromModel returns the kernel perceptron stored in m (see
// the layout on Perceptron). It treats m as hostile: every length,
// pointer, index order, value and parameter is checked, and any
// inconsistency is an error wrapping model.ErrInvalid. The result shares
// no memory with m.
func FromModel(m *model.Model) (*Perceptron, error) {
	p, err := kernelFromModel(m)
	if err != nil {
		return nil, fmt.Errorf(errKernel+"%w: %w", model.ErrInvalid, err)
	}
	return p, nil
}

// NewPredictor returns a predictor for the kernel perceptron stored in m
// (FromModel, then Perceptron.NewPredictor).
func NewPredictor(m *model.Model) (*Predictor, error) {
	p, err := FromModel(m)
	if err != nil {
		return nil, err
	}
	return p.NewPredictor(), nil
}

func kernelFromModel(m *model.Model) (*Perceptron, error) {
	if m == nil {
		return nil, errors.New("nil model")
	}
	if m.Learner != Learner {
		return nil, fmt.Errorf("learner %q, want %q", m.Learner, Learner)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	nc := 1
	if m.Multiclass {
		nc = len(m.Classes)
	}
	switch {
	case m.OvO:
		return nil, errors.New("a kernel perceptron model cannot be one-vs-one")
	case m.Sides != 1 || m.D != 1 || m.K != nc:
		return nil, fmt.Errorf("shape sides %d, D %d, K %d, want 1, 1, %d", m.Sides, m.D, m.K, nc)
	case m.Counts != nil:
		return nil, errors.New("unexpected face counts")
	}
	k, err := kernelFromParams(m.Params)
	if err != nil {
		return nil, err
	}
	alpha, sv, labels, err := kernelBlobs(m.Extra)
	if err != nil {
		return nil, err
	}
	csr, err := kernelCSRFromBlob(sv)
	if err != nil {
		return nil, err
	}
	nsv := len(csr.Ptr) - 1
	if len(labels.F32) != nsv {
		return nil, fmt.Errorf("%d support labels for %d support rows", len(labels.F32), nsv)
	}
	if int64(len(alpha.F32)) != int64(nsv)*int64(nc) {
		return nil, fmt.Errorf("%d alphas for %d support rows × %d, want %d", len(alpha.F32), nsv, nc, int64(nsv)*int64(nc))
	}
	for s, y := range labels.F32 {
		if !slices.Contains(m.Classes, y) {
			return nil, fmt.Errorf("support row %d: label %v is not a class of the model %v", s, y, m.Classes)
		}
	}
	for i, a := range alpha.F32 {
		if !kernelFinite(a) {
			return nil, fmt.Errorf("alpha %d is %v", i, a)
		}
	}
	csr.Labels = slices.Clone(labels.F32)
	if csr.Labels == nil {
		csr.Labels = []float32{}
	}
	beta := slices.Clone(m.Weights[0].Row(0)[:nc])
	return &Perceptron{
		Kernel:     k,
		Multiclass: m.Multiclass,
		Classes:    slices.Clone(m.Classes),
		SV:         csr,
		Alpha:      slices.Clone(alpha.F32),
		Beta:       beta,
	}, nil
}

// kernelBlobs returns the three blobs of a kernel perceptron model, or an
// error if one is missing, another is present or one has arrays of the
// wrong type.
func kernelBlobs(extra []model.Blob) (alpha, sv, labels *model.Blob, err error) {
	for i := range extra {
		b := &extra[i]
		switch b.Name {
		case "alpha":
			alpha = b
		case "sv":
			sv = b
		case "sv.labels":
			labels = b
		default:
			return nil, nil, nil, fmt.Errorf("unexpected blob %q", b.Name)
		}
	}
	switch {
	case alpha == nil || sv == nil || labels == nil:
		return nil, nil, nil, errors.New(`missing blob: want "alpha", "sv" and "sv.labels"`)
	case len(alpha.U32) != 0 || len(alpha.I64) != 0:
		return nil, nil, nil, errors.New("blob alpha: unexpected U32 or I64 array")
	case len(labels.U32) != 0 || len(labels.I64) != 0:
		return nil, nil, nil, errors.New("blob sv.labels: unexpected U32 or I64 array")
	}
	return alpha, sv, labels, nil
}

// kernelFromParams parses and checks the kernel parameters of a model.
func kernelFromParams(params map[string]string) (Kernel, error) {
	var k Kernel
	for _, key := range []string{"kernel", "degree", "coef0", "sigma"} {
		if _, ok := params[key]; !ok {
			return k, fmt.Errorf("missing param %q", key)
		}
	}
	kind, err := ParseKernelKind(params["kernel"])
	if err != nil {
		return k, err
	}
	k.Kind = kind
	if k.Degree, err = strconv.Atoi(params["degree"]); err != nil {
		return k, fmt.Errorf("param degree: %w", err)
	}
	if k.Coef0, err = strconv.ParseFloat(params["coef0"], 64); err != nil {
		return k, fmt.Errorf("param coef0: %w", err)
	}
	if k.Sigma, err = strconv.ParseFloat(params["sigma"], 64); err != nil {
		return k, fmt.Errorf("param sigma: %w", err)
	}
	return k.withDefaults()
}

// kernelCSRFromBlob checks the CSR block of the "sv" blob and copies it into a
// sparsevec.CSR (labels unset).
func kernelCSRFromBlob(b *model.Blob) (*sparsevec.CSR, error) {
	ptr := b.I64
	if len(ptr) == 0 {
		return nil, errors.New("blob sv: no row pointers (want nSV+1 of them, from 0)")
	}
	if ptr[0] != 0 {
		return nil, fmt.Errorf("blob sv: first row pointer is %d, want 0", ptr[0])
	}
	nnz := int64(len(b.U32))
	if int64(len(b.F32)) != nnz {
		return nil, fmt.Errorf("blob sv: %d indices but %d values", nnz, len(b.F32))
	}
	for r := 1; r < len(ptr); r++ {
		if ptr[r] < ptr[r-1] || ptr[r] > nnz {
			return nil, fmt.Errorf("blob sv: row pointer %d is %d, want %d to %d", r, ptr[r], ptr[r-1], nnz)
		}
	}
	if last := ptr[len(ptr)-1]; last != nnz {
		return nil, fmt.Errorf("blob sv: last row pointer is %d, want the number of nonzeros %d", last, nnz)
	}
	m := &sparsevec.CSR{
		Labels: make([]float32, len(ptr)-1),
		Ptr:    make([]int, len(ptr)),
		Idx:    slices.Clone(b.U32),
		Val:    slices.Clone(b.F32),
	}
	for r, p := range ptr {
		m.Ptr[r] = int(p)
	}
	if m.Idx == nil {
		m.Idx, m.Val = []uint32{}, []float32{}
	}
	if err := checkKernelRows(m); err != nil {
		return nil, fmt.Errorf("blob sv: %w", err)
	}
	for _, j := range m.Idx {
		m.Dim = max(m.Dim, int(j)+1)
	}
	return m, nil
}

// checkKernelRows checks that m's row pointers are consistent and that every row
// has strictly ascending indices and finite values.
func checkKernelRows(m *sparsevec.CSR) error {
	n := m.Rows()
	if len(m.Ptr) != n+1 {
		return fmt.Errorf("%d row pointers for %d rows", len(m.Ptr), n)
	}
	if m.Ptr[0] != 0 {
		return fmt.Errorf("first row pointer is %d, want 0", m.Ptr[0])
	}
	for r := range n {
		lo, hi := m.Ptr[r], m.Ptr[r+1]
		if hi < lo || hi > len(m.Idx) || hi > len(m.Val) {
			return fmt.Errorf("row %d: pointers %d..%d out of order or beyond the %d nonzeros", r, lo, hi, min(len(m.Idx), len(m.Val)))
		}
		idx, val := m.Idx[lo:hi], m.Val[lo:hi]
		for i, j := range idx {
			if i > 0 && j <= idx[i-1] {
				return fmt.Errorf("row %d: indices not strictly ascending (%d then %d)", r, idx[i-1], j)
			}
			if !kernelFinite(val[i]) {
				return fmt.Errorf("row %d: feature %d is %v", r, j, val[i])
			}
		}
	}
	return nil
}

func kernelFinite(v float32) bool {
	f := float64(v)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}
