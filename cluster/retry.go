package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Retries of an operation that timed out or found no JetStream responder:
// what a client sees while a replicated stream elects a new leader (a
// node lost, a stream's replicas changed), which takes seconds.
const (
	retryAttempts = 8
	retryFirst    = 250 * time.Millisecond
	retryMax      = 4 * time.Second
)

// transient reports whether err is a timeout or a missing responder,
// after which the same request may succeed.
func transient(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrConnectionReconnecting)
}

// retry calls op until it succeeds, fails otherwise than transiently (or
// with one of also), ctx ends, or retryAttempts calls failed, waiting
// 250 ms, 500 ms, ... (at most 4 s) between calls. op must be safe to
// repeat: a task is published with a message id the stream deduplicates,
// an object put again replaces the first copy.
func retry[T any](ctx context.Context, op func(context.Context) (T, error), also ...error) (T, error) {
	wait := retryFirst
	for n := 1; ; n++ {
		v, err := op(ctx)
		again := transient(err)
		for _, a := range also {
			again = again || errors.Is(err, a)
		}
		if err == nil || !again || n == retryAttempts || ctx.Err() != nil {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(wait):
		}
		wait = min(2*wait, retryMax)
	}
}
