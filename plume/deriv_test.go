package plume

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/polyhedral/cpm/sparsevec"
)

// dyadicData returns n rows over features 1..4 with values in {−1, −7/8,
// …, 1} (each feature present with probability 3/4) and mixed labels ±1.
// With weights on the grid 2⁻¹⁰ of [−2, 2] every product x_j·w_j is a
// multiple of 2⁻¹³ below 2 in magnitude, so the float32 scores of
// Matrix.Scores are exact in any summation order: finite differences
// then see only the float64 arithmetic of the objective.
func dyadicData(rng *rand.Rand, n int) *sparsevec.CSR {
	data := &sparsevec.CSR{Dim: 5}
	for r := range n {
		var x sparsevec.Vector
		for j := uint32(1); j <= 4; j++ {
			if rng.IntN(4) > 0 {
				x.Idx = append(x.Idx, j)
				x.Val = append(x.Val, float32(rng.IntN(17)-8)/8)
			}
		}
		data.Append(float32(2*(r%2)-1), x)
	}
	data.Dim = 5
	return data
}

// dyadicWeights fills w with multiples of 2⁻¹⁰ in [−1, 1].
func dyadicWeights(w *sparsevec.Matrix, rng *rand.Rand) {
	for j := range w.D {
		for k := range w.K {
			w.Set(j, k, float32(rng.IntN(2049)-1024)/1024)
		}
	}
}

// ref is a dense float64 transcription of the paper's formulas (eq. 3-8,
// H_kk, H_kr), independent of objective.pass: W[j][k] with j = 0 the bias.
type ref struct {
	x      [][]float64 // dense x̃ rows, x[n][0] = bias
	y      []float64
	gamma  float64
	hard   bool
	lambda float64
}

func newRef(data *sparsevec.CSR, ys []float64, d int, bias, gamma float64, hard bool, lambda float64) *ref {
	r := &ref{y: ys, gamma: gamma, hard: hard, lambda: lambda}
	for n := range data.Rows() {
		x := make([]float64, d)
		x[0] = bias
		row := data.Row(n)
		for i, j := range row.Idx {
			x[j] = float64(row.Val[i])
		}
		r.x = append(r.x, x)
	}
	return r
}

func (r *ref) scores(w [][]float64, n int) []float64 {
	k := len(w[0])
	s := make([]float64, k)
	for j, xj := range r.x[n] {
		for i := range k {
			s[i] += xj * w[j][i]
		}
	}
	return s
}

// gate returns g_k = e^{−γ s_k}/Σ_j e^{−γ s_j}, computed directly (the
// test's scores are small), or the one-hot argmin for the hard gate.
func (r *ref) gate(s []float64) []float64 {
	g := make([]float64, len(s))
	if r.hard {
		g[argmin(s)] = 1
		return g
	}
	var z float64
	for i, v := range s {
		g[i] = math.Exp(-r.gamma * v)
		z += g[i]
	}
	for i := range g {
		g[i] /= z
	}
	return g
}

