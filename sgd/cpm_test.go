package sgd

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/assign"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

func vec(idx []uint32, val []float32) sparsevec.Vector { return sparsevec.Vector{Idx: idx, Val: val} }

func mustPolytope(t *testing.T, cfg Config, d int) *polytope {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPolytope(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// trueW returns the true weight W[j][k] = s·V[j][k].
func trueW(p *polytope, j, k int) float64 { return p.scale * float64(p.W.At(j, k)) }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Max(1, math.Abs(b)) }

// Step 1 of a positive row on W = 0: every score is 0 < 1, the argmax tie
// goes to face 0, η_1 = 1/λ and the shrink factor 1 - η_1λ = 0 wipes W_1,
// so W_2 = x/λ on face 0 (bias included) and nothing elsewhere.
func TestFirstPositiveStepIsEtaOneTimesX(t *testing.T) {
	p := mustPolytope(t, Config{K: 3, Lambda: 0.5, Iterations: 10}, 4)
	x := vec([]uint32{1, 3}, []float32{2, -1})
	p.Step(x, true, 0)
	want := map[[2]int]float64{{0, 0}: 2, {1, 0}: 4, {3, 0}: -2} // bias 1/λ, x/λ
	for j := 0; j < 4; j++ {
		for k := 0; k < 3; k++ {
			if got := trueW(p, j, k); !near(got, want[[2]int{j, k}]) {
				t.Errorf("W[%d][%d] = %v, want %v", j, k, got, want[[2]int{j, k}])
			}
		}
	}
}

// A negative with every score > -1 pushes every face down by η_t·x.
func TestNegativeUpdatesEveryViolatedFace(t *testing.T) {
	p := mustPolytope(t, Config{K: 2, Lambda: 1, Iterations: 10}, 3)
	x := vec([]uint32{2}, []float32{1})
	p.Step(x, false, 0) // t=1: W = -x (bias -1) on both faces
	for k := 0; k < 2; k++ {
		if !near(trueW(p, 2, k), -1) || !near(trueW(p, 0, k), -1) {
			t.Fatalf("face %d: w2=%v bias=%v, want -1, -1", k, trueW(p, 2, k), trueW(p, 0, k))
		}
	}
	// Now scores are -1-1 = -2 <= -1: a second negative only shrinks by
	// (1 - 1/2): W = -0.5.
	p.Step(x, false, 0)
	for k := 0; k < 2; k++ {
		if !near(trueW(p, 2, k), -0.5) {
			t.Fatalf("face %d after satisfied negative: %v, want -0.5", k, trueW(p, 2, k))
		}
	}
}

// Only the faces with W_k x > -1 move.
func TestNegativeSkipsSatisfiedFaces(t *testing.T) {
	p := mustPolytope(t, Config{K: 2, Lambda: 1, Iterations: 10, NoBias: true}, 3)
	p.W.Set(1, 0, -5) // face 0 gives -5 on x = e1: satisfied
	p.t = 1           // pretend a step was taken so the shrink is 1/2
	x := vec([]uint32{1}, []float32{1})
	p.Step(x, false, 0) // t=2, η=1/2, shrink 1/2
	if got := trueW(p, 1, 0); !near(got, -2.5) {
		t.Fatalf("satisfied face: %v, want -5·(1/2) = -2.5", got)
	}
	if got := trueW(p, 1, 1); !near(got, -0.5) {
		t.Fatalf("violated face: %v, want 0·(1/2) - 1/2 = -0.5", got)
	}
}

// A positive whose best score is >= 1 is not updated; one below 1 updates
// only the face ASSIGN returns (the argmax when h = 0).
func TestPositiveBranches(t *testing.T) {
	p := mustPolytope(t, Config{K: 2, Lambda: 1, Iterations: 10, NoBias: true}, 3)
	p.W.Set(1, 1, 4) // x = e1 scores (0, 4)
	p.t = 1
	x := vec([]uint32{1}, []float32{1})
	p.Step(x, true, 0) // score 4 >= 1: shrink only -> 2
	if !near(trueW(p, 1, 1), 2) || !near(trueW(p, 1, 0), 0) {
		t.Fatalf("satisfied positive moved weights: %v %v", trueW(p, 1, 0), trueW(p, 1, 1))
	}
	y := vec([]uint32{2}, []float32{1}) // scores (0, 0): argmax face 0
	p.Step(y, true, 1)                  // t=3, η=1/3
	if !near(trueW(p, 2, 0), 1.0/3) || !near(trueW(p, 2, 1), 0) {
		t.Fatalf("violated positive: face0 %v face1 %v, want 1/3, 0", trueW(p, 2, 0), trueW(p, 2, 1))
	}
	if c := p.asg.Counts(); c[0] != 1 || c[1] != 0 {
		t.Fatalf("ASSIGN counts %v: only violated positives enter UNADJ", c)
	}
}

// ASSIGN runs only for margin violators, as Algorithm 1 places it, even
// with h > 0: a positive whose argmax face has margin >= 1 is neither
// redirected to another face nor recorded in UNADJ, although its natural
// face keeps the entropy below h. (The authors' tool runs ASSIGN on every
// positive; see the package doc for why we do not.)
func TestAssignOnlyForViolators(t *testing.T) {
	p := mustPolytope(t, Config{K: 2, Lambda: 1, Iterations: 10, NoBias: true, Entropy: math.Ln2}, 3)
	p.W.Set(1, 1, 8) // e1 scores (0, 8)
	p.W.Set(2, 1, 8) // e2 scores (0, 8)
	p.t = 1
	p.Step(vec([]uint32{1}, []float32{1}), true, 0) // t=2: scores (0, 4)
	p.Step(vec([]uint32{2}, []float32{1}), true, 1) // t=3: scores (0, 8/3)
	if w1, w2 := trueW(p, 1, 0), trueW(p, 2, 0); !near(w1, 0) || !near(w2, 0) {
		t.Fatalf("satisfied positives moved face 0 to (%v, %v), want 0, 0", w1, w2)
	}
	if got := trueW(p, 2, 1); !near(got, 8*(1.0/2)*(2.0/3)) {
		t.Fatalf("face 1 weight %v, want only shrunk: 8·(1/2)·(2/3)", got)
	}
	if c := p.asg.Counts(); c[0] != 0 || c[1] != 0 {
		t.Fatalf("ASSIGN counts %v, want [0 0]: satisfied positives do not enter UNADJ", c)
	}
}

func TestCostRatioScalesNegativeStep(t *testing.T) {
	p := mustPolytope(t, Config{K: 1, Lambda: 1, Iterations: 10, CostRatio: 3, NoBias: true}, 2)
	p.Step(vec([]uint32{1}, []float32{1}), false, 0)
	if got := trueW(p, 1, 0); !near(got, -3) {
		t.Fatalf("W = %v, want -CostRatio·η_1 = -3", got)
	}
}

// naive is Algorithm 1 with the Pegasos order, written with dense float64
// weights and an O(Kd) shrink every step: the reference for the lazy path.
type naive struct {
	w         [][]float64 // K × d
	lambda    float64
	bias      float64
	costRatio float64
	t         int
	asg       *assign.Assigner
}

func (n *naive) step(x sparsevec.Vector, positive bool, id int) {
	k := len(n.w)
	sc := make([]float32, k)
	for f := range n.w {
		s := n.bias * n.w[f][0]
		for i, j := range x.Idx {
			s += float64(x.Val[i]) * n.w[f][j]
		}
		sc[f] = float32(s)
	}
	n.t++
	eta := 1 / (n.lambda * float64(n.t))
	for f := range n.w {
		for j := range n.w[f] {
			n.w[f][j] *= 1 - eta*n.lambda
		}
	}
	add := func(f int, a float64) {
		n.w[f][0] += a * n.bias
		for i, j := range x.Idx {
			n.w[f][j] += a * float64(x.Val[i])
		}
	}
	if !positive {
		for f := range n.w {
			if sc[f] > -1 {
				add(f, -n.costRatio*eta)
			}
		}
		return
	}
	z := 0
	for f := range sc {
		if sc[f] > sc[z] {
			z = f
		}
	}
	if sc[z] < 1 {
		add(n.asg.Assign(sc, id), eta)
	}
}

func randomRows(rng *rand.Rand, n, d, nnz int) *sparsevec.CSR {
	var m sparsevec.CSR
	for r := 0; r < n; r++ {
		var idx []uint32
		var val []float32
		for j := 1; j < d; j++ {
			if rng.IntN(d) < nnz {
				idx = append(idx, uint32(j))
				val = append(val, float32(rng.NormFloat64()))
			}
		}
		y := float32(-1)
		if rng.IntN(3) == 0 {
			y = 1
		}
		m.Append(y, vec(idx, val))
	}
	return &m
}

func TestLazyScaleMatchesNaive(t *testing.T) {
	for _, h := range []float64{0, 1.0} {
		rng := rand.New(rand.NewPCG(7, 7))
		const K, d = 4, 30
		data := randomRows(rng, 200, d, 6)
		cfg := Config{K: K, Lambda: 0.01, Iterations: 3000, Entropy: h, CostRatio: 0.7}
		p := mustPolytope(t, cfg, d)
		a, _ := assign.New(K, h)
		nv := &naive{w: make([][]float64, K), lambda: 0.01, bias: 1, costRatio: 0.7, asg: a}
		for f := range nv.w {
			nv.w[f] = make([]float64, d)
		}
		src, _ := newMemorySource(sparsevec.Pack(data, nil, sparsevec.PackCompact), nil, 1, 1, true)
		for range cfg.Iterations {
			x, y, id, _ := src.Next()
			p.Step(x, y == 1, id)
			nv.step(x, y == 1, id)
		}
		w := p.Weights()
		var maxRel float64
		for f := 0; f < K; f++ {
			for j := 0; j < d; j++ {
				got, want := float64(w.At(j, f)), nv.w[f][j]
				maxRel = math.Max(maxRel, math.Abs(got-want)/math.Max(1, math.Abs(want)))
			}
		}
		if maxRel > 1e-3 {
			t.Fatalf("h=%v: lazy weights differ from naive by %g (relative)", h, maxRel)
		}
	}
}

// Folding the scale below 2^-20 keeps the true weights.
func TestFoldKeepsWeights(t *testing.T) {
	p := mustPolytope(t, Config{K: 2, Lambda: 1, Iterations: 10}, 2)
	p.W.Set(1, 1, 8)
	p.scale = foldBelow * 1.05
	p.t = 10
	before := trueW(p, 1, 1) * (1 - 1.0/11)
	p.Step(vec(nil, nil), true, 0) // scale drops below the threshold; positive with score < 1 updates face... bias only
	if p.scale != 1 {
		t.Fatalf("scale %v not folded", p.scale)
	}
	if !near(trueW(p, 1, 1), before) {
		t.Fatalf("fold changed a weight: %v, want %v", trueW(p, 1, 1), before)
	}
}

func TestStepDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := randomRows(rng, 500, 200, 30)
	p := mustPolytope(t, Config{K: 10, Iterations: 1e6, Entropy: 1}, data.Dim)
	p.asg.Reserve(data.Rows())
	src, _ := newMemorySource(sparsevec.Pack(data, nil, sparsevec.PackCompact), nil, 1, 1, true)
	allocs := testing.AllocsPerRun(5000, func() {
		x, y, id, _ := src.Next()
		p.Step(x, y == 1, id)
	})
	if allocs != 0 {
		t.Fatalf("SGD step allocates %v times", allocs)
	}
}

