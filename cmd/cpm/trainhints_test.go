package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// summaryLines returns the lines of a train run's stderr that do not
// depend on timing or on the order polytopes finish in: the loaded line
// without its time, the scaling line and the hints.
func summaryLines(errs string) []string {
	var out []string
	for line := range strings.Lines(errs) {
		switch {
		case strings.HasPrefix(line, "loaded "):
			out = append(out, line[:strings.LastIndex(line, " in ")])
		case strings.HasPrefix(line, "scaled features: "), strings.HasPrefix(line, "hint: "):
			out = append(out, line)
		}
	}
	return out
}

// Training in memory on packed rows (no cache) gives, with and without
// -q, the model of the CSR path (a --cache run), and without -q the same
// loaded line and hints: unscaled with both hints, scaled with the
// training-error hint, and one-vs-one with a scaling.
func TestPackedTrainHintsMatchCSR(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		args  []string
		hints int
	}{
		{"unscaled", []string{"-t", pima, "-i", "200000", "--scale", "none", "-C", "1"}, 2},
		{"standard", []string{"-t", pima, "-i", "300", "-k", "2", "--scale", "standard"}, 1},
		{"ovo-minmax", []string{"-t", "../../testdata/uci/breast-cancer.libsvm", "-i", "20000", "-k", "3", "--ovo", "--scale", "minmax"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var models [3][]byte
			var sums [2][]string
			for i, extra := range [][]string{nil, {"-q"}, {"--cache", filepath.Join(dir, c.name+".cpmcache")}} {
				m := filepath.Join(dir, c.name+".model")
				_, _, errs := cpm(t, append(append([]string{"train", "-o", m}, extra...), c.args...)...)
				b, err := os.ReadFile(m)
				if err != nil {
					t.Fatalf("%v: %v\n%s", extra, err, errs)
				}
				models[i] = b
				switch i {
				case 0:
					sums[0] = summaryLines(errs)
				case 1:
					if errs != "" {
						t.Errorf("-q prints:\n%s", errs)
					}
				case 2:
					sums[1] = summaryLines(errs)
				}
			}
			if !bytes.Equal(models[0], models[2]) || !bytes.Equal(models[1], models[2]) {
				t.Errorf("the packed runs' models differ from the CSR run's")
			}
			if !slices.Equal(sums[0], sums[1]) {
				t.Errorf("packed run prints\n%q\nthe CSR run\n%q", sums[0], sums[1])
			}
			if got := strings.Count(strings.Join(sums[0], ""), "hint: "); got != c.hints {
				t.Errorf("%d hints, want %d: %q", got, c.hints, sums[0])
			}
		})
	}
}

// The visit of learner.TrainPacked, with the model it gets and the rows
// it scaled, scores the rows as the returned model scores the raw rows,
// bit for bit: the same multiset of scores, so the same training error.
func TestPackedErrorScaled(t *testing.T) {
	data, err := loadData(pima)
	if err != nil {
		t.Fatal(err)
	}
	src, err := input.Resolve(pima)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []scale.Mode{scale.Standard, scale.MaxAbs, scale.MinMax, scale.None} {
		for _, compact := range []sgd.Compaction{sgd.CompactNo, sgd.CompactAuto, sgd.CompactYes} {
			cfg := learner.CPMConfig{Config: sgd.Config{K: 3, Iterations: 3000, C: 1, Seed: 2, Compact: compact}}
			s := learner.Spec{Config: &cfg, Scale: mode}
			rows, err := src.Pack(s.Packing())
			if err != nil {
				t.Fatal(err)
			}
			var got []float32
			var gotErr float64
			m, _, err := learner.TrainPacked(context.Background(), s, rows, func(m *model.Model, p *sparsevec.Packed) error {
				got = scoresOf(t, m, p.Rows(), func(r int, buf *sparsevec.Vector) sparsevec.Vector { return p.Row(r, buf) })
				gotErr, err = packedError(m, p)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			want := scoresOf(t, m, data.Rows(), func(r int, _ *sparsevec.Vector) sparsevec.Vector { return data.Row(r) })
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s compact=%v: the visit's scores differ from the model's", mode, compact)
			}
			if wantErr, err := modelError(m, data); err != nil || gotErr != wantErr || wantErr == 0 {
				t.Errorf("%s compact=%v: training error %v, want %v (%v)", mode, compact, gotErr, wantErr, err)
			}
		}
	}
}

// scoresOf returns m's scores of the n rows row gives.
func scoresOf(t *testing.T, m *model.Model, n int, row func(r int, buf *sparsevec.Vector) sparsevec.Vector) []float32 {
	t.Helper()
	pr, err := learner.NewPredictor(m)
	if err != nil {
		t.Fatal(err)
	}
	var buf sparsevec.Vector
	out := make([]float32, n)
	for r := range n {
		_, out[r], _ = pr.Predict(row(r, &buf))
	}
	return out
}
