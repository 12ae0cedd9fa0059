package sgd

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// withBound runs f with *v set to b.
func withBound(v *int, b int, f func()) {
	defer func(old int) { *v = old }(*v)
	*v = b
	f()
}

// A row with more nonzeros than an entry takes (maxEntryNNZ, lowered here
// from the int32 bound) stops the stream with an error naming the row,
// held or not; the rows before it are drawn as usual.
func TestStreamRowOverEntryBound(t *testing.T) {
	var data sparsevec.CSR
	for r := range 40 {
		n := 3
		if r == 29 {
			n = 6
		}
		var x sparsevec.Vector
		for j := range n {
			x.Idx, x.Val = append(x.Idx, uint32(1+j)), append(x.Val, 1)
		}
		data.Append(1, x)
	}
	for _, budget := range []float64{0, 1} {
		withHeldBudget(budget, func() {
			withBound(&maxEntryNNZ, 5, func() {
				live := 0
				s, err := newStreamSource(func() (Blocks, error) { return &fakeBlocks{data: &data, n: 8, live: &live}, nil }, 4, 1, 1)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				for i := range data.Rows() {
					_, _, id, err := s.Next()
					if err != nil {
						if !strings.Contains(err.Error(), "row 30 of the training input has 6 nonzeros, over the 5") {
							t.Fatalf("budget %v: draw %d: error %q does not name the row and its nonzeros", budget, i, err)
						}
						if i < 25 {
							t.Fatalf("budget %v: error at draw %d, before the buffer reached row 30", budget, i)
						}
						return
					}
					if id >= 29 {
						t.Fatalf("budget %v: row %d drawn", budget, id)
					}
				}
				t.Fatalf("budget %v: no error for a row over the bound", budget)
			})
		})
	}
}

// A shuffle buffer over the most rows its order indexes is refused.
func TestStreamBufferOverBound(t *testing.T) {
	over := int64(maxBuffer) + 1
	if over > math.MaxInt {
		t.Skip("int is 32 bits: no buffer is over the bound")
	}
	open := func() (Blocks, error) { return &fakeBlocks{data: &sparsevec.CSR{}, n: 8, live: new(int)}, nil }
	if _, err := newStreamSource(open, int(over), 1, 1); err == nil || !strings.Contains(err.Error(), "shuffle buffer") {
		t.Fatalf("buffer of %d rows: error %v", over, err)
	}
}

// With the arena order bounded (maxOrder, lowered here from the int32
// bound of an entry's slot), runs of rows without nonzeros, which never
// fill the arena, make push compact instead of growing the order past it;
// every pass still emits each row once with its contents, held or not.
func TestStreamOrderBound(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	base := randomRows(r, 600, 30, 4)
	var data sparsevec.CSR
	for i := range base.Rows() {
		for range r.IntN(4) {
			data.Append(-1, sparsevec.Vector{})
		}
		data.Append(base.Labels[i], base.Row(i))
	}
	for _, budget := range []float64{0, 1} {
		for _, buffer := range []int{5, 50} {
			withHeldBudget(budget, func() {
				withBound(&maxOrder, 2*buffer, func() {
					live := 0
					s, err := newStreamSource(func() (Blocks, error) { return &fakeBlocks{data: &data, n: 64, live: &live}, nil }, buffer, 2, 3)
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					for pass := range 3 {
						seen := make([]bool, data.Rows())
						for range data.Rows() {
							x, y, id, err := s.Next()
							if err != nil {
								t.Fatal(err)
							}
							if seen[id] {
								t.Fatalf("budget %v, buffer %d, pass %d: row %d twice", budget, buffer, pass, id)
							}
							seen[id] = true
							if y != data.Labels[id] || !slices.Equal(x.Idx, data.Row(id).Idx) || !slices.Equal(x.Val, data.Row(id).Val) {
								t.Fatalf("budget %v, buffer %d: row %d does not match its id", budget, buffer, id)
							}
							if len(s.order) > maxOrder {
								t.Fatalf("budget %v, buffer %d: order of %d rows, over %d", budget, buffer, len(s.order), maxOrder)
							}
						}
					}
				})
			})
		}
	}
}

