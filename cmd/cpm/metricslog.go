package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/sgd"
)

// metricsRecord is one line of the training metrics log written by
// cpm train --metrics-log FILE: a JSON object per line (JSON Lines). The
// schema, field by field (fields marked optional are left out when they do
// not apply):
//
//	learner            string  the learner name (cpm, perceptron, ...)
//	task               string  cpm: the polytope ("outer", "inner",
//	                           "3 vs 7/outer"); others: the learner name
//	step               int     cpm: SGD steps of this polytope so far;
//	                           online learners: the pass (1, 2, ...);
//	                           batch Polyceptron, plume, spla1: the
//	                           iteration, 0 for the initial weights
//	of                 int     optional; cpm: steps planned per polytope
//	epoch              float   passes over the training data (cpm:
//	                           fractional; others: equal to step)
//	neg_loss, pos_loss float   optional; cpm: mean hinge loss of negative /
//	                           positive rows since the previous record
//	loss               float   optional; plume, spla1: negative
//	                           log-likelihood per training row
//	violation          float   optional; cpm: fraction of steps since the
//	                           previous record that updated the weights;
//	                           perceptrons and online Polyceptron: updates
//	                           of the pass / rows; batch Polyceptron:
//	                           training error of the iteration
//	mistakes           int     optional; perceptron family: updates of the
//	                           pass (batch Polyceptron: training mistakes)
//	entropy            float   optional; cpm: ASSIGN assignment entropy, nats
//	grad_norm          float   optional; batch Polyceptron: sum_k ||grad_k||
//	log_lik            float   optional; plume, spla1: log-likelihood
//	validation_error   float   optional; cpm with --holdout or --valid: the
//	                           polytope's error on its validation rows, in
//	                           the records that follow an evaluation
//	best_validation_error float optional; with validation_error: the
//	                           lowest so far
//	stopped            bool    optional; early stopping ended the
//	                           polytope's training at this record
//	elapsed_seconds    float   cpm: wall time since training started;
//	                           others (written after training): the
//	                           training time
//
// cpm writes a record at every progress report of every polytope (every
// --progress-every steps and at the last step), as the polytope's
// goroutine reports it, so the records of concurrent polytopes
// interleave; each polytope's own records are in step order. The other
// learners record their per-pass history after training, since they
// report per pass rather than call back.
type metricsRecord struct {
	Learner   string   `json:"learner"`
	Task      string   `json:"task"`
	Step      int64    `json:"step"`
	Of        int64    `json:"of,omitempty"`
	Epoch     float64  `json:"epoch"`
	NegLoss   *float64 `json:"neg_loss,omitempty"`
	PosLoss   *float64 `json:"pos_loss,omitempty"`
	Loss      *float64 `json:"loss,omitempty"`
	Violation *float64 `json:"violation,omitempty"`
	Mistakes  *int     `json:"mistakes,omitempty"`
	Entropy   *float64 `json:"entropy,omitempty"`
	GradNorm  *float64 `json:"grad_norm,omitempty"`
	LogLik    *float64 `json:"log_lik,omitempty"`
	ValError  *float64 `json:"validation_error,omitempty"`
	BestError *float64 `json:"best_validation_error,omitempty"`
	Stopped   bool     `json:"stopped,omitempty"`
	Elapsed   float64  `json:"elapsed_seconds"`
}

// metricsLog writes metricsRecords through a buffered writer to an
// atomicfile.File: a regular file is written to a temporary file next to
// its destination that commit flushes, syncs and renames into place and
// abort removes, so the destination never holds half a log; a FIFO or
// character device receives the records as they come. Its methods are safe
// for concurrent use (polytopes report from their own goroutines) and the
// first write error is sticky.
type metricsLog struct {
	mu      sync.Mutex
	f       *atomicfile.File
	w       *bufio.Writer
	enc     *json.Encoder
	learner string
	start   time.Time
	paused  bool // records are dropped (the cross-validation that chooses K)
	err     error
	done    bool
}

// createMetricsLog opens a metrics log that commit will move to path.
func createMetricsLog(path, learnerName string) (*metricsLog, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("metrics log: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	return &metricsLog{f: f, w: w, enc: json.NewEncoder(w), learner: learnerName, start: time.Now()}, nil
}

func (l *metricsLog) write(r *metricsRecord) {
	r.Learner = l.learner
	if l.err == nil && !l.done && !l.paused {
		if err := l.enc.Encode(r); err != nil {
			l.err = fmt.Errorf("metrics log: %w", err)
		}
	}
}

// hook returns a sgd progress callback that records every report and then
// calls next, if it is not nil.
func (l *metricsLog) hook(next func(sgd.Progress)) func(sgd.Progress) {
	return func(p sgd.Progress) {
		l.progress(p)
		if next != nil {
			next(p)
		}
	}
}

// progress records one CPM progress report.
func (l *metricsLog) progress(p sgd.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &metricsRecord{
		Task: p.Task, Step: p.Step, Of: p.Of, Epoch: p.Epoch,
		NegLoss: &p.NegLoss, PosLoss: &p.PosLoss,
		Violation: &p.Violation, Entropy: &p.Entropy,
		Stopped: p.Stopped, Elapsed: time.Since(l.start).Seconds(),
	}
	if !math.IsNaN(p.ValidError) {
		r.ValError = &p.ValidError
	}
	if !math.IsNaN(p.BestValidError) {
		r.BestError = &p.BestValidError
	}
	l.write(r)
}

// history records the per-pass history of a non-CPM learner's report:
// rows is the number of training rows.
func (l *metricsLog) history(rep *learner.Report, rows int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	task := rep.Learner
	for i, ll := range rep.LogLik {
		r := &metricsRecord{Task: task, Step: int64(i), Epoch: float64(i), LogLik: &ll, Elapsed: rep.Seconds}
		if rows > 0 {
			loss := -ll / float64(rows)
			r.Loss = &loss
		}
		l.write(r)
	}
	// Online learners count the mistakes made during pass i+1; the batch
	// Polyceptron those of the weights after i updates (0: the initial
	// weights; one more record than updates when it converged).
	first := 1
	if rep.GradNorm != nil {
		first = 0
	}
	for i, n := range rep.EpochMistakes {
		step := i + first
		r := &metricsRecord{Task: task, Step: int64(step), Epoch: float64(step), Mistakes: &n, Elapsed: rep.Seconds}
		if rows > 0 {
			v := float64(n) / float64(rows)
			r.Violation = &v
		}
		if i < len(rep.GradNorm) {
			r.GradNorm = &rep.GradNorm[i]
		}
		l.write(r)
	}
}

// pause drops the records reported from now until restart (those of the
// cross-validation that chooses K). It does nothing on a nil log.
func (l *metricsLog) pause() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paused = true
}

// restart ends a pause and restarts the clock. It does nothing on a nil
// log.
func (l *metricsLog) restart() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paused = false
	l.start = time.Now()
}

// commit flushes the log and puts it in place.
func (l *metricsLog) commit() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return l.err
	}
	l.done = true
	if l.err == nil {
		if err := l.w.Flush(); err != nil {
			l.err = fmt.Errorf("metrics log: %w", err)
		}
	}
	if l.err != nil {
		l.f.Abort()
		return l.err
	}
	if err := l.f.Close(); err != nil {
		l.err = fmt.Errorf("metrics log: %w", err)
	}
	return l.err
}

// abort discards the log unless it was committed.
func (l *metricsLog) abort() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	l.done = true
	l.f.Abort()
}
