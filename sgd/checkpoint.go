package sgd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/internal/budget"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd/internal/checkpoint"
	"github.com/polyhedral/cpm/sparsevec"
)

// Checkpointing configures checkpoints of in-memory CPM training and
// resuming from them. The zero value takes no checkpoints.
//
// Every polytope (task) of a run is deterministic given its own state: its
// row order depends only on the seed and its index (see mix). So a
// checkpoint holds, per task, that task's latest snapshot, taken at a chunk
// boundary of its SGD loop: the raw weight matrix V and lazy scale s (the
// scale is not folded, so the float rounding of the continued run is
// unchanged), the step counter t, the ASSIGN state (counts, UNADJ
// dictionary, entropy accumulators), the loss statistics of the progress
// reports and the row source's position (epoch, position, the permutation
// under Reshuffle, and the PCG state). A task with no snapshot has not
// started; a task whose snapshot has done all Iterations steps is finished.
// A resumed run restarts every task from its snapshot, so the final model
// is byte-identical to the one an uninterrupted run with the same data,
// config and seed writes, however often and wherever it was interrupted.
//
// A task snapshots every Every steps, when Interval has passed since its
// last snapshot (checked at least every 16384 steps), when training is
// cancelled (the snapshot at cancellation is the state at the end of the
// last whole chunk, so nothing is lost), and when it finishes. It copies
// its state into a buffer of its own (no allocation once the buffers have
// grown) and hands it to a single writer goroutine, which merges the latest
// snapshot of every task into the file, atomically (atomicfile.WriteFile).
// The file is written once more when training ends, finished, failed or
// cancelled, so that it then describes this run; after a finished run it
// holds every polytope finished, and resuming from it only rebuilds the
// model. A failure to write it stops training. Memory: each polytope keeps
// up to two copies of its state, the writer one of the whole file.
// Training without checkpoints runs the same loop, with no snapshots.
//
// The file also holds a fingerprint of what must not change between the
// interrupted run and its continuation: K, Iterations, Lambda, Entropy,
// CostRatio, Bias, Seed, DoubleSided, one-vs-one, Reshuffle, the label map,
// the number of tasks, the training data (rows, nonzeros, dimension and a
// CRC-64 of its contents) and the initial model of a warm start (a CRC-64
// of its encoding). Resuming with any of them different fails with an error
// wrapping ErrCheckpointMismatch that names each difference.
//
// With early stopping (Validation.Patience > 0) the fingerprint also holds
// the evaluation interval, the patience and the validation data (rows,
// nonzeros, dimension, CRC-64), and each snapshot the early-stopping state:
// the best validation error and its step, the evaluations since, the last
// error and the polytope of the best evaluation (weights, lazy scale, step
// counter, assignment counts and entropy). A run that stopped early
// resumes as stopped.
//
// The file format (magic, fingerprint, snapshots, CRC-32C) and the checks
// ReadCheckpoint makes are documented in package sgd/internal/checkpoint,
// which encodes and decodes it.
type Checkpointing struct {
	// Path, if set, is the file the checkpoints are written to.
	Path string
	// Every, if > 0, is the number of SGD steps of a polytope between its
	// snapshots.
	Every int64
	// Interval, if > 0, is the wall-clock time between the snapshots of a
	// polytope. With neither Every nor Interval, a polytope is snapshot
	// only when training is cancelled and when it finishes.
	Interval time.Duration
	// Resume, if set, continues the run that wrote it (see
	// LoadCheckpoint); training then needs the same data and config.
	Resume *Checkpoint
}

func (c Checkpointing) active() bool { return c.Path != "" || c.Resume != nil }

// Kinds of checkpoint failure; a *CheckpointError wraps one of them
// except ErrCheckpointMismatch. Test with errors.Is.
var (
	// ErrNotCheckpoint means the input does not start with the magic.
	ErrNotCheckpoint = checkpoint.ErrNotCheckpoint
	// ErrCheckpointVersion means the format version is not one this build
	// reads.
	ErrCheckpointVersion = checkpoint.ErrVersion
	// ErrCheckpointCorrupt means the file is truncated, fails its checksum
	// or is inconsistent.
	ErrCheckpointCorrupt = checkpoint.ErrCorrupt
	// ErrCheckpointMismatch means a checkpoint was made by a run with other
	// data or config than the one resuming it.
	ErrCheckpointMismatch = checkpoint.ErrMismatch
	// ErrCheckpointTooLarge means the file is larger than the size cap of
	// LoadCheckpointLimit.
	ErrCheckpointTooLarge = checkpoint.ErrTooLarge
)

// CheckpointError reports a malformed checkpoint file: which file, where
// (Offset, -1 for a snapshot that does not fit the run resuming it), and
// what (Err wraps ErrNotCheckpoint, ErrCheckpointVersion,
// ErrCheckpointCorrupt or ErrCheckpointTooLarge).
type CheckpointError = checkpoint.Error

