package kperceptron

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"unsafe"
)

// overlaps reports whether two float64 slices share memory.
func overlaps(a, b []float64) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(8*len(b)) && b0 < a0+uintptr(8*len(a))
}

// The rows a store hands out are disjoint, of the asked length and
// capacity, at most maxRows to a new chunk; after reset a later run
// carves the same chunks without allocating, skipping chunks too short
// for its rows.
func TestRowStoreCarvesAndReuses(t *testing.T) {
	var s rowStore
	var rows [][]float64
	for range 7 {
		r := s.take(10, 3)
		if len(r) != 10 || cap(r) != 10 {
			t.Fatalf("row of len %d cap %d, want 10 and 10", len(r), cap(r))
		}
		for _, o := range rows {
			if overlaps(r, o) {
				t.Fatal("two rows share memory")
			}
		}
		rows = append(rows, r)
	}
	if len(s.chunks) != 3 || s.floats != 90 {
		t.Fatalf("%d chunks of %d values in all, want 3 of 30 each", len(s.chunks), s.floats)
	}
	s.reset()
	if a := testing.AllocsPerRun(5, func() {
		s.reset()
		for range 6 {
			s.take(12, 3) // two rows of 12 in each chunk of 30
		}
	}); a != 0 {
		t.Errorf("reused store: %v allocations", a)
	}
	// Rows of 40 fit in no chunk of 30: those are dropped for new ones.
	s.reset()
	r := s.take(40, 2)
	if len(s.chunks) != 1 || s.floats != 80 || len(r) != 40 {
		t.Fatalf("rows of 40: %d chunks, %d values, want 1 new chunk of 80", len(s.chunks), s.floats)
	}
	// A long row gets a chunk of its own, whatever maxRows.
	var big rowStore
	if r := big.take(rowChunkFloats+1, 5); len(r) != rowChunkFloats+1 || big.floats != rowChunkFloats+1 {
		t.Fatalf("long row: len %d in %d values", len(r), big.floats)
	}
	// Small rows come many to a chunk, up to maxRows.
	var small rowStore
	small.take(100, 1<<20)
	if want := rowChunkFloats / 100 * 100; small.floats != want {
		t.Fatalf("rows of 100: chunk of %d values, want %d", small.floats, want)
	}
}

// putRowStore resets a store for reuse, unless it holds more than
// rowPoolMaxFloats values: that one is left to the garbage collector
// untouched.
func TestRowStorePoolBound(t *testing.T) {
	for _, floats := range []int{64, rowPoolMaxFloats, rowPoolMaxFloats + 1} {
		s := &rowStore{chunks: [][]float64{make([]float64, floats)}, floats: floats}
		s.take(8, 8)
		putRowStore(s)
		kept := s.used == 0 && s.free == nil
		if want := floats <= rowPoolMaxFloats; kept != want {
			t.Errorf("store of %d values: reset for reuse %v, want %v", floats, kept, want)
		}
	}
}

// Training carves its kernel rows from memory a previous run left behind
// without clearing it: garbage there (NaN, huge values) must not reach
// the model, whatever the cache size.
func TestTrainIgnoresReusedRowGarbage(t *testing.T) {
	data := kpGauss(rand.New(rand.NewPCG(3, 3)), 200, 6, 0.7, -1, 1)
	cfg, err := Config{Kernel: Kernel{Kind: RBFKernel, Sigma: 0.8}, Epochs: 20, Seed: 5}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range []int{3, data.Rows()} {
		ref, refRep := kpTrainWithCache(t, cfg, data, rows)
		tr, err := newKernelTrainer(cfg, data, rows)
		if err != nil {
			t.Fatal(err)
		}
		garbage := &rowStore{}
		for _, v := range []float64{math.NaN(), math.Inf(1), -1e300} {
			c := make([]float64, 7*data.Rows()+5)
			for i := range c {
				c[i] = v
			}
			garbage.chunks = append(garbage.chunks, c)
			garbage.floats += len(c)
		}
		tr.cache.store = garbage
		rep, err := tr.run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("cache of %d rows: %v", rows, err)
		}
		if p := tr.result(cfg.Kernel); !reflect.DeepEqual(p, ref) || !slices.Equal(rep.Mistakes, refRep.Mistakes) {
			t.Fatalf("cache of %d rows: model differs after reusing garbage rows", rows)
		}
	}
}