func sig(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// responsibilities returns π_k(x_n, Θ) of eq. 6.
func (r *ref) responsibilities(w [][]float64) [][]float64 {
	var pi [][]float64
	for n := range r.x {
		s := r.scores(w, n)
		g := r.gate(s)
		p := make([]float64, len(s))
		var z float64
		for i := range s {
			p[i] = g[i] * sig(r.y[n]*s[i])
			z += p[i]
		}
		for i := range p {
			p[i] /= z
		}
		pi = append(pi, p)
	}
	return pi
}

// eval returns L(w), Q(w, Θᶜ) for the responsibilities pi of Θᶜ, ∇Q as
// grad[j][k], and −∇²Q as h[(j,k)][(j',k')] flattened j·K+k; penalised
// by λ like the objective. For the hard gate Q drops the gate term.
func (r *ref) eval(w, pi [][]float64) (l, q float64, grad [][]float64, h [][]float64) {
	d, k := len(w), len(w[0])
	grad = make([][]float64, d)
	for j := range grad {
		grad[j] = make([]float64, k)
	}
	h = make([][]float64, d*k)
	for i := range h {
		h[i] = make([]float64, d*k)
	}
	for n, x := range r.x {
		s := r.scores(w, n)
		g := r.gate(s)
		y := r.y[n]
		var p float64
		for i := range s {
			p += g[i] * sig(y*s[i])
		}
		l += math.Log(p)
		for i := range s {
			if pi[n][i] == 0 {
				continue
			}
			q += pi[n][i] * math.Log(sig(y*s[i]))
			if !r.hard {
				q += pi[n][i] * math.Log(g[i])
			}
		}
		// eq. 8, written as in the paper: −[γ(π_k − g_k) − y π_k (1 − σ(y s_k))] x̃.
		for i := range s {
			c := -(r.gamma*(pi[n][i]-g[i]) - y*pi[n][i]*(1-sig(y*s[i])))
			if r.hard {
				c = y * pi[n][i] * (1 - sig(y*s[i]))
			}
			for j := range d {
				grad[j][i] += c * x[j]
			}
		}
		// −H_kk = Σ [γ² g_k(1 − g_k) + π_k σ(s_k)(1 − σ(s_k))] x̃x̃ᵀ,
		// −H_kr = −Σ γ² g_k g_r x̃x̃ᵀ.
		for a := range k {
			for b := range k {
				var c float64
				if a == b {
					c = pi[n][a] * sig(s[a]) * (1 - sig(s[a]))
					if !r.hard {
						c += r.gamma * r.gamma * g[a] * (1 - g[a])
					}
				} else if !r.hard {
					c = -r.gamma * r.gamma * g[a] * g[b]
				}
				for ja := range d {
					for jb := range d {
						h[ja*k+a][jb*k+b] += c * x[ja] * x[jb]
					}
				}
			}
		}
	}
	for j := 1; j < d; j++ {
		for i := range k {
			l -= r.lambda / 2 * w[j][i] * w[j][i]
			q -= r.lambda / 2 * w[j][i] * w[j][i]
			grad[j][i] -= r.lambda * w[j][i]
			h[j*k+i][j*k+i] += r.lambda
		}
	}
	return l, q, grad, h
}

func toDense(w *sparsevec.Matrix) [][]float64 {
	out := make([][]float64, w.D)
	for j := range out {
		out[j] = make([]float64, w.K)
		for k := range w.K {
			out[j][k] = float64(w.At(j, k))
		}
	}
	return out
}

// derivCase is one objective configuration of the derivative tests.
type derivCase struct {
	name   string
	k      int
	gamma  float64
	hard   bool
	lambda float64
}

var derivCases = []derivCase{
	{"soft-K3", 3, 1, false, 0},
	{"soft-K2-gamma2.5-lambda", 2, 2.5, false, 0.3},
	{"soft-K4-gamma0.5", 4, 0.5, false, 0},
	{"hard-K3", 3, 0, true, 0},
}

// setup returns the objective, Θᶜ (whose π is stored) and a nearby Θ ≠ Θᶜ
// at which to differentiate Q(·, Θᶜ), both on the dyadic grid.
func (c derivCase) setup(t *testing.T) (*objective, *ref, *sparsevec.Matrix, *sparsevec.Matrix) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, uint64(c.k)))
	data := dyadicData(rng, 40)
	classes, err := checkData(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	ys := signs(data, classes)
	o := newObjective(data, ys, 5, c.k, 1, c.gamma, c.hard, c.lambda, true)
	wc := sparsevec.NewMatrix(5, c.k)
	dyadicWeights(wc, rng)
	o.pass(wc, eStep, nil, nil)
	w := sparsevec.NewMatrix(5, c.k)
	copy(w.Data, wc.Data)
	for j := range w.D {
		for k := range w.K {
			w.Set(j, k, w.At(j, k)+float32(rng.IntN(257)-128)/1024)
		}
	}
	return o, newRef(data, ys, 5, 1, c.gamma, c.hard, c.lambda), wc, w
}

// valueAt returns Q(w, Θᶜ) with the objective's stored π.
func valueAt(o *objective, w *sparsevec.Matrix) float64 {
	_, q := o.pass(w, atPi, nil, nil)
	return q
}

