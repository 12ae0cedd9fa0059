package cluster

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Status is a snapshot of the cluster's jobs and live workers.
type Status struct {
	Jobs    []JobStatus    // oldest first
	Workers []WorkerStatus // by name
}

// JobStatus is a job record with the counts of its tasks. Queued counts
// the tasks of a running job that have no result, no failure and no live
// worker running them.
type JobStatus struct {
	ID, Kind, Describe string
	State              JobState
	Error              string
	Count              int
	Queued             int
	Running            int
	Done               int
	Failed             int
	Created, Updated   time.Time
}

// WorkerStatus is a worker's heartbeat record in cpm-workers.
type WorkerStatus struct {
	Name        string       `json:"name"`
	Started     time.Time    `json:"started"`
	Updated     time.Time    `json:"updated"`
	Concurrency int          `json:"concurrency"`
	Done        int64        `json:"done"`         // tasks finished
	Failed      int64        `json:"failed"`       // tasks failed or requeued
	Rows        int64        `json:"rows"`         // rows processed (SGD steps, rows read) over every task
	RowsPerSec  float64      `json:"rows_per_sec"` // Rows' rate between the last two heartbeats
	Running     []TaskStatus `json:"running,omitempty"`
}

// TaskStatus is a task running on a worker.
type TaskStatus struct {
	Job        string    `json:"job"`
	Index      int       `json:"index"`
	Name       string    `json:"name,omitempty"`
	Rows       int64     `json:"rows"`
	RowsPerSec float64   `json:"rows_per_sec"`
	Started    time.Time `json:"started"`
}

func (s *WorkerStatus) check() error {
	if len(s.Name) > 64 || !workerNameRE().MatchString(s.Name) || len(s.Running) > maxConcurrency {
		return fmt.Errorf("worker record %q with %d tasks", s.Name, len(s.Running))
	}
	return nil
}

// live reports whether the worker wrote s recently.
func (s *WorkerStatus) live(now time.Time) bool { return now.Sub(s.Updated) < workerTTL }

// Status reads every job record, counts each job's task records, and
// reads the live workers' heartbeats.
func (c *Cluster) Status(ctx context.Context) (*Status, error) {
	workers, err := c.liveWorkers(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: status: %w", err)
	}
	jobs := make(map[string]*JobStatus)
	done := make(map[string]int)
	failed := make(map[string]map[int]bool)
	results := make(map[string]map[int]bool)
	err = scanBucket(ctx, c.jobs, func(e jetstream.KeyValueEntry) {
		key := e.Key()
		if ValidJobID(key) {
			var r jobRecord
			if decodeRecord(e.Value(), &r) == nil && r.ID == key {
				jobs[key] = &JobStatus{ID: r.ID, Kind: r.Kind, Describe: r.Describe, State: r.State, Error: r.Error,
					Count: r.Count, Created: r.Created, Updated: r.Updated}
			}
			return
		}
		job, kind, index, ok := parseTaskKey(key)
		if !ok {
			return
		}
		switch kind {
		case keyResult:
			done[job]++
			if results[job] == nil {
				results[job] = make(map[int]bool)
			}
			results[job][index] = true
		case keyFail:
			if failed[job] == nil {
				failed[job] = make(map[int]bool)
			}
			failed[job][index] = true
		}
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: status: %w", err)
	}
	running := make(map[string]map[int]bool)
	for _, w := range workers {
		for _, t := range w.Running {
			if running[t.Job] == nil {
				running[t.Job] = make(map[int]bool)
			}
			running[t.Job][t.Index] = true
		}
	}
	s := &Status{Workers: workers}
	for id, j := range jobs {
		j.Done = min(done[id], j.Count)
		for i := range failed[id] {
			if !results[id][i] {
				j.Failed++
			}
		}
		if j.State == JobRunning {
			for i := range running[id] {
				if !results[id][i] && !failed[id][i] {
					j.Running++
				}
			}
			j.Queued = max(0, j.Count-j.Done-j.Failed-j.Running)
		}
		s.Jobs = append(s.Jobs, *j)
	}
	slices.SortFunc(s.Jobs, func(a, b JobStatus) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return s, nil
}

// liveWorkers reads the heartbeats of cpm-workers younger than workerTTL,
// by name.
func (c *Cluster) liveWorkers(ctx context.Context) ([]WorkerStatus, error) {
	now := time.Now()
	var ws []WorkerStatus
	err := scanBucket(ctx, c.workers, func(e jetstream.KeyValueEntry) {
		var w WorkerStatus
		if decodeRecord(e.Value(), &w) == nil && w.Name == e.Key() && w.live(now) {
			ws = append(ws, w)
		}
	})
	slices.SortFunc(ws, func(a, b WorkerStatus) int { return strings.Compare(a.Name, b.Name) })
	return ws, err
}

// scanBucket calls f with the latest value of every key of kv.
func scanBucket(ctx context.Context, kv jetstream.KeyValue, f func(jetstream.KeyValueEntry)) error {
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	defer func() {
		_ = w.Stop()
		go func() { // unblock an update in flight until the channel closes
			for range w.Updates() {
			}
		}()
	}()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("%s: watcher stopped", kv.Bucket())
			}
			if e == nil {
				return nil
			}
			if e.Operation() == jetstream.KeyValuePut {
				f(e)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Print writes s as two tables, jobs then workers.
func (s *Status) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tKIND\tSTATE\tDONE\tRUNNING\tQUEUED\tFAILED\tUPDATED\tDESCRIPTION")
	for _, j := range s.Jobs {
		desc := j.Describe
		if j.Error != "" {
			desc += " (error: " + clip(j.Error, 200) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\t%s\t%s\n", j.ID, j.Kind, j.State, j.Done, j.Count,
			j.Running, j.Queued, j.Failed, j.Updated.Local().Format(time.DateTime), desc)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tUP\tSLOTS\tDONE\tFAILED\tROWS/S\tRUNNING")
	for _, k := range s.Workers {
		var tasks []string
		for _, t := range k.Running {
			tasks = append(tasks, fmt.Sprintf("%s/%d %q", t.Job, t.Index, t.Name))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.3g\t%s\n", k.Name, k.Updated.Sub(k.Started).Round(time.Second), k.Concurrency,
			k.Done, k.Failed, k.RowsPerSec, strings.Join(tasks, ", "))
	}
	tw.Flush()
}
