package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JobSpec describes a job to Submit.
type JobSpec struct {
	ID       string // ValidJobID
	Kind     string // "train", "cv", "tune"
	Describe string // one line for people (cluster status)
	Count    int    // tasks in the job
	// Digest is the SHA-256 of the job's definition: a job record with
	// the same ID and another Digest is an error (ErrJobConflict).
	Digest string
	// Data lists the digests of the cpm-data objects the job's tasks read
	// (PutData's), at most maxJobData; empty strings are ignored. The job
	// record keeps them so that DeleteUnusedData keeps those objects.
	Data []string
}

// Job kinds.
const (
	JobTrain = "train"
	JobCV    = "cv"
	JobTune  = "tune"
)

func (s *JobSpec) check() error {
	switch {
	case !ValidJobID(s.ID):
		return fmt.Errorf("cluster: job id %q: 1 to 64 letters, digits, '-' or '_'", s.ID)
	case !nameRE().MatchString(s.Kind):
		return fmt.Errorf("cluster: job %s: kind %q", s.ID, s.Kind)
	case s.Count < 1 || s.Count > MaxParts:
		return fmt.Errorf("cluster: job %s: count %d out of [1, %d]", s.ID, s.Count, MaxParts)
	case !ValidDigest(s.Digest):
		return fmt.Errorf("cluster: job %s: digest %q is not a SHA-256 hex digest", s.ID, s.Digest)
	}
	return checkJobData(s.ID, s.Data)
}

// Job is a submitted job as its coordinator sees it: one KV watcher on the
// job's result and failure records feeds every Do.
type Job struct {
	c    *Cluster
	spec JobSpec
	gen  int // this submission: 1 for a new job, +1 per reattach
	// On a reattach, what Submit saw of the tasks already queued: the
	// consumer's last delivered stream sequence (messages after it were
	// never delivered) and the tasks live workers are running.
	delivered uint64
	running   map[int]bool

	w      jetstream.KeyWatcher
	synced chan struct{} // closed once the watcher sent the initial records
	ended  chan struct{} // closed when the watcher stopped

	mu        sync.Mutex
	results   map[int]*resultRecord
	failures  map[int]*failRecord
	ready     map[int]chan struct{} // closed when a task has a result or failure
	seqs      map[uint64]int        // stream sequence -> index of the messages published
	published map[int]bool
	finished  bool
}

// Submit creates the job's record, or reattaches to the record of the
// same ID and Digest: then the results already recorded are reused, the
// failures recorded are cleared so that those tasks run again, and the
// record is marked running. It returns once the job's records are loaded.
func (c *Cluster) Submit(ctx context.Context, spec JobSpec) (*Job, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	if err := c.watchMaxDeliveries(); err != nil {
		return nil, err
	}
	gen, err := c.claimJob(ctx, spec)
	if err != nil {
		return nil, err
	}
	j := &Job{
		c: c, spec: spec, gen: gen,
		synced: make(chan struct{}), ended: make(chan struct{}),
		results: make(map[int]*resultRecord), failures: make(map[int]*failRecord),
		ready: make(map[int]chan struct{}), seqs: make(map[uint64]int), published: make(map[int]bool),
	}
	if gen > 1 {
		if err := j.prepareReattach(ctx); err != nil {
			return nil, err
		}
	}
	j.w, err = c.jobs.WatchFiltered(context.Background(),
		[]string{spec.ID + "." + keyResult + ".*", spec.ID + "." + keyFail + ".*"},
		jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("cluster: job %s: watch: %w", spec.ID, err)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = j.w.Stop()
		return nil, ErrJobClosed
	}
	c.open[j] = struct{}{}
	c.mu.Unlock()
	go j.watch()
	select {
	case <-j.synced:
		return j, nil
	case <-j.ended:
		return nil, fmt.Errorf("cluster: job %s: watcher stopped", spec.ID)
	case <-ctx.Done():
		j.stopWatch()
		return nil, ctx.Err()
	}
}

