package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// maxDeliveries is the part of the server's max-deliveries advisory this
// package reads.
type maxDeliveries struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// watchMaxDeliveries subscribes c to MaxDeliveriesAdvisory once. Every
// coordinator and worker subscribes, so that the failure is recorded even
// when the task's coordinator is not running; the failure record's Create
// makes the first one win.
func (c *Cluster) watchMaxDeliveries() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.advisory != nil || c.closed {
		return nil
	}
	sub, err := c.nc.Subscribe(MaxDeliveriesAdvisory, c.onMaxDeliveries)
	if err != nil {
		return fmt.Errorf("cluster: subscribe %s: %w", MaxDeliveriesAdvisory, err)
	}
	c.advisory = sub
	return nil
}

// onMaxDeliveries records the failure of the task whose message reached
// MaxDeliver and deletes the message: the server keeps it in the work
// queue but never delivers it again.
func (c *Cluster) onMaxDeliveries(m *nats.Msg) {
	var a maxDeliveries
	if len(m.Data) > 4<<10 || json.Unmarshal(m.Data, &a) != nil || a.Stream != StreamName || a.Consumer != ConsumerName || a.StreamSeq == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	job, index, ok := c.taskAt(ctx, a.StreamSeq)
	if ok {
		c.recordMaxDeliveries(ctx, job, index, a.Deliveries)
	}
	_ = c.stream.DeleteMsg(ctx, a.StreamSeq)
}

// taskAt maps a stream sequence to its task: from the message when the
// stream still holds it, else from the publish sequences of the jobs
// submitted through c.
func (c *Cluster) taskAt(ctx context.Context, seq uint64) (job string, index int, ok bool) {
	if raw, err := c.stream.GetMsg(ctx, seq); err == nil && strings.HasPrefix(raw.Subject, taskSubjectPrefix) {
		if t, err := DecodeTask(raw.Data); err == nil && raw.Subject == taskSubject(t.Job) {
			return t.Job, t.Index, true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j := range c.open {
		if i, ok := j.indexOfSeq(seq); ok {
			return j.spec.ID, i, true
		}
	}
	return "", 0, false
}

// recordMaxDeliveries creates the failure record of a task that has no
// result, quoting the last transient error a worker recorded for it.
func (c *Cluster) recordMaxDeliveries(ctx context.Context, job string, index int, deliveries uint64) {
	var res resultRecord
	if found, err := getRecord(ctx, c.jobs, taskKey(job, keyResult, index), &res); found || err != nil {
		return
	}
	msg := fmt.Sprintf("delivered %d times without a result", deliveries)
	var last failRecord
	if found, _ := getRecord(ctx, c.jobs, taskKey(job, keyLast, index), &last); found {
		msg += fmt.Sprintf(" (last error on worker %s: %s)", last.Worker, last.Msg)
	}
	_, _ = createRecord(ctx, c.jobs, taskKey(job, keyFail, index), &failRecord{
		Msg: clip(msg, maxText), Deliveries: deliveries, At: time.Now().UTC(),
	})
}
