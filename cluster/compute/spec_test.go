package compute_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/cluster/compute"
	"github.com/polyhedral/cpm/learner"
)

// The flags set on the command line of each learner (the values of
// learner's own round-trip test, plus label and seed).
var learnerArgs = map[string][]string{
	learner.CPM:               {"k", "7", "i", "12345", "lambda", "0.001", "entropy", "1.5", "double-sided", "true", "reshuffle", "true", "scale", "maxabs", "bias", "2"},
	learner.Perceptron:        {"epochs", "7", "lift", "quadratic"},
	learner.KernelPerceptron:  {"kernel", "poly", "degree", "3", "coef0", "1"},
	learner.PolyceptronOnline: {"k", "3", "epochs", "9"},
	learner.PolyceptronBatch:  {"k", "3", "gamma", "20"},
	learner.PLUME:             {"k", "3", "m-step", "newton"},
	learner.SPLA1:             {"k", "4"},
}

// A task's learner flags give the spec cpm builds from the same command
// line, for every learner, with and without a label.
func TestSpecOfMatchesBuild(t *testing.T) {
	label := float32(-1)
	for _, name := range learner.Names() {
		for _, lab := range []*float32{nil, &label} {
			args, ok := learnerArgs[name]
			if !ok {
				t.Fatalf("no flags for learner %s", name)
			}
			f := flagsOf(t, args...)
			want := buildSpec(t, name, f, lab, 42)
			task := &cluster.Task{Learner: name, Flags: f.Values(), Label: lab, Seed: 42}
			got, err := compute.SpecOf(task)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, label %v:\nSpecOf %+v\nBuild  %+v", name, lab, got, want)
			}
			// Only the flags given: the others keep their defaults.
			part := map[string]string{}
			for i := 0; i < len(args); i += 2 {
				c, _ := f.Canonical(args[i])
				part[c] = args[i+1]
			}
			task.Flags = part
			if got, err := compute.SpecOf(task); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s with only the flags set: %v\nSpecOf %+v\nBuild  %+v", name, err, got, want)
			}
		}
	}
}

// The spec does not share the task's label: changing the task afterwards
// does not change it.
func TestSpecOfCopiesLabel(t *testing.T) {
	label := float32(2)
	task := &cluster.Task{Learner: learner.CPM, Flags: map[string]string{"k": "2"}, Label: &label, Seed: 1}
	s, err := compute.SpecOf(task)
	if err != nil {
		t.Fatal(err)
	}
	label = 5
	if s.Label == nil || *s.Label != 2 {
		t.Fatalf("spec label %v after the task's changed, want 2", s.Label)
	}
}

// A task the learner cannot be built from is invalid (not a transient
// failure), and the error names what is wrong.
func TestSpecOfErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		learner string
		flags   map[string]string
		text    string // the error names it
	}{
		{"unknown flag", learner.CPM, map[string]string{"no-such-flag": "1"}, "no-such-flag"},
		{"alias is not canonical", learner.CPM, map[string]string{"i": "100"}, "--i"},
		{"unparsable value", learner.CPM, map[string]string{"lambda": "lots"}, "lambda"},
		{"k of 0", learner.CPM, map[string]string{"k": "0"}, "k"},
		{"list of K", learner.CPM, map[string]string{"k": "3,5"}, "3,5"},
		{"check fails", learner.CPM, map[string]string{"lambda": "-1"}, "lambda"},
		{"conflicting flags", learner.CPM, map[string]string{"single-sided": "true", "double-sided": "true"}, "single-sided"},
		{"refused flag", learner.PLUME, map[string]string{"ovo": "true"}, "ovo"},
		{"bad scale", learner.Perceptron, map[string]string{"scale": "cubic"}, "scale"},
		{"too many faces", learner.CPM, map[string]string{"k": "100000"}, "-k 100000"},
		{"unknown learner", "nope", nil, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compute.SpecOf(&cluster.Task{Learner: tc.learner, Flags: tc.flags, Seed: 1})
			if !errors.Is(err, cluster.ErrInvalidTask) {
				t.Fatalf("error %v, want one wrapping ErrInvalidTask", err)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %q does not name %q", err, tc.text)
			}
		})
	}
}