// claimJob creates the job record or reattaches to it, returning the
// submission's generation.
func (c *Cluster) claimJob(ctx context.Context, spec JobSpec) (int, error) {
	now := time.Now().UTC()
	rec := jobRecord{
		ID: spec.ID, Kind: spec.Kind, Describe: clip(spec.Describe, 256), Count: spec.Count,
		Digest: spec.Digest, State: JobRunning, Gen: 1, Created: now, Updated: now,
		Data: jobData(spec.Data),
	}
	for range 10 {
		created, err := createRecord(ctx, c.jobs, spec.ID, &rec)
		if err != nil {
			return 0, fmt.Errorf("cluster: job %s: %w", spec.ID, err)
		}
		if created {
			return 1, nil
		}
		e, err := c.jobs.Get(ctx, spec.ID)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return 0, fmt.Errorf("cluster: job %s: %w", spec.ID, err)
		}
		var old jobRecord
		if err := decodeRecord(e.Value(), &old); err != nil {
			return 0, fmt.Errorf("cluster: job %s: %w", spec.ID, err)
		}
		if old.Digest != spec.Digest || old.Count != spec.Count {
			return 0, fmt.Errorf("cluster: job %s: %w (its record has digest %.12s…, %d tasks; this one %.12s…, %d tasks)",
				spec.ID, ErrJobConflict, old.Digest, old.Count, spec.Digest, spec.Count)
		}
		old.State, old.Error, old.Gen, old.Updated = JobRunning, "", old.Gen+1, now
		old.Describe = rec.Describe
		old.Data = jobData(old.Data, rec.Data)
		b, err := encodeRecord(&old)
		if err != nil {
			return 0, err
		}
		if _, err := c.jobs.Update(ctx, spec.ID, b, e.Revision()); errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			continue
		} else if err != nil {
			return 0, fmt.Errorf("cluster: job %s: %w", spec.ID, err)
		}
		return old.Gen, nil
	}
	return 0, fmt.Errorf("cluster: job %s: its record keeps changing", spec.ID)
}

// prepareReattach clears the job's failure and last-error records and
// notes which of its queued messages are safe to keep.
func (j *Job) prepareReattach(ctx context.Context) error {
	id := j.spec.ID
	kl, err := j.c.jobs.ListKeysFiltered(ctx, id+"."+keyFail+".*", id+"."+keyLast+".*")
	if err != nil {
		return fmt.Errorf("cluster: job %s: %w", id, err)
	}
	var keys []string
	for k := range kl.Keys() {
		keys = append(keys, k)
	}
	for _, k := range keys {
		if err := j.c.jobs.Delete(ctx, k); err != nil {
			return fmt.Errorf("cluster: job %s: clear %s: %w", id, k, err)
		}
	}
	info, err := j.c.cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("cluster: job %s: %w", id, err)
	}
	j.delivered = info.Delivered.Stream
	j.running = make(map[int]bool)
	ws, err := j.c.liveWorkers(ctx)
	if err != nil {
		return fmt.Errorf("cluster: job %s: %w", id, err)
	}
	for _, w := range ws {
		for _, t := range w.Running {
			if t.Job == id {
				j.running[t.Index] = true
			}
		}
	}
	return nil
}

// watch applies the watcher's records until it stops.
func (j *Job) watch() {
	defer close(j.ended)
	synced := false
	for e := range j.w.Updates() {
		if e == nil {
			if !synced {
				synced = true
				close(j.synced)
			}
			continue
		}
		if e.Operation() != jetstream.KeyValuePut {
			continue
		}
		job, kind, index, ok := parseTaskKey(e.Key())
		if !ok || job != j.spec.ID || index >= j.spec.Count {
			continue
		}
		switch kind {
		case keyResult:
			var r resultRecord
			if decodeRecord(e.Value(), &r) == nil {
				j.mu.Lock()
				j.results[index] = &r
				j.markReadyLocked(index)
				j.mu.Unlock()
			}
		case keyFail:
			var f failRecord
			if decodeRecord(e.Value(), &f) == nil {
				j.mu.Lock()
				j.failures[index] = &f
				j.markReadyLocked(index)
				j.mu.Unlock()
			}
		}
	}
}

func (j *Job) readyLocked(index int) chan struct{} {
	ch := j.ready[index]
	if ch == nil {
		ch = make(chan struct{})
		j.ready[index] = ch
	}
	return ch
}

func (j *Job) markReadyLocked(index int) {
	ch := j.readyLocked(index)
	if !isClosed(ch) {
		close(ch)
	}
}

func (j *Job) stopWatch() {
	if j.w != nil {
		_ = j.w.Stop()
	}
	j.c.mu.Lock()
	delete(j.c.open, j)
	j.c.mu.Unlock()
}

func (j *Job) indexOfSeq(seq uint64) (int, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	i, ok := j.seqs[seq]
	return i, ok
}

// Do returns the result of task t of the job. A task with a result record
// is not published again: its result is fetched. Otherwise t is published
// (Nats-Msg-Id <job>/<index>/<submission>, so that publishing it twice in
// one submission queues it once) and Do waits for its result record,
// fetches the result object and checks its SHA-256 against the record. A
// task a worker failed, or one delivered MaxDeliver times without a
// result, returns a *TaskError. Do is safe for concurrent use; when ctx is
// done it returns ctx.Err().
func (j *Job) Do(ctx context.Context, t *Task) ([]byte, error) {
	if t.Job != j.spec.ID || t.Count != j.spec.Count {
		return nil, fmt.Errorf("cluster: job %s of %d tasks: task of job %q, count %d", j.spec.ID, j.spec.Count, t.Job, t.Count)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("cluster: job %s: %w", j.spec.ID, err)
	}
	j.mu.Lock()
	if j.finished {
		j.mu.Unlock()
		return nil, ErrJobClosed
	}
	ready := j.readyLocked(t.Index)
	j.mu.Unlock()
	if !isClosed(ready) {
		if err := j.publish(ctx, t); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-j.ended:
			if !isClosed(ready) {
				return nil, ErrJobClosed
			}
		}
	}
	j.mu.Lock()
	r, f := j.results[t.Index], j.failures[t.Index]
	j.mu.Unlock()
	if r != nil {
		b, err := j.c.fetchResult(ctx, j.spec.ID, t.Index, r)
		if err != nil {
			return nil, fmt.Errorf("cluster: job %s task %d: %w", j.spec.ID, t.Index, err)
		}
		return b, nil
	}
	return nil, &TaskError{Index: t.Index, Name: t.Name, Worker: f.Worker, Msg: f.Msg}
}

