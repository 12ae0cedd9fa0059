package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
)

// trainMetrics is the --json record of cpm train.
type trainMetrics struct {
	Command        string            `json:"command"`
	Learner        string            `json:"learner"`
	Train          string            `json:"train"`
	Test           string            `json:"test,omitempty"`
	Model          string            `json:"model,omitempty"`
	Rows           int               `json:"rows,omitempty"`
	NNZ            int               `json:"nonzeros,omitempty"`
	Features       int               `json:"features,omitempty"`
	LoadSeconds    float64           `json:"load_seconds"`
	TrainSeconds   float64           `json:"train_seconds"`
	Steps          int64             `json:"steps,omitempty"`
	StepsPerSecond float64           `json:"steps_per_second,omitempty"`
	Epochs         int               `json:"epochs,omitempty"`
	Converged      bool              `json:"converged,omitempty"`
	Mistakes       int               `json:"mistakes,omitempty"`
	Support        int               `json:"support_rows,omitempty"`
	Hyperplanes    int               `json:"hyperplanes,omitempty"`
	TestSeconds    float64           `json:"test_seconds,omitempty"`
	TestError      *float64          `json:"test_error,omitempty"`
	ValidError     *float64          `json:"validation_error,omitempty"` // with --holdout or --valid: the model's error on the validation rows
	Scale          string            `json:"scale,omitempty"`            // the scaling fitted and stored in the model (omitted: none)
	K              int               `json:"k"`
	Lambda         float64           `json:"lambda,omitempty"`
	Entropy        float64           `json:"entropy,omitempty"`
	Seed           uint64            `json:"seed"`
	Polytopes      []polytopeMetrics `json:"polytopes,omitempty"`
	KSelection     []kChoiceMetrics  `json:"k_selection,omitempty"`
	Input          *inputMetrics     `json:"input,omitempty"`
	calibrationReport
}

type kChoiceMetrics struct {
	K            int     `json:"k"`
	AccuracyMean float64 `json:"cv_accuracy_mean"`
}

type polytopeMetrics struct {
	Task        string  `json:"task"`
	Steps       int64   `json:"steps"`
	Entropy     float64 `json:"assignment_entropy"`
	FaceCounts  []int64 `json:"face_assignment_counts"`
	ActiveFaces int     `json:"active_faces"`
	// With --holdout or --valid: the validation error of the weights kept,
	// the step of this run it was measured after, and whether
	// --early-stop ended training early.
	ValidError *float64 `json:"validation_error,omitempty"`
	ValidStep  int64    `json:"validation_step,omitempty"`
	Stopped    bool     `json:"early_stopped,omitempty"`
}

// inputMetrics is the --json record of where streamed training spent its
// time.
type inputMetrics struct {
	Cache             string    `json:"cache,omitempty"`
	CacheBuilt        bool      `json:"cache_built,omitempty"`
	CacheReused       bool      `json:"cache_reused,omitempty"`
	CacheWriteSeconds float64   `json:"cache_write_seconds,omitempty"`
	CacheDropped      string    `json:"cache_dropped,omitempty"` // why the default cache was given up
	FirstPassSeconds  float64   `json:"first_pass_seconds,omitempty"`
	WaitSeconds       []float64 `json:"read_wait_seconds"` // per polytope: blocked waiting for rows
	SGDSeconds        []float64 `json:"sgd_seconds"`       // per polytope: training minus waiting
}

// newInputMetrics returns the figures of in after training that took
// trainSeconds.
func newInputMetrics(in *input.Input, trainSeconds float64) *inputMetrics {
	s := in.Stats()
	m := &inputMetrics{Cache: in.Cache().Path, CacheBuilt: s.CacheBuilt, CacheReused: s.CacheReused,
		CacheWriteSeconds: s.CacheWrite.Seconds(), FirstPassSeconds: s.FirstPass.Seconds()}
	if s.CacheDropped != nil {
		m.CacheDropped = s.CacheDropped.Error()
	}
	for _, w := range s.Wait {
		m.WaitSeconds = append(m.WaitSeconds, w.Seconds())
		m.SGDSeconds = append(m.SGDSeconds, max(trainSeconds-w.Seconds(), 0))
	}
	return m
}

