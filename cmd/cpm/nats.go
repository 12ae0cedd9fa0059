package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/cluster/compute"
	"github.com/polyhedral/cpm/cluster/natsd"
	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
	"github.com/polyhedral/cpm/tune"
)

// embeddedURL is the --nats value that runs the server and the workers in
// this process.
const embeddedURL = "embedded"

// natsFlags are the flags of train, cv and tune that send the run's parts
// to workers over NATS JetStream (package cluster) instead of computing
// them here.
type natsFlags struct {
	url      string
	job      string
	replicas int
	workers  int
	dataRoot string
	client   *natsd.ClientOptions

	data *rootedFile // the data file in --data-root mode (checkData)
}

func addNATSFlags(fs *flag.FlagSet) *natsFlags {
	n := &natsFlags{client: natsd.AddClientFlags(fs)}
	fs.StringVar(&n.url, "nats", "", "run the parts (polytopes, folds, grid points) as tasks on cpm workers through the NATS server(s) at `URL` (comma-separated), or 'embedded': a server and workers in this process")
	fs.StringVar(&n.job, "job", "", "with --nats: reattach to job `ID` (printed when it was submitted), reusing every finished task")
	fs.IntVar(&n.replicas, "nats-replicas", 0, "with --nats: replicas of the JetStream streams and stores (3 on a 3-node cluster); default: those that exist keep theirs, missing ones get 1")
	fs.IntVar(&n.workers, "embedded-workers", 0, "with --nats embedded: tasks run at once by the in-process worker (default GOMAXPROCS)")
	fs.StringVar(&n.dataRoot, "data-root", "", "with --nats: do not upload the data file; the workers read it in place from their own --data-root, the same files as `DIR` here (a shared file system). The data file must be a regular file inside DIR, and is checked by its SHA-256 (--valid files are uploaded as before)")
	return n
}

// on reports whether the run is distributed.
func (n *natsFlags) on() bool { return n.url != "" }

// check refuses flag combinations before any work.
func (n *natsFlags) check() error {
	switch {
	case !n.on() && n.job != "":
		return usagef("--job %s needs --nats", n.job)
	case n.job != "" && !cluster.ValidJobID(n.job):
		return usagef("--job %q: a job id is 1 to 64 letters, digits, '-' or '_'", n.job)
	case n.replicas < 0 || n.replicas > 5:
		return usagef("--nats-replicas %d: want 1 to 5 (or 0: keep)", n.replicas)
	case n.workers < 0:
		return usagef("--embedded-workers %d: want at least 1 (or 0 for GOMAXPROCS)", n.workers)
	case n.dataRoot != "" && !n.on():
		return usagef("--data-root %s needs --nats: it says where the workers read the data file", n.dataRoot)
	}
	return nil
}

// natsSession is a connection to the cluster for one run, with the
// embedded server and worker when --nats embedded.
type natsSession struct {
	c        *cluster.Cluster
	closeAll func() // closes c and its connection
	endRun   func() // releases the run's context
	srv      *natsd.Server
	dir      string // temporary directory: uploads, embedded store and cache
	stop     context.CancelFunc
	wg       sync.WaitGroup
	werr     error // the embedded worker's error, once wg is done
	quiet    bool
	stderr   io.Writer
	flags    *natsFlags
}

// open connects (or starts the embedded server and worker) and returns
// the session and the context of the run, which is cancelled if the
// embedded worker fails (close then reports its error).
func (n *natsFlags) open(ctx context.Context, quiet bool, stderr io.Writer) (*natsSession, context.Context, error) {
	dir, err := os.MkdirTemp("", "cpm-nats-")
	if err != nil {
		return nil, nil, err
	}
	s := &natsSession{dir: dir, quiet: quiet, stderr: stderr, flags: n}
	ok := false
	defer func() {
		if !ok {
			s.close(nil)
		}
	}()
	url := n.url
	if url == embeddedURL {
		if s.srv, err = natsd.StartEmbedded(filepath.Join(dir, "store")); err != nil {
			return nil, nil, err
		}
		url = s.srv.ClientURL()
	}
	if s.c, s.closeAll, err = connectCluster(ctx, url, "cpm-submit", *n.client, cluster.Options{Replicas: n.replicas}); err != nil {
		return nil, nil, err
	}
	runCtx, failRun := context.WithCancelCause(ctx)
	s.endRun = func() { failRun(nil) }
	if s.srv != nil {
		wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		s.stop = stop
		conc := n.workers
		if conc == 0 {
			conc = runtime.GOMAXPROCS(0)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			err := s.c.Work(wctx, &compute.Executor{}, cluster.WorkerOptions{
				Name: "embedded", Concurrency: conc, CacheDir: filepath.Join(dir, "cache"), DataRoot: n.dataRoot,
			})
			if err != nil {
				s.werr = err
				failRun(err)
			}
		}()
	}
	ok = true
	return s, runCtx, nil
}