// The checkpoint state types are those of the format.
type (
	fingerprint = checkpoint.Fingerprint
	taskState   = checkpoint.Task
	memState    = checkpoint.Source
	stopState   = checkpoint.Stop
	stepStats   = checkpoint.Stats
	keptStats   = checkpoint.Kept
)

// newFingerprint describes a run of cfg (completed by withDefaults) on data
// (before the training shuffle) with the given label map and tasks.
func newFingerprint(cfg Config, data *sparsevec.CSR, classes []float32, ovo bool, tasks int) (*fingerprint, error) {
	fp := &fingerprint{
		Learner: "cpm", K: uint32(cfg.K), Iterations: cfg.Iterations,
		Lambda: cfg.Lambda, Entropy: cfg.Entropy, CostRatio: cfg.CostRatio, Bias: cfg.Bias,
		Seed: cfg.Seed, Data: checkpoint.IDOf(data), Classes: classes, Tasks: uint32(tasks),
	}
	if cfg.DoubleSided {
		fp.Flags |= checkpoint.FlagDouble
	}
	if ovo {
		fp.Flags |= checkpoint.FlagOvO
	}
	if cfg.Reshuffle {
		fp.Flags |= checkpoint.FlagReshuffle
	}
	if v := cfg.Valid; v.Patience > 0 {
		fp.Flags |= checkpoint.FlagEarly
		fp.ValidEvery, fp.Patience = v.Every, uint32(v.Patience)
		fp.Valid = checkpoint.IDOf(v.Data)
	}
	if cfg.Init != nil {
		fp.Flags |= checkpoint.FlagInit
		h := crc64.New(crc64.MakeTable(crc64.ECMA))
		if err := model.Write(h, cfg.Init); err != nil {
			return nil, fmt.Errorf("sgd: initial model: %w", err)
		}
		fp.InitHash = h.Sum64()
	}
	return fp, nil
}

// Checkpoint is the decoded contents of a checkpoint file (see
// Checkpointing): the fingerprint of the run that wrote it and the latest
// snapshot of each of its polytopes. A Checkpoint is not modified by
// training, so one value can resume any number of runs.
type Checkpoint struct {
	name  string
	fp    *fingerprint
	tasks []*taskState // nil: no snapshot
	raw   [][]byte     // encoded snapshots, capacity clipped; nil: none
}

// Progress returns the SGD steps the checkpoint's polytopes have taken in
// the interrupted run and the steps of the whole run.
func (c *Checkpoint) Progress() (done, total int64) {
	for _, t := range c.tasks {
		if t != nil {
			done += t.Done
		}
	}
	return done, int64(c.fp.Tasks) * c.fp.Iterations
}

// LoadCheckpoint reads the checkpoint file at path with the default size
// cap, half of the machine's memory; see LoadCheckpointLimit.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	return LoadCheckpointLimit(path, budget.Default())
}

