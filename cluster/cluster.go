package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Names of the JetStream assets (and the subjects a NATS account running
// cpm must be allowed to use).
const (
	StreamName   = "CPM_TASKS"   // the work queue of task messages
	ConsumerName = "cpm-workers" // its durable pull consumer
	TaskSubjects = "cpm.task.>"  // a job's tasks go to cpm.task.<job>
	DataBucket   = "cpm-data"    // object store: input files named by SHA-256
	ResultBucket = "cpm-results" // object store: results, <job>/<index>/<sha256>
	JobBucket    = "cpm-jobs"    // KV: job and task records
	WorkerBucket = "cpm-workers" // KV: worker heartbeats

	// MaxDeliveriesAdvisory is the subject on which the server announces
	// a task message that reached MaxDeliver deliveries.
	MaxDeliveriesAdvisory = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + StreamName + "." + ConsumerName
)

const (
	taskSubjectPrefix = "cpm.task."
	// taskHeaderBytes is the room left for headers (Nats-Msg-Id) above
	// MaxTaskBytes in the stream's MaxMsgSize.
	taskHeaderBytes = 1 << 10
	dedupWindow     = 2 * time.Minute

	defaultAckWait    = 30 * time.Second
	defaultMaxDeliver = 5
	maxReplicas       = 5

	// opTimeout bounds one request to the server that has no caller
	// context (Finish, a worker storing a result while it shuts down).
	opTimeout = 30 * time.Second
)

// heartbeatEvery is how often a worker writes its record in cpm-workers;
// records expire after workerTTL. Variables so that tests can shorten
// them.
var (
	heartbeatEvery = 2 * time.Second
	workerTTL      = 3 * heartbeatEvery
)

// Options configures Open. The zero value works.
type Options struct {
	// Replicas of every stream and bucket: 1 for one server, 3 on a
	// 3-node cluster. 0 keeps the replicas of assets that exist and
	// creates missing ones with 1.
	Replicas int
	// AckWait is a task's acknowledgement deadline; a worker sends an
	// InProgress heartbeat every AckWait/3 while the task runs, and a task
	// whose worker died is redelivered AckWait after its last heartbeat.
	// 0 keeps the consumer's setting, or 30s when the consumer is created;
	// at least 100ms.
	AckWait time.Duration
	// MaxDeliver is how many times one task is delivered before its job
	// fails with "task N delivered M times without a result". 0 keeps the
	// consumer's setting, or 5 when the consumer is created.
	MaxDeliver int
}

func (o *Options) check() error {
	switch {
	case o.Replicas < 0 || o.Replicas > maxReplicas:
		return fmt.Errorf("cluster: replicas %d out of [0, %d]", o.Replicas, maxReplicas)
	case o.AckWait < 0 || (o.AckWait > 0 && o.AckWait < 100*time.Millisecond):
		return fmt.Errorf("cluster: ack wait %v, at least 100ms", o.AckWait)
	case o.MaxDeliver < 0:
		return fmt.Errorf("cluster: max deliver %d is negative", o.MaxDeliver)
	}
	return nil
}

// Cluster is a connection to the cpm assets of one JetStream domain: the
// task stream and its consumer, the object stores and the buckets. It is
// safe for concurrent use. The caller owns the NATS connection.
type Cluster struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  jetstream.Stream
	cons    jetstream.Consumer
	data    jetstream.ObjectStore
	results jetstream.ObjectStore
	jobs    jetstream.KeyValue
	workers jetstream.KeyValue

	mu       sync.Mutex
	advisory *nats.Subscription // MaxDeliveriesAdvisory, once Submit or Work ran
	open     map[*Job]struct{}  // jobs submitted through this Cluster and not finished
	closed   bool
}

