package plume

import (
	"math"

	"github.com/polyhedral/cpm/sparsevec"
)

// objective evaluates the log-likelihood L, the EM auxiliary function Q and
// their derivatives over the training rows. Parameters are flattened
// feature-major like the weight matrix: θ[j·K + k] = W[j][k], j = 0 the
// bias row, so P = D·K.
//
// For one row with scores s_k = w̃_k·x̃ and y ∈ {+1, −1} (see the package
// documentation for the derivation):
//
//	log g_k = −γ s_k − log Σ_j e^{−γ s_j}
//	log p(y|x) = log Σ_k e^{log g_k + log σ(y s_k)}
//	π_k = e^{log g_k + log σ(y s_k) − log p(y|x)}                  (eq. 6)
//	Q_n = Σ_k π_k·(log g_k + log σ(y s_k))
//	∂Q_n/∂s_k = γ(g_k − π_k) + y π_k σ(−y s_k)                      (eq. 8)
//	−∂²Q_n/∂s_k² = γ² g_k(1 − g_k) + π_k σ(s_k)σ(−s_k)              (−H_kk)
//	−∂²Q_n/∂s_k∂s_r = −γ² g_k g_r                                    (−H_kr)
//
// and ∂/∂w̃_k = x̃·∂/∂s_k. With the hard gate (SPLA1) the gate terms are
// dropped: log g_k is 0 or −Inf and piecewise constant in Θ.
//
// An objective owns scratch space and is not safe for concurrent use.
type objective struct {
	data   *sparsevec.CSR
	ys     []float64 // +1 for the inside class, −1 otherwise
	d, k   int       // weight matrix shape
	p      int       // d·k parameters
	bias   float32   // value of the constant feature (0: none)
	gamma  float64   // gate sharpness; +Inf for the hard gate
	hard   bool
	lambda float64

	// pi holds the responsibilities π_k(x_n, Θᶜ) of the last E-step,
	// row-major N×K.
	pi []float64

	raw  []float32 // Scores output, Stride long
	coef []float32 // AddOuter coefficients, Stride long, zero padding
	s    []float64 // K scores with bias
	lg   []float64 // K log gates
	g    []float64 // K gates
	ls   []float64 // K log σ(y s_k)
	sn   []float64 // K σ(−y s_k)
	e    []float64 // K scratch
	a    []float64 // K(K+1)/2 row Hessian weights of −Q, pairs k <= r

	// The gradient is accumulated in float32 by AddOuter into gacc for
	// block rows at a time, then folded into the float64 result, so the
	// float32 sums stay short. The bias row is summed in float64 in bacc.
	gacc  *sparsevec.Matrix
	bacc  []float64
	block int

	// hb holds −∇²Q during a pass as K(K+1)/2 symmetric d×d blocks, one
	// per expert pair k <= r (upper triangles only), Σ_n a_kr x̃x̃ᵀ: a
	// row's update touches only its nonzero pairs. nil without Newton.
	hb  []float64
	aj  []int     // augmented row x̃: feature indices (bias first)
	av  []float64 // and values
	nnz int       // longest row
}

// passMode says which responsibilities a pass uses.
type passMode int

const (
	// eStep computes π from the weights being evaluated and stores it.
	eStep passMode = iota
	// atPi uses the stored π of the last E-step.
	atPi
)

func newObjective(data *sparsevec.CSR, ys []float64, d, k int, bias float32, gamma float64, hard bool, lambda float64, hessian bool) *objective {
	if hard {
		gamma = math.Inf(1)
	}
	stride := sparsevec.StrideFor(k)
	o := &objective{
		data: data, ys: ys, d: d, k: k, p: d * k, bias: bias, gamma: gamma, hard: hard, lambda: lambda,
		pi:   make([]float64, data.Rows()*k),
		raw:  make([]float32, stride),
		coef: make([]float32, stride),
		s:    make([]float64, k),
		lg:   make([]float64, k),
		g:    make([]float64, k),
		ls:   make([]float64, k),
		sn:   make([]float64, k),
		e:    make([]float64, k),
		a:    make([]float64, k*(k+1)/2),
		gacc: sparsevec.NewMatrix(d, k),
		bacc: make([]float64, k),
		// Folding costs D·Stride; every max(256, D) rows it costs at most
		// Stride per row, no more than the AddOuter of a one-nonzero row.
		block: max(256, d),
	}
	if hessian {
		o.hb = make([]float64, k*(k+1)/2*d*d)
		for r := range data.Rows() {
			o.nnz = max(o.nnz, data.Ptr[r+1]-data.Ptr[r])
		}
		o.aj = make([]int, o.nnz+1)
		o.av = make([]float64, o.nnz+1)
	}
	return o
}

