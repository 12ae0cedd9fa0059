package cluster

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// jobKeys returns the keys of cpm-jobs of job id, its record included.
func jobKeys(t *testing.T, c *Cluster, id string) []string {
	t.Helper()
	keys, err := listKeys(testCtx(t), c.jobs, id+".>")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.jobs.Get(testCtx(t), id); err == nil {
		keys = append(keys, id)
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatal(err)
	}
	return keys
}

// resultNames returns the names of the result objects of job id.
func resultNames(t *testing.T, c *Cluster, id string) []string {
	t.Helper()
	objs, err := c.results.List(testCtx(t))
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		if strings.HasPrefix(o.Name, id+"/") {
			names = append(names, o.Name)
		}
	}
	slices.Sort(names)
	return names
}

// queued returns the task messages of job id in the stream.
func queued(t *testing.T, c *Cluster, id string) uint64 {
	t.Helper()
	info, err := c.stream.Info(testCtx(t), jetstream.WithSubjectFilter(taskSubject(id)))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[taskSubject(id)]
}

// runJob submits job id of n tasks, runs them all and finishes it.
func runJob(t *testing.T, c *Cluster, id string, n int, data string) {
	t.Helper()
	j := submit(t, c, id, n)
	_, errs := doAll(testCtx(t), j, data, 0, n)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("job %s task %d: %v", id, i, err)
		}
	}
	j.Finish(nil)
}