// perturbed returns a copy of w with W[j][k] += h (h on the 2⁻¹⁰ grid).
func perturbed(w *sparsevec.Matrix, j, k int, h float32) *sparsevec.Matrix {
	c := sparsevec.NewMatrix(w.D, w.K)
	copy(c.Data, w.Data)
	c.Set(j, k, c.At(j, k)+h)
	return c
}

// TestMatchesReference compares L, Q, ∇Q and −∇²Q of objective.pass with
// the dense float64 transcription of the paper's formulas, at Θ ≠ Θᶜ
// (atPi) and at Θ = Θᶜ (eStep, where ∇Q = ∇L).
func TestMatchesReference(t *testing.T) {
	for _, c := range derivCases {
		t.Run(c.name, func(t *testing.T) {
			o, r, wc, w := c.setup(t)
			pi := r.responsibilities(toDense(wc))
			if c.hard {
				for n := range pi {
					clear(pi[n])
					pi[n][argmin(r.scores(toDense(wc), n))] = 1
				}
			}
			for n := range pi {
				for k := range c.k {
					if math.Abs(pi[n][k]-o.pi[n*c.k+k]) > 1e-12 {
						t.Fatalf("π[%d][%d] = %v, reference %v", n, k, o.pi[n*c.k+k], pi[n][k])
					}
				}
			}
			grad := make([]float64, o.p)
			h := make([]float64, o.p*o.p)
			l, q := o.pass(w, atPi, grad, h)
			rl, rq, rg, rh := r.eval(toDense(w), pi)
			if !c.hard && !math.IsNaN(l) {
				t.Errorf("soft atPi pass returned L = %v, want NaN", l)
			}
			if c.hard && math.Abs(l-rl) > 1e-10*(1+math.Abs(rl)) {
				t.Errorf("hard L = %v, reference %v", l, rl)
			}
			if math.Abs(q-rq) > 1e-10*(1+math.Abs(rq)) {
				t.Errorf("Q = %v, reference %v", q, rq)
			}
			checkGrad(t, "∇Q", grad, rg, 1e-5)
			checkHess(t, "−∇²Q", h, rh, c.k, 1e-10)
			// At Θᶜ itself: L and ∇L.
			if !c.hard {
				lc, _ := o.pass(wc, eStep, grad, nil)
				rl, _, rg, _ := r.eval(toDense(wc), pi)
				if math.Abs(lc-rl) > 1e-10*(1+math.Abs(rl)) {
					t.Errorf("L(Θᶜ) = %v, reference %v", lc, rl)
				}
				checkGrad(t, "∇L", grad, rg, 1e-5)
			}
		})
	}
}

func checkGrad(t *testing.T, what string, got []float64, want [][]float64, tol float64) {
	t.Helper()
	k := len(want[0])
	scale := 1.0
	for _, row := range want {
		for _, v := range row {
			scale = max(scale, math.Abs(v))
		}
	}
	for j, row := range want {
		for i, v := range row {
			if g := got[j*k+i]; math.Abs(g-v) > tol*scale {
				t.Errorf("%s[feature %d][expert %d] = %.9g, want %.9g (scale %.3g)", what, j, i, g, v, scale)
			}
		}
	}
}

// checkHess compares h with want block by block and names the block.
func checkHess(t *testing.T, what string, h []float64, want [][]float64, k int, tol float64) {
	t.Helper()
	p := len(want)
	scale := 1.0
	for _, row := range want {
		for _, v := range row {
			scale = max(scale, math.Abs(v))
		}
	}
	for a := range p {
		for b := range p {
			if got := h[a*p+b]; math.Abs(got-want[a][b]) > tol*scale {
				t.Errorf("%s block H_%d%d, features (%d,%d): %.9g, want %.9g (scale %.3g)", what, a%k, b%k, a/k, b/k, got, want[a][b], scale)
			}
		}
	}
}

