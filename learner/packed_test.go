package learner

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/learner/learnertest"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// packerOf appends the rows of data to a Packer in blocks of 100 rows.
func packerOf(data *sparsevec.CSR, mode sparsevec.Packing) *sparsevec.Packer {
	p := sparsevec.NewPacker(mode)
	for lo := 0; lo < data.Rows(); lo += 100 {
		var perm []int32
		for r := lo; r < min(lo+100, data.Rows()); r++ {
			perm = append(perm, int32(r))
		}
		p.Append(data.Permute(perm))
	}
	return p
}

func writeModel(t *testing.T, m *model.Model) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := model.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TrainPacked gives Train's model byte for byte: with and without a
// scaling fitted (auto choosing none or maxabs, standard), one-vs-one,
// the default λ = 1/n, compact rows, and a warm start that keeps its
// model's scaling.
func TestTrainPackedMatchesTrain(t *testing.T) {
	grey := learnertest.MNISTLike(400)
	for i, v := range grey.Val {
		grey.Val[i] = float32(int(v*255)) / 255
	}
	wide := learnertest.MNISTLike(400)
	for i := range wide.Val {
		wide.Val[i] *= 3 // auto picks maxabs
	}
	// Rows past 2-byte indices: the packed blocks are wide and the
	// scaling rewrites them in place.
	var far sparsevec.CSR
	for r := range wide.Rows() {
		x := wide.Row(r)
		x.Idx, x.Val = append(slices.Clone(x.Idx), 70000+uint32(r%50)), append(slices.Clone(x.Val), float32(r%7))
		far.Append(wide.Labels[r], x)
	}
	multi := learnertest.MNISTLike(400)
	for i := range multi.Labels {
		multi.Labels[i] = float32(i % 3)
	}
	base := CPMConfig{Config: sgd.Config{K: 3, Iterations: 3000, C: 1, Seed: 3}}
	cases := []struct {
		name string
		data *sparsevec.CSR
		cfg  CPMConfig
		mode scale.Mode
	}{
		{"auto-none", grey, base, scale.Auto},
		{"auto-maxabs", wide, base, scale.Auto},
		{"maxabs-wide", &far, base, scale.MaxAbs},
		{"maxabs-wide-compact", &far, CPMConfig{Config: sgd.Config{K: 3, Iterations: 3000, C: 1, Seed: 3, Compact: sgd.CompactYes}}, scale.MaxAbs},
		{"standard-compact", grey, CPMConfig{Config: sgd.Config{K: 3, Iterations: 3000, C: 1, Seed: 3, Compact: sgd.CompactYes}}, scale.Standard},
		{"default-lambda", grey, CPMConfig{Config: sgd.Config{K: 2, Seed: 4, Compact: sgd.CompactYes}, DefaultLambda: true}, scale.Auto},
		{"ovo", multi, CPMConfig{Config: sgd.Config{K: 2, Iterations: 2000, C: 1, Seed: 5, DoubleSided: true}, OvO: true}, scale.MaxAbs},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			s := Spec{Config: &cfg, Scale: c.mode}
			want, _, err := Train(context.Background(), s, c.data)
			if err != nil {
				t.Fatal(err)
			}
			got, rep, err := TrainPacked(context.Background(), s, packerOf(c.data, s.Packing()), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(writeModel(t, want), writeModel(t, got)) {
				t.Fatalf("TrainPacked gives another model (scale %s)", rep.Scale)
			}
			// A warm start from the model keeps its scaling.
			warm := c.cfg
			warm.Init = want
			warm.Iterations = 1000
			ws := Spec{Config: &warm, Scale: c.mode}
			want2, _, err := Train(context.Background(), ws, c.data)
			if err != nil {
				t.Fatal(err)
			}
			got2, _, err := TrainPacked(context.Background(), ws, packerOf(c.data, ws.Packing()), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(writeModel(t, want2), writeModel(t, got2)) {
				t.Fatal("warm start: TrainPacked gives another model")
			}
		})
	}
}

// Specs TrainPacked cannot train are refused, and Packable says so.
func TestTrainPackedRefuses(t *testing.T) {
	for _, s := range []Spec{
		{Name: Perceptron},
		{HashBits: 8},
		{Config: &CPMConfig{Config: sgd.Config{Checkpoint: sgd.Checkpointing{Path: "x"}}}},
	} {
		if s.Packable() {
			t.Errorf("%+v is Packable", s)
		}
		if _, _, err := TrainPacked(context.Background(), s, sparsevec.NewPacker(0), nil); err == nil {
			t.Errorf("TrainPacked of %+v did not fail", s)
		}
	}
}

// The visit of TrainPacked sees every training row once, and its error is
// TrainPacked's.
func TestTrainPackedVisit(t *testing.T) {
	data := learnertest.MNISTLike(300)
	s := Spec{Config: &CPMConfig{Config: sgd.Config{K: 2, Iterations: 500, C: 1, Seed: 1}}}
	rows := -1
	_, _, err := TrainPacked(context.Background(), s, packerOf(data, 0), func(m *model.Model, p *sparsevec.Packed) error {
		rows = p.Rows()
		return nil
	})
	if err != nil || rows != data.Rows() {
		t.Fatalf("visit saw %d rows of %d (%v)", rows, data.Rows(), err)
	}
	stop := errors.New("stop")
	m, _, err := TrainPacked(context.Background(), s, packerOf(data, 0), func(*model.Model, *sparsevec.Packed) error { return stop })
	if !errors.Is(err, stop) || m != nil {
		t.Fatalf("visit error: got %v, model %v", err, m != nil)
	}
}