// print writes the figures as one line.
func (m *inputMetrics) print(w io.Writer) {
	fmt.Fprintf(w, "input: ")
	if m.FirstPassSeconds > 0 {
		fmt.Fprintf(w, "first pass %.1fs", m.FirstPassSeconds)
	} else {
		fmt.Fprintf(w, "first pass not finished")
	}
	if m.CacheBuilt {
		fmt.Fprintf(w, " (cache writing %.1fs of it)", m.CacheWriteSeconds)
	}
	if m.CacheReused {
		fmt.Fprintf(w, " from the cache")
	}
	if m.CacheDropped != "" {
		fmt.Fprintf(w, "; %s", m.CacheDropped)
	}
	for i := range m.WaitSeconds {
		fmt.Fprintf(w, "; polytope %d waited %.1fs for rows, stepped %.1fs", i, m.WaitSeconds[i], m.SGDSeconds[i])
	}
	fmt.Fprintln(w)
}

// report fills met from the training report and prints what training did.
func (o *trainOptions) report(stderr io.Writer, m *model.Model, rep *learner.Report, met *trainMetrics) error {
	met.TrainSeconds, met.Epochs, met.Converged, met.Mistakes = rep.Seconds, rep.Epochs, rep.Converged, rep.Mistakes
	met.Support, met.Hyperplanes = rep.Support, rep.Hyperplanes
	if m.Scale != nil {
		met.Scale = m.Scale.Mode
		if !o.quiet {
			fmt.Fprintf(stderr, "scaled features: %s on %d features, fitted on the training rows and stored in the model\n", m.Scale.Mode, len(m.Scale.Index))
		}
	}
	met.K, met.Lambda, met.Entropy = m.K, m.Lambda, m.Entropy
	switch {
	case rep.CPM != nil:
		return o.reportCPM(stderr, m, rep.CPM, met)
	case o.quiet:
	case len(rep.LogLik) > 0:
		fmt.Fprintf(stderr, "trained %s: %d EM iterations, log-likelihood %.4f, converged %v in %.3fs\n",
			o.describe, rep.Epochs, rep.LogLik[len(rep.LogLik)-1], rep.Converged, rep.Seconds)
	default:
		fmt.Fprintf(stderr, "trained %s: %d passes/iterations, %d updates, converged %v", o.describe, rep.Epochs, rep.Mistakes, rep.Converged)
		if rep.Hyperplanes == 0 { // a kernel machine: its model is support rows
			fmt.Fprintf(stderr, ", %d support rows", rep.Support)
		}
		fmt.Fprintf(stderr, " in %.3fs\n", rep.Seconds)
	}
	return nil
}

// reportCPM fills met from a CPM training report, with the validation
// figures of --holdout or --valid, and prints them.
func (o *trainOptions) reportCPM(stderr io.Writer, m *model.Model, r *sgd.Report, met *trainMetrics) error {
	vf := o.valid
	met.TrainSeconds, met.Steps, met.StepsPerSecond = r.Seconds, r.Steps, r.StepsPerSecond
	for _, p := range r.Polytopes {
		pm := polytopeMetrics{Task: p.Task, Steps: p.Steps, Entropy: p.Entropy, FaceCounts: p.Counts, ActiveFaces: active(p.Counts)}
		if vf.active() && !math.IsNaN(p.ValidError) {
			pm.ValidError, pm.ValidStep, pm.Stopped = &p.ValidError, p.ValidStep, p.Stopped
		}
		met.Polytopes = append(met.Polytopes, pm)
		if vf.active() && !o.quiet {
			vf.printKept(stderr, p)
		}
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "trained %d polytope(s), %d steps in %.2fs (%.2fM steps/s)\n",
			len(r.Polytopes), r.Steps, r.Seconds, r.StepsPerSecond/1e6)
	}
	if !vf.active() {
		return nil
	}
	e, err := modelError(m, o.cpm.Valid.Data)
	if err != nil {
		return err
	}
	met.ValidError = &e
	if !o.quiet {
		fmt.Fprintf(stderr, "validation error of the model %.3f%% on %d rows\n", 100*e, o.cpm.Valid.Data.Rows())
	}
	return nil
}

