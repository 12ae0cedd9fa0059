package sgd

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// wideData returns 4 rows of labels 1..classes (±1 when classes is 2),
// one of them with feature index top: the shape of a file whose one
// hostile row sets the weights' feature rows.
func wideData(classes int, top uint32) *sparsevec.CSR {
	var m sparsevec.CSR
	for r := range 4 {
		y := float32(1 + r%classes)
		if classes == 2 {
			y = float32(1 - 2*(r%2))
		}
		idx := []uint32{1}
		if r == 3 {
			idx = []uint32{1, top}
		}
		m.Append(y, vec(idx, []float32{1, 1}[:len(idx)]))
	}
	return &m
}

// sliceBlocks streams one CSR block per pass.
type sliceBlocks struct {
	b    *sparsevec.CSR
	done bool
}

func (s *sliceBlocks) Next() (*sparsevec.CSR, error) {
	if s.done {
		return nil, io.EOF
	}
	s.done = true
	return s.b, nil
}
func (s *sliceBlocks) Release(*sparsevec.CSR) {}
func (s *sliceBlocks) Close() error           { return nil }

// TestMaxMemory checks Config.MaxMemory on the shapes of a 4-row file with
// one row of a large feature index: in memory, single- and double-sided
// and one-vs-one runs are refused before their weights are allocated, with
// ErrMemoryLimit, and pass with a limit just above what they need;
// streamed, the run fails at the hostile row without growing its weights
// beyond the limit.
func TestMaxMemory(t *testing.T) {
	const top = 1 << 18 // 2^18+1 rows × 8 floats × 4 bytes = 8 MiB per polytope
	per := int64(top+1) * 8 * 4
	for _, c := range []struct {
		name    string
		classes int
		double  bool
		copies  int64
	}{
		{"single", 2, false, 1},
		{"double", 2, true, 2},
		{"ovo double", 3, true, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := wideData(c.classes, top)
			train := func(limit int64) error {
				cfg := Config{K: 2, Iterations: 50, DoubleSided: c.double, Workers: 1, MaxMemory: limit}
				var err error
				if c.classes > 2 {
					_, _, err = TrainOvO(context.Background(), cfg, data)
				} else {
					_, _, err = Train(context.Background(), cfg, data, nil)
				}
				return err
			}
			need := c.copies * per
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err := train(need - 1)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrMemoryLimit) {
				t.Fatalf("limit %d below the %d needed: got %v, want ErrMemoryLimit", need-1, need, err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("refusing allocated %d bytes, want < 1 MiB", n)
			}
			t.Log(err)
			if err := train(need + need/8); err != nil {
				t.Errorf("limit just above the need: %v", err)
			}
		})
	}
	t.Run("stream", func(t *testing.T) {
		data := wideData(2, top)
		in := OpenFunc(func() (Blocks, error) { return &sliceBlocks{b: data}, nil })
		for _, double := range []bool{false, true} {
			copies := int64(1)
			if double {
				copies = 2
			}
			cfg := Config{K: 2, Iterations: 50, DoubleSided: double, Workers: 2, MaxMemory: copies*per - 1}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, _, err := TrainStream(context.Background(), cfg, in, 16, [2]float32{1, -1})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrMemoryLimit) {
				t.Fatalf("double %v: got %v, want ErrMemoryLimit", double, err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > uint64(cfg.MaxMemory)+1<<20 {
				t.Errorf("double %v: allocated %d bytes, more than the limit %d + 1 MiB", double, n, cfg.MaxMemory)
			}
			cfg.MaxMemory = copies * per
			if _, _, err := TrainStream(context.Background(), cfg, in, 16, [2]float32{1, -1}); err != nil {
				t.Errorf("double %v: limit equal to the need: %v", double, err)
			}
		}
	})
}
