package plume

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// The cross-validation table of the package documentation is slow (about a
// minute), so it runs only with -plume.cv:
//
//	go test -run TestCrossValidation -plume.cv -v ./plume/
//
// -plume.cv.spec replaces the table with semicolon-separated runs of
// comma-separated key=value settings (keys: data, ms, hard, k, gamma, eps,
// inner, iter, lambda, restarts, inside, cvseed, reps), for tuning.
var (
	runCV  = flag.Bool("plume.cv", false, "run the 10×10-fold cross-validation table")
	cvSpec = flag.String("plume.cv.spec", "", "runs to cross-validate instead of the table")
)

// cvTable is the table of the package documentation: the Config defaults
// with the M-step and gate varied.
const cvTable = "data=ionosphere,ms=ga;data=ionosphere,ms=newton;data=ionosphere,ms=bfgs;data=ionosphere,ms=ga,hard=1;data=ionosphere,ms=newton,hard=1;data=ionosphere,ms=bfgs,hard=1;" +
	"data=heart_scale,ms=ga;data=heart_scale,ms=newton;data=heart_scale,ms=bfgs;data=heart_scale,ms=ga,hard=1;data=heart_scale,ms=newton,hard=1;data=heart_scale,ms=bfgs,hard=1"

type predictor struct{ p *Predictor }

func (p predictor) Predict(x sparsevec.Vector) float32 {
	l, _, _ := p.p.Predict(x)
	return l
}

func parseSpec(t *testing.T, spec string) (name string, reps int, seed uint64, cfg Config) {
	reps, seed = 10, 1
	for _, kv := range strings.Split(spec, ",") {
		key, val, _ := strings.Cut(strings.TrimSpace(kv), "=")
		num := func() float64 {
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				t.Fatalf("%s: %v", kv, err)
			}
			return v
		}
		switch key {
		case "data":
			name = val
		case "ms":
			ms, err := ParseMStep(val)
			if err != nil {
				t.Fatal(err)
			}
			cfg.MStep = ms
		case "hard":
			cfg.Hard = val == "1"
		case "k":
			cfg.K = int(num())
		case "gamma":
			cfg.Gamma = num()
		case "eps":
			cfg.Epsilon = num()
		case "inner":
			cfg.InnerIter = int(num())
		case "iter":
			cfg.MaxIter = int(num())
		case "lambda":
			cfg.Lambda = num()
		case "restarts":
			cfg.Restarts = int(num())
		case "inside":
			v := float32(num())
			cfg.Inside = &v
		case "cvseed":
			seed = uint64(num())
		case "reps":
			reps = int(num())
		default:
			t.Fatalf("unknown key %q", key)
		}
	}
	return name, reps, seed, cfg
}

func TestCrossValidation(t *testing.T) {
	if !*runCV && *cvSpec == "" {
		t.Skip("slow; run with -plume.cv")
	}
	spec := *cvSpec
	if spec == "" {
		spec = cvTable
	}
	for _, s := range strings.Split(spec, ";") {
		name, reps, seed, cfg := parseSpec(t, s)
		data, err := reader.Load("../testdata/uci/" + name + ".libsvm")
		if err != nil {
			t.Fatal(err)
		}
		fit := func(ctx context.Context, train *sparsevec.CSR, seed uint64) (cv.Predictor, cv.FitInfo, error) {
			c := cfg
			c.Seed = seed
			m, _, err := Train(ctx, c, train)
			if err != nil {
				return nil, cv.FitInfo{}, err
			}
			return predictor{m.NewPredictor()}, cv.FitInfo{Hyperplanes: float64(m.K)}, nil
		}
		res, err := cv.Run(context.Background(), cv.Config{Reps: reps, Folds: 10, Seed: seed}, data, fit)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(fmt.Sprintf("%-60s acc %6.2f ± %4.2f  train err %5.2f  %.4f ± %.4f s/fit", s, res.AccuracyMean, res.AccuracyStd, res.TrainErrorMean, res.TrainSecondsMean, res.TrainSecondsStd))
	}
}
