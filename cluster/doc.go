// Package cluster runs the tasks of cpm jobs on workers over NATS
// JetStream. It has no scheduler or transport of its own: tasks are
// messages in a work-queue stream read through one durable pull consumer
// with explicit acknowledgement, data and results are objects in object
// stores, and job state is in key-value buckets.
//
// # Assets
//
//	stream CPM_TASKS     subjects cpm.task.<job>; work-queue retention (a
//	                     message leaves when acknowledged or terminated);
//	                     messages of at most MaxTaskBytes plus headers;
//	                     a 2-minute duplicate window on Nats-Msg-Id
//	consumer cpm-workers durable, pull, explicit ack, AckWait, MaxDeliver,
//	                     filter cpm.task.>
//	object store cpm-data     input files, named by the SHA-256 of their bytes
//	object store cpm-results  results, named <job>/<index>/<sha256>
//	KV cpm-jobs          <job>: the job record (kind, count, digest of the
//	                     definition, state, error, submission count,
//	                     digests of the data objects it reads);
//	                     <job>.p.<i>: stream sequence of task i's message;
//	                     <job>.r.<i>: result record (object, SHA-256, size,
//	                     worker); <job>.f.<i>: failure record (worker, error);
//	                     <job>.e.<i>: the last transient error of task i
//	KV cpm-workers       <worker>: heartbeat (tasks running, rows done,
//	                     rows/s, tasks done), every 2s, expiring after 6s
//
// A NATS account running cpm needs these and the advisory subject
// MaxDeliveriesAdvisory.
//
// # Replicated clusters
//
// On a cluster, every asset has the replicas of Options.Replicas (3 for
// three nodes). Reads of the buckets go to each stream's leader: Open
// turns off the direct gets that object stores and KV buckets are created
// with, which any replica answers, also one that has not applied the
// latest write (a result object whose record another client had just
// read was then "not found"). Buckets are only ever created, never
// created-or-updated, since an update turns direct gets back on under
// other processes' handles; their settings change on the underlying
// stream. Requests that time out or find no responder, as they do while a
// stream elects a new leader after a node is lost or its replicas change,
// are retried (Open, publishing a task: deduplicated by its message id,
// storing data); a worker's failing store of a result requeues the task.
//
// # Message flow
//
// The coordinator (cpm train, cv or tune with a cluster) stores its input
// files with PutData, which uploads a file only if no object of its digest
// exists. Submit creates the job record and starts one KV watcher on the
// job's result and failure records. Do publishes a task (a Task message,
// self-describing: learner, flags, seed, part, data digests) to
// cpm.task.<job> and waits for the watcher to see the task's record; it
// returns the result object's bytes after checking their SHA-256 against
// the record. Finish marks the job done or failed and deletes its queued
// tasks.
//
// A worker (Work) pulls one message per free slot, decodes and validates
// it, checks that its job is running and that the task has no record yet,
// and calls its Executor with a data function that fetches objects of
// cpm-data into a local cache (files named by verified digests inside the
// cache directory), or, in data-root mode, checks a file of the worker's
// data root (below). While the task runs the worker sends InProgress
// every AckWait/3. A result is
// uploaded, its record created with KV Create, and the message
// acknowledged.
//
// # Deleting jobs and data
//
// Nothing expires by itself. DeleteJob (cpm cluster gc) deletes a job's
// queued tasks, its result objects (every name <job>/…, also those no
// record names), its task records and, last, its job record, so a
// deletion stopped midway is finished by the next; a job marked running
// is refused unless forced and its record is older than a grace period
// (it is then marked failed first, which stops its tasks on the workers).
// DeleteUnusedData deletes the data objects older than a bound that no
// job record names (JobSpec.Data); younger ones stay, since a coordinator
// uploads data before it creates the record naming them.
//
// # Data-root mode
//
// Workers that share a file system with the coordinator can read the
// training rows in place instead of fetching them: a task's Path names a
// file relative to the worker's data root (WorkerOptions.DataRoot, cpm
// worker --data-root), and its Data is the SHA-256 of that file's bytes.
// The coordinator does not upload the file. The validation rows, if any,
// still travel through cpm-data.
//
// The security rule: a worker reads no path it was not given on its own
// command line. A message cannot name /etc/shadow: Validate refuses a
// Path that is absolute, has a "..", "." or empty element, a backslash or
// a control character, or is longer than MaxPathBytes; the worker joins
// the Path to its root (symbolic links resolved once, at start),
// resolves the symbolic links of the result and refuses it unless it is
// still inside the root (a link inside the root that points outside is
// refused), opens it through an os.Root of the root, refuses anything but
// a regular file, and hashes the bytes (a file larger than MaxData is
// left to other workers, as a data object is). A worker without a data
// root fails such a task. A digest other than the task's fails the task ("file
// changed"), as does a file that changes while the task runs; a digest
// verified for a version of a file (path, size, modification time,
// identity) is remembered, so the tasks after the first do not hash it
// again. The rule bounds what is read, not who may write the data root:
// the executor reads the file by path after the check, so whoever can
// swap the root's contents during that window is trusted.
//
// # Faults and their outcomes
//
//   - Worker killed, or cut off from NATS, mid-task: its heartbeats stop
//     and the server redelivers the task AckWait later to another worker.
//   - Worker stopped (SIGINT/SIGTERM): its running tasks see their context
//     cancelled and are requeued (Nak) for immediate redelivery.
//   - Execute fails (a deterministic error): the worker records the error
//     and terminates the message; Do returns a *TaskError and the job fails
//     after one attempt.
//   - Transient error (data store unreachable, data too large for this
//     worker, NATS errors while storing a result): the task is requeued
//     after a delay and the error kept as the task's last error.
//   - Crash loop (a task that kills or stalls every worker, or keeps
//     failing transiently): after MaxDeliver deliveries the server
//     publishes an advisory; every coordinator and worker listens, maps the
//     advisory's stream sequence to the task (the queued message, or the
//     coordinator's publish sequences), records "delivered N times without
//     a result" with the last error, and deletes the message. Do returns a
//     *TaskError.
//   - A task with a Path on a worker without a data root, or whose file
//     is missing, leaves the root, or has another digest: the task fails
//     (a deterministic error).
//   - Invalid message (does not decode or validate, wrong schema version):
//     the worker logs and terminates it; if it names a task of a running
//     job, that task is recorded as failed.
//   - Job finished or failed (Finish) while tasks run: its queued tasks
//     are deleted, and workers cancel its running tasks within a
//     heartbeat (2s) and acknowledge them.
//   - Coordinator killed: workers go on. Submitting the same job again
//     (same ID and definition digest) reattaches: tasks with results are
//     not run again, failed tasks are retried, messages still queued are
//     kept when never delivered or running on a live worker.
//   - Duplicates (a message redelivered after its result was recorded,
//     two workers racing on one task, a task published twice): the first
//     result record created wins; later results are dropped, and a worker
//     acknowledges without running a task that has a result. Result
//     objects are named by their digest, so identical uploads collide
//     harmlessly.
//   - A job with the same ID and another definition: Submit returns
//     ErrJobConflict.
package cluster
