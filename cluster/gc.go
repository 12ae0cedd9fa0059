package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrJobRunning is wrapped by the error of DeleteJob for a job whose
// record says running (and that DeleteOptions do not let it delete).
var ErrJobRunning = errors.New("job is running")

// maxJobData bounds JobSpec.Data and the digests of a job record.
const maxJobData = 64

// DeleteOptions configures DeleteJob and DeleteUnusedData.
type DeleteOptions struct {
	// Force lets DeleteJob delete a job whose record says running, when
	// the record was last updated more than Grace ago (Grace 0: any). A
	// submitter that died leaves its job running; a live one does not
	// update the record while the job runs, so Grace should exceed the
	// longest job. Without Force a running job is refused (ErrJobRunning).
	Force bool
	Grace time.Duration
	// DryRun counts what would be deleted and deletes nothing.
	DryRun bool
	// Deleted (DeleteUnusedData) lists jobs whose data counts as unused,
	// as if their records were gone: a dry run of deleting them first.
	Deleted []string
}

// DeleteStats counts what DeleteJob or DeleteUnusedData deleted (or, with
// DryRun, would delete).
type DeleteStats struct {
	Jobs     int   // job records
	Objects  int   // objects: results of the jobs, or data
	Keys     int   // keys of cpm-jobs, job records included
	Messages int   // queued task messages
	Bytes    int64 // bytes of the objects (records and messages, small, are not counted)
}

// Add adds o's counts to s.
func (s *DeleteStats) Add(o DeleteStats) {
	s.Jobs += o.Jobs
	s.Objects += o.Objects
	s.Keys += o.Keys
	s.Messages += o.Messages
	s.Bytes += o.Bytes
}

// DeleteJob deletes job id from the cluster: its queued task messages
// (subject cpm.task.<id>), every object of cpm-results named <id>/…, every
// key <id>.… of cpm-jobs (task, result and failure records), and last its
// job record, so that a DeleteJob stopped midway leaves a job that a
// second DeleteJob finishes; a job without a record (deleted already, or
// left-overs of one) is cleaned up as well, and one with nothing left is
// a no-op (zero stats, no error). A job whose record says running is
// refused with an error wrapping ErrJobRunning unless o.Force and the
// record is older than o.Grace; such a job's record is first marked
// failed (its time of update kept), so that workers stop its running
// tasks within a heartbeat and skip its queued ones. The job record is
// deleted only if it did not change meanwhile (the job submitted again).
// Its data objects stay: see DeleteUnusedData.
func (c *Cluster) DeleteJob(ctx context.Context, id string, o DeleteOptions) (DeleteStats, error) {
	var st DeleteStats
	if !ValidJobID(id) {
		return st, fmt.Errorf("cluster: delete job: job id %q: 1 to 64 letters, digits, '-' or '_'", id)
	}
	rev, err := c.claimDeletion(ctx, id, o)
	if err != nil {
		return st, err
	}
	// Queued tasks first: no worker starts one of them again.
	subj := taskSubject(id)
	info, err := c.stream.Info(ctx, jetstream.WithSubjectFilter(subj))
	if err != nil {
		return st, fmt.Errorf("cluster: delete job %s: tasks: %w", id, err)
	}
	if n := info.State.Subjects[subj]; n > 0 {
		st.Messages = int(n)
		if !o.DryRun {
			if err := c.purgeTasks(ctx, id); err != nil {
				return st, fmt.Errorf("cluster: delete job %s: tasks: %w", id, err)
			}
		}
	}
	// Result objects, also those no record names (a duplicate that lost
	// the race for the record, a result stored after the job ended).
	objs, err := c.results.List(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		return st, fmt.Errorf("cluster: delete job %s: results: %w", id, err)
	}
	for _, obj := range objs {
		if !strings.HasPrefix(obj.Name, id+"/") {
			continue
		}
		if !o.DryRun {
			if err := c.results.Delete(ctx, obj.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				return st, fmt.Errorf("cluster: delete job %s: result %s: %w", id, obj.Name, err)
			}
		}
		st.Objects++
		st.Bytes += int64(obj.Size)
	}
	// Task records: a job ID has no '.', so <id>.> matches this job's
	// keys only.
	keys, err := listKeys(ctx, c.jobs, id+".>")
	if err != nil {
		return st, fmt.Errorf("cluster: delete job %s: records: %w", id, err)
	}
	for _, k := range keys {
		if !o.DryRun {
			if err := c.jobs.Delete(ctx, k); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
				return st, fmt.Errorf("cluster: delete job %s: %s: %w", id, k, err)
			}
		}
		st.Keys++
	}
	if rev == 0 {
		return st, nil
	}
	if !o.DryRun {
		err := c.jobs.Delete(ctx, id, jetstream.LastRevision(rev))
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return st, fmt.Errorf("cluster: delete job %s: its record changed while it was deleted (submitted again?); the record is kept, delete the job again", id)
		}
		if err != nil {
			return st, fmt.Errorf("cluster: delete job %s: %w", id, err)
		}
	}
	st.Jobs++
	st.Keys++
	return st, nil
}