// close stops the embedded worker and server and removes the temporary
// directory. If the embedded worker failed, its error replaces *errp when
// that is nil or the cancellation the failure caused.
func (s *natsSession) close(errp *error) {
	if s.stop != nil {
		s.stop()
		s.wg.Wait()
	}
	if s.werr != nil && errp != nil && (*errp == nil || errors.Is(*errp, context.Canceled)) {
		*errp = fmt.Errorf("the embedded worker: %w", s.werr)
	}
	if s.endRun != nil {
		s.endRun()
	}
	if s.closeAll != nil {
		s.closeAll()
	}
	if s.srv != nil {
		s.srv.Shutdown()
	}
	os.RemoveAll(s.dir)
}

// upload stores data in the cluster's data store and returns its digest.
func (s *natsSession) upload(ctx context.Context, what string, data *sparsevec.CSR) (string, error) {
	start := time.Now()
	path := filepath.Join(s.dir, what+".cpmcache")
	if err := compute.WriteData(path, data); err != nil {
		return "", err
	}
	defer os.Remove(path)
	digest, err := s.c.PutData(ctx, path)
	if err != nil {
		return "", fmt.Errorf("storing %s in the cluster: %w", what, err)
	}
	if !s.quiet {
		st, _ := os.Stat(path)
		var size int64
		if st != nil {
			size = st.Size()
		}
		fmt.Fprintf(s.stderr, "stored %s (%d rows, %.1f MB) as %.12s in %.2fs\n", what, data.Rows(), float64(size)/1e6, digest, time.Since(start).Seconds())
	}
	return digest, nil
}

// rows sets Task.Data, Task.Path and Task.Dim of the rows data, which the job
// trains on: with --data-root, the digest and path of the data file
// (which the rows are), otherwise data stored in the cluster (what names
// them in messages).
func (s *natsSession) rows(ctx context.Context, what string, data *sparsevec.CSR, base *cluster.Task) error {
	base.Dim = data.Dim
	f := s.flags.data
	if f == nil {
		digest, err := s.upload(ctx, what, data)
		base.Data = digest
		return err
	}
	start := time.Now()
	digest, err := f.digest()
	if err != nil {
		return err
	}
	if !s.quiet {
		fmt.Fprintf(s.stderr, "%s: %s in --data-root (%d rows, %.1f MB, SHA-256 %.12s in %.2fs), read in place by the workers\n",
			what, f.rel, data.Rows(), float64(f.fi.Size())/1e6, digest, time.Since(start).Seconds())
	}
	base.Data, base.Path = digest, f.rel
	return nil
}

// jobDef is what defines a job: two submissions with the same definition
// compute the same results, so --job may reattach to it.
type jobDef struct {
	Kind  string       `json:"kind"`
	Base  cluster.Task `json:"base"`
	Extra any          `json:"extra,omitempty"`
}

// submit creates the job (or reattaches to --job) and starts its progress
// lines; def.Base.Job is ignored, and the returned Remote's Base is
// def.Base in the job. The returned finish records the job's outcome and
// stops the progress lines.
func (s *natsSession) submit(ctx context.Context, def jobDef, describe string, count int) (*compute.Remote, func(error), error) {
	def.Base.Job = ""
	b, err := json.Marshal(def)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(b)
	id := s.flags.job
	if id == "" {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, nil, err
		}
		id = def.Kind + "-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(r[:])
	}
	job, err := s.c.Submit(ctx, cluster.JobSpec{ID: id, Kind: def.Kind, Describe: describe, Count: count, Digest: hex.EncodeToString(sum[:]),
		Data: []string{def.Base.Data, def.Base.Valid}})
	if err != nil {
		return nil, nil, err
	}
	if !s.quiet {
		fmt.Fprintf(s.stderr, "job %s: %d tasks (%s); reattach with --job %s\n", id, count, describe, id)
	}
	stop := func() {}
	if !s.quiet {
		stop = job.Progress(s.stderr, 2*time.Second)
	}
	base := def.Base
	base.Job = id
	return &compute.Remote{Job: job, Base: base}, func(err error) {
		stop()
		job.Finish(err)
	}, nil
}

// checkClusterArgs refuses positional arguments and a missing or embedded
// --nats URL of a command that joins an existing cluster (worker, cluster
// status, cluster gc).
func checkClusterArgs(fs *flag.FlagSet, url string) error {
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case url == "" || url == embeddedURL:
		return usagef("give --nats URL: the NATS server(s) of the cluster, as the submitting cpm gives them")
	}
	return nil
}

// connectCluster connects to url as client name and opens the cluster's
// assets; closeAll closes both.
func connectCluster(ctx context.Context, url, name string, copts natsd.ClientOptions, o cluster.Options) (c *cluster.Cluster, closeAll func(), err error) {
	copts.Name = name
	nc, err := natsd.Connect(url, copts)
	if err != nil {
		return nil, nil, err
	}
	if c, err = cluster.Open(ctx, nc, o); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return c, func() { c.Close(); nc.Close() }, nil
}

// errNotWithNATS is the error of a flag that distributed runs do not
// take.
func errNotWithNATS(flag string) error {
	return usagef("%s is not supported with --nats (the run's parts are computed by workers from the data alone); drop one of them", flag)
}

