package kperceptron

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/polyhedral/cpm/sparsevec"
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

// putTrainMemory keeps memory for reuse, reset, unless it holds more than
// trainPoolMaxBytes: that is left to the garbage collector untouched.
func TestTrainMemoryPoolBound(t *testing.T) {
	for _, floats := range []int{64, trainPoolMaxBytes / 8, trainPoolMaxBytes/8 + 1} {
		m := &trainMemory{rows: rowStore{chunks: [][]float64{make([]float64, floats)}, floats: floats}}
		m.rows.take(8, 8)
		putTrainMemory(m)
		kept := m.rows.used == 0 && m.rows.free == nil
		if want := floats <= trainPoolMaxBytes/8; kept != want {
			t.Errorf("memory of %d bytes: reset for reuse %v, want %v", m.bytes(), kept, want)
		}
	}
	m := &trainMemory{sq: make([]float64, 10), count: make([]int, 0, 4), dense: make([]float32, 3)}
	if got, want := m.bytes(), 80+32+12; got != want {
		t.Errorf("bytes() = %d, want %d", got, want)
	}
}

// garbageMemory returns training memory whose arrays and kernel-row
// chunks, of room for rows of n values, hold NaN, huge and out-of-range
// values: what a previous run may leave behind.
func garbageMemory(n int) *trainMemory {
	m := new(trainMemory)
	for i, v := range []float64{math.NaN(), math.Inf(1), -1e300} {
		c := make([]float64, 7*n+5)
		for k := range c {
			c[k] = v
		}
		m.rows.chunks = append(m.rows.chunks, c)
		m.rows.floats += len(c)
		fill := func(s []int32) []int32 {
			for k := range s {
				s[k] = int32(k*7919+i) - 99
			}
			return s
		}
		m.cls, m.alpha = fill(make([]int32, 3*n)), fill(make([]int32, 3*n))
		m.slot, m.owner, m.prev, m.next = fill(make([]int32, n)), fill(make([]int32, 0, n)), fill(make([]int32, 0, n)), fill(make([]int32, 0, n))
		m.rowOf = fill(make([]int32, 20*n))
		m.sq, m.f, m.runA = make([]float64, 3*n), make([]float64, 3*n), make([]float64, 64)
		for _, s := range [][]float64{m.sq, m.f, m.runA} {
			for k := range s {
				s[k] = v
			}
		}
		m.count, m.colPtr, m.full, m.runOff = make([]int, 64), make([]int, 65), make([]int, 64), make([]int, 64)
		for _, s := range [][]int{m.count, m.colPtr, m.full, m.runOff} {
			for k := range s {
				s[k] = k*31 - 7
			}
		}
		m.dense, m.val = make([]float32, 20*n), make([]float32, 20*n)
		for _, s := range [][]float32{m.dense, m.val} {
			for k := range s {
				s[k] = float32(v)
			}
		}
	}
	return m
}

// Training builds its arrays and carves its kernel rows in memory a
// previous run left behind, without clearing what it overwrites: garbage
// there must not reach the model, whatever the cache size and the data's
// dense and sparse columns.
func TestTrainIgnoresReusedMemoryGarbage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for name, data := range map[string]*sparsevec.CSR{
		"gauss":  kpGauss(rng, 200, 6, 0.7, -1, 1),
		"sparse": dotsData(rng, 150, 30, 0.3, 1, 3),
	} {
		cfg, err := Config{Kernel: Kernel{Kind: RBFKernel, Sigma: 0.8}, Epochs: 20, Seed: 5}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		for _, rows := range []int{3, data.Rows()} {
			ref, refRep := kpTrainWithCache(t, cfg, data, rows)
			tr, err := newKernelTrainer(cfg, data, rows, garbageMemory(data.Rows()))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := tr.run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("%s, cache of %d rows: %v", name, rows, err)
			}
			if p := tr.result(cfg.Kernel); !reflect.DeepEqual(p, ref) || !slices.Equal(rep.Mistakes, refRep.Mistakes) {
				t.Fatalf("%s, cache of %d rows: model differs in reused memory", name, rows)
			}
		}
	}
}

// A run's memory goes back to the pool and the next run reuses it: the
// second of two identical trainings allocates less than the first, and
// gives the same model.
func TestTrainReusesMemory(t *testing.T) {
	data := kpGauss(rand.New(rand.NewPCG(8, 8)), 300, 8, 0.5, -1, 1)
	cfg := Config{Kernel: Kernel{Kind: RBFKernel, Sigma: 0.7}, Epochs: 10, Seed: 2}
	ref, _, err := Train(context.Background(), cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	var p *Perceptron
	fresh := testing.AllocsPerRun(1, func() {
		trainPool = sync.Pool{} // nothing to reuse
		p, _, _ = Train(context.Background(), cfg, data)
	})
	reused := testing.AllocsPerRun(5, func() { p, _, _ = Train(context.Background(), cfg, data) })
	if !reflect.DeepEqual(p, ref) {
		t.Fatal("model differs when trained in reused memory")
	}
	if reused >= fresh-10 {
		t.Errorf("%v allocations with reused memory, %v without: not reused", reused, fresh)
	}
}
