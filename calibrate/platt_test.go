package calibrate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/polyhedral/cpm/model"
)

// smoothed returns Platt's targets for pos.
func smoothed(pos []bool) []float64 {
	var np, nn float64
	for _, p := range pos {
		if p {
			np++
		} else {
			nn++
		}
	}
	t := make([]float64, len(pos))
	for i, p := range pos {
		t[i] = 1 / (nn + 2)
		if p {
			t[i] = (np + 1) / (np + 2)
		}
	}
	return t
}

// crossEntropy is F(A, B) written directly from its definition.
func crossEntropy(dec []float64, t []float64, a, b float64) float64 {
	var f float64
	for i, d := range dec {
		p := 1 / (1 + math.Exp(a*d+b))
		f -= t[i]*math.Log(p) + (1-t[i])*math.Log(1-p)
	}
	return f
}

// With decision values taking two values ±1, the two parameters fit each
// value's mean target exactly: A + B = logit⁻ of the mean at +1, −A + B at
// −1. FitSigmoid must find that closed-form maximum.
func TestFitSigmoidTwoPointsClosedForm(t *testing.T) {
	var dec []float64
	var pos []bool
	add := func(f float64, npos, nneg int) {
		for range npos {
			dec, pos = append(dec, f), append(pos, true)
		}
		for range nneg {
			dec, pos = append(dec, f), append(pos, false)
		}
	}
	add(1, 30, 10)
	add(-1, 5, 25)
	tg := smoothed(pos)
	mean := func(f float64) float64 {
		var s, n float64
		for i, d := range dec {
			if d == f {
				s += tg[i]
				n++
			}
		}
		return s / n
	}
	z1, z0 := math.Log((1-mean(1))/mean(1)), math.Log((1-mean(-1))/mean(-1))
	wantA, wantB := (z1-z0)/2, (z1+z0)/2
	s, rep, err := FitSigmoid(dec, pos)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Converged || math.Abs(s.A-wantA) > 1e-5 || math.Abs(s.B-wantB) > 1e-5 {
		t.Fatalf("fit %+v (%+v), want A = %v, B = %v", s, rep, wantA, wantB)
	}
}

// With every decision value 0 only B matters, and the maximum is the
// sigmoid of the mean target: B = log((1 − t̄)/t̄), A = 0.
func TestFitSigmoidConstantScores(t *testing.T) {
	dec := make([]float64, 50)
	pos := make([]bool, 50)
	for i := range 13 {
		pos[i] = true
	}
	var tbar float64
	for _, v := range smoothed(pos) {
		tbar += v / 50
	}
	s, _, err := FitSigmoid(dec, pos)
	if err != nil {
		t.Fatal(err)
	}
	if s.A != 0 || math.Abs(s.B-math.Log((1-tbar)/tbar)) > 1e-6 {
		t.Fatalf("fit %+v, want A = 0, B = %v", s, math.Log((1-tbar)/tbar))
	}
}

// On noisy data the fit is a minimum of F: no point of a fine grid around
// it is lower, and a plain undamped Newton iteration written from the
// definition converges to the same point.
func TestFitSigmoidIsTheMinimum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 400
	dec, pos := make([]float64, n), make([]bool, n)
	for i := range n {
		pos[i] = r.IntN(2) == 0
		dec[i] = r.NormFloat64() * 2
		if pos[i] {
			dec[i] += 1.5
		}
	}
	s, rep, err := FitSigmoid(dec, pos)
	if err != nil || !rep.Converged {
		t.Fatalf("fit: %v %+v", err, rep)
	}
	tg := smoothed(pos)
	best := crossEntropy(dec, tg, s.A, s.B)
	for _, da := range []float64{-1e-2, -1e-3, 0, 1e-3, 1e-2} {
		for _, db := range []float64{-1e-2, -1e-3, 0, 1e-3, 1e-2} {
			if f := crossEntropy(dec, tg, s.A+da, s.B+db); f < best-1e-9 {
				t.Errorf("F(A%+g, B%+g) = %v < F at the fit %v", da, db, f, best)
			}
		}
	}
	// Plain Newton from (0, 0) on F's gradient and Hessian.
	a, b := 0.0, 0.0
	for range 50 {
		var g1, g2, h11, h12, h22 float64
		for i, d := range dec {
			p := 1 / (1 + math.Exp(a*d+b))
			g1 += d * (tg[i] - p)
			g2 += tg[i] - p
			w := p * (1 - p)
			h11 += d * d * w
			h12 += d * w
			h22 += w
		}
		det := h11*h22 - h12*h12
		a -= (h22*g1 - h12*g2) / det
		b -= (h11*g2 - h12*g1) / det
	}
	if math.Abs(a-s.A) > 1e-6 || math.Abs(b-s.B) > 1e-6 {
		t.Errorf("FitSigmoid %+v, plain Newton A = %v, B = %v", s, a, b)
	}
	if s.A >= 0 {
		t.Errorf("A = %v: larger scores should mean more positive", s.A)
	}
}