// TestGradientFiniteDifference checks ∇Q(Θ, Θᶜ) at Θ ≠ Θᶜ (the gradient
// of every inner step) and ∇L(Θᶜ) (the E-step gradient that GA, Newton and
// BFGS all start from) against central differences of the objective's own
// values, for every weight.
func TestGradientFiniteDifference(t *testing.T) {
	const h = 1.0 / 1024 // one grid step: perturbed weights stay exact
	for _, c := range derivCases {
		t.Run(c.name, func(t *testing.T) {
			o, _, wc, w := c.setup(t)
			grad := make([]float64, o.p)
			o.pass(w, atPi, grad, nil)
			fd := make([][]float64, o.d)
			for j := range o.d {
				fd[j] = make([]float64, o.k)
				for k := range o.k {
					fd[j][k] = (valueAt(o, perturbed(w, j, k, h)) - valueAt(o, perturbed(w, j, k, -h))) / (2 * h)
				}
			}
			checkGrad(t, "∇Q vs finite differences", grad, fd, 2e-5)

			if c.hard {
				return // L of the hard gate is piecewise smooth; Q covers SPLA1
			}
			lAt := func(w *sparsevec.Matrix) float64 {
				l, _ := o.pass(w, eStep, nil, nil)
				return l
			}
			for j := range o.d {
				for k := range o.k {
					fd[j][k] = (lAt(perturbed(wc, j, k, h)) - lAt(perturbed(wc, j, k, -h))) / (2 * h)
				}
			}
			o.pass(wc, eStep, grad, nil)
			checkGrad(t, "∇L vs finite differences", grad, fd, 2e-5)
		})
	}
}

// TestHessianFiniteDifference checks every block of −∇²Q, the diagonal
// H_kk and the off-diagonal H_kr, against central differences of the
// gradient, at Θ ≠ Θᶜ.
func TestHessianFiniteDifference(t *testing.T) {
	const step = 1.0 / 128
	for _, c := range derivCases {
		t.Run(c.name, func(t *testing.T) {
			o, _, _, w := c.setup(t)
			p := o.p
			h := make([]float64, p*p)
			o.pass(w, atPi, nil, h)
			gp, gm := make([]float64, p), make([]float64, p)
			fd := make([][]float64, p)
			for j := range o.d {
				for k := range o.k {
					o.pass(perturbed(w, j, k, step), atPi, gp, nil)
					o.pass(perturbed(w, j, k, -step), atPi, gm, nil)
					col := j*o.k + k
					for row := range p {
						if fd[row] == nil {
							fd[row] = make([]float64, p)
						}
						fd[row][col] = -(gp[row] - gm[row]) / (2 * step)
					}
				}
			}
			checkHess(t, "−∇²Q vs finite differences", h, fd, o.k, 2e-4)
			// Off-diagonal blocks must be nonzero for the soft gate (the
			// shared-parameter coupling) and zero for the hard one.
			var off float64
			for a := range p {
				for b := range p {
					if a%o.k != b%o.k {
						off = max(off, math.Abs(h[a*p+b]))
					}
				}
			}
			if c.hard != (off == 0) {
				t.Errorf("largest |H_kr|, r ≠ k: %v (hard %v)", off, c.hard)
			}
		})
	}
}