// polytopeData: negatives in the square max(|x|,|y|) <= 1, positives in the
// ring 1.5 <= max(|x|,|y|) <= 3: separable by a 4-faced polytope.
func polytopeData(rng *rand.Rand, n int) *sparsevec.CSR {
	var m sparsevec.CSR
	for m.Rows() < n {
		x, y := rng.Float64()*6-3, rng.Float64()*6-3
		r := math.Max(math.Abs(x), math.Abs(y))
		var lab float32
		switch {
		case r <= 1:
			lab = -1
		case r >= 1.5:
			lab = 1
		default:
			continue
		}
		m.Append(lab, vec([]uint32{1, 2}, []float32{float32(x), float32(y)}))
	}
	return &m
}

func trainErrors(t *testing.T, cfg Config, data *sparsevec.CSR) int {
	t.Helper()
	m, _, err := Train(context.Background(), cfg, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return countErrors(t, m, data)
}

func countErrors(t *testing.T, m *model.Model, data *sparsevec.CSR) int {
	t.Helper()
	c, err := NewClassifier(m)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for r := 0; r < data.Rows(); r++ {
		if y, _, _ := c.Predict(data.Row(r)); y != data.Labels[r] {
			bad++
		}
	}
	return bad
}

func TestLearnsTwoDimensionalPolytope(t *testing.T) {
	data := polytopeData(rand.New(rand.NewPCG(3, 4)), 600)
	if bad := trainErrors(t, Config{K: 8, Iterations: 300_000, C: 100, Seed: 1}, data); bad != 0 {
		t.Fatalf("%d training errors on polytope-separable data, want 0", bad)
	}
	// One face cannot enclose the square: a linear classifier must err.
	if bad := trainErrors(t, Config{K: 1, Iterations: 100_000, C: 100, Seed: 1}, data); bad == 0 {
		t.Fatal("K=1 separated a ring from its inside: data set is not testing anything")
	}
}

func TestDoubleSidedAndOvO(t *testing.T) {
	// Two classes separated by a margin around a wavy boundary: each side
	// is the outside of a polytope for the other.
	rng := rand.New(rand.NewPCG(5, 6))
	var two sparsevec.CSR
	for two.Rows() < 600 {
		x, y := rng.Float64()*6-3, rng.Float64()*6-3
		b := math.Abs(x) - 1 // boundary y = |x| - 1
		switch {
		case y > b+0.3:
			two.Append(1, vec([]uint32{1, 2}, []float32{float32(x), float32(y)}))
		case y < b-0.3:
			two.Append(-1, vec([]uint32{1, 2}, []float32{float32(x), float32(y)}))
		}
	}
	// Only the set above the V is convex, so a single polytope separates
	// the classes only with label -1 outside.
	neg := float32(-1)
	m1, _, err := Train(context.Background(), Config{K: 4, Iterations: 200_000, C: 100, Seed: 2}, &two, &neg)
	if err != nil {
		t.Fatal(err)
	}
	if bad := countErrors(t, m1, &two); bad != 0 {
		t.Fatalf("single-sided with outer label -1: %d training errors, want 0", bad)
	}
	if bad := trainErrors(t, Config{K: 4, Iterations: 200_000, C: 100, Seed: 2, DoubleSided: true}, &two); bad > 30 {
		t.Fatalf("double-sided: %d/600 training errors", bad)
	}
	// Three well-separated blobs.
	rng = rand.New(rand.NewPCG(8, 9))
	var m sparsevec.CSR
	centers := [][2]float64{{0, 4}, {4, -2}, {-4, -2}}
	for i := 0; i < 300; i++ {
		c := i % 3
		m.Append(float32(c+1), vec([]uint32{1, 2}, []float32{float32(centers[c][0] + rng.NormFloat64()), float32(centers[c][1] + rng.NormFloat64())}))
	}
	for _, ds := range []bool{false, true} {
		mod, rep, err := TrainOvO(context.Background(), Config{K: 2, Iterations: 20_000, Seed: 3, DoubleSided: ds}, &m)
		if err != nil {
			t.Fatal(err)
		}
		if want := 3 * (1 + btoi(ds)); len(rep.Polytopes) != want || len(mod.Weights) != want {
			t.Fatalf("double=%v: %d polytopes, want %d", ds, len(rep.Polytopes), want)
		}
		c, _ := NewClassifier(mod)
		bad := 0
		for r := 0; r < m.Rows(); r++ {
			if y, _, _ := c.Predict(m.Row(r)); y != m.Labels[r] {
				bad++
			}
		}
		if bad > 6 {
			t.Fatalf("OvO double=%v: %d/300 training errors", ds, bad)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestBinaryNeedsTwoLabels(t *testing.T) {
	var m sparsevec.CSR
	for i := 0; i < 3; i++ {
		m.Append(float32(i), vec([]uint32{1}, []float32{1}))
	}
	if _, _, err := Train(context.Background(), Config{Iterations: 10}, &m, nil); err == nil {
		t.Fatal("3-label data accepted by binary Train")
	}
	bad := float32(7)
	m.Reset()
	m.Append(1, vec(nil, nil))
	m.Append(-1, vec(nil, nil))
	if _, _, err := Train(context.Background(), Config{Iterations: 10}, &m, &bad); err == nil {
		t.Fatal("outer label absent from the data accepted")
	}
}

func TestConfigRejectsNonsense(t *testing.T) {
	for _, c := range []Config{{K: -1}, {Iterations: -5}, {Lambda: -1}, {C: math.NaN()}, {Entropy: -0.1}, {CostRatio: math.Inf(1)}, {Workers: -2}} {
		if _, err := c.withDefaults(); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

// fakeBlocks serves a CSR in blocks of n rows.
type fakeBlocks struct {
	data   *sparsevec.CSR
	n, pos int
	live   *int
}

func (f *fakeBlocks) Next() (*sparsevec.CSR, error) {
	if f.pos >= f.data.Rows() {
		return nil, io.EOF
	}
	var b sparsevec.CSR
	for r := f.pos; r < min(f.pos+f.n, f.data.Rows()); r++ {
		b.Append(f.data.Labels[r], f.data.Row(r))
	}
	f.pos += f.n
	*f.live++
	return &b, nil
}
func (f *fakeBlocks) Release(*sparsevec.CSR) { *f.live-- }
func (f *fakeBlocks) Close() error           { return nil }

// Every pass of the stream source emits each row exactly once, with its
// file ordinal as id, while holding a bounded number of blocks.
func TestStreamSourcePassesArePermutations(t *testing.T) {
	data := randomRows(rand.New(rand.NewPCG(1, 1)), 1000, 20, 4)
	live, maxLive := 0, 0
	open := func() (Blocks, error) { return &fakeBlocks{data: data, n: 64, live: &live}, nil }
	s, err := newStreamSource(open, 200, 9, 9)
	if err != nil {
		t.Fatal(err)
	}
	var firstOrder []int
	for pass := 0; pass < 3; pass++ {
		seen := make([]bool, data.Rows())
		for i := 0; i < data.Rows(); i++ {
			x, y, id, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if seen[id] {
				t.Fatalf("pass %d: row %d emitted twice", pass, id)
			}
			seen[id] = true
			if y != data.Labels[id] || !slices.Equal(x.Idx, data.Row(id).Idx) {
				t.Fatalf("row %d content does not match its id", id)
			}
			if pass == 0 {
				firstOrder = append(firstOrder, id)
			}
			maxLive = max(maxLive, live)
		}
		if s.epoch != pass {
			t.Fatalf("epoch %d during pass %d", s.epoch, pass)
		}
	}
	if maxLive > 1 {
		t.Fatalf("%d blocks resident, want only the one being read", maxLive)
	}
	if len(s.pending) > 200 || cap(s.idx) > 2*200*20 {
		t.Fatalf("buffer holds %d rows, arena capacity %d: not bounded by the buffer", len(s.pending), cap(s.idx))
	}
	if slices.IsSorted(firstOrder) {
		t.Fatal("stream source did not shuffle")
	}
}