// scores sets dst[k] = w̃_k·x̃ = Σ_j x_j W[j][k] + b·W[0][k]: the sparse
// kernel's float32 sum over x, plus the bias row, in float64. raw is
// Stride long scratch.
func scores(dst []float64, raw []float32, w *sparsevec.Matrix, bias float32, x sparsevec.Vector) {
	w.Scores(raw, x)
	row0 := w.Row(0)
	raw = raw[:len(dst)]
	row0 = row0[:len(dst)]
	for k := range dst {
		dst[k] = float64(raw[k]) + float64(bias)*float64(row0[k])
	}
}

// penalty returns (λ/2)·Σ_{j≥1,k} W[j][k]².
func (o *objective) penalty(w *sparsevec.Matrix) float64 {
	if o.lambda == 0 {
		return 0
	}
	var s float64
	for j := 1; j < w.D; j++ {
		for _, v := range w.Row(j)[:w.K] {
			s += float64(v) * float64(v)
		}
	}
	return o.lambda / 2 * s
}

// pass evaluates the rows at weights w. In eStep mode it computes and
// stores π from w, and returns L(w) and Q(w, w). In atPi mode it uses the
// stored π and returns Q(w, Θᶜ) as q; l is then L(w) for the hard gate
// (the line search objective of SPLA1, see lineValue) and NaN otherwise.
// Both include the penalty −(λ/2)‖W‖².
//
// If grad is not nil (length P) it is set to ∇_Θ Q(w, Θᶜ) (with eStep,
// Θᶜ = w, so it is also ∇L(w)). If negHess is not nil (length P·P; the
// objective must have been made with hessian) it is set to −∇²Q, positive
// semidefinite, plus λ on the diagonal of the penalised rows, in full
// (both triangles). pass does not allocate.
func (o *objective) pass(w *sparsevec.Matrix, mode passMode, grad, negHess []float64) (l, q float64) {
	k := o.k
	if grad != nil {
		clear(grad[:o.p])
		o.gacc.Zero()
		clear(o.bacc)
	}
	if negHess != nil {
		clear(o.hb)
	}
	if mode == atPi && !o.hard {
		l = math.NaN()
	}
	s, lg, g, ls, sn, e := o.s[:k], o.lg[:k], o.g[:k], o.ls[:k], o.sn[:k], o.e[:k]
	inBlock := 0
	for r := range o.data.Rows() {
		x := o.data.Row(r)
		y := o.ys[r]
		pi := o.pi[r*k : (r+1)*k : (r+1)*k]
		scores(s, o.raw, w, o.bias, x)
		gr := logGate(lg, g, s, o.gamma)
		for i, v := range s {
			ls[i], sn[i] = logSigmoidPair(y * v)
		}
		switch {
		case o.hard:
			if mode == eStep {
				clear(pi)
				pi[gr] = 1
				q += ls[gr]
			} else {
				for i, p := range pi {
					if p != 0 {
						q += p * ls[i]
					}
				}
			}
			l += ls[gr]
		case mode == eStep:
			// log p(y|x) = logsumexp(lg + ls), π = softmax(lg + ls).
			m := math.Inf(-1)
			for i := range e {
				e[i] = lg[i] + ls[i]
				m = max(m, e[i])
			}
			var sum float64
			for i, v := range e {
				e[i] = math.Exp(v - m)
				sum += e[i]
			}
			l += m + math.Log(sum)
			for i := range pi {
				pi[i] = e[i] / sum
				q += pi[i] * (lg[i] + ls[i])
			}
		default:
			for i, p := range pi {
				q += p * (lg[i] + ls[i])
			}
		}
		if grad == nil && negHess == nil {
			continue
		}
		// ∂Q_n/∂s_i = γ(g_i − π_i) + y π_i σ(−y s_i).
		for i := range s {
			c := y * pi[i] * sn[i]
			if !o.hard {
				c += o.gamma * (g[i] - pi[i])
			}
			o.coef[i] = float32(c)
			o.bacc[i] += float64(o.bias) * c
		}
		if grad != nil {
			o.gacc.AddOuter(o.coef, &x)
			if inBlock++; inBlock == o.block {
				o.fold(grad)
				inBlock = 0
			}
		}
		if negHess != nil {
			o.rowHessian(pi)
			o.addHessian(x)
		}
	}
	if grad != nil {
		o.fold(grad)
		for i, v := range o.bacc {
			grad[i] += v
		}
	}
	if negHess != nil {
		o.expandHessian(negHess)
	}
	if o.lambda != 0 {
		pen := o.penalty(w)
		l -= pen
		q -= pen
		for j := 1; j < w.D; j++ {
			for i, v := range w.Row(j)[:k] {
				if grad != nil {
					grad[j*k+i] -= o.lambda * float64(v)
				}
				if negHess != nil {
					negHess[(j*k+i)*o.p+j*k+i] += o.lambda
				}
			}
		}
	}
	return l, q
}