// writeOutputs writes the model (-o), scores the test data (-c, -s) and
// writes the metrics (--json).
func (o *trainOptions) writeOutputs(ctx context.Context, stdout, stderr io.Writer, m *model.Model, met *trainMetrics) error {
	if o.modelOut != "" {
		if err := saveModel(o.modelOut, m, stdout); err != nil {
			return err
		}
	}
	if o.test != "" {
		if !o.quiet {
			noteData(stderr, "-c", o.test, o.lim.opts(ctx))
		}
		start := time.Now()
		res, err := evaluate(ctx, m, o.test, o.scoresOut, scoreOpts{metrics: m.Calibration != nil}, o.lim.opts(ctx)...)
		if err != nil {
			return err
		}
		met.TestSeconds = time.Since(start).Seconds()
		e := res.errorRate()
		met.TestError = &e
		out := reportTo(stdout, stderr, o.modelOut, o.scoresOut, o.jsonOut)
		fmt.Fprintf(out, "test error %.4f%% (%d/%d) on %s\n", 100*e, res.wrong, res.rows, o.test)
		reportTestLogLoss(out, m, res, met)
	}
	if o.jsonOut != "" {
		return writeJSON(o.jsonOut, met)
	}
	return nil
}

func active(counts []int64) int {
	n := 0
	for _, c := range counts {
		if c > 0 {
			n++
		}
	}
	return n
}

// progressPrinter returns a sgd.Config.Progress callback printing one line
// per report, safe to call from several training goroutines.
func progressPrinter(w io.Writer) func(sgd.Progress) {
	type mark struct {
		step int64
		at   time.Time
	}
	var mu sync.Mutex
	start := time.Now()
	last := map[string]mark{}
	return func(p sgd.Progress) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		prev, ok := last[p.Task]
		if !ok {
			prev = mark{0, start}
		}
		last[p.Task] = mark{p.Step, now}
		rate := float64(p.Step-prev.step) / now.Sub(prev.at).Seconds()
		fmt.Fprintf(w, "%-14s step %6.2fM/%.2fM  %5.2fM rows/s  epoch %7.2f  neg-loss %.4f  pos-loss %.4f  updates %5.2f%%  H %.3f  %.1fs",
			p.Task, float64(p.Step)/1e6, float64(p.Of)/1e6, rate/1e6, p.Epoch, p.NegLoss, p.PosLoss, 100*p.Violation, p.Entropy, now.Sub(start).Seconds())
		if !math.IsNaN(p.ValidError) {
			fmt.Fprintf(w, "  val-err %.3f%%", 100*p.ValidError)
			if !math.IsNaN(p.BestValidError) {
				fmt.Fprintf(w, " (best %.3f%% at %.2fM)", 100*p.BestValidError, float64(p.BestStep)/1e6)
			}
			if p.Stopped {
				fmt.Fprint(w, "  early stop")
			}
		}
		fmt.Fprintln(w)
	}
}

// addProfileFlag adds --cpuprofile to the flags of predict and eval.
func addProfileFlag(fs *flag.FlagSet) *string {
	return fs.String("cpuprofile", "", "write a CPU profile of the scoring (reading, predicting, writing) to `file` (go tool pprof)")
}

// withCPUProfile runs f with a CPU profile written to path ("": none) and
// returns f's error, else the profile's.
func withCPUProfile(path string, f func() error) error {
	if path == "" {
		return f()
	}
	stop, err := startCPUProfile(path)
	if err != nil {
		return err
	}
	err = f()
	if perr := stop(); err == nil {
		err = perr
	}
	return err
}

// startCPUProfile starts writing a CPU profile to path (by the rules of
// package internal/atomicfile) and returns the function that stops it and
// puts the file in place.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Abort()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		return nil
	}, nil
}

// writeJSON writes v as indented JSON to path by the rules of package
// internal/atomicfile ("-" is standard output).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	err = atomicfile.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}, atomicfile.Stdout(os.Stdout))
	if err != nil {
		return fmt.Errorf("writing metrics: %w", err)
	}
	return nil
}
