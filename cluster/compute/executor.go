package compute

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
	"github.com/polyhedral/cpm/tune"
)

// Executor runs tasks on a worker (cluster.Executor). It keeps the rows of
// the data sets it loaded last and the CPM plans of the jobs it ran last
// in memory, so that the next task of the same job neither reloads nor
// reshuffles them. The zero value is ready to use; an Executor may run
// several tasks at once.
type Executor struct {
	// MaxMemory, if > 0, bounds the weights of each task's training (as
	// cpm's --max-memory does for one run).
	MaxMemory int64
	// Keep is the number of data sets and of plans kept in memory. If 0,
	// it defaults to 2.
	Keep int

	mu      sync.Mutex
	loading singleflight.Group // rows being fetched and loaded, by digest
	data    lru[*sparsevec.CSR]
	plans   lru[*plan]
}

// plan is one job's CPM run split into polytopes, with the progress hooks
// of its parts running now.
type plan struct {
	once sync.Once
	p    *sgd.Plan
	err  error

	mu       sync.Mutex
	progress map[string]func(cluster.Progress) // polytope name -> its task's hook
}

var _ cluster.Executor = (*Executor)(nil)

// Execute implements cluster.Executor.
func (e *Executor) Execute(ctx context.Context, t *cluster.Task, fetch func(context.Context, string) (string, error), progress func(cluster.Progress)) ([]byte, error) {
	spec, err := SpecOf(t)
	if err != nil {
		return nil, err
	}
	spec.MaxMemory = e.MaxMemory
	if c := spec.CPM(); c != nil {
		c.MaxMemory = e.MaxMemory
	}
	data, err := e.load(ctx, t.Data, t.Dim, fetch)
	if err != nil {
		return nil, err
	}
	switch t.Kind {
	case cluster.KindTrainPart:
		return e.trainPart(ctx, t, spec, data, progress)
	case cluster.KindTrainModel:
		m, _, err := learner.Train(ctx, spec, data)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := model.Write(&buf, m); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case cluster.KindCVFold:
		p, err := cv.NewPlan(cv.Config{Reps: t.Reps, Folds: t.Folds, Seed: t.CVSeed}, data)
		if err != nil {
			return nil, err
		}
		var s cv.Scratch
		st, err := p.RunFold(ctx, data, t.Part/t.Folds, t.Part%t.Folds, spec.Fit(), &s)
		if err != nil {
			return nil, err
		}
		return json.Marshal(st)
	case cluster.KindTuneFit:
		cfg := tune.Config{Seed: t.Seed, Seeds: t.Seeds}
		if t.Reps > 0 {
			cfg.CV = &cv.Config{Reps: t.Reps, Folds: t.Folds, Seed: t.CVSeed}
		} else if cfg.Valid, err = e.load(ctx, t.Valid, t.ValidDim, fetch); err != nil {
			return nil, err
		}
		r, err := tune.RunFit(ctx, cfg, data, tune.Candidate{Spec: spec}, t.Part)
		if err != nil {
			return nil, err
		}
		return json.Marshal(r)
	}
	return nil, fmt.Errorf("%w: kind %q", cluster.ErrInvalidTask, t.Kind)
}

// trainPart trains polytope t.Part of the job's CPM run.
func (e *Executor) trainPart(ctx context.Context, t *cluster.Task, spec learner.Spec, data *sparsevec.CSR, progress func(cluster.Progress)) ([]byte, error) {
	key := planKey(t)
	e.mu.Lock()
	p, ok := e.plans.get(key)
	if !ok {
		p = &plan{progress: map[string]func(cluster.Progress){}}
		e.plans.put(key, p, e.keep())
	}
	e.mu.Unlock()
	p.once.Do(func() {
		if c := spec.CPM(); c != nil {
			c.Progress = p.report
			c.ProgressEvery = 1 << 16
		}
		p.p, p.err = learner.Plan(spec, data)
	})
	if p.err != nil {
		return nil, p.err
	}
	if p.p.Len() != t.Parts {
		return nil, fmt.Errorf("%w: the run has %d polytopes, the task says %d", cluster.ErrInvalidTask, p.p.Len(), t.Parts)
	}
	name := p.p.Name(t.Part)
	if progress != nil {
		p.mu.Lock()
		p.progress[name] = progress
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.progress, name)
			p.mu.Unlock()
		}()
	}
	part, err := p.p.TrainPart(ctx, t.Part)
	if err != nil {
		return nil, err
	}
	return part.MarshalBinary()
}

// planKey names the CPM run a train-part task belongs to: its job and
// everything that defines the run (rows, learner, flags, label, seed), so
// that a job ID reused for another run does not get the plan of the first.
func planKey(t *cluster.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s/%s/%d/", t.Job, t.Data, t.Learner, t.Seed)
	if t.Label != nil {
		fmt.Fprintf(&b, "%08x", math.Float32bits(*t.Label))
	}
	for _, k := range slices.Sorted(maps.Keys(t.Flags)) {
		fmt.Fprintf(&b, "/%s=%q", k, t.Flags[k])
	}
	return b.String()
}

// report passes a polytope's progress to the hook of the task training it.
func (p *plan) report(pr sgd.Progress) {
	p.mu.Lock()
	f := p.progress[pr.Task]
	p.mu.Unlock()
	if f != nil {
		f(cluster.Progress{Rows: pr.Step})
	}
}

// load returns the rows of the data object digest, from memory or
// fetched, with feature count dim (0: as the rows say; the cached rows
// are shared, so a larger dim goes on a copy of the header).
func (e *Executor) load(ctx context.Context, digest string, dim int, fetch func(context.Context, string) (string, error)) (*sparsevec.CSR, error) {
	e.mu.Lock()
	d, ok := e.data.get(digest)
	e.mu.Unlock()
	if !ok {
		// Tasks that start together on rows not loaded yet load them once.
		v, err, _ := e.loading.Do(digest, func() (any, error) {
			path, err := fetch(ctx, digest)
			if err != nil {
				return nil, err
			}
			d, err := ReadData(path, 0)
			if err != nil {
				return nil, err
			}
			e.mu.Lock()
			e.data.put(digest, d, e.keep())
			e.mu.Unlock()
			return d, nil
		})
		if err != nil {
			return nil, err
		}
		d = v.(*sparsevec.CSR)
	}
	switch {
	case dim == 0 || dim == d.Dim:
		return d, nil
	case dim < d.Dim:
		return nil, fmt.Errorf("%w: %d features, the rows %.12s have an index %d", cluster.ErrInvalidTask, dim-1, digest, d.Dim-1)
	}
	c := *d
	c.Dim = dim
	return &c, nil
}

func (e *Executor) keep() int {
	if e.Keep > 0 {
		return e.Keep
	}
	return 2
}

// lru is a tiny least-recently-used map.
type lru[V any] struct {
	keys []string
	vals map[string]V
}

func (l *lru[V]) get(k string) (V, bool) {
	v, ok := l.vals[k]
	if ok {
		l.touch(k)
	}
	return v, ok
}

func (l *lru[V]) put(k string, v V, keep int) {
	if l.vals == nil {
		l.vals = map[string]V{}
	}
	if _, ok := l.vals[k]; !ok {
		l.keys = append(l.keys, k)
	}
	l.vals[k] = v
	l.touch(k)
	for len(l.keys) > keep {
		delete(l.vals, l.keys[0])
		l.keys = l.keys[1:]
	}
}

func (l *lru[V]) touch(k string) {
	for i, x := range l.keys {
		if x == k {
			copy(l.keys[i:], l.keys[i+1:])
			l.keys[len(l.keys)-1] = k
			return
		}
	}
}
