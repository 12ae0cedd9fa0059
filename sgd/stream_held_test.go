package sgd

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/polyhedral/cpm/input/shared"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// withHeldBudget runs f with heldBudget set to b.
func withHeldBudget(b float64, f func()) {
	defer func(old float64) { heldBudget = old }(heldBudget)
	heldBudget = b
	f()
}

// heldData returns seeded rows for the held copy's tests: grey levels
// (16 values: 1-byte codes) or normal values (float32 kept), indices
// below 1<<16 or up to 1<<17 (4-byte indices), optionally with rows
// without nonzeros (compact's order of equal offsets).
func heldData(seed uint64, rows int, codes, wide, empty bool) *sparsevec.CSR {
	r := rand.New(rand.NewPCG(seed, 7))
	d := 300
	var m sparsevec.CSR
	for range rows {
		if empty && r.IntN(6) == 0 {
			m.Append(1, sparsevec.Vector{})
			continue
		}
		var x sparsevec.Vector
		for j := 1; j < d; j++ {
			if r.IntN(d) < 12 {
				idx := uint32(j)
				if wide && r.IntN(50) == 0 {
					idx = uint32(j) << 9
				}
				if len(x.Idx) > 0 && idx <= x.Idx[len(x.Idx)-1] {
					continue
				}
				v := float32(r.NormFloat64())
				if codes {
					v = float32(1+r.IntN(16)) / 16
				}
				x.Idx, x.Val = append(x.Idx, idx), append(x.Val, v)
			}
		}
		y := float32(-1)
		if (len(x.Idx) > 0 && x.Idx[0] < 20) || r.IntN(4) == 0 {
			y = 1
		}
		m.Append(y, x)
	}
	return &m
}

// The stream source draws the same rows in the same order whether it holds
// its rows all run long, drops its copy in the first pass, or never holds
// one; rows come back with their contents, and a copy that is kept is read
// instead of the input from the second pass on.
func TestStreamHeldSameDraws(t *testing.T) {
	type set struct {
		name string
		data *sparsevec.CSR
	}
	sets := []set{
		{"codes", heldData(1, 1500, true, false, false)},
		{"floats", heldData(2, 1500, false, false, false)},
		{"wide", heldData(3, 1500, true, true, false)},
		{"empty rows", heldData(4, 1500, true, false, true)},
	}
	dropped, kept := 0, 0
	for _, c := range sets {
		for _, buffer := range []int{1, 7, 100, 600, 5000} {
			var want []int
			for _, budget := range []float64{0, 0.2, 0.5, 1, 1e9} {
				opens := 0
				open := func() (Blocks, error) {
					opens++
					live := 0
					return &fakeBlocks{data: c.data, n: 64, live: &live}, nil
				}
				var ids []int
				var s *streamSource
				withHeldBudget(budget, func() {
					var err error
					if s, err = newStreamSource(open, buffer, 5, 6); err != nil {
						t.Fatal(err)
					}
					for range 4 * c.data.Rows() {
						x, y, id, err := s.Next()
						if err != nil {
							t.Fatal(err)
						}
						w := c.data.Row(id)
						if y != c.data.Labels[id] || !slices.Equal(x.Idx, w.Idx) || !slices.Equal(x.Val, w.Val) {
							t.Fatalf("%s, buffer %d, budget %v: row %d does not match its id", c.name, buffer, budget, id)
						}
						ids = append(ids, id)
					}
				})
				name := fmt.Sprintf("%s, buffer %d, budget %v", c.name, buffer, budget)
				switch {
				case want == nil:
					want = ids
				case !slices.Equal(ids, want):
					t.Fatalf("%s: draws differ from those without a held copy", name)
				}
				switch {
				case s.replay:
					kept++
					if opens != 2 {
						t.Errorf("%s: the input was opened %d times with its rows held, want 2 (the second pass unread)", name, opens)
					}
				case budget > 0:
					dropped++
					if opens != 4 {
						t.Errorf("%s: the input was opened %d times, want 4 (one a pass)", name, opens)
					}
				}
				if budget == 1e9 && !s.replay {
					t.Errorf("%s: the rows were not held", name)
				}
				if budget == 0 && (s.held != nil || s.replay) {
					t.Errorf("%s: rows held with a budget of 0", name)
				}
				s.Close()
			}
		}
	}
	if dropped == 0 || kept == 0 {
		t.Fatalf("%d runs dropped their copy, %d kept it: want both", dropped, kept)
	}
}

