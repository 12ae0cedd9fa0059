package cluster

import (
	"errors"
	"fmt"
	"strconv"
)

var (
	// ErrTaskFailed is wrapped by every *TaskError: a task failed on a
	// worker, or was delivered MaxDeliver times without a result.
	ErrTaskFailed = errors.New("task failed")
	// ErrJobConflict is returned by Submit for a job ID whose record holds
	// another definition (Digest or Count).
	ErrJobConflict = errors.New("job exists with another definition")
	// ErrJobClosed is returned by Do after Finish or Cluster.Close.
	ErrJobClosed = errors.New("job closed")
	// ErrDataUnavailable is wrapped by the errors of a worker's data
	// function that another attempt may not have: the object store could
	// not be read, the object is larger than the worker's MaxData or
	// cache, or its bytes did not match its digest. An Execute error
	// wrapping it sends the task back to the queue (NakWithDelay) instead
	// of failing it.
	ErrDataUnavailable = errors.New("data unavailable")
	// ErrDataNotFound is wrapped by the error of a worker's data function
	// when no object of the digest exists. An Execute error wrapping it
	// fails the task.
	ErrDataNotFound = errors.New("data not found")
)

// TaskError is the outcome of a task that failed: the worker's error text,
// or why the cluster gave up on it. It wraps ErrTaskFailed.
type TaskError struct {
	Index  int    // the task's position in its job
	Name   string // the task's name for people
	Worker string // the worker that failed it, "" when no worker did
	Msg    string
}

func (e *TaskError) Error() string {
	s := "task " + strconv.Itoa(e.Index)
	if e.Name != "" {
		s += fmt.Sprintf(" (%s)", e.Name)
	}
	if e.Worker != "" {
		s += " on worker " + e.Worker
	}
	return s + ": " + e.Msg
}

// Unwrap returns ErrTaskFailed.
func (e *TaskError) Unwrap() error { return ErrTaskFailed }
