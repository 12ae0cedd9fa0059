package learner

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/plume"
	"github.com/polyhedral/cpm/polyceptron"
)

func parseFlags(t *testing.T, args ...string) *Flags {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// --gamma means the chosen learner's gamma; the learner-specific names
// win over it.
func TestGammaAlias(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want float64
	}{
		{PolyceptronBatch, []string{"--gamma", "7"}, 7},
		{PolyceptronBatch, []string{"--poly-gamma", "8"}, 8},
		{PolyceptronBatch, []string{"--gamma", "7", "--poly-gamma", "8"}, 8},
		{PLUME, []string{"--gamma", "3"}, 3},
		{PLUME, []string{"--plume-gamma", "4", "--gamma", "3"}, 4},
	} {
		s, err := Build(tc.name, parseFlags(t, tc.args...))
		if err != nil {
			t.Fatalf("%s %v: %v", tc.name, tc.args, err)
		}
		var got float64
		switch c := s.Config.(type) {
		case *polyceptron.Config:
			got = c.Gamma
		case *plume.Config:
			got = c.Gamma
		}
		if got != tc.want {
			t.Errorf("%s %v: gamma %v, want %v", tc.name, tc.args, got, tc.want)
		}
	}
}

// Each learner reads its own flags into its own config and refuses the
// ones that cannot apply to it.
func TestBuildReadsAndRefuses(t *testing.T) {
	s, err := Build(PLUME, parseFlags(t, "--max-iter", "9", "--restarts", "3", "--lambda", "0.5", "-k", "4"))
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Config.(*plume.Config); c.MaxIter != 9 || c.Restarts != 3 || c.Lambda != 0.5 || c.K != 4 {
		t.Errorf("plume config %+v", c)
	}
	s, err = Build(CPM, parseFlags(t, "--lambda", "0.25", "-i", "7", "--ovo"))
	if err != nil {
		t.Fatal(err)
	}
	if c := s.CPM(); c.Lambda != 0.25 || c.Iterations != 7 || !c.OvO {
		t.Errorf("cpm config %+v", c)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{SPLA1, []string{"--gamma", "3"}, "does not apply"},
		{SPLA1, []string{"--plume-gamma", "3"}, "does not apply"},
		{Perceptron, []string{"--ovo"}, "--ovo is for the cpm learner"},
		{KernelPerceptron, []string{"--lift", "quadratic"}, "--lift is for"},
		{"svm", nil, "unknown learner"},
		{CPM, []string{"-i", "-1"}, "-i -1"},
		{CPM, []string{"-k", "100000"}, "-k 100000"},
		{PolyceptronBatch, []string{"--poly-gamma", "-1"}, "--poly-gamma -1"},
		{Perceptron, []string{"--lift", "cubic"}, "unknown lift"},
	} {
		if _, err := Build(tc.name, parseFlags(t, tc.args...)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: err = %v, want it to mention %q", tc.name, tc.args, err, tc.want)
		}
	}
	if _, err := Build(KernelPerceptron, parseFlags(t, "--lift", "none")); err != nil {
		t.Errorf("kperceptron --lift none (the default): %v", err)
	}
}

// A flag name declared by several learners has one kind and default.
func TestFlagDeclarationsAgree(t *testing.T) {
	seen := map[string]flagDef{}
	for _, l := range registry {
		for _, d := range l.flags {
			if d.Refuse {
				continue
			}
			if p, ok := seen[d.Name]; ok && (p.Kind != d.Kind || p.Default != d.Default) {
				t.Errorf("flag %s: %s declares kind %v default %q, another learner kind %v default %q", d.Name, l.name, d.Kind, d.Default, p.Kind, p.Default)
			}
			seen[d.Name] = d
		}
	}
	for _, l := range registry {
		for _, d := range l.flags {
			if _, ok := seen[d.Name]; d.Refuse && !ok {
				t.Errorf("%s refuses --%s, which no learner reads", l.name, d.Name)
			}
		}
	}
}

// Every learner describes its own models.
func TestDescribeEveryLearner(t *testing.T) {
	data := load(t, "ionosphere.libsvm")
	for _, name := range Names() {
		m, _, err := Train(t.Context(), specs()[name].WithSeed(1), data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d, err := Describe(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Title == "" || d.EvalRule == "" {
			t.Errorf("%s: title %q, eval rule %q", name, d.Title, d.EvalRule)
		}
		if d.NoHyperplanes == "" && (d.Rule == "" || d.Classes == "" || len(d.Legends) != len(m.Weights)) {
			t.Errorf("%s: incomplete description %+v", name, d)
		}
	}
}