// LoadCheckpointLimit reads the checkpoint file at path, which must hold at
// most limit bytes, and decodes it with ReadCheckpoint. It checks the
// magic and the version before reading further, so that a file that is
// not a checkpoint (even an endless one such as /dev/zero) is refused
// after its first 16 bytes; a regular file larger than limit is refused from its size, and
// any other file after limit+1 bytes, with a *CheckpointError wrapping
// ErrCheckpointTooLarge. At most limit+1 bytes are buffered.
func LoadCheckpointLimit(path string, limit int64) (*Checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	defer f.Close()
	tooLarge := func() error {
		return &CheckpointError{Name: path, Offset: limit, Err: fmt.Errorf("%w: more than the cap of %d bytes", ErrCheckpointTooLarge, limit)}
	}
	size, err := budget.CheckSize(f, path, limit)
	if err != nil {
		return nil, tooLarge()
	}
	head := make([]byte, len(checkpoint.Magic)+8) // magic, version and a first field
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	head = head[:n]
	if n < len(head) || string(head[:len(checkpoint.Magic)]) != checkpoint.Magic {
		return ReadCheckpoint(head, path) // refuses it, or reads a tiny file
	}
	if v := binary.LittleEndian.Uint32(head[len(checkpoint.Magic):]); v != 1 && v != checkpoint.Version {
		return ReadCheckpoint(head, path) // refuses the version
	}
	if size >= 0 {
		size -= int64(n)
	}
	data, err := budget.ReadAllSize(head, f, path, limit, size)
	if errors.Is(err, budget.ErrTooLarge) {
		return nil, tooLarge()
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	return ReadCheckpoint(data, path)
}

// ReadCheckpoint decodes a checkpoint file held in data, naming it name in
// errors. A malformed input gives a *CheckpointError; ReadCheckpoint never
// panics and allocates at most about the size of data. The result keeps
// references into data; do not modify data afterwards.
func ReadCheckpoint(data []byte, name string) (*Checkpoint, error) {
	f, err := checkpoint.Decode(data, name)
	if err != nil {
		return nil, err
	}
	return &Checkpoint{name: name, fp: f.Fingerprint, tasks: f.Tasks, raw: f.Raw}, nil
}

// appendTo appends c's encoding, checksum included: ReadCheckpoint of the
// result gives c again.
func (c *Checkpoint) appendTo(b []byte) []byte {
	return checkpoint.AppendFile(b, c.fp.AppendHead(nil), c.raw)
}

// ckWriter merges the snapshots of the tasks of one run into the checkpoint
// file: tasks publish encoded snapshots, a single goroutine writes.
type ckWriter struct {
	path  string
	head  []byte
	onErr func(error) // called once, with the first write error

	mu    sync.Mutex
	secs  [][]byte // latest snapshot of each task; nil: none
	dirty bool

	wake chan struct{}
	quit chan struct{}
	done chan struct{}
	file []byte // assembly buffer (writer goroutine only)
	err  error  // first write error (writer goroutine; read after done)
}

// newCkWriter starts the writer of a run with fingerprint fp, starting from
// the snapshots of resume (nil: none).
func newCkWriter(path string, fp *fingerprint, resume *Checkpoint, onErr func(error)) *ckWriter {
	w := &ckWriter{
		path: path, head: fp.AppendHead(nil), onErr: onErr,
		secs:  make([][]byte, fp.Tasks),
		dirty: true, // the file is written at least once, so it always describes this run
		wake:  make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
	}
	if resume != nil {
		copy(w.secs, resume.raw)
		if resume.fp.Version == 1 {
			// A version 1 snapshot is a version 2 one without early
			// stopping, less its flag byte.
			for i, sec := range w.secs {
				if sec != nil {
					w.secs[i] = append(slices.Clip(sec), 0)
				}
			}
		}
	}
	go w.loop()
	return w
}

// publish makes sec task i's latest snapshot and returns the buffer of the
// one it replaces, emptied, for the task's next snapshot. The writer never
// holds a reference to a replaced buffer.
func (w *ckWriter) publish(i int, sec []byte) []byte {
	w.mu.Lock()
	old := w.secs[i]
	w.secs[i] = sec
	w.dirty = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return old[:0]
}

func (w *ckWriter) loop() {
	defer close(w.done)
	for {
		select {
		case <-w.wake:
			w.flush()
		case <-w.quit:
			w.flush()
			return
		}
	}
}

// flush writes the file if a task has published since the last write.
func (w *ckWriter) flush() {
	w.mu.Lock()
	if !w.dirty || w.err != nil {
		w.mu.Unlock()
		return
	}
	w.dirty = false
	w.file = checkpoint.AppendFile(w.file[:0], w.head, w.secs)
	w.mu.Unlock()
	err := atomicfile.WriteFile(w.path, func(f io.Writer) error {
		_, err := f.Write(w.file)
		return err
	})
	if err != nil {
		w.err = fmt.Errorf("checkpoint: %w", err)
		w.onErr(w.err)
	}
}

// close writes the last snapshots, stops the writer and returns the first
// write error.
func (w *ckWriter) close() error {
	close(w.quit)
	<-w.done
	return w.err
}

// taskCk is a task's side of checkpointing.
type taskCk struct {
	w        *ckWriter
	i        int
	every    int64
	interval time.Duration
	buf      []byte
	last     time.Time // time of the last snapshot
	lastDone int64     // done at the last snapshot (or at resume)
}

// limit caps a chunk of n steps starting after done steps so that it ends
// at the next multiple of every.
func (c *taskCk) limit(done, n int64) int64 {
	if c.every > 0 {
		n = min(n, c.every-done%c.every)
	}
	return n
}

// due reports whether a snapshot is due after done steps.
func (c *taskCk) due(done int64) bool {
	return (c.every > 0 && done%c.every == 0) || (c.interval > 0 && time.Since(c.last) >= c.interval)
}

// snapshot publishes the state of p, src and the early stopping of vs
// (nil: none) after done steps.
func (c *taskCk) snapshot(p *polytope, src *memorySource, vs *stopper, done int64) {
	st := taskState{Done: done, T: p.t, Scale: p.scale, W: p.W, Stats: p.stats, Asg: p.asg, Src: src.state(), Early: vs.state()}
	c.buf = checkpoint.AppendTask(c.buf[:0], &st)
	c.buf = c.w.publish(c.i, c.buf)
	c.last, c.lastDone = time.Now(), done
}
