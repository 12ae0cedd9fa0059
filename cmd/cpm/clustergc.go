package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/cluster/natsd"
)

const clusterGCUsage = `cpm cluster gc --nats URL [--older-than DURATION] [--job ID ...] [--force] [--dry-run] [connection flags]

Deletes from the cluster the jobs whose record was last updated more than
--older-than ago and that are done or failed (with --force, also those
still marked running: a submitter that died leaves its job so), or
exactly the --job IDs given (a running one only with --force and when
not updated for --older-than): their queued tasks, result objects and
records. Then deletes the data objects not modified for --older-than that
no remaining job names. Prints a line per job and a summary; --dry-run
prints what would go and deletes nothing.`

// runClusterGC implements cpm cluster gc.
func runClusterGC(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cluster gc", stderr, clusterGCUsage)
	url := fs.String("nats", "", "the NATS server(s), `URL` (comma-separated)")
	olderThan := fs.Duration("older-than", 7*24*time.Hour, "delete jobs whose record, and data objects that, were last updated more than `DURATION` ago")
	var jobs []string
	fs.Func("job", "delete the job `ID` (whatever its age, if not running); repeatable", func(s string) error {
		if !cluster.ValidJobID(s) {
			return fmt.Errorf("%q is not a job ID (1 to 64 letters, digits, '-' or '_')", s)
		}
		if !slices.Contains(jobs, s) {
			jobs = append(jobs, s)
		}
		return nil
	})
	force := fs.Bool("force", false, "also delete jobs marked running whose record was not updated for --older-than")
	dryRun := fs.Bool("dry-run", false, "print what would be deleted; delete nothing")
	client := natsd.AddClientFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkClusterArgs(fs, *url); err != nil {
		return err
	}
	if *olderThan < 0 {
		return usagef("--older-than %v: want a duration of at least 0", *olderThan)
	}
	c, closeAll, err := connectCluster(ctx, *url, "cpm-gc", *client, cluster.Options{})
	if err != nil {
		return err
	}
	defer closeAll()
	st, err := c.Status(ctx)
	if err != nil {
		return err
	}
	cutoff := time.Now().Add(-*olderThan)
	records := make(map[string]cluster.JobStatus)
	for _, j := range st.Jobs {
		records[j.ID] = j
		if len(jobs) == 0 && j.Updated.Before(cutoff) && (j.State != cluster.JobRunning || *force) {
			jobs = append(jobs, j.ID)
		}
	}

	verb := "deleted"
	if *dryRun {
		verb = "would delete"
	}
	o := cluster.DeleteOptions{Force: *force, Grace: *olderThan, DryRun: *dryRun}
	var total cluster.DeleteStats
	var refused []string
	for _, id := range jobs {
		s, err := c.DeleteJob(ctx, id, o)
		if errors.Is(err, cluster.ErrJobRunning) {
			fmt.Fprintf(stderr, "cpm cluster gc: %v\n", err)
			refused = append(refused, id)
			continue
		}
		if err != nil {
			return err
		}
		total.Add(s)
		o.Deleted = append(o.Deleted, id)
		what := "no record"
		if j, ok := records[id]; ok {
			what = fmt.Sprintf("%s %s, updated %s", j.Kind, j.State, j.Updated.Local().Format(time.DateTime))
		}
		if s == (cluster.DeleteStats{}) {
			fmt.Fprintf(stdout, "job %s: nothing to delete\n", id)
			continue
		}
		fmt.Fprintf(stdout, "%s job %s (%s): %d result objects, %d keys, %d queued tasks, %s\n",
			verb, id, what, s.Objects, s.Keys, s.Messages, sizeText(s.Bytes))
	}
	data, err := c.DeleteUnusedData(ctx, *olderThan, o)
	if err != nil {
		return err
	}
	results := total.Objects
	total.Add(data)
	fmt.Fprintf(stdout, "%s %d jobs, %d objects (%d results, %d unused data), %d keys, %d queued tasks: %s\n",
		verb, total.Jobs, total.Objects, results, data.Objects, total.Keys, total.Messages, sizeText(total.Bytes))
	if *dryRun {
		fmt.Fprintln(stdout, "dry run: nothing was deleted")
	}
	if len(refused) > 0 {
		return fmt.Errorf("%d job(s) refused as running: %v (--force deletes those not updated for --older-than)", len(refused), refused)
	}
	return nil
}

// sizeText writes a byte count for people.
func sizeText(n int64) string {
	if n < 1e6 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
