package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"
)

// Keys of the cpm-jobs bucket. A job ID has no '.', so the first token of
// a key is always the job:
//
//	<job>            jobRecord
//	<job>.p.<index>  pubRecord: the stream sequence of the task's message
//	<job>.r.<index>  resultRecord, created once: the first result wins
//	<job>.f.<index>  failRecord, created once: the task failed
//	<job>.e.<index>  failRecord of the last transient error (overwritten);
//	                 quoted when the task exceeds MaxDeliver
const (
	keyPub    = "p"
	keyResult = "r"
	keyFail   = "f"
	keyLast   = "e"
)

// maxRecordBytes bounds every KV value this package writes and reads (the
// buckets enforce it on writes; reads check it before decoding).
const maxRecordBytes = 64 << 10

// maxText bounds an error text stored in a record.
const maxText = 4 << 10

func taskKey(job, kind string, index int) string {
	return job + "." + kind + "." + strconv.Itoa(index)
}

// parseTaskKey splits "<job>.<kind>.<index>"; ok is false for any other key.
func parseTaskKey(key string) (job, kind string, index int, ok bool) {
	parts := strings.Split(key, ".")
	if len(parts) != 3 || !ValidJobID(parts[0]) {
		return "", "", 0, false
	}
	i, err := strconv.Atoi(parts[2])
	if err != nil || i < 0 || i >= MaxParts || strconv.Itoa(i) != parts[2] {
		return "", "", 0, false
	}
	return parts[0], parts[1], i, true
}

// JobState is the state of a job record.
type JobState string

// Job states.
const (
	JobRunning JobState = "running"
	JobDone    JobState = "done"
	JobFailed  JobState = "failed"
)

func (s JobState) String() string { return string(s) }

// jobRecord is the value of key <job>.
type jobRecord struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Describe string    `json:"describe,omitempty"`
	Count    int       `json:"count"`
	Digest   string    `json:"digest"`
	State    JobState  `json:"state"`
	Error    string    `json:"error,omitempty"`
	Gen      int       `json:"gen"` // submissions so far, 1 for a new job
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	// Data lists the digests of the cpm-data objects the job reads
	// (DeleteUnusedData keeps them); a record without it names none.
	Data []string `json:"data,omitempty"`
}

func (r *jobRecord) check() error {
	switch {
	case !ValidJobID(r.ID):
		return fmt.Errorf("job id %q", r.ID)
	case r.Count < 1 || r.Count > MaxParts:
		return fmt.Errorf("job %s: count %d", r.ID, r.Count)
	case !ValidDigest(r.Digest):
		return fmt.Errorf("job %s: digest %q", r.ID, r.Digest)
	case r.State != JobRunning && r.State != JobDone && r.State != JobFailed:
		return fmt.Errorf("job %s: state %q", r.ID, r.State)
	case len(r.Data) > maxJobData:
		return fmt.Errorf("job %s: %d data digests", r.ID, len(r.Data))
	}
	return nil
}

// pubRecord is the value of key <job>.p.<index>.
type pubRecord struct {
	Seq uint64 `json:"seq"`
	Gen int    `json:"gen"`
}

func (r *pubRecord) check() error { return nil }

// resultRecord is the value of key <job>.r.<index>: where the result is and
// its SHA-256.
type resultRecord struct {
	Object  string    `json:"object"` // name in cpm-results: <job>/<index>/<sha256>
	SHA256  string    `json:"sha256"`
	Size    int64     `json:"size"`
	Worker  string    `json:"worker"`
	Seconds float64   `json:"seconds"`
	Rows    int64     `json:"rows,omitempty"`
	At      time.Time `json:"at"`
}

func (r *resultRecord) check() error {
	if !ValidDigest(r.SHA256) || r.Size < 0 || r.Size > maxFetchResult {
		return fmt.Errorf("result record: digest %q, size %d", r.SHA256, r.Size)
	}
	return nil
}

// resultObject names a result in cpm-results. Identical bytes of one task
// get one name, so duplicate uploads collide harmlessly.
func resultObject(job string, index int, sha string) string {
	return job + "/" + strconv.Itoa(index) + "/" + sha
}

// failRecord is the value of keys <job>.f.<index> and <job>.e.<index>.
type failRecord struct {
	Worker     string    `json:"worker,omitempty"`
	Msg        string    `json:"msg"`
	Deliveries uint64    `json:"deliveries,omitempty"`
	At         time.Time `json:"at"`
}

func (r *failRecord) check() error { return nil }

type record interface{ check() error }

// encodeRecord marshals a record, refusing one over maxRecordBytes.
func encodeRecord(v record) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) > maxRecordBytes {
		return nil, fmt.Errorf("record of %d bytes, at most %d", len(b), maxRecordBytes)
	}
	return b, nil
}

// decodeRecord unmarshals and checks a record read from a bucket.
func decodeRecord(b []byte, v record) error {
	if len(b) > maxRecordBytes {
		return fmt.Errorf("record of %d bytes, at most %d", len(b), maxRecordBytes)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return v.check()
}

// getRecord reads and decodes key; found is false when the key does not
// exist.
func getRecord(ctx context.Context, kv jetstream.KeyValue, key string, v record) (found bool, err error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get %s: %w", key, err)
	}
	if err := decodeRecord(e.Value(), v); err != nil {
		return false, fmt.Errorf("%s: %w", key, err)
	}
	return true, nil
}

// createRecord creates key with value v; created is false if the key
// already existed (the other record is kept).
func createRecord(ctx context.Context, kv jetstream.KeyValue, key string, v record) (created bool, err error) {
	b, err := encodeRecord(v)
	if err != nil {
		return false, err
	}
	_, err = kv.Create(ctx, key, b)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create %s: %w", key, err)
	}
	return true, nil
}

func putRecord(ctx context.Context, kv jetstream.KeyValue, key string, v record) error {
	b, err := encodeRecord(v)
	if err != nil {
		return err
	}
	if _, err := kv.Put(ctx, key, b); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// clip shortens s to at most n bytes on a rune boundary and makes it one
// line.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
