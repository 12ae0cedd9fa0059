package assign

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteEntropy computes the entropy of UNADJ directly from the dictionary.
func bruteEntropy(unadj map[int]int, k int) float64 {
	c := make([]float64, k)
	n := 0.0
	for _, f := range unadj {
		c[f]++
		n++
	}
	h := 0.0
	for _, x := range c {
		if x > 0 {
			h -= x / n * math.Log(x/n)
		}
	}
	return h
}

// refAssign is Algorithm 2 transcribed literally, recomputing every entropy
// from the whole dictionary.
func refAssign(unadj map[int]int, k int, h float64, scores []float32, id int) int {
	ku := 0
	for j := 1; j < k; j++ {
		if scores[j] > scores[ku] {
			ku = j
		}
	}
	plus := func(f int) float64 {
		u := make(map[int]int, len(unadj)+1)
		for a, b := range unadj {
			u[a] = b
		}
		u[id] = f
		return bruteEntropy(u, k)
	}
	adj := ku
	if plus(ku) < h {
		cur := bruteEntropy(unadj, k)
		best := -1
		for j := 0; j < k; j++ {
			if plus(j) > cur+1e-9 && (best < 0 || scores[j] > scores[best]) {
				best = j
			}
		}
		if best >= 0 {
			adj = best
		}
	}
	unadj[id] = ku
	return adj
}

func TestZeroEntropyIsArgmax(t *testing.T) {
	a, err := New(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	for id := 0; id < 10; id++ {
		if got := a.Assign([]float32{0, 2, 1}, id); got != 1 {
			t.Fatalf("Assign = %d, want argmax 1", got)
		}
	}
	if a.Entropy() != 0 {
		t.Fatalf("entropy %v, want 0 with every instance on one face", a.Entropy())
	}
	if c := a.Counts(); c[0] != 0 || c[1] != 10 || c[2] != 0 {
		t.Fatalf("counts %v", c)
	}
}

func TestTiesGoToLowestFace(t *testing.T) {
	a, _ := New(4, 0)
	if got := a.Assign([]float32{1, 3, 3, 3}, 0); got != 1 {
		t.Fatalf("tie went to %d, want 1", got)
	}
}

// Hand-checked: two faces, h = 0.5 nats. Instance 0 goes to face 0 (entropy
// of {0:1} is 0 < h, but no face raises it above the current 0 except... a
// single instance always has entropy 0, so K_inc is empty and the natural
// face is kept). Instance 1 again prefers face 0: UNADJ+(1,0) = {0,0} has
// entropy 0 < 0.5; current entropy 0; face 1 would give {0,1}: ln 2 > 0, so
// the adjusted face is 1 even though it scores lower.
func TestLowEntropyRedirects(t *testing.T) {
	a, _ := New(2, 0.5)
	if got := a.Assign([]float32{1, 0}, 0); got != 0 {
		t.Fatalf("first instance: got %d, want 0", got)
	}
	if got := a.Assign([]float32{1, 0}, 1); got != 1 {
		t.Fatalf("second instance: got %d, want 1 (entropy-raising face)", got)
	}
	// UNADJ records the unadjusted face: both instances on face 0.
	if c := a.Counts(); c[0] != 2 || c[1] != 0 {
		t.Fatalf("counts %v, want [2 0]: UNADJ stores unadjusted assignments", c)
	}
	// Re-seeing instance 0 with face 1 now natural: {1,0} has entropy ln2 >= h.
	if got := a.Assign([]float32{0, 1}, 0); got != 1 {
		t.Fatalf("got %d, want natural 1", got)
	}
	if math.Abs(a.Entropy()-math.Ln2) > 1e-12 {
		t.Fatalf("entropy %v, want ln 2", a.Entropy())
	}
}

// Above the natural threshold the natural face wins even if others would
// raise entropy more.
func TestHighEnoughEntropyKeepsArgmax(t *testing.T) {
	a, _ := New(3, 0.1)
	a.Assign([]float32{0, 0, 1}, 0) // {2}
	a.Assign([]float32{1, 0, 0}, 1) // {2,0}: entropy ln2 >= 0.1 -> natural
	if got := a.Assign([]float32{2, 0, 1}, 2); got != 0 {
		t.Fatalf("got %d, want natural 0", got)
	}
}

func TestUnreachableTargetKeepsNatural(t *testing.T) {
	a, _ := New(2, 10) // h > ln 2: unreachable
	a.Assign([]float32{1, 0}, 0)
	a.Assign([]float32{0, 1}, 1) // balanced: nothing raises entropy further for a re-seen id
	if got := a.Assign([]float32{0, 1}, 1); got != 1 {
		t.Fatalf("got %d, want natural face when K_inc is empty", got)
	}
}

// The incremental O(1) bookkeeping agrees with a literal transcription of
// Algorithm 2 that recomputes entropies from the whole dictionary.
func TestMatchesLiteralAlgorithm(t *testing.T) {
	for _, h := range []float64{0, 0.3, 0.9, 1.5, 3} {
		const k, ids = 5, 40
		rng := rand.New(rand.NewPCG(1, uint64(h*100)))
		a, _ := New(k, h)
		ref := map[int]int{}
		sc := make([]float32, k)
		for step := 0; step < 2000; step++ {
			for j := range sc {
				sc[j] = float32(rng.IntN(7)) // many ties
			}
			id := rng.IntN(ids)
			want := refAssign(ref, k, h, sc, id)
			if got := a.Assign(sc, id); got != want {
				t.Fatalf("h=%v step %d: Assign=%d, literal=%d", h, step, got, want)
			}
			if d := math.Abs(a.Entropy() - bruteEntropy(ref, k)); d > 1e-9 {
				t.Fatalf("h=%v step %d: entropy drift %g", h, step, d)
			}
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, c := range []struct {
		k int
		h float64
	}{{0, 0}, {MaxFaces + 1, 0}, {3, -1}, {3, math.NaN()}, {3, math.Inf(1)}} {
		if _, err := New(c.k, c.h); err == nil {
			t.Errorf("New(%d, %v) accepted", c.k, c.h)
		}
	}
}

func TestAssignDoesNotAllocate(t *testing.T) {
	a, _ := New(10, 1.0)
	a.Reserve(1000)
	sc := make([]float32, 10)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		sc[i%10] += 1
		a.Assign(sc, i%1000)
		i++
	})
	if allocs != 0 {
		t.Fatalf("Assign allocates %v per call", allocs)
	}
}

func BenchmarkAssign(b *testing.B) {
	for _, h := range []float64{0, 1.5} {
		b.Run(map[bool]string{true: "h=0", false: "h=1.5"}[h == 0], func(b *testing.B) {
			a, _ := New(10, h)
			a.Reserve(1 << 16)
			rng := rand.New(rand.NewPCG(1, 2))
			sc := make([]float32, 10)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sc[rng.IntN(10)] = rng.Float32()
				a.Assign(sc, i&(1<<16-1))
			}
		})
	}
}