// check refuses what a distributed train run does not take.
func (n *natsFlags) checkTrain(o *trainOptions) error {
	if !n.on() {
		return nil
	}
	for _, f := range []struct {
		set  bool
		flag string
	}{
		{o.stream, "--stream"},
		{o.ckpt.init != "", "--init"},
		{o.ckpt.checkpoint != "", "--checkpoint"},
		{o.ckpt.resume != "", "--resume"},
		{o.valid.active(), "validation (--valid, --holdout)"},
		{len(o.ks) > 1, "a list of K"},
		{o.metricsLog != "", "--metrics-log"},
	} {
		if f.set {
			return errNotWithNATS(f.flag)
		}
	}
	return n.checkData("-t", o.train, o.lim)
}

// train trains spec on data through the cluster: a CPM as one task per
// polytope (sgd.Runner), any other learner as one task.
func (s *natsSession) train(ctx context.Context, o *trainOptions, data *sparsevec.CSR) (m *model.Model, rep *learner.Report, err error) {
	start := time.Now()
	lf := o.learnerFlags
	def := jobDef{Kind: "train", Base: compute.Base(lf.name, lf.flags, o.spec.Label, o.seed)}
	if err := s.rows(ctx, "training rows", data, &def.Base); err != nil {
		return nil, nil, err
	}
	count, err := learner.Parts(o.spec, data)
	parts := err == nil
	if !parts {
		count = 1
	}
	remote, finish, err := s.submit(ctx, def, o.describe, count)
	if err != nil {
		return nil, nil, err
	}
	defer func() { finish(err) }()
	if !parts {
		m, err := remote.TrainModel(ctx)
		if err != nil {
			return nil, nil, err
		}
		rep := &learner.Report{Learner: o.spec.Name, Seconds: time.Since(start).Seconds(), Hyperplanes: len(m.Weights) * m.K}
		return m, rep, nil
	}
	o.cpm.Runner = remote.Runner()
	return learner.Train(ctx, o.spec, data)
}

// cvExec stores data in the cluster, submits the cross-validation cfg of
// spec (flags lf) on it as a job of one task per fold and sets cfg.Exec
// to run each fold as its task. finish records the job's outcome.
func (s *natsSession) cvExec(ctx context.Context, cfg *cv.Config, lf *learnerFlags, spec learner.Spec, data *sparsevec.CSR) (finish func(error), err error) {
	def := jobDef{Kind: "cv", Base: compute.Base(lf.name, lf.flags, spec.Label, lf.seed),
		Extra: map[string]any{"reps": cfg.Reps, "folds": cfg.Folds, "seed": cfg.Seed}}
	if err := s.rows(ctx, "rows", data, &def.Base); err != nil {
		return nil, err
	}
	remote, finish, err := s.submit(ctx, def, fmt.Sprintf("%s, %d x %d-fold CV", lf.describe(), cfg.Reps, cfg.Folds), cfg.Reps*cfg.Folds)
	if err != nil {
		return nil, err
	}
	cfg.Exec = remote.CVExec(cfg.Reps, cfg.Folds, cfg.Seed)
	return finish, nil
}

// tuneExec stores the search's rows in the cluster, submits the search
// (cfg on data, points points of the grid, or the paper's protocol when
// points is 0) as a job of one task per point and fit, and sets cfg.Exec
// to run each fit as its task. finish records the job's outcome.
func (s *natsSession) tuneExec(ctx context.Context, cfg *tune.Config, o *tuneOptions, data *tuneData, points int) (finish func(error), err error) {
	if points == 0 {
		if points, err = tune.PaperPoints(o.lf.flags); err != nil {
			return nil, usageError{err}
		}
	}
	fits := max(cfg.Seeds, 1)
	if cfg.CV != nil {
		fits = cfg.CV.Reps * cfg.CV.Folds
	}
	spec, err := o.lf.build()
	if err != nil {
		return nil, err
	}
	def := jobDef{Kind: "tune", Base: compute.Base(o.lf.name, o.lf.flags, spec.Label, o.lf.seed),
		Extra: map[string]any{"grid": o.grid, "protocol": o.protocol, "points": points, "fits": fits, "seeds": cfg.Seeds}}
	if err := s.rows(ctx, "rows", data.fit, &def.Base); err != nil {
		return nil, err
	}
	if data.valid != nil {
		if def.Base.Valid, err = s.upload(ctx, "validation rows", data.valid); err != nil {
			return nil, err
		}
		def.Base.ValidDim = data.valid.Dim
	}
	if cfg.CV != nil {
		def.Extra.(map[string]any)["cv"] = [3]any{cfg.CV.Reps, cfg.CV.Folds, cfg.CV.Seed}
	}
	remote, finish, err := s.submit(ctx, def, fmt.Sprintf("tune %s: %d points x %d fits, %s", o.lf.describe(), points, fits, data.method), points*fits)
	if err != nil {
		return nil, err
	}
	cfg.Exec = remote.TuneExec(*cfg, fits, points)
	return finish, nil
}
