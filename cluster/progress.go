package cluster

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// maxProgressTasks bounds the running tasks one progress line names.
const maxProgressTasks = 8

// Progress writes a line to w every `every` until stop is called:
//
//	job ID: D/N tasks done, R running, worker w1 task "name" 1.2e+06 rows/s, …, ETA 12s
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
		var tasks []TaskStatus
		var names []string
		now := time.Now()
		mu.Lock()
		for _, s := range workers {
			if !s.live(now) {
				continue
			}
			for _, t := range s.Running {
				if t.Job == j.spec.ID {
					tasks = append(tasks, t)
					names = append(names, s.Name)
				}
			}
		}
		mu.Unlock()
		fmt.Fprintln(w, j.progressLine(done, failed, tasks, names, now.Sub(start), done-done0))
	}
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

func (j *Job) progressLine(done, failed int, tasks []TaskStatus, workers []string, elapsed time.Duration, doneSince int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s: %d/%d tasks done, %d running", j.spec.ID, done, j.spec.Count, len(tasks))
	if failed > 0 {
		fmt.Fprintf(&b, ", %d failed", failed)
	}
	order := make([]int, len(tasks))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, c int) int {
		if s := strings.Compare(workers[a], workers[c]); s != 0 {
			return s
		}
		return tasks[a].Index - tasks[c].Index
	})
	for n, i := range order {
		if n == maxProgressTasks {
			fmt.Fprintf(&b, ", … %d more", len(order)-n)
			break
		}
		t := tasks[i]
		name := t.Name
		if name == "" {
			name = fmt.Sprint(t.Index)
		}
		fmt.Fprintf(&b, ", worker %s task %q %.2g rows/s", workers[i], name, t.RowsPerSec)
	}
	if left := j.spec.Count - done - failed; doneSince > 0 && left > 0 {
		eta := time.Duration(float64(elapsed) / float64(doneSince) * float64(left))
		fmt.Fprintf(&b, ", ETA %v", eta.Round(time.Second))
	}
	return b.String()
}