// rowHessian sets o.a to the row's −∂²Q_n/∂s_k∂s_r for k <= r, pair-major
// (0,0), (0,1), …, (0,K−1), (1,1), …, from the gate and σ(−y s) of the
// last row: π_k σ(s_k)σ(−s_k) (σ(s)σ(−s) = σ(ys)σ(−ys) = (1 − sn)·sn)
// plus γ² g_k(1 − g_k) on the diagonal and −γ² g_k g_r off it.
func (o *objective) rowHessian(pi []float64) {
	g, sn := o.g, o.sn
	g2 := o.gamma * o.gamma
	t := 0
	for i := range o.k {
		o.a[t] = pi[i] * (1 - sn[i]) * sn[i]
		if !o.hard {
			o.a[t] += g2 * g[i] * (1 - g[i])
		}
		t++
		for r := i + 1; r < o.k; r++ {
			o.a[t] = 0
			if !o.hard {
				o.a[t] = -g2 * g[i] * g[r]
			}
			t++
		}
	}
}

// addHessian adds a_kr·x̃x̃ᵀ to the upper triangle of every block of o.hb,
// over the nonzeros of x̃ = (b, x) only.
func (o *objective) addHessian(x sparsevec.Vector) {
	n := 0
	if o.bias != 0 {
		o.aj[0], o.av[0] = 0, float64(o.bias)
		n = 1
	}
	for i, j := range x.Idx {
		o.aj[n], o.av[n] = int(j), float64(x.Val[i])
		n++
	}
	aj, av := o.aj[:n], o.av[:n]
	d := o.d
	for b, c := range o.a {
		if c == 0 {
			continue
		}
		blk := o.hb[b*d*d : (b+1)*d*d]
		for ta, ja := range aj {
			cv := c * av[ta]
			row := blk[ja*d : (ja+1)*d]
			tj, tv := aj[ta:], av[ta:len(aj)]
			for tb, jb := range tj {
				row[jb] += cv * tv[tb]
			}
		}
	}
}

// expandHessian writes the blocks of o.hb into h, P×P row-major in full:
// h[(ja·K+k)·P + jb·K+r] = block(min(k,r), max(k,r))[min(ja,jb)][max(ja,jb)].
func (o *objective) expandHessian(h []float64) {
	k, d, p := o.k, o.d, o.p
	b := 0
	for i := range k {
		for r := i; r < k; r++ {
			blk := o.hb[b*d*d : (b+1)*d*d]
			b++
			for ja := range d {
				for jb := ja; jb < d; jb++ {
					v := blk[ja*d+jb]
					h[(ja*k+i)*p+jb*k+r] = v
					h[(jb*k+r)*p+ja*k+i] = v
					h[(jb*k+i)*p+ja*k+r] = v
					h[(ja*k+r)*p+jb*k+i] = v
				}
			}
		}
	}
}

// fold adds the float32 block accumulator into grad and clears it.
func (o *objective) fold(grad []float64) {
	k, st := o.k, o.gacc.Stride
	data := o.gacc.Data
	for j := 1; j < o.d; j++ {
		row := data[j*st : j*st+k]
		g := grad[j*k : (j+1)*k]
		for i, v := range row {
			g[i] += float64(v)
		}
	}
	o.gacc.Zero()
}

// lineValue returns the function the line search ascends at w: Q(w, Θᶜ)
// for PLUME, and for SPLA1 the hard-gate log-likelihood L(w) itself (see
// the package documentation), both penalised.
func (o *objective) lineValue(w *sparsevec.Matrix) float64 {
	l, q := o.pass(w, atPi, nil, nil)
	if o.hard {
		return l
	}
	return q
}
