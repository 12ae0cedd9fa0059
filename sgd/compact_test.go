package sgd

import (
	"bytes"
	"context"
	"testing"

	"github.com/polyhedral/cpm/model"
)

// Compact rows (2-byte indices, 1-byte codes) give the models of 4-byte
// rows byte for byte: binary single- and double-sided, with reshuffle, and
// one-vs-one, on values that fit a code (grey levels) and values that do
// not (the compact copy keeps float32 values).
func TestCompactSameModel(t *testing.T) {
	for _, grey := range []bool{true, false} {
		for _, c := range []struct {
			name string
			cfg  Config
			ovo  bool
		}{
			{"single", Config{K: 3, Iterations: 4000, Seed: 5}, false},
			{"double-reshuffle", Config{K: 3, Iterations: 4000, Seed: 6, DoubleSided: true, Reshuffle: true, Entropy: 1}, false},
			{"ovo-double", Config{K: 2, Iterations: 3000, Seed: 7, DoubleSided: true}, true},
		} {
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
			train := func(compact bool) *model.Model {
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
			if !bytes.Equal(modelBytes(t, train(false)), modelBytes(t, train(true))) {
				t.Errorf("grey %v, %s: the compact copy gives another model", grey, c.name)
			}
		}
	}
}
