package rng

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The expected values below were printed by the copies these functions
// replace (shard's mix64 and shuffle, cv's splitmix64, shuffle and uintN)
// before they were removed; a change here changes models and data files.

func TestSplitMix64Golden(t *testing.T) {
	for _, c := range []struct{ z, fin, step uint64 }{
		{0x0, 0x0, 0xe220a8397b1dcdaf},
		{0x1, 0x5692161d100b05e5, 0x910a2dec89025cc1},
		{0xdeadbeef, 0x4e062702ec929eea, 0x4adfb90f68c9eb9b},
		{0x8000000000000000, 0x25c26ea579cea98a, 0x481ec0a212a9f3db},
	} {
		if got := SplitMix64Finalizer(c.z); got != c.fin {
			t.Errorf("SplitMix64Finalizer(%#x) = %#x, want %#x", c.z, got, c.fin)
		}
		if got := SplitMix64(c.z); got != c.step {
			t.Errorf("SplitMix64(%#x) = %#x, want %#x", c.z, got, c.step)
		}
	}
	if got, want := SplitMix64At(SplitMix64Finalizer(42), 7), uint64(0x272404a0a3926552); got != want {
		t.Errorf("SplitMix64At(SplitMix64Finalizer(42), 7) = %#x, want %#x", got, want)
	}
}

// TestSplitMix64At checks the closed form against stepping the generator.
func TestSplitMix64At(t *testing.T) {
	s := uint64(0x1234)
	state := s
	for i := range uint64(100) {
		want := SplitMix64(state)
		state += Gamma
		if got := SplitMix64At(s, i); got != want {
			t.Fatalf("SplitMix64At(%#x, %d) = %#x, want %#x", s, i, got, want)
		}
	}
}

func TestShuffleGolden(t *testing.T) {
	p := []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	ShuffleMod(rand.NewPCG(1, 2), p)
	if want := []int32{7, 4, 5, 1, 2, 6, 3, 0, 9, 11, 10, 8}; !slices.Equal(p, want) {
		t.Errorf("ShuffleMod = %v, want %v", p, want)
	}
	a := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	Shuffle(rand.NewPCG(1, 2), a)
	if want := []int{4, 8, 3, 10, 5, 2, 0, 1, 11, 7, 6, 9}; !slices.Equal(a, want) {
		t.Errorf("Shuffle = %v, want %v", a, want)
	}
}

func TestUniformGolden(t *testing.T) {
	src := rand.NewPCG(3, 4)
	want := []uint64{0, 1, 1, 6, 8624628397687094490, 783459}
	for i, n := range []uint64{1, 2, 3, 10, 1<<63 + 1, 1000003} {
		if got := Uniform(src, n); got != want[i] {
			t.Errorf("draw %d: Uniform(src, %d) = %d, want %d", i, n, got, want[i])
		}
	}
}

// TestShufflePermutes checks that both shuffles return a permutation and
// that every position is reachable for every element (a loose uniformity
// check that fails for an off-by-one in the index range).
func TestShufflePermutes(t *testing.T) {
	const n, trials = 5, 4000
	for name, shuffle := range map[string]func(*rand.PCG, []int){
		"Shuffle": Shuffle[int], "ShuffleMod": ShuffleMod[int],
	} {
		var seen [n][n]int
		src := rand.NewPCG(9, 9)
		for range trials {
			p := []int{0, 1, 2, 3, 4}
			shuffle(src, p)
			q := slices.Clone(p)
			slices.Sort(q)
			if !slices.Equal(q, []int{0, 1, 2, 3, 4}) {
				t.Fatalf("%s gave %v, not a permutation", name, p)
			}
			for pos, v := range p {
				seen[v][pos]++
			}
		}
		for v := range n {
			for pos := range n {
				if c := seen[v][pos]; c < trials/n/2 {
					t.Errorf("%s: element %d at position %d only %d times in %d", name, v, pos, c, trials)
				}
			}
		}
	}
}

// TestIndexMod checks IndexMod against the remainder of the same draws.
func TestIndexMod(t *testing.T) {
	a, b := rand.NewPCG(5, 6), rand.NewPCG(5, 6)
	for _, n := range []uint64{1, 2, 7, 1 << 40, 1<<63 + 5} {
		if got, want := IndexMod(a, n), b.Uint64()%n; got != want {
			t.Errorf("IndexMod(src, %d) = %d, want %d", n, got, want)
		}
	}
}

func TestUniformPanicsOnZero(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Uniform(src, 0) did not panic")
		}
	}()
	Uniform(rand.NewPCG(1, 1), 0)
}

func BenchmarkShuffleMod(b *testing.B) {
	p := make([]int32, 1<<16)
	src := rand.NewPCG(1, 2)
	b.ReportAllocs()
	for b.Loop() {
		ShuffleMod(src, p)
	}
}

// TestSplitMix64Reference checks SplitMix64 against the first output of the
// reference generator (Vigna, prng.di.unimi.it/splitmix64.c) from state 0.
func TestSplitMix64Reference(t *testing.T) {
	if got, want := SplitMix64(0), uint64(0xe220a8397b1dcdaf); got != want {
		t.Errorf("SplitMix64(0) = %#x, want %#x", got, want)
	}
}

// TestShuffleUniform checks that Shuffle draws the six permutations of
// three items about equally often.
func TestShuffleUniform(t *testing.T) {
	src := rand.NewPCG(7, 8)
	count := map[[3]int]int{}
	const draws = 60000
	for range draws {
		a := []int{0, 1, 2}
		Shuffle(src, a)
		count[[3]int(a)]++
	}
	if len(count) != 6 {
		t.Fatalf("%d distinct permutations, want 6", len(count))
	}
	for p, c := range count {
		// Binomial(60000, 1/6): sd ≈ 91; allow 6 sd.
		if c < draws/6-550 || c > draws/6+550 {
			t.Errorf("permutation %v drawn %d times, want about %d", p, c, draws/6)
		}
	}
}