// DeleteJob removes a finished job's records, results (also one no record
// names) and queue, and nothing of the job whose ID it prefixes; a second
// DeleteJob is a no-op. A running job is refused without Force, and with
// Force while its record is younger than Grace; a dry run deletes nothing.
func TestDeleteJob(t *testing.T) {
	_, c := setup(t, Options{})
	data, _ := putData(t, c, "1 1:0.5\n-1 2:1.5\n")
	stop := startWorker(t, c, &fakeExec{}, WorkerOptions{Name: "w1", Concurrency: 2})
	runJob(t, c, "gc", 3, data)
	runJob(t, c, "gc-2", 2, data)
	noneLeft(t, c)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	orphan := resultObject("gc", 1, digestOf("a losing duplicate"))
	if _, err := c.results.PutBytes(ctx, orphan, []byte("a losing duplicate")); err != nil {
		t.Fatal(err)
	}
	// A running job with queued tasks and no worker.
	q := submit(t, c, "gcq", 2)
	for i := range 2 {
		if err := q.publish(ctx, testTask("gcq", i, 2, data)); err != nil {
			t.Fatal(err)
		}
	}
	otherKeys, otherResults := jobKeys(t, c, "gc-2"), resultNames(t, c, "gc-2")
	if len(otherKeys) != 5 || len(otherResults) != 2 || queued(t, c, "gcq") != 2 {
		t.Fatalf("before: gc-2 keys %v, results %v; gcq %d queued", otherKeys, otherResults, queued(t, c, "gcq"))
	}

	dry, err := c.DeleteJob(ctx, "gc", DeleteOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobKeys(t, c, "gc")) != 7 || len(resultNames(t, c, "gc")) != 4 {
		t.Fatalf("dry run deleted: keys %v, results %v", jobKeys(t, c, "gc"), resultNames(t, c, "gc"))
	}
	st, err := c.DeleteJob(ctx, "gc", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 3 results of 32 bytes and the orphan; the record, 3 publish and 3
	// result records.
	want := DeleteStats{Jobs: 1, Objects: 4, Keys: 7, Bytes: 3*32 + int64(len("a losing duplicate"))}
	if st != want || dry != want {
		t.Fatalf("DeleteJob: %+v, dry run %+v; want %+v", st, dry, want)
	}
	if k, r := jobKeys(t, c, "gc"), resultNames(t, c, "gc"); len(k) != 0 || len(r) != 0 {
		t.Fatalf("after DeleteJob: keys %v, results %v", k, r)
	}
	if st, err := c.DeleteJob(ctx, "gc", DeleteOptions{}); err != nil || st != (DeleteStats{}) {
		t.Fatalf("second DeleteJob: %+v, %v; want a no-op", st, err)
	}
	if k, r := jobKeys(t, c, "gc-2"), resultNames(t, c, "gc-2"); !slices.Equal(k, otherKeys) || !slices.Equal(r, otherResults) {
		t.Fatalf("gc-2 changed: keys %v -> %v, results %v -> %v", otherKeys, k, otherResults, r)
	}

	for _, o := range []DeleteOptions{{}, {DryRun: true}, {Force: true, Grace: time.Hour}} {
		if _, err := c.DeleteJob(ctx, "gcq", o); !errors.Is(err, ErrJobRunning) {
			t.Fatalf("DeleteJob of a running job, %+v: %v, want ErrJobRunning", o, err)
		}
	}
	if n, k := queued(t, c, "gcq"), jobKeys(t, c, "gcq"); n != 2 || len(k) != 3 {
		t.Fatalf("a refused DeleteJob deleted: %d queued, keys %v", n, k)
	}
	st, err = c.DeleteJob(ctx, "gcq", DeleteOptions{Force: true, Grace: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if want := (DeleteStats{Jobs: 1, Keys: 3, Messages: 2}); st != want {
		t.Fatalf("forced DeleteJob: %+v, want %+v", st, want)
	}
	if n, k := queued(t, c, "gcq"), jobKeys(t, c, "gcq"); n != 0 || len(k) != 0 {
		t.Fatalf("after a forced DeleteJob: %d queued, keys %v", n, k)
	}
	q.Finish(nil) // its coordinator, still alive, finds no record
	if k := jobKeys(t, c, "gcq"); len(k) != 0 {
		t.Fatalf("Finish after DeleteJob wrote %v", k)
	}
	st2, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st2.Jobs) != 1 || st2.Jobs[0].ID != "gc-2" || st2.Jobs[0].Done != 2 {
		t.Fatalf("status after the deletions: %+v", st2.Jobs)
	}
	if _, err := c.DeleteJob(ctx, "a.b", DeleteOptions{}); err == nil {
		t.Fatal("DeleteJob of an invalid ID succeeded")
	}
}

// A DeleteJob stopped midway left the record (deleted last): a second one
// finishes; records and results of a job without a record go too.
func TestDeleteJobFinishesLeftovers(t *testing.T) {
	_, c := setup(t, Options{})
	data, _ := putData(t, c, "1 1:1\n")
	startWorker(t, c, &fakeExec{}, WorkerOptions{Name: "w1", Concurrency: 2})
	runJob(t, c, "half", 2, data)
	ctx := testCtx(t)
	for _, name := range resultNames(t, c, "half") { // stopped after the results
		if err := c.results.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.DeleteJob(ctx, "half", DeleteOptions{})
	if want := (DeleteStats{Jobs: 1, Keys: 5}); err != nil || st != want {
		t.Fatalf("DeleteJob: %+v, %v; want %+v", st, err, want)
	}
	if k := jobKeys(t, c, "half"); len(k) != 0 {
		t.Fatalf("keys left: %v", k)
	}

	if err := putRecord(ctx, c.jobs, taskKey("gone", keyFail, 0), &failRecord{Msg: "late"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.results.PutBytes(ctx, resultObject("gone", 0, digestOf("x")), []byte("x")); err != nil {
		t.Fatal(err)
	}
	st, err = c.DeleteJob(ctx, "gone", DeleteOptions{})
	if want := (DeleteStats{Objects: 1, Keys: 1, Bytes: 1}); err != nil || st != want {
		t.Fatalf("DeleteJob of leftovers: %+v, %v; want %+v", st, err, want)
	}
	if k, r := jobKeys(t, c, "gone"), resultNames(t, c, "gone"); len(k) != 0 || len(r) != 0 {
		t.Fatalf("leftovers left: %v, %v", k, r)
	}
}

// DeleteUnusedData deletes old data no job record names; data a job names
// and data younger than the bound stay.
func TestDeleteUnusedData(t *testing.T) {
	_, c := setup(t, Options{})
	ctx := testCtx(t)
	used, usedRows := putData(t, c, "1 1:1\n")
	unused, unusedRows := putData(t, c, "-1 2:1\n")
	if _, err := c.Submit(ctx, JobSpec{ID: "bad", Kind: JobTrain, Count: 1, Digest: digestOf("bad"), Data: []string{"xyz"}}); err == nil {
		t.Fatal("Submit took a data digest that is none")
	}
	j, err := c.Submit(ctx, JobSpec{ID: "uses", Kind: JobTrain, Count: 1, Digest: digestOf("uses"), Data: []string{used, ""}})
	if err != nil {
		t.Fatal(err)
	}
	j.Finish(nil)
	submit(t, c, "names-none", 1).Finish(nil)
	time.Sleep(300 * time.Millisecond)
	young, _ := putData(t, c, "1 3:1\n")

	dry, err := c.DeleteUnusedData(ctx, 200*time.Millisecond, DeleteOptions{DryRun: true, Deleted: []string{"uses"}})
	if want := (DeleteStats{Objects: 2, Bytes: int64(len(usedRows) + len(unusedRows))}); err != nil || dry != want {
		t.Fatalf("dry run with job uses deleted: %+v, %v; want %+v", dry, err, want)
	}
	st, err := c.DeleteUnusedData(ctx, 200*time.Millisecond, DeleteOptions{})
	if want := (DeleteStats{Objects: 1, Bytes: int64(len(unusedRows))}); err != nil || st != want {
		t.Fatalf("DeleteUnusedData: %+v, %v; want %+v", st, err, want)
	}
	for d, keep := range map[string]bool{used: true, unused: false, young: true} {
		_, err := c.data.GetInfo(ctx, d)
		if keep && err != nil || !keep && !errors.Is(err, jetstream.ErrObjectNotFound) {
			t.Errorf("data %.12s (kept: %v): %v", d, keep, err)
		}
	}
	if _, err := c.DeleteJob(ctx, "uses", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err = c.DeleteUnusedData(ctx, 0, DeleteOptions{})
	if err != nil || st.Objects != 2 {
		t.Fatalf("DeleteUnusedData(0) once no job names data: %+v, %v; want 2 objects", st, err)
	}
	if st, err := c.DeleteUnusedData(ctx, 0, DeleteOptions{}); err != nil || st != (DeleteStats{}) {
		t.Fatalf("DeleteUnusedData of an empty store: %+v, %v", st, err)
	}
}

// A reattach keeps the data of the record and adds the submission's.
func TestJobDataDigests(t *testing.T) {
	a, b, x := digestOf("a"), digestOf("b"), digestOf("x")
	if got := jobData([]string{b, a, ""}, []string{a, x}); !slices.Equal(got, slices.Sorted(slices.Values([]string{a, b, x}))) {
		t.Fatalf("jobData: %v", got)
	}
	many := make([]string, maxJobData)
	for i := range many {
		many[i] = digestOf(strings.Repeat("m", i+1))
	}
	if got := jobData(many, []string{x}); len(got) != 1 || got[0] != x {
		t.Fatalf("jobData over the bound: %d digests, want the last list's", len(got))
	}
	_, c := setup(t, Options{})
	ctx := testCtx(t)
	spec := JobSpec{ID: "re", Kind: JobTrain, Count: 1, Digest: digestOf("re"), Data: []string{a}}
	j, err := c.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	j.Finish(nil)
	spec.Data = []string{b}
	if j, err = c.Submit(ctx, spec); err != nil {
		t.Fatal(err)
	}
	j.Finish(nil)
	var rec jobRecord
	if _, err := getRecord(ctx, c.jobs, "re", &rec); err != nil || !slices.Equal(rec.Data, jobData([]string{a, b})) {
		t.Fatalf("record after a reattach: data %v, %v", rec.Data, err)
	}
}