// claimDeletion reads job id's record and decides whether it may be
// deleted; it returns the record's revision (0: no record), after marking
// a running job failed when o lets it be deleted.
func (c *Cluster) claimDeletion(ctx context.Context, id string, o DeleteOptions) (uint64, error) {
	for range 10 {
		e, err := c.jobs.Get(ctx, id)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("cluster: delete job %s: %w", id, err)
		}
		var rec jobRecord
		if err := decodeRecord(e.Value(), &rec); err != nil {
			if !o.Force {
				return 0, fmt.Errorf("cluster: delete job %s: its record is unreadable (%v); force deletes it", id, err)
			}
			return e.Revision(), nil
		}
		if rec.State != JobRunning {
			return e.Revision(), nil
		}
		age := time.Since(rec.Updated)
		switch {
		case !o.Force:
			return 0, fmt.Errorf("cluster: delete job %s: %w (record updated %v ago); force deletes a job whose submitter died", id, ErrJobRunning, age.Round(time.Second))
		case age <= o.Grace:
			return 0, fmt.Errorf("cluster: delete job %s: %w (record updated %v ago, not more than %v)", id, ErrJobRunning, age.Round(time.Second), o.Grace)
		case o.DryRun:
			return e.Revision(), nil
		}
		rec.State, rec.Error = JobFailed, "deleted"
		b, err := encodeRecord(&rec)
		if err != nil {
			return 0, fmt.Errorf("cluster: delete job %s: %w", id, err)
		}
		rev, err := c.jobs.Update(ctx, id, b, e.Revision())
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("cluster: delete job %s: %w", id, err)
		}
		return rev, nil
	}
	return 0, fmt.Errorf("cluster: delete job %s: its record keeps changing", id)
}

// purgeTasks deletes the task messages of job still queued.
func (c *Cluster) purgeTasks(ctx context.Context, job string) error {
	return c.stream.Purge(ctx, jetstream.WithPurgeSubject(taskSubject(job)))
}

// DeleteUnusedData deletes the objects of cpm-data last modified more
// than olderThan ago that no job record names (JobSpec.Data; a record
// without data names none, and o.Deleted lists jobs to disregard). Data
// younger than olderThan is always kept: a coordinator uploads its data
// before it creates the job record that names them. Only o.DryRun and
// o.Deleted apply. If a job record cannot be read, nothing is deleted.
func (c *Cluster) DeleteUnusedData(ctx context.Context, olderThan time.Duration, o DeleteOptions) (DeleteStats, error) {
	var st DeleteStats
	if olderThan < 0 {
		return st, fmt.Errorf("cluster: delete unused data: negative age %v", olderThan)
	}
	cutoff := time.Now().Add(-olderThan)
	// The objects before the records: a record created after the listing
	// names an object listed (or one too young to go).
	objs, err := c.data.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("cluster: delete unused data: %w", err)
	}
	objs = slices.DeleteFunc(objs, func(obj *jetstream.ObjectInfo) bool { return !obj.ModTime.Before(cutoff) })
	if len(objs) == 0 {
		return st, nil
	}
	used, err := c.usedData(ctx, o.Deleted)
	if err != nil {
		return st, fmt.Errorf("cluster: delete unused data: %w", err)
	}
	for _, obj := range objs {
		if used[obj.Name] {
			continue
		}
		if !o.DryRun {
			if err := c.data.Delete(ctx, obj.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				return st, fmt.Errorf("cluster: delete unused data %s: %w", obj.Name, err)
			}
		}
		st.Objects++
		st.Bytes += int64(obj.Size)
	}
	return st, nil
}

// usedData returns the data digests the job records name, but those of
// the jobs in except.
func (c *Cluster) usedData(ctx context.Context, except []string) (map[string]bool, error) {
	ids, err := listKeys(ctx, c.jobs, "*") // job IDs have no '.': the job records
	if err != nil {
		return nil, err
	}
	used := make(map[string]bool)
	for _, id := range ids {
		if slices.Contains(except, id) {
			continue
		}
		var rec jobRecord
		found, err := getRecord(ctx, c.jobs, id, &rec)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", id, err)
		}
		if found {
			for _, d := range rec.Data {
				used[d] = true
			}
		}
	}
	return used, nil
}

// listKeys returns the keys of kv that match filter and have a value. An
// interrupted listing is an error, never a short list.
func listKeys(ctx context.Context, kv jetstream.KeyValue, filter string) ([]string, error) {
	w, err := kv.Watch(ctx, filter, jetstream.IgnoreDeletes(), jetstream.MetaOnly())
	if err != nil {
		return nil, err
	}
	defer func() {
		_ = w.Stop()
		go func() { // unblock an update in flight until the channel closes
			for range w.Updates() {
			}
		}()
	}()
	var keys []string
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("%s: watcher stopped", kv.Bucket())
			}
			if e == nil {
				slices.Sort(keys)
				return slices.Compact(keys), nil
			}
			keys = append(keys, e.Key())
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// checkJobData checks JobSpec.Data.
func checkJobData(id string, data []string) error {
	if len(data) > maxJobData {
		return fmt.Errorf("cluster: job %s: %d data digests, at most %d", id, len(data), maxJobData)
	}
	for _, d := range data {
		if d != "" && !ValidDigest(d) {
			return fmt.Errorf("cluster: job %s: data digest %q is not a SHA-256 hex digest", id, d)
		}
	}
	return nil
}

// jobData returns the digests of lists, sorted, once each, without empty
// strings, and at most maxJobData: the last lists first.
func jobData(lists ...[]string) []string {
	var out []string
	for i := len(lists) - 1; i >= 0; i-- {
		next := slices.Concat(out, lists[i])
		next = slices.DeleteFunc(next, func(d string) bool { return d == "" })
		slices.Sort(next)
		next = slices.Compact(next)
		if len(next) > maxJobData {
			break
		}
		out = next
	}
	return out
}