// Open creates the cpm assets that are missing and binds to those that
// exist: stream CPM_TASKS (subjects cpm.task.<job>, work-queue retention,
// MaxMsgSize MaxTaskBytes plus room for headers, a 2-minute duplicate
// window), its durable pull consumer cpm-workers (explicit ack, AckWait,
// MaxDeliver, filter cpm.task.>), object stores cpm-data and cpm-results,
// and KV buckets cpm-jobs and cpm-workers (entries expire 3 heartbeats
// after a worker's last one). Settings left zero in o keep what the
// existing assets have.
func Open(ctx context.Context, nc *nats.Conn, o Options) (*Cluster, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c := &Cluster{nc: nc, js: js, open: make(map[*Job]struct{})}
	// Every step is retried: a cluster that has just formed, or whose
	// assets another process is creating or changing at the same moment,
	// answers with timeouts while it elects their leaders, and a creation
	// that lost the race to another process's (of another configuration:
	// direct gets already off) with "stream name already in use" or
	// "bucket exists", and a stream another process has just created may
	// not be known yet to the node asked ("stream not found"); the next
	// attempt binds to what exists.
	inUse := []error{jetstream.ErrStreamNameAlreadyInUse, jetstream.ErrBucketExists, jetstream.ErrStreamNotFound}
	if c.stream, err = retry(ctx, func(ctx context.Context) (jetstream.Stream, error) { return ensureStream(ctx, js, o) }, inUse...); err != nil {
		return nil, fmt.Errorf("cluster: stream %s: %w", StreamName, err)
	}
	if c.cons, err = retry(ctx, func(ctx context.Context) (jetstream.Consumer, error) { return ensureConsumer(ctx, c.stream, o) }); err != nil {
		return nil, fmt.Errorf("cluster: consumer %s: %w", ConsumerName, err)
	}
	for _, b := range []struct {
		obs *jetstream.ObjectStore
		cfg jetstream.ObjectStoreConfig
	}{
		{&c.data, jetstream.ObjectStoreConfig{Bucket: DataBucket, Description: "cpm input data by SHA-256"}},
		{&c.results, jetstream.ObjectStoreConfig{Bucket: ResultBucket, Description: "cpm task results"}},
	} {
		*b.obs, err = retry(ctx, func(ctx context.Context) (jetstream.ObjectStore, error) {
			obs, err := ensureObjectStore(ctx, js, b.cfg, o.Replicas)
			if err != nil {
				return nil, err
			}
			return readAfterWrite(ctx, js, "OBJ_"+b.cfg.Bucket, obs, func() (jetstream.ObjectStore, error) { return js.ObjectStore(ctx, b.cfg.Bucket) })
		}, inUse...)
		if err != nil {
			return nil, fmt.Errorf("cluster: object store %s: %w", b.cfg.Bucket, err)
		}
	}
	for _, b := range []struct {
		kv  *jetstream.KeyValue
		cfg jetstream.KeyValueConfig
	}{
		{&c.jobs, jetstream.KeyValueConfig{Bucket: JobBucket, Description: "cpm job and task records", MaxValueSize: maxRecordBytes}},
		{&c.workers, jetstream.KeyValueConfig{Bucket: WorkerBucket, Description: "cpm worker heartbeats", MaxValueSize: maxRecordBytes, TTL: workerTTL}},
	} {
		*b.kv, err = retry(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
			kv, err := ensureKeyValue(ctx, js, b.cfg, o.Replicas)
			if err != nil {
				return nil, err
			}
			return readAfterWrite(ctx, js, "KV_"+b.cfg.Bucket, kv, func() (jetstream.KeyValue, error) { return js.KeyValue(ctx, b.cfg.Bucket) })
		}, inUse...)
		if err != nil {
			return nil, fmt.Errorf("cluster: bucket %s: %w", b.cfg.Bucket, err)
		}
	}
	return c, nil
}

// Close stops the advisory subscription and the watchers of the jobs
// submitted through c; their pending Do calls return ErrJobClosed. It
// does not close the NATS connection.
func (c *Cluster) Close() {
	c.mu.Lock()
	c.closed = true
	sub := c.advisory
	c.advisory = nil
	jobs := make([]*Job, 0, len(c.open))
	for j := range c.open {
		jobs = append(jobs, j)
	}
	c.mu.Unlock()
	if sub != nil {
		_ = sub.Unsubscribe()
	}
	for _, j := range jobs {
		j.stopWatch()
	}
}

func taskSubject(job string) string { return taskSubjectPrefix + job }

func ensureStream(ctx context.Context, js jetstream.JetStream, o Options) (jetstream.Stream, error) {
	want := jetstream.StreamConfig{
		Name:        StreamName,
		Description: "cpm tasks",
		Subjects:    []string{TaskSubjects},
		Retention:   jetstream.WorkQueuePolicy,
		MaxMsgSize:  MaxTaskBytes + taskHeaderBytes,
		Duplicates:  dedupWindow,
		Storage:     jetstream.FileStorage,
		Replicas:    max(o.Replicas, 1),
	}
	s, err := js.Stream(ctx, StreamName)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return js.CreateOrUpdateStream(ctx, want)
	}
	if err != nil {
		return nil, err
	}
	cfg := s.CachedInfo().Config
	if cfg.Retention != jetstream.WorkQueuePolicy {
		return nil, fmt.Errorf("exists with retention %v, not work-queue", cfg.Retention)
	}
	changed := !slices.Equal(cfg.Subjects, want.Subjects) || cfg.MaxMsgSize != want.MaxMsgSize || cfg.Duplicates != want.Duplicates
	cfg.Subjects, cfg.MaxMsgSize, cfg.Duplicates = want.Subjects, want.MaxMsgSize, want.Duplicates
	if o.Replicas != 0 && cfg.Replicas != o.Replicas {
		cfg.Replicas, changed = o.Replicas, true
	}
	if !changed {
		return s, nil
	}
	return js.UpdateStream(ctx, cfg)
}

