package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// handModel returns a single-sided binary CPM with K = 2 over 3 features
// whose numbers are easy to check by hand: face 0 has w = (3, -4, 0) and
// bias -1, face 1 has w = 0 and bias 0.5.
func handModel() *model.Model {
	w := sparsevec.NewMatrix(4, 2)
	w.Set(0, 0, -1)
	w.Set(0, 1, 0.5)
	w.Set(1, 0, 3)
	w.Set(2, 0, -4)
	return &model.Model{
		Learner: "cpm", Sides: 1, K: 2, D: 4, Lambda: 0.001, CostRatio: 1, Bias: 1, Seed: 7, Iterations: 1000,
		Classes: []float32{1, -1}, Weights: []*sparsevec.Matrix{w}, Counts: [][]uint64{{5, 0}},
	}
}

func TestInspectHandModel(t *testing.T) {
	dir := t.TempDir()
	mp := filepath.Join(dir, "hand.model")
	if err := model.Save(mp, handModel()); err != nil {
		t.Fatal(err)
	}
	// Scores (face 0, face 1): row 1 (2, 0.5), row 2 (-5, 0.5), row 3 (1, 0.5).
	data := filepath.Join(dir, "d.libsvm")
	if err := os.WriteFile(data, []byte("1 1:1\n-1 2:1\n1 1:2 2:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "inspect.json")
	out := mustRun(t, "inspect", mp, "--top", "1", "--data", data, "--json", js)
	want := `model     ` + mp + `
learner   cpm (binary, single-sided)
K         2 faces per polytope
features  3 (weight rows D = 4: bias row 0); bias value 1
classes   outer 1, inner -1
sides     1
decision  outer label when max_k (w_k·x + b_k) > 0
training  lambda 0.001, entropy 0, iterations 1000, seed 7
data      ` + data + `: 3 rows, assigned by argmax_k (w_k·x + b_k) of each polytope

polytope 0: outer (label 1 outside): 1 of 2 faces active over 3 rows
  face active       norm       bias  nonzero     stored   assigned  top features (index:weight)
     0 yes             5         -1        2          5          2  2:-4
     1 no              0        0.5        0          0          1
`
	if out != want {
		t.Errorf("inspect printed\n%s\nwant\n%s", out, want)
	}
	var got inspection
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Polytopes) != 1 || len(got.Polytopes[0].Faces) != 2 {
		t.Fatalf("json: %s", b)
	}
	f0, f1 := got.Polytopes[0].Faces[0], got.Polytopes[0].Faces[1]
	if f0.Norm != 5 || f0.Bias != -1 || !f0.Active || *f0.Assigned != 2 || *f0.Stored != 5 || len(f0.Top) != 1 || f0.Top[0] != (featureWeights{2, -4}) {
		t.Errorf("face 0 in json: %+v", f0)
	}
	if f1.Active || *f1.Assigned != 1 || f1.Top != nil {
		t.Errorf("face 1 in json: %+v", f1)
	}

	// Without data: activity is the weights alone, and --top 0 lists none.
	out = mustRun(t, "inspect", "-m", mp, "--top", "0")
	if !strings.Contains(out, "1 of 2 faces active\n") || strings.Contains(out, "top features") || strings.Contains(out, "assigned") {
		t.Errorf("inspect without data:\n%s", out)
	}
}

// inspect on trained models of every learner with hyperplanes: the counts
// over the data add up, faces are ranked by |weight|, and the kernel
// perceptron is refused with a reason.
func TestInspectTrainedModels(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		flags     []string
		polytopes int
		k         int
		rows      int64    // rows assigned per polytope
		lines     []string // in the output
	}{
		{"cpm-double", []string{"-k", "3", "-i", "20000", "--double-sided"}, 2, 3, 270, []string{
			"learner   cpm (binary, double-sided)\n", "K         3 faces per polytope\n", "features  13 (weight rows D = 14: bias row 0); bias value 1\n",
			"classes   outer 1, inner -1\n", "sides     2\n", "\npolytope 0: outer (label 1 outside): ", "\npolytope 1: inner (label -1 outside): ",
			"  face active       norm       bias  nonzero     stored   assigned  top features (index:weight)\n",
		}},
		{"cpm-ovo", []string{"-k", "2", "-i", "5000", "-C", "1", "--ovo", "-t", iris}, 3, 2, 100, []string{
			"learner   cpm (one-vs-one, single-sided)\n", "classes   3: 1 2 3\n", "pairs     3: 1/2 1/3 2/3\n",
			"\npolytope 0: 1 vs 2/outer (label 1 outside): ", "\npolytope 2: 2 vs 3/outer (label 2 outside): ",
		}},
		{"perceptron-lift", []string{"--learner", "perceptron", "--lift", "quadratic", "--epochs", "5"}, 1, 1, 270, []string{
			"K         1 hyperplane\n", "features  13 (weight rows D = 15: bias row 0, lifted feature quadratic at row 14)",
		}},
		{"perceptron-multi", []string{"--learner", "perceptron", "--epochs", "5", "-t", iris}, 1, 3, 150, []string{
			"learner   perceptron (multiclass)\n", "  face active       norm       bias  nonzero    class   assigned",
		}},
		{"polyceptron", []string{"--learner", "polyceptron-online", "-k", "3", "--epochs", "5"}, 1, 3, 270, []string{
			"K         3 hyperplanes\n", "classes   inside 1, outside -1\n", "assigned by argmin_k (w_k·x + b_k)\n",
		}},
		{"plume", []string{"--learner", "plume", "-k", "2", "--max-iter", "5"}, 1, 2, 270, []string{
			"K         2 experts\n", "gamma 1, m_step ga\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := filepath.Join(dir, tc.name+".model")
			data := heart
			args := []string{"train", "-q", "-t", heart, "-o", mp}
			for i, f := range tc.flags {
				if f == "-t" {
					data = tc.flags[i+1]
				}
			}
			mustRun(t, append(args, tc.flags...)...)
			js := filepath.Join(dir, tc.name+".json")
			out := mustRun(t, "inspect", mp, "--data", data, "--top", "3", "--json", js)
			var in inspection
			b, _ := os.ReadFile(js)
			if err := json.Unmarshal(b, &in); err != nil {
				t.Fatal(err)
			}
			for _, l := range tc.lines {
				if !strings.Contains(out, l) {
					t.Errorf("output lacks %q:\n%s", l, out)
				}
			}
			if len(in.Polytopes) != tc.polytopes {
				t.Fatalf("%d polytopes, want %d:\n%s", len(in.Polytopes), tc.polytopes, out)
			}
			for _, p := range in.Polytopes {
				var sum int64
				active := 0
				for _, f := range p.Faces {
					sum += *f.Assigned
					if f.Active {
						active++
					}
					if f.Active != (f.Nonzero > 0 && *f.Assigned > 0) {
						t.Errorf("%s face %d: active %v with %d nonzeros and %d rows", p.Name, f.Face, f.Active, f.Nonzero, *f.Assigned)
					}
					if len(f.Top) > 3 {
						t.Errorf("%s face %d: %d top features, want <= 3", p.Name, f.Face, len(f.Top))
					}
					for i := 1; i < len(f.Top); i++ {
						if abs32(f.Top[i].Weight) > abs32(f.Top[i-1].Weight) {
							t.Errorf("%s face %d: top features not by |weight|: %v", p.Name, f.Face, f.Top)
						}
					}
				}
				if len(p.Faces) != tc.k || sum != tc.rows || p.Rows != tc.rows || active != p.ActiveFaces {
					t.Errorf("%s: %d faces, %d rows assigned (%d), %d active (%d); want %d faces, %d rows:\n%s",
						p.Name, len(p.Faces), sum, p.Rows, active, p.ActiveFaces, tc.k, tc.rows, out)
				}
			}
		})
	}
	kp := filepath.Join(dir, "kp.model")
	mustRun(t, "train", "-q", "--learner", "kperceptron", "--epochs", "2", "-t", heart, "-o", kp)
	code, _, errs := cpm(t, "inspect", kp)
	if code != exitError || !strings.Contains(errs, "support rows") {
		t.Errorf("inspect of a kernel perceptron: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := cpm(t, "inspect"); code != exitUsage {
		t.Errorf("inspect without a model: exit %d, want 2", code)
	}
	if code, _, _ := cpm(t, "inspect", kp, "--top", "-1"); code != exitUsage {
		t.Errorf("inspect --top -1: exit %d, want 2", code)
	}
}
