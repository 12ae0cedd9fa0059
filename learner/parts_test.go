package learner

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"reflect"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// The flags of a spec survive Values and SetValues: a spec built from the
// values equals the spec built from the command line, for every learner.
func TestFlagValuesRoundTrip(t *testing.T) {
	cmdlines := map[string][]string{
		CPM:               {"-k", "7", "-i", "12345", "--lambda", "0.001", "--entropy", "1.5", "--double-sided", "--reshuffle", "--scale", "maxabs", "--bias", "2"},
		Perceptron:        {"--epochs", "7", "--lift", "quadratic"},
		KernelPerceptron:  {"--kernel", "poly", "--degree", "3", "--coef0", "1"},
		PolyceptronOnline: {"-k", "3", "--epochs", "9"},
		PolyceptronBatch:  {"-k", "3", "--gamma", "20"},
		PLUME:             {"-k", "3", "--m-step", "newton"},
		SPLA1:             {"-k", "4"},
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := AddFlags(fs)
			if err := fs.Parse(cmdlines[name]); err != nil {
				t.Fatal(err)
			}
			want, err := Build(name, f)
			if err != nil {
				t.Fatal(err)
			}
			g := NewFlags()
			if err := g.SetValues(f.Values()); err != nil {
				t.Fatal(err)
			}
			got, err := Build(name, g)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("from values: %+v\nfrom the command line: %+v", got, want)
			}
		})
	}
	if err := NewFlags().SetValues(map[string]string{"no-such-flag": "1"}); err == nil {
		t.Error("an unknown flag was set")
	}
	if err := NewFlags().SetValues(map[string]string{"k": "many"}); err == nil {
		t.Error("a bad value was set")
	}
}

// partsRunner trains every part from its own learner.Plan, as a worker
// does.
type partsRunner struct {
	spec Spec
	data *sparsevec.CSR
}

func (r partsRunner) Run(ctx context.Context, i, n int, name string) (*sgd.Part, error) {
	p, err := Plan(r.spec, r.data)
	if err != nil {
		return nil, err
	}
	if p.Len() != n || p.Name(i) != name {
		return nil, errors.New("the plan differs from the run")
	}
	return p.TrainPart(ctx, i)
}

// A CPM trained part by part from learner.Plan, with the scaling and the
// λ = 1/n default that Train applies, is the model Train gives.
func TestPlanPartsGiveTheModel(t *testing.T) {
	raw := load(t, "pima.libsvm")
	for _, spec := range []Spec{
		{Name: CPM, Scale: "standard", Config: &CPMConfig{Config: sgd.Config{K: 3, Iterations: 20000, Seed: 4}, DefaultLambda: true}},
		{Name: CPM, Config: &CPMConfig{Config: sgd.Config{K: 2, Iterations: 5000, Seed: 4}, OvO: true}},
	} {
		data := raw
		if spec.CPM().OvO {
			data = load(t, "iris.libsvm")
		}
		local, _, err := Train(context.Background(), spec, data)
		if err != nil {
			t.Fatal(err)
		}
		n, err := Parts(spec, data)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(local.Weights) {
			t.Fatalf("Parts says %d, the model has %d polytopes", n, len(local.Weights))
		}
		dist := spec
		c := *spec.CPM()
		c.Runner = partsRunner{spec: spec, data: data}
		dist.Config = &c
		remote, _, err := Train(context.Background(), dist, data)
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		if err := model.Write(&a, local); err != nil {
			t.Fatal(err)
		}
		if err := model.Write(&b, remote); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("OvO %v: the model from parts differs", spec.CPM().OvO)
		}
	}
	if _, err := Plan(Spec{Name: PLUME}, raw); !errors.Is(err, ErrNoParts) {
		t.Errorf("PLUME plan: %v, want ErrNoParts", err)
	}
}
