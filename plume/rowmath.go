package plume

import "math"

// logSigmoid returns log σ(z) = −log(1 + e^{−z}) without overflow or
// cancellation: −log1p(e^{−z}) for z ≥ 0 and z − log1p(e^{z}) for z < 0.
func logSigmoid(z float64) float64 {
	if z >= 0 {
		return -math.Log1p(math.Exp(-z))
	}
	return z - math.Log1p(math.Exp(z))
}

// sigmoid returns σ(z) = 1/(1 + e^{−z}), evaluating the exponential only
// of a non-positive number.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// logSumExp returns log Σ_k e^{v_k}, shifted by the maximum. It returns
// −Inf for an empty v or when every v_k is −Inf.
func logSumExp(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// argmin returns the index of the smallest score, ties to the lowest index.
func argmin(s []float64) int {
	best := 0
	for k := 1; k < len(s); k++ {
		if s[k] < s[best] {
			best = k
		}
	}
	return best
}

// logSigmoidPair returns log σ(z) and σ(−z) = 1 − σ(z) from one
// exponential of −|z|: for z ≥ 0, e = e^{−z}, log σ(z) = −log1p(e) and
// σ(−z) = e/(1+e); for z < 0, e = e^{z}, log σ(z) = z − log1p(e) and
// σ(−z) = 1/(1+e).
func logSigmoidPair(z float64) (ls, sneg float64) {
	if z >= 0 {
		e := math.Exp(-z)
		return -math.Log1p(e), e / (1 + e)
	}
	e := math.Exp(z)
	return z - math.Log1p(e), 1 / (1 + e)
}

// logGate sets lg[k] = log g_k and g[k] = g_k for the scores s: the
// softmax of −γ·s (eq. 4), shifted by its maximum −γ·min s so that no
// exponential overflows; or for the hard gate (gamma = +Inf) 1 (log 0) at
// argmin s and 0 (−Inf) elsewhere. It returns the gated expert argmin s.
func logGate(lg, g, s []float64, gamma float64) int {
	r := argmin(s)
	lg, g = lg[:len(s)], g[:len(s)]
	if math.IsInf(gamma, 1) {
		for k := range lg {
			lg[k], g[k] = math.Inf(-1), 0
		}
		lg[r], g[r] = 0, 1
		return r
	}
	m := s[r]
	var sum float64
	for k, v := range s {
		lg[k] = -gamma * (v - m)
		e := 1.0
		if k != r {
			e = math.Exp(lg[k])
		}
		g[k] = e
		sum += e
	}
	ls := math.Log(sum)
	for k := range lg {
		lg[k] -= ls
		g[k] /= sum
	}
	return r
}

// posterior returns p(y = +1 | x) − 1/2 = Σ_k g_k·(σ(s_k) − 1/2) =
// Σ_k g_k·tanh(s_k/2)/2 for the gate g, exact near the decision
// boundary where p − 1/2 would cancel.
func posterior(g, s []float64) float64 {
	var p float64
	for k, v := range g {
		if v != 0 {
			p += v * math.Tanh(s[k]/2)
		}
	}
	return p / 2
}