// TestBFGSUpdate checks eq. 10 with y = −Δg on a concave quadratic
// Q(θ) = bᵀθ − θᵀAθ/2: after each update B is symmetric and satisfies the
// secant condition B·y = s, and it stays positive definite.
func TestBFGSUpdate(t *testing.T) {
	const p = 5
	rng := rand.New(rand.NewPCG(3, 4))
	m := make([]float64, p*p)
	for i := range m {
		m[i] = rng.NormFloat64()
	}
	a := make([]float64, p*p) // A = MᵀM + I
	for i := range p {
		for j := range p {
			for l := range p {
				a[i*p+j] += m[l*p+i] * m[l*p+j]
			}
		}
		a[i*p+i]++
	}
	bvec := make([]float64, p)
	for i := range bvec {
		bvec[i] = rng.NormFloat64()
	}
	gradAt := func(th []float64) []float64 {
		g := make([]float64, p)
		for i := range p {
			g[i] = bvec[i]
			for j := range p {
				g[i] -= a[i*p+j] * th[j]
			}
		}
		return g
	}
	s := newBFGS(p)
	th := make([]float64, p)
	s.observe(th, gradAt(th))
	for it := range 3 * p {
		prev := append([]float64(nil), th...)
		for i := range th {
			th[i] += rng.NormFloat64()
		}
		g := gradAt(th)
		s.observe(th, g)
		// secant: B·y = s with y = −(g⁺ − g) = A·s.
		step := make([]float64, p)
		for i := range p {
			step[i] = th[i] - prev[i]
		}
		y := make([]float64, p)
		for i := range p {
			for j := range p {
				y[i] += a[i*p+j] * step[j]
			}
		}
		by := make([]float64, p)
		s.direction(by, y)
		for i := range p {
			if math.Abs(by[i]-step[i]) > 1e-8*(1+math.Abs(step[i])) {
				t.Fatalf("update %d: (B·y)[%d] = %v, want s = %v", it, i, by[i], step[i])
			}
			for j := range p {
				if bij, bji := s.b[i*p+j], s.b[j*p+i]; math.Abs(bij-bji) > 1e-10*(1+math.Abs(bij)) {
					t.Fatalf("update %d: B not symmetric at (%d,%d): %v vs %v", it, i, j, bij, bji)
				}
			}
		}
	}
	// B stays positive definite, so B·g is an ascent direction.
	sym := mat.NewSymDense(p, append([]float64(nil), s.b...))
	var chol mat.Cholesky
	if !chol.Factorize(sym) {
		t.Errorf("B is not positive definite after %d updates", 3*p)
	}
}

// TestRowMathStable checks the stable kernels against direct formulas
// where those are accurate, and for finite results where they overflow.
func TestRowMathStable(t *testing.T) {
	for _, z := range []float64{-30, -5, -1e-3, 0, 1e-3, 2, 30} {
		ls, sn := logSigmoidPair(z)
		if want := math.Log(1 / (1 + math.Exp(-z))); math.Abs(ls-want) > 1e-14*(1+math.Abs(want)) {
			t.Errorf("log σ(%v) = %v, want %v", z, ls, want)
		}
		if want := 1 / (1 + math.Exp(z)); math.Abs(sn-want) > 1e-15 {
			t.Errorf("σ(−%v) = %v, want %v", z, sn, want)
		}
		if s := sigmoid(z); math.Abs(s-1/(1+math.Exp(-z))) > 1e-15 {
			t.Errorf("σ(%v) = %v", z, s)
		}
	}
	for _, tc := range []struct{ z, ls, sn float64 }{
		{-1000, -1000, 1}, {1000, 0, 0}, {-800, -800, 1},
	} {
		ls, sn := logSigmoidPair(tc.z)
		if ls != tc.ls || sn != tc.sn {
			t.Errorf("logSigmoidPair(%v) = %v, %v, want %v, %v", tc.z, ls, sn, tc.ls, tc.sn)
		}
	}
	// The gate of huge scores: no overflow, sums to 1, ties to the lowest.
	lg, g := make([]float64, 3), make([]float64, 3)
	for _, s := range [][]float64{{1e6, -1e6, 3}, {-1e300, 1e300, 0}, {5, 5, 7}} {
		r := logGate(lg, g, s, 10)
		var sum float64
		for k := range g {
			if math.IsNaN(lg[k]) || math.IsNaN(g[k]) {
				t.Fatalf("gate of %v: NaN (%v, %v)", s, lg, g)
			}
			sum += g[k]
		}
		if math.Abs(sum-1) > 1e-15 || r != argmin(s) {
			t.Errorf("gate of %v: %v (sum %v), argmin %d", s, g, sum, r)
		}
	}
	if p := posterior([]float64{0.5, 0.5}, []float64{1e-12, -2e-12}); math.Abs(p-(-1.25e-13)) > 1e-26 {
		t.Errorf("posterior − 1/2 = %v, want −1.25e-13", p)
	}
	if got := fmt.Sprint(logSumExp([]float64{1000, 1000})); got != fmt.Sprint(1000+math.Ln2) {
		t.Errorf("logsumexp(1000, 1000) = %s", got)
	}
}
