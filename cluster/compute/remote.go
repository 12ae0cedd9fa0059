package compute

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/tune"
)

// Doer runs one task of a job and returns its result: cluster.Job's Do.
type Doer interface {
	Do(ctx context.Context, t *cluster.Task) ([]byte, error)
}

// Remote turns the parts of a local run into tasks of one job. Base holds
// what every task of the job shares (the job, the learner, its flags,
// label and seed, the data digests); each method fills in the rest.
type Remote struct {
	Job  Doer
	Base cluster.Task
}

// task returns Base with the kind and position filled in.
func (r *Remote) task(kind string, index, count int) *cluster.Task {
	t := r.Base
	t.Version, t.Kind, t.Index, t.Count = cluster.SchemaVersion, kind, index, count
	return &t
}

// Runner returns the sgd.Runner that trains polytope i of n as task i of
// the job (kind train-part).
func (r *Remote) Runner() sgd.Runner { return runner{r} }

type runner struct{ r *Remote }

func (u runner) Run(ctx context.Context, i, n int, name string) (*sgd.Part, error) {
	t := u.r.task(cluster.KindTrainPart, i, n)
	t.Part, t.Parts, t.Name = i, n, name
	b, err := u.r.Job.Do(ctx, t)
	if err != nil {
		return nil, err
	}
	p := new(sgd.Part)
	if err := p.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("task %d (%s): %w", i, name, err)
	}
	return p, nil
}

// TrainModel trains a whole model as the job's one task (kind
// train-model).
func (r *Remote) TrainModel(ctx context.Context) (*model.Model, error) {
	t := r.task(cluster.KindTrainModel, 0, 1)
	t.Name = "model"
	b, err := r.Job.Do(ctx, t)
	if err != nil {
		return nil, err
	}
	return model.Read(bytes.NewReader(b), "the result of task 0")
}

// CVExec returns a cv.Config.Exec that computes fold (rep, fold) of a
// reps × folds cross-validation seeded by seed as task rep*folds+fold
// (kind cv-fold).
func (r *Remote) CVExec(reps, folds int, seed uint64) func(ctx context.Context, rep, fold int) (cv.FoldStats, error) {
	return func(ctx context.Context, rep, fold int) (cv.FoldStats, error) {
		i := rep*folds + fold
		t := r.task(cluster.KindCVFold, i, reps*folds)
		t.Part, t.Reps, t.Folds, t.CVSeed = i, reps, folds, seed
		t.Name = fmt.Sprintf("rep %d fold %d", rep+1, fold+1)
		var st cv.FoldStats
		b, err := r.Job.Do(ctx, t)
		if err != nil {
			return st, err
		}
		if err := json.Unmarshal(b, &st); err != nil {
			return st, fmt.Errorf("task %d (%s): %w", i, t.Name, err)
		}
		return st, nil
	}
}

// TuneExec returns a tune.Config.Exec for a search scored as cfg says
// (CV, or Seeds runs on the validation rows whose digest is Base.Valid),
// whose points have fits fits each and total points in all: fit f of the
// point with index p is task p*fits+f (kind tune-fit), with the point's
// learner flags. flagsOf gives a candidate's flags.
func (r *Remote) TuneExec(cfg tune.Config, fits, points int) func(ctx context.Context, c tune.Candidate, fit int) (tune.FitResult, error) {
	return func(ctx context.Context, c tune.Candidate, fit int) (tune.FitResult, error) {
		i := c.Point.Index*fits + fit
		t := r.task(cluster.KindTuneFit, i, points*fits)
		t.Flags = c.Point.Flags.Values()
		t.Part, t.Point = fit, c.Point.Index
		if cfg.CV != nil {
			t.Reps, t.Folds, t.CVSeed = cfg.CV.Reps, cfg.CV.Folds, cfg.CV.Seed
		} else {
			t.Seeds = max(cfg.Seeds, 1)
		}
		t.Name = fmt.Sprintf("point %d fit %d", c.Point.Index+1, fit+1)
		var res tune.FitResult
		b, err := r.Job.Do(ctx, t)
		if err != nil {
			return res, err
		}
		if err := json.Unmarshal(b, &res); err != nil {
			return res, fmt.Errorf("task %d (%s): %w", i, t.Name, err)
		}
		return res, nil
	}
}

// Base returns the learner fields every task of a job shares: learner
// name with flags f, label and seed. The caller sets the rows (Data, Dim,
// Path, Valid, ValidDim) and, once submitted, the job.
func Base(name string, f *learner.Flags, label *float32, seed uint64) cluster.Task {
	return cluster.Task{Learner: name, Flags: f.Values(), Label: label, Seed: seed}
}
