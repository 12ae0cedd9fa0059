package cluster

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// maxProgressWorkers bounds the workers one progress line names.
const maxProgressWorkers = 8

// Progress writes a line to w every `every` until stop is called:
//
//	job ID: D/N tasks done, R running; w1 1.2e+07 rows/s on "3 vs 5/inner"; w2 …; ETA 12s
//
// from the job's result and failure records and the live workers'
// heartbeats. The ETA extrapolates the tasks finished since Progress was
// called. stop waits for the last line to be written.
func (j *Job) Progress(w io.Writer, every time.Duration) (stop func()) {
	if every <= 0 {
		every = time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { j.progress(ctx, w, every) })
	return func() {
		cancel()
		wg.Wait()
	}
}

func (j *Job) progress(ctx context.Context, w io.Writer, every time.Duration) {
	var mu sync.Mutex
	workers := make(map[string]*WorkerStatus)
	if kw, err := j.c.workers.WatchAll(ctx); err == nil {
		defer kw.Stop()
		go func() {
			for e := range kw.Updates() {
				if e == nil {
					continue
				}
				var s WorkerStatus
				ok := e.Operation() == jetstream.KeyValuePut && decodeRecord(e.Value(), &s) == nil && s.Name == e.Key()
				mu.Lock()
				if ok {
					workers[e.Key()] = &s
				} else {
					delete(workers, e.Key())
				}
				mu.Unlock()
			}
		}()
	}
	start := time.Now()
	done0, _ := j.counts()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		done, failed := j.counts()
		var busy []workerTasks
		now := time.Now()
		mu.Lock()
		for _, s := range workers {
			if !s.live(now) {
				continue
			}
			wt := workerTasks{name: s.Name, rate: s.RowsPerSec}
			for _, t := range s.Running {
				if t.Job == j.spec.ID {
					wt.tasks = append(wt.tasks, t)
				}
			}
			if len(wt.tasks) > 0 {
				busy = append(busy, wt)
			}
		}
		mu.Unlock()
		fmt.Fprintln(w, j.progressLine(done, failed, busy, now.Sub(start), done-done0))
	}
}

// workerTasks is a live worker running tasks of the job, with its rate
// over all its tasks.
type workerTasks struct {
	name  string
	rate  float64
	tasks []TaskStatus
}

// counts returns the tasks with a result and those with only a failure.
func (j *Job) counts() (done, failed int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.failures {
		if j.results[i] == nil {
			failed++
		}
	}
	return len(j.results), failed
}

func (j *Job) progressLine(done, failed int, busy []workerTasks, elapsed time.Duration, doneSince int) string {
	var b strings.Builder
	running := 0
	for _, w := range busy {
		running += len(w.tasks)
	}
	fmt.Fprintf(&b, "job %s: %d/%d tasks done, %d running", j.spec.ID, done, j.spec.Count, running)
	if failed > 0 {
		fmt.Fprintf(&b, ", %d failed", failed)
	}
	slices.SortFunc(busy, func(a, c workerTasks) int { return strings.Compare(a.name, c.name) })
	for n, w := range busy {
		if n == maxProgressWorkers {
			fmt.Fprintf(&b, "; … %d more workers", len(busy)-n)
			break
		}
		slices.SortFunc(w.tasks, func(a, c TaskStatus) int { return a.Index - c.Index })
		names := make([]string, len(w.tasks))
		for i, t := range w.tasks {
			names[i] = strconv.Quote(cmp.Or(t.Name, strconv.Itoa(t.Index)))
		}
		fmt.Fprintf(&b, "; %s %.3g rows/s on %s", w.name, w.rate, strings.Join(names, ", "))
	}
	if left := j.spec.Count - done - failed; doneSince > 0 && left > 0 {
		eta := time.Duration(float64(elapsed) / float64(doneSince) * float64(left))
		fmt.Fprintf(&b, "; ETA %v", eta.Round(time.Second))
	}
	return b.String()
}