// publish queues t unless this submission already did, or, on a reattach,
// a message of an earlier submission is still queued and either was never
// delivered or is running on a live worker.
func (j *Job) publish(ctx context.Context, t *Task) error {
	j.mu.Lock()
	done := j.published[t.Index]
	j.mu.Unlock()
	if done {
		return nil
	}
	body, err := t.Encode()
	if err != nil {
		return fmt.Errorf("cluster: job %s: %w", j.spec.ID, err)
	}
	pubKey := taskKey(j.spec.ID, keyPub, t.Index)
	if j.gen > 1 {
		keep, err := j.keepQueued(ctx, pubKey, t.Index)
		if err != nil {
			return err
		}
		if keep {
			return nil
		}
	}
	m := nats.NewMsg(taskSubject(j.spec.ID))
	m.Data = body
	m.Header.Set(jetstream.MsgIDHeader, j.spec.ID+"/"+strconv.Itoa(t.Index)+"/"+strconv.Itoa(j.gen))
	ack, err := retry(ctx, func(ctx context.Context) (*jetstream.PubAck, error) { return j.c.js.PublishMsg(ctx, m) })
	if err != nil {
		return fmt.Errorf("cluster: job %s: publish task %d: %w", j.spec.ID, t.Index, err)
	}
	j.mu.Lock()
	j.seqs[ack.Sequence] = t.Index
	j.published[t.Index] = true
	j.mu.Unlock()
	// The message is queued: record its sequence even if ctx ends now.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	return putRecord(pctx, j.c.jobs, pubKey, &pubRecord{Seq: ack.Sequence, Gen: j.gen})
}

// keepQueued reports whether the message an earlier submission published
// for task index is still queued and worth keeping; a message that was
// delivered and is not running on a live worker (waiting for redelivery,
// or stuck after MaxDeliver) is deleted, to be published again.
func (j *Job) keepQueued(ctx context.Context, pubKey string, index int) (bool, error) {
	var p pubRecord
	found, err := getRecord(ctx, j.c.jobs, pubKey, &p)
	if err != nil || !found || p.Seq == 0 {
		return false, err
	}
	raw, err := j.c.stream.GetMsg(ctx, p.Seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster: job %s: %w", j.spec.ID, err)
	}
	prefix := j.spec.ID + "/" + strconv.Itoa(index) + "/"
	if raw.Subject != taskSubject(j.spec.ID) || !strings.HasPrefix(raw.Header.Get(jetstream.MsgIDHeader), prefix) {
		return false, nil
	}
	if p.Seq > j.delivered || j.running[index] {
		j.mu.Lock()
		j.seqs[p.Seq] = index
		j.published[index] = true
		j.mu.Unlock()
		return true, nil
	}
	if err := j.c.stream.DeleteMsg(ctx, p.Seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, fmt.Errorf("cluster: job %s: %w", j.spec.ID, err)
	}
	return false, nil
}

// Finish records the job as done (err == nil) or failed with err's text,
// deletes its tasks still queued, and stops its watcher: later Do calls
// return ErrJobClosed. A coordinator that wants the workers to go on
// after it stops (to reattach later) does not call Finish.
func (j *Job) Finish(err error) {
	j.mu.Lock()
	if j.finished {
		j.mu.Unlock()
		return
	}
	j.finished = true
	j.mu.Unlock()
	defer j.stopWatch()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	state, text := JobDone, ""
	if err != nil {
		state, text = JobFailed, clip(err.Error(), maxText)
	}
	for range 10 {
		e, gerr := j.c.jobs.Get(ctx, j.spec.ID)
		if gerr != nil {
			break
		}
		var rec jobRecord
		if decodeRecord(e.Value(), &rec) != nil || rec.Gen != j.gen {
			return // a later submission owns the job
		}
		rec.State, rec.Error, rec.Updated = state, text, time.Now().UTC()
		b, eerr := encodeRecord(&rec)
		if eerr != nil {
			break
		}
		if _, uerr := j.c.jobs.Update(ctx, j.spec.ID, b, e.Revision()); !errors.Is(uerr, jetstream.ErrKeyRevisionMismatch) {
			break
		}
	}
	_ = j.c.purgeTasks(ctx, j.spec.ID)
}
