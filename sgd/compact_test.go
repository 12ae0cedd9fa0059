package sgd

import (
	"bytes"
	"context"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// sameModelRuns are the runs whose models the tests below compare:
// single-sided, double-sided with reshuffles and entropy, one-vs-one.
var sameModelRuns = []struct {
	name string
	cfg  Config
	ovo  bool
}{
	{"single", Config{K: 3, Iterations: 4000, Seed: 5}, false},
	{"double-reshuffle", Config{K: 3, Iterations: 4000, Seed: 6, DoubleSided: true, Reshuffle: true, Entropy: 1}, false},
	{"ovo-double", Config{K: 2, Iterations: 3000, Seed: 7, DoubleSided: true}, true},
}

// Compact rows (2-byte indices, 1-byte codes; auto and yes) give the
// models of 4-byte rows byte for byte: binary single- and double-sided, with reshuffle, and
// one-vs-one, on values that fit a code (grey levels) and values that do
// not (the compact copy keeps float32 values).
func TestCompactSameModel(t *testing.T) {
	for _, grey := range []bool{true, false} {
		for _, c := range sameModelRuns {
			classes := 2
			if c.ovo {
				classes = 4
			}
			data := ckData(11, 300, 40, classes)
			if grey {
				for i, v := range data.Val {
					data.Val[i] = float32(int(v*255)&255) / 255
				}
			}
			train := func(compact Compaction) *model.Model {
				cfg := c.cfg
				cfg.Compact = compact
				var (
					m   *model.Model
					err error
				)
				if c.ovo {
					m, _, err = TrainOvO(context.Background(), cfg, data)
				} else {
					m, _, err = Train(context.Background(), cfg, data, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			want := modelBytes(t, train(CompactNo))
			for _, compact := range []Compaction{CompactAuto, CompactYes} {
				if !bytes.Equal(want, modelBytes(t, train(compact))) {
					t.Errorf("grey %v, %s: --compact %s gives another model than no", grey, c.name, compact)
				}
			}
		}
	}
}

// TrainPacked on rows appended block by block gives the model of Train
// and TrainOvO on the same rows as a CSR, compact or not.
func TestTrainPackedSameModel(t *testing.T) {
	for _, c := range sameModelRuns {
		classes := 2
		if c.ovo {
			classes = 4
		}
		data := ckData(12, 300, 40, classes)
		for i, v := range data.Val {
			data.Val[i] = float32(int(v*255)&255) / 255
		}
		var (
			want *model.Model
			err  error
		)
		if c.ovo {
			want, _, err = TrainOvO(context.Background(), c.cfg, data)
		} else {
			want, _, err = Train(context.Background(), c.cfg, data, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []sparsevec.Packing{0, sparsevec.PackCompact} {
			rows := sparsevec.NewPacker(mode)
			for lo := 0; lo < data.Rows(); lo += 70 {
				blk := make([]int32, 0, 70)
				for r := lo; r < min(lo+70, data.Rows()); r++ {
					blk = append(blk, int32(r))
				}
				rows.Append(data.Permute(blk))
			}
			got, _, err := TrainPacked(context.Background(), c.cfg, rows, nil, c.ovo, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(modelBytes(t, want), modelBytes(t, got)) {
				t.Errorf("%s, packing %d: TrainPacked gives another model", c.name, mode)
			}
		}
	}
}

// A step on a packed row makes no allocation, whether the row is read in
// place (4-byte indices and values, or coded by the Coded kernels) or
// decoded (compact without the direct kernels).
func TestPackedStepDoesNotAllocate(t *testing.T) {
	data := ckData(13, 500, 200, 2)
	for i, v := range data.Val {
		data.Val[i] = float32(int(v*255)&255) / 255
	}
	for _, mode := range []sparsevec.Packing{0, sparsevec.PackCompact} {
		p := mustPolytope(t, Config{K: 10, Iterations: 1e6, Entropy: 1}, data.Dim)
		p.asg.Reserve(data.Rows())
		src, _ := newMemorySource(sparsevec.Pack(data, nil, mode), nil, 1, 1, true)
		if want := mode == sparsevec.PackCompact && sparsevec.CodedDirect(); src.coded != want {
			t.Errorf("packing %d: coded source %v, want %v", mode, src.coded, want)
		}
		if a := testing.AllocsPerRun(5000, func() { benchStep(p, src) }); a != 0 {
			t.Fatalf("packing %d: a step allocates %v times", mode, a)
		}
	}
}