// A held copy within the default budget: the rows of MNIST-like density
// fit in the memory of an arena that holds them all, and not in a buffer
// of one row.
func TestStreamHeldBudget(t *testing.T) {
	data := heldData(5, 2000, true, false, false)
	for _, c := range []struct {
		buffer int
		held   bool
	}{{1, false}, {4000, true}} {
		live := 0
		s, err := newStreamSource(func() (Blocks, error) { return &fakeBlocks{data: data, n: 256, live: &live}, nil }, c.buffer, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		for range data.Rows() + 1 {
			if _, _, _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
		}
		if s.replay != c.held {
			t.Errorf("buffer %d: held %v, want %v", c.buffer, s.replay, c.held)
		}
		if s.replay {
			var b int64
			for _, p := range s.held.segs {
				b += p.Bytes()
			}
			if b > 8*int64(s.acap) || cap(s.idx) != 0 {
				t.Errorf("buffer %d: held %d bytes for an arena of %d (allocated %d)", c.buffer, b, 8*s.acap, cap(s.idx))
			}
		}
		s.Close()
	}
}

// arenaGrow is the capacity append grows the arena to.
func TestArenaGrow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s struct{ idx []uint32 }
	grows := 0
	for len(s.idx) < 3<<20 {
		row := make([]uint32, r.IntN(700))
		if r.IntN(10) == 0 {
			row = make([]uint32, r.IntN(20000))
		}
		c, n := cap(s.idx), len(s.idx)+len(row)
		s.idx = append(s.idx, row...)
		if n > c {
			grows++
			if got := arenaGrow(c, n); got != cap(s.idx) {
				t.Fatalf("capacity %d grown to %d elements: arenaGrow gives %d, append %d", c, n, got, cap(s.idx))
			}
		}
		if r.IntN(50) == 0 { // a compaction: the length drops, the capacity stays
			s.idx = s.idx[:len(s.idx)-r.IntN(min(len(s.idx)/3, 30000)+1)]
		}
	}
	for c := range 300 {
		for n := c + 1; n < 3*c+10; n += 1 + n/7 {
			if got, want := arenaGrow(c, n), cap(append(make([]uint32, c), make([]uint32, n-c)...)); got != want {
				t.Fatalf("capacity %d grown to %d: arenaGrow gives %d, append %d", c, n, got, want)
			}
		}
	}
	if grows < 20 {
		t.Fatalf("only %d growths checked", grows)
	}
}

// countingInput opens passes of data in blocks of 64 rows and counts them
// (the polytopes of a double-sided run open theirs concurrently).
type countingInput struct {
	data  *sparsevec.CSR
	opens atomic.Int64
}

func (c *countingInput) Open(int) (Blocks, error) {
	c.opens.Add(1)
	live := 0
	return &fakeBlocks{data: c.data, n: 64, live: &live}, nil
}
func (c *countingInput) Leave(int) {}

// Streamed training gives byte for byte the model it gives without a held
// copy: single and double-sided, with passes shared by the two polytopes
// or not, on coded rows (stepped on undecoded) and float rows, whatever
// the budget.
func TestStreamHeldSameModels(t *testing.T) {
	for _, c := range []struct {
		name string
		data *sparsevec.CSR
	}{
		{"codes", heldData(6, 3000, true, false, false)},
		{"floats", heldData(7, 3000, false, false, false)},
		{"wide, empty rows", heldData(8, 3000, true, true, true)},
	} {
		for _, double := range []bool{false, true} {
			for _, share := range []bool{false, true} {
				if share && !double {
					continue
				}
				for _, buffer := range []int{50, 4000} {
					var want []byte
					for _, budget := range []float64{0, 0.5, 1, 1e9} {
						name := fmt.Sprintf("%s, double %v, shared %v, buffer %d, budget %v", c.name, double, share, buffer, budget)
						cfg := Config{K: 4, Iterations: 12000, Seed: 3, DoubleSided: double, Workers: 2}
						var in Input = &countingInput{data: c.data}
						if share {
							in = sharedPasses{shared.NewPasses(context.Background(), 2, func(int) (reader.BlockReader, error) {
								return blockSource(c.data, 64), nil
							})}
						}
						var m *model.Model
						withHeldBudget(budget, func() {
							var err error
							if m, _, err = TrainStream(context.Background(), cfg, in, buffer, [2]float32{1, -1}); err != nil {
								t.Fatalf("%s: %v", name, err)
							}
						})
						var b bytes.Buffer
						if err := model.Write(&b, m); err != nil {
							t.Fatal(err)
						}
						if want == nil {
							want = b.Bytes()
						} else if !bytes.Equal(b.Bytes(), want) {
							t.Errorf("%s: model differs from the one without a held copy", name)
						}
						if ci, ok := in.(*countingInput); ok && budget == 1e9 && ci.opens.Load() != int64(2*sides(cfg)) {
							t.Errorf("%s: %d passes opened with the rows held, want %d", name, ci.opens.Load(), 2*sides(cfg))
						}
					}
				}
			}
		}
	}
}

// Steps on held rows, coded or decoded, allocate nothing.
func TestStreamHeldStepAllocs(t *testing.T) {
	for _, codes := range []bool{true, false} {
		data := heldData(9, 1000, codes, false, false)
		cfg, _ := Config{K: 5, Iterations: 1e6}.withDefaults()
		tk := task{name: "outer", outer: 1, d: 1, maxD: 1 << 20, tasks: 1}
		p, _ := newPolytope(cfg, 1)
		p.asg.Reserve(data.Rows())
		live := 0
		s, err := newStreamSource(func() (Blocks, error) { return &fakeBlocks{data: data, n: 64, live: &live}, nil }, 2000, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		src := &checkedSource{streamSource: s, classes: [2]float32{1, -1}}
		if err := tk.steps(cfg, p, src, int64(3*data.Rows())); err != nil {
			t.Fatal(err)
		}
		if !s.replay {
			t.Fatalf("codes %v: rows not held", codes)
		}
		if a := testing.AllocsPerRun(5000, func() {
			if err := tk.steps(cfg, p, src, 1); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("codes %v: a step on a held row allocates %v times", codes, a)
		}
		s.Close()
	}
}
