package model

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// ovoModel returns a one-vs-one model over c classes whose matrices are
// d×k with every weight 1, so that the file stores every row.
func ovoModel(c, d, k, sides int, counts bool) *Model {
	m := &Model{Learner: "cpm", Sides: sides, K: k, D: d, Lambda: 1e-4, Bias: 1, Iterations: 1, OvO: true}
	for i := range c {
		m.Classes = append(m.Classes, float32(i))
	}
	for range m.Matrices() {
		w := sparsevec.NewMatrix(d, k)
		for j := range d {
			for f := range k {
				w.Set(j, f, 1)
			}
		}
		m.Weights = append(m.Weights, w)
		if counts {
			m.Counts = append(m.Counts, make([]uint64, k))
		}
	}
	return m
}

// liveAfter returns the growth of the live heap (after a GC) that f's
// result keeps, and the bytes allocated while f ran.
func liveAfter(f func() any) (live int64, total uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := f()
	runtime.ReadMemStats(&after)
	total = after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc), total
}

// TestMemoryFactor checks the bound of MemoryFactor: a model that Read or
// Load accepts holds at most MemoryFactor times its file size plus
// MemorySlack in memory, and one that would take more (a one-vs-one model
// of 44,850 one-face matrices over the bias row alone: 180 KB on disk, 22
// times that in memory before any predictor) is refused with ErrTooLarge
// before its weights are allocated.
func TestMemoryFactor(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name             string
		m                *Model
		tooLarge         bool
		minExpect, limit int64 // the shape's MemoryBytes must be >= minExpect; limit for LoadLimit
	}{
		{"pairs of 1x1", ovoModel(300, 1, 1, 1, false), true, 3 << 20, 0},
		{"double-sided pairs of 1x1", ovoModel(300, 1, 1, 2, false), true, 7 << 20, 0},
		{"pairs of 2x1", ovoModel(150, 2, 1, 1, false), false, 1 << 20, 0},
		{"pairs of 1x1 with counts", ovoModel(150, 1, 1, 1, true), false, 1 << 20, 0},
		{"pairs of 64x3", ovoModel(40, 64, 3, 2, true), false, 3 << 20, 0},
		{"pairs of 64x3 over a limit", ovoModel(40, 64, 3, 2, true), true, 3 << 20, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, c.m); err != nil {
				t.Fatal(err)
			}
			size := int64(buf.Len())
			if got := c.m.MemoryBytes(); got < c.minExpect {
				t.Fatalf("MemoryBytes = %d, want >= %d (the test's shape is wrong)", got, c.minExpect)
			}
			path := filepath.Join(dir, "m.cpm")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			for how, read := range map[string]func() (*Model, error){
				"load":   func() (*Model, error) { return LoadLimit(path, c.limit) },
				"read":   func() (*Model, error) { return ReadLimit(bytes.NewReader(buf.Bytes()), "m.cpm", c.limit) },
				"stream": func() (*Model, error) { return ReadLimit(streamOnly{bytes.NewReader(buf.Bytes())}, "m.cpm", c.limit) },
			} {
				var err error
				live, total := liveAfter(func() any {
					m, e := read()
					err = e
					return m
				})
				t.Logf("%s: file %d bytes, MemoryBytes %d, live %d (%.1f×), allocated %d: %v", how, size, c.m.MemoryBytes(), live, float64(live)/float64(size), total, err)
				if c.tooLarge {
					if !errors.Is(err, ErrTooLarge) || !errors.As(err, new(*FormatError)) {
						t.Errorf("%s: got %v, want a *FormatError wrapping ErrTooLarge", how, err)
					}
					if total > uint64(size)+1<<20 {
						t.Errorf("%s: refusing it allocated %d bytes, want at most the file size %d + 1 MiB", how, total, size)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				if bound := MemoryFactor*size + MemorySlack; live > bound {
					t.Errorf("%s: the model holds %d bytes, more than %d×%d+%d = %d", how, live, MemoryFactor, size, MemorySlack, bound)
				}
				if !raceEnabled && total > 2*uint64(MemoryFactor*size+MemorySlack) { // the race detector allocates more
					t.Errorf("%s: reading allocated %d bytes in all, more than twice the bound", how, total)
				}
			}
		})
	}
}
