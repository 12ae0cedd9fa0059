package tune

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/learner"
)

// baseFlags returns the learner flags as parsed from args.
func baseFlags(t *testing.T, args ...string) *learner.Flags {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := learner.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// pointsOf parses grid over learner l and returns its points as strings.
func pointsOf(t *testing.T, l, grid string, base *learner.Flags) []string {
	t.Helper()
	g, err := ParseGrid(grid, l, base)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := g.Points(0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func TestGridPoints(t *testing.T) {
	for _, tc := range []struct {
		name, learner, grid string
		base                []string
		want                []string
	}{
		{"order", "cpm", "C=1,10 k=2,3", nil, []string{"C=1 k=2", "C=1 k=3", "C=10 k=2", "C=10 k=3"}},
		{"alias and case", "cpm", "I=100 K=4 c=0.5", nil, []string{"iterations=100 k=4 C=0.5"}},
		{"log-range", "cpm", "lambda=1e-7..1e-3x5", nil,
			[]string{"lambda=1e-07", "lambda=1e-06", "lambda=1e-05", "lambda=0.0001", "lambda=0.001"}},
		{"log-range expressions", "cpm", "C=1/100..1x3", nil, []string{"C=0.01", "C=0.1", "C=1"}},
		{"int range", "cpm", "k=2..4", nil, []string{"k=2", "k=3", "k=4"}},
		{"expressions", "cpm", "C=2*(1+1),10/4,sqrt(9),exp(0)", nil, []string{"C=4", "C=2.5", "C=3", "C=1"}},
		{"per point reference", "cpm", "k=5,20 entropy=0,ln(0.5K)", nil,
			[]string{"k=5 entropy=0", "k=5 entropy=0.9162907318741551", "k=20 entropy=0", "k=20 entropy=2.302585092994046"}},
		{"reference before its axis", "cpm", "entropy=ln(k/2) k=4,8", nil,
			[]string{"entropy=0.6931471805599453 k=4", "entropy=1.3862943611198906 k=8"}},
		{"base flag value", "cpm", "entropy=ln(K/10)", []string{"-k", "40"}, []string{"entropy=1.3862943611198906"}},
		{"string axis", "perceptron", "lift=none,quadratic", nil, []string{"lift=none", "lift=quadratic"}},
		{"other learner", "kperceptron", "sigma=0.5,2", nil, []string{"sigma=0.5", "sigma=2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pointsOf(t, tc.learner, tc.grid, baseFlags(t, tc.base...))
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("points\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestExpressions(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want float64
	}{
		{"2*(1+1)", 4}, {"10/4", 2.5}, {"-(-3)", 3}, {"sqrt(16)", 4}, {"exp(0)", 1},
		{"log10(1000)", 3}, {"1e-3*2", 0.002}, {"2E+2", 200}, {"0.5K", 5}, {"3(1+1)", 6},
		{"K-1", 9}, {"1-2-3", -4}, {"8/2/2", 2}, {"-2*3+1", -5}, {"ln(exp(2))", 2},
	} {
		e, err := parseExpr(tc.src)
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		got, err := e.eval(func(name string) (float64, error) {
			if name == "K" {
				return 10, nil
			}
			return 0, errors.New("no " + name)
		})
		if err != nil || got != tc.want {
			t.Errorf("%s = %v, %v; want %v", tc.src, got, err, tc.want)
		}
	}
}

func TestGridErrors(t *testing.T) {
	for _, tc := range []struct {
		name, learner, grid string
		base                []string
		want                string // in the error
	}{
		{"empty grid", "cpm", "  ", nil, "no axes"},
		{"no equals", "cpm", "C", nil, "want name=values"},
		{"unknown flag", "cpm", "gamma=1", nil, "cpm reads no flag \"gamma\"; its flags that take a number: hash-bits, k, iterations, C, lambda, entropy, cost_ratio, workers, bias"},
		{"not a flag at all", "cpm", "nope=1", nil, "reads no flag"},
		{"bool flag", "cpm", "reshuffle=1", nil, "is a bool flag"},
		{"duplicate axis", "cpm", "C=1 c=2", nil, "C is given twice"},
		{"alias duplicate", "cpm", "i=10 iterations=20", nil, "iterations is given twice"},
		{"empty list", "cpm", "C=", nil, "no values"},
		{"empty value", "cpm", "C=1,,2", nil, "an empty value"},
		{"duplicate value", "cpm", "C=1,1", nil, "points 1 and 2 are the same setting C=1"},
		{"bad expression", "cpm", "C=1+", nil, "unexpected end"},
		{"unbalanced", "cpm", "C=(1", nil, "missing )"},
		{"unknown name", "cpm", "C=foo", nil, "\"foo\" is neither a function nor a flag"},
		{"ln of zero names the point", "cpm", "k=5,10 entropy=ln(K-10)", nil, "point 1 (k=5 entropy=ln(K-10)): entropy=ln(K-10): ln(-5): ln needs a positive argument"},
		{"log-range bound", "cpm", "C=0..1x3", nil, "want finite bounds > 0"},
		{"log-range count", "cpm", "C=1..10x1", nil, "want from 2 to"},
		{"float int range", "cpm", "C=1..3", nil, "want lo..hixN"},
		{"not whole", "cpm", "k=2.5", nil, "not a whole number"},
		{"bad value for the flag", "cpm", "k=0", nil, "not a positive integer"},
		{"self reference", "cpm", "C=C*2", nil, "refers to itself"},
		{"list as base", "cpm", "entropy=ln(K)", []string{"-k", "2,3"}, "k has no single value"},
		{"string reference", "perceptron", "bias=lift", nil, "lift is not a number"},
		{"division by zero", "cpm", "C=1/0", nil, "division by zero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ParseGrid(tc.grid, tc.learner, baseFlags(t, tc.base...))
			if err == nil {
				_, err = g.Points(0)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrGrid) {
				t.Errorf("error %v; want one wrapping ErrGrid containing %q", err, tc.want)
			}
		})
	}
}

func TestGridLimit(t *testing.T) {
	g, err := ParseGrid("C=1..1000x100 lambda=1e-7..1e-3x101", "cpm", baseFlags(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Points(0); err == nil || !strings.Contains(err.Error(), "10100 points, more than the limit of 10000") {
		t.Errorf("error %v; want the limit", err)
	}
	if ps, err := g.Points(20_000); err != nil || len(ps) != 10_100 {
		t.Errorf("raised limit: %d points, %v", len(ps), err)
	}
}

// A point's flags are the base flags with its axes set; the base is not
// changed.
func TestPointFlags(t *testing.T) {
	base := baseFlags(t, "-i", "500", "-C", "3")
	g, err := ParseGrid("C=1,2", "cpm", base)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := g.Points(0)
	if err != nil {
		t.Fatal(err)
	}
	if got := ps[1].Flags.Get("C") + " " + ps[1].Flags.Get("iterations") + " " + base.Get("C"); got != "2 500 3" {
		t.Errorf("point C, iterations, base C = %s; want 2 500 3", got)
	}
}