// Sources given one heldShare hold one copy of the rows when they read the
// input in the same blocks, each drawing as it would alone; a source that
// reads other blocks packs chunks of its own, and its rows stay right.
func TestStreamHeldShared(t *testing.T) {
	defer func(old float64) { heldBudget = old }(heldBudget)
	heldBudget = 1e9 // held all run, in a buffer of a sixth of the rows
	data := heldData(11, 2000, true, false, false)
	for _, blocks := range [][2]int{{64, 64}, {64, 100}} {
		share := &heldShare{}
		var srcs, alone [2]*streamSource
		for i := range srcs {
			n := blocks[i]
			open := func() (Blocks, error) { return &fakeBlocks{data: data, n: n, live: new(int)}, nil }
			var err error
			if srcs[i], err = newStreamSource(open, 300, 1, uint64(i)); err != nil {
				t.Fatal(err)
			}
			share.join(srcs[i].held)
			if alone[i], err = newStreamSource(open, 300, 1, uint64(i)); err != nil {
				t.Fatal(err)
			}
			defer srcs[i].Close()
			defer alone[i].Close()
		}
		for step := range 3 * data.Rows() {
			for i, s := range srcs {
				x, y, id, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				_, _, want, err := alone[i].Next()
				if err != nil {
					t.Fatal(err)
				}
				if id != want {
					t.Fatalf("blocks %v: source %d, draw %d: row %d, alone %d", blocks, i, step, id, want)
				}
				if y != data.Labels[id] || !slices.Equal(x.Idx, data.Row(id).Idx) || !slices.Equal(x.Val, data.Row(id).Val) {
					t.Fatalf("blocks %v: source %d: row %d does not match its id", blocks, i, id)
				}
			}
		}
		a, b := srcs[0].held, srcs[1].held
		if a == nil || b == nil || !srcs[0].replay || !srcs[1].replay {
			t.Fatalf("blocks %v: rows not held all run", blocks)
		}
		if same := slices.Equal(a.segs, b.segs); same != (blocks[0] == blocks[1]) {
			t.Errorf("blocks %v: chunks shared %v", blocks, same)
		}
		if own := len(a.own) + len(b.own); blocks[0] == blocks[1] && own != len(a.segs) {
			t.Errorf("blocks %v: %d chunks packed for %d held", blocks, own, len(a.segs))
		}
	}
}

// A share keeps its chunks while a source holds a copy from it, and lets
// them go with the last copy dropped; sources go on drawing their rows.
func TestStreamHeldShareLeaves(t *testing.T) {
	defer func(old float64) { heldBudget = old }(heldBudget)
	heldBudget = 1e9
	data := heldData(12, 500, true, false, false)
	share := &heldShare{}
	var srcs [2]*streamSource
	for i := range srcs {
		open := func() (Blocks, error) { return &fakeBlocks{data: data, n: 64, live: new(int)}, nil }
		var err error
		if srcs[i], err = newStreamSource(open, 100, 1, uint64(i)); err != nil {
			t.Fatal(err)
		}
		share.join(srcs[i].held)
		defer srcs[i].Close()
	}
	next := func(s *streamSource) {
		x, y, id, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if y != data.Labels[id] || !slices.Equal(x.Idx, data.Row(id).Idx) || !slices.Equal(x.Val, data.Row(id).Val) {
			t.Fatalf("row %d does not match its id", id)
		}
	}
	for range data.Rows() / 2 {
		next(srcs[0])
		next(srcs[1])
	}
	if len(share.chunks) == 0 || share.users != 2 {
		t.Fatalf("%d chunks shared by %d users", len(share.chunks), share.users)
	}
	srcs[0].dropHeld()
	if len(share.chunks) == 0 || share.users != 1 {
		t.Fatalf("one copy dropped: %d chunks shared by %d users", len(share.chunks), share.users)
	}
	srcs[1].dropHeld()
	if share.chunks != nil || share.users != 0 {
		t.Fatalf("both copies dropped: %d chunks kept for %d users", len(share.chunks), share.users)
	}
	for range 2 * data.Rows() {
		next(srcs[0])
		next(srcs[1])
	}
}