// Separable rows have no finite unsmoothed maximum; the targets keep the
// fit finite and the iteration ends.
func TestFitSigmoidSeparable(t *testing.T) {
	dec := []float64{-3, -2, -1, 1, 2, 3}
	pos := []bool{false, false, false, true, true, true}
	s, _, err := FitSigmoid(dec, pos)
	if err != nil || math.IsNaN(s.A) || math.IsInf(s.A, 0) || s.A >= 0 {
		t.Fatalf("fit %+v, %v", s, err)
	}
	if p := s.Prob(3); p <= 0.5 || p >= 1 {
		t.Errorf("P(+1 | 3) = %v", p)
	}
}

func TestFitSigmoidErrors(t *testing.T) {
	if _, _, err := FitSigmoid(nil, nil); err != ErrNoRows {
		t.Errorf("no rows: %v", err)
	}
	if _, _, err := FitSigmoid([]float64{1, math.NaN()}, []bool{true, false}); err == nil {
		t.Error("NaN decision value accepted")
	}
	if _, _, err := FitSigmoid([]float64{1}, []bool{true, false}); err == nil {
		t.Error("length mismatch accepted")
	}
}

func TestFitMulticlassNormalised(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, c = 300, 3
	scores := make([]float32, n*c)
	truth := make([]int, n)
	for i := range n {
		truth[i] = r.IntN(c)
		for k := range c {
			scores[i*c+k] = float32(r.NormFloat64())
			if k == truth[i] {
				scores[i*c+k] += 2
			}
		}
	}
	truth[7] = -1 // a label the model does not know
	cal, err := Fit(scores, c, truth)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(cal, c); err != nil {
		t.Fatal(err)
	}
	if cal.Rows != n || len(cal.A) != c {
		t.Fatalf("calibration %+v", cal)
	}
	p := make([]float64, c)
	var loss float64
	for i := range n {
		Probabilities(cal, scores[i*c:(i+1)*c], p)
		if s := p[0] + p[1] + p[2]; math.Abs(s-1) > 1e-12 {
			t.Fatalf("row %d: probabilities %v sum to %v", i, p, s)
		}
		if truth[i] >= 0 {
			loss -= math.Log(p[truth[i]])
		}
	}
	if want := loss / (n - 1); math.Abs(cal.LogLoss-want) > 1e-12 {
		t.Errorf("LogLoss %v, recomputed %v", cal.LogLoss, want)
	}
	if cal.LogLoss >= math.Log(c) {
		t.Errorf("log-loss %v no better than uniform %v", cal.LogLoss, math.Log(c))
	}
	if a := testing.AllocsPerRun(100, func() { Probabilities(cal, scores[:c], p) }); a != 0 {
		t.Errorf("Probabilities allocates %v times", a)
	}
}

func TestFitBinary(t *testing.T) {
	scores := []float32{2, 1.5, -0.5, 0.3, -2, -1, 0.8, -0.2}
	truth := []int{0, 0, 1, 0, 1, 1, 1, 0}
	cal, err := Fit(scores, 1, truth)
	if err != nil {
		t.Fatal(err)
	}
	dec := make([]float64, len(scores))
	pos := make([]bool, len(scores))
	for i := range scores {
		dec[i], pos[i] = float64(scores[i]), truth[i] == 0
	}
	s, _, _ := FitSigmoid(dec, pos)
	if cal.A[0] != s.A || cal.B[0] != s.B {
		t.Fatalf("Fit %+v, FitSigmoid %+v", cal, s)
	}
	p := make([]float64, 2)
	var loss float64
	for i := range scores {
		Probabilities(cal, scores[i:i+1], p)
		if p[0] != s.Prob(dec[i]) || p[0]+p[1] != 1 {
			t.Fatalf("row %d: %v", i, p)
		}
		loss += LogLoss(p[truth[i]])
	}
	if math.Abs(cal.LogLoss-loss/8) > 1e-12 {
		t.Errorf("LogLoss %v, want %v", cal.LogLoss, loss/8)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		c       model.Calibration
		classes int
		ok      bool
	}{
		{model.Calibration{Method: "platt", A: []float64{-1}, B: []float64{0}}, 2, true},
		{model.Calibration{Method: "isotonic", A: []float64{-1}, B: []float64{0}}, 2, false},
		{model.Calibration{Method: "platt", A: []float64{-1, 1}, B: []float64{0, 0}}, 2, false},
		{model.Calibration{Method: "platt", A: []float64{-1, 1, 2}, B: []float64{0, 0, 0}}, 3, true},
		{model.Calibration{Method: "platt", A: []float64{-1, 1, math.Inf(1)}, B: []float64{0, 0, 0}}, 3, false},
		{model.Calibration{Method: "platt", A: []float64{-1}, B: []float64{0, 1}}, 2, false},
	} {
		if err := Check(&tc.c, tc.classes); (err == nil) != tc.ok {
			t.Errorf("Check(%+v, %d) = %v", tc.c, tc.classes, err)
		}
	}
}

func TestLogLossClips(t *testing.T) {
	if LogLoss(0) != -math.Log(1e-15) || LogLoss(1) != -math.Log(1-1e-15) || LogLoss(0.5) != math.Log(2) {
		t.Error("LogLoss")
	}
}