func ensureConsumer(ctx context.Context, s jetstream.Stream, o Options) (jetstream.Consumer, error) {
	want := jetstream.ConsumerConfig{
		Durable:       ConsumerName,
		Description:   "cpm workers",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       defaultAckWait,
		MaxDeliver:    defaultMaxDeliver,
		FilterSubject: TaskSubjects,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	if o.AckWait != 0 {
		want.AckWait = o.AckWait
	}
	if o.MaxDeliver != 0 {
		want.MaxDeliver = o.MaxDeliver
	}
	cons, err := s.Consumer(ctx, ConsumerName)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return s.CreateOrUpdateConsumer(ctx, want)
	}
	if err != nil {
		return nil, err
	}
	cfg := cons.CachedInfo().Config
	if cfg.AckPolicy != jetstream.AckExplicitPolicy {
		return nil, fmt.Errorf("exists with ack policy %v, not explicit", cfg.AckPolicy)
	}
	changed := cfg.FilterSubject != want.FilterSubject || len(cfg.FilterSubjects) > 0
	cfg.FilterSubject, cfg.FilterSubjects = want.FilterSubject, nil
	if o.AckWait != 0 && cfg.AckWait != o.AckWait {
		cfg.AckWait, changed = o.AckWait, true
	}
	if o.MaxDeliver != 0 && cfg.MaxDeliver != o.MaxDeliver {
		cfg.MaxDeliver, changed = o.MaxDeliver, true
	}
	if cfg.MaxDeliver <= 0 { // unlimited would never fail a crash loop
		cfg.MaxDeliver, changed = defaultMaxDeliver, true
	}
	if !changed {
		return cons, nil
	}
	return s.CreateOrUpdateConsumer(ctx, cfg)
}

// readAfterWrite turns off direct gets on the stream behind a bucket and
// returns the bucket bound anew (bind), so that its reads go to the
// stream's leader. Buckets are created with direct gets, which any replica
// of a replicated stream answers, also one that has not yet applied the
// latest write: a coordinator that sees a task's result record could then
// be told its result object does not exist, and a worker that a job's
// data does not. cpm's reads are few and small, so consistency wins.
func readAfterWrite[B any](ctx context.Context, js jetstream.JetStream, stream string, b B, bind func() (B, error)) (B, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return b, err
	}
	cfg := s.CachedInfo().Config
	if cfg.AllowDirect {
		cfg.AllowDirect = false
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			return b, err
		}
	}
	// Bound anew after the check even when direct gets were off already:
	// b may have been bound while another process had just created the
	// bucket with them on, and a handle that asks for direct gets from a
	// stream without them gets no responders.
	return bind()
}

// ensureObjectStore binds the object store of cfg, or creates it when
// missing. A store is only ever created, never created-or-updated: an
// update would turn direct gets back on under the other processes'
// handles (readAfterWrite). Replicas, when set and different, change on the
// underlying stream.
func ensureObjectStore(ctx context.Context, js jetstream.JetStream, cfg jetstream.ObjectStoreConfig, replicas int) (jetstream.ObjectStore, error) {
	cfg.Storage = jetstream.FileStorage
	cfg.Replicas = max(replicas, 1)
	obs, err := js.ObjectStore(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return js.CreateObjectStore(ctx, cfg)
	}
	if err != nil {
		return nil, err
	}
	return obs, updateBucket(ctx, js, "OBJ_"+cfg.Bucket, func(c *jetstream.StreamConfig) {
		if replicas != 0 {
			c.Replicas = replicas
		}
	})
}

// ensureKeyValue is ensureObjectStore for a KV bucket; its TTL and value
// size limit are set on the underlying stream when they differ.
func ensureKeyValue(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig, replicas int) (jetstream.KeyValue, error) {
	cfg.Storage = jetstream.FileStorage
	cfg.Replicas = max(replicas, 1)
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return js.CreateKeyValue(ctx, cfg)
	}
	if err != nil {
		return nil, err
	}
	return kv, updateBucket(ctx, js, "KV_"+cfg.Bucket, func(c *jetstream.StreamConfig) {
		if replicas != 0 {
			c.Replicas = replicas
		}
		c.MaxAge, c.MaxMsgSize = cfg.TTL, cfg.MaxValueSize
		if c.MaxMsgSize == 0 {
			c.MaxMsgSize = -1
		}
	})
}

// updateBucket applies set to the configuration of the stream behind a
// bucket and updates the stream if that changed anything.
func updateBucket(ctx context.Context, js jetstream.JetStream, stream string, set func(*jetstream.StreamConfig)) error {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return err
	}
	have := s.CachedInfo().Config
	want := have
	set(&want)
	if want.Replicas == have.Replicas && want.MaxAge == have.MaxAge && want.MaxMsgSize == have.MaxMsgSize {
		return nil
	}
	_, err = js.UpdateStream(ctx, want)
	return err
}
