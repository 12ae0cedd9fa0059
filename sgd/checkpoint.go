package sgd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/polyhedral/cpm/assign"
	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/internal/budget"
	"github.com/polyhedral/cpm/model"
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
// The format (version 2; integers little-endian, floats as IEEE-754 bits):
//
//	magic "CPMCHKPT", version uint32 = 2
//	fingerprint:
//	  learner string (uint32 length, bytes) = "cpm"
//	  flags uint32: bit 0 DoubleSided, bit 1 one-vs-one, bit 2 Reshuffle,
//	    bit 3 warm start (Init set), bit 4 early stopping
//	  K uint32, Iterations int64, Lambda, Entropy, CostRatio, Bias f64,
//	  Seed uint64, rows, nonzeros, dimension, data CRC-64 (ECMA) uint64,
//	  Init CRC-64 uint64 (0 without Init),
//	  C uint32, C × f32: the label map (model.Model.Classes),
//	  with bit 4 only: validation interval int64, patience uint32,
//	    validation rows, nonzeros, dimension, CRC-64 uint64
//	T uint32 tasks (Sides per binary machine, machines in model order)
//	T × task: uint8 0 (no snapshot) or 1, then uint64 length and the
//	  snapshot:
//	    done int64 (steps of Iterations taken), t int64, s f64,
//	    D uint64, K uint32, D × Stride f32: V with its zero padding,
//	    negatives, positives, updates int64, negative and positive loss
//	    sums f64 (statistics since the last progress report),
//	    uint64 length, ASSIGN state (assign.Assigner.AppendBinary),
//	    row source: rows n, position, epoch uint64, uint8 1 if a
//	    permutation follows (exactly when Reshuffle), n × uint32, and the
//	    20-byte PCG state (rand.PCG.AppendBinary),
//	    uint8 1 with early stopping (bit 4), else 0; with 1: best error,
//	    step of the best int64, evaluations since uint32, last error f64,
//	    uint8 1 if a best polytope follows (exactly when the best error is
//	    finite): t int64, s f64, D uint64, D × Stride f32, entropy f64,
//	    K × int64 assignment counts
//	CRC-32C (Castagnoli) uint32 of every preceding byte
//
// Version 1 is version 2 without bit 4 and without the early-stopping
// byte; ReadCheckpoint reads both, and a run resumed from a version 1 file
// writes version 2.
//
// ReadCheckpoint refuses every byte string this encoding cannot produce,
// never panics, and checks every declared size against the bytes that
// remain before allocating for it. Behind a valid checksum it also checks
// that the contents are possible: every weight (of the snapshot and of the
// best polytope) and loss sum finite, the statistics within the steps
// done, the row source one row a step (done = epoch × rows + position)
// over the fingerprint's rows (all of them, or at most all of them for a
// one-vs-one pair).
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
	ErrNotCheckpoint = errors.New("not a cpm checkpoint file")
	// ErrCheckpointVersion means the format version is not one this build
	// reads.
	ErrCheckpointVersion = errors.New("unsupported checkpoint format version")
	// ErrCheckpointCorrupt means the file is truncated, fails its checksum
	// or is inconsistent.
	ErrCheckpointCorrupt = errors.New("corrupt checkpoint")
	// ErrCheckpointMismatch means a checkpoint was made by a run with other
	// data or config than the one resuming it.
	ErrCheckpointMismatch = errors.New("checkpoint does not match this run")
	// ErrCheckpointTooLarge means the file is larger than the size cap of
	// LoadCheckpointLimit.
	ErrCheckpointTooLarge = errors.New("checkpoint file too large")
)

// CheckpointError reports a malformed checkpoint file: which file, where,
// and what.
type CheckpointError struct {
	Name   string // the name given to ReadCheckpoint, or the path given to LoadCheckpoint
	Offset int64  // byte offset at which the problem was detected; -1 for a snapshot that does not fit the run resuming it
	Err    error  // wraps ErrNotCheckpoint, ErrCheckpointVersion, ErrCheckpointCorrupt or ErrCheckpointTooLarge
}

func (e *CheckpointError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("%s: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("%s: %v (at byte %d)", e.Name, e.Err, e.Offset)
}

func (e *CheckpointError) Unwrap() error { return e.Err }

const (
	ckMagic   = "CPMCHKPT"
	ckVersion = 2 // written; version 1 (no early stopping) is read too
	// ckMaxTasks caps the declared number of tasks (as model caps its
	// matrices).
	ckMaxTasks = 1 << 24
	// ckMaxD caps a snapshot's feature rows (every uint32 feature index).
	ckMaxD = int64(1) << 32
	// pcgSize is the length of rand.PCG's binary encoding.
	pcgSize = 20
)

// Fingerprint flag bits.
const (
	fpDouble    = 1 << 0
	fpOvO       = 1 << 1
	fpReshuffle = 1 << 2
	fpInit      = 1 << 3
	fpEarly     = 1 << 4 // version 2: early stopping (Validation.Patience > 0)
	fpKnownV1   = fpDouble | fpOvO | fpReshuffle | fpInit
	fpKnown     = fpKnownV1 | fpEarly
)

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	ecma64     = crc64.MakeTable(crc64.ECMA)
)

// fingerprint is what a resumed run must share with the run that wrote the
// checkpoint.
type fingerprint struct {
	learner                          string
	flags                            uint32
	k                                uint32
	iterations                       int64
	lambda, entropy, costRatio, bias float64
	seed                             uint64
	data                             dataID
	initHash                         uint64
	classes                          []float32
	// With early stopping (fpEarly): the evaluation interval, the
	// patience and the validation data.
	validEvery int64
	patience   uint32
	valid      dataID
	tasks      uint32
	version    uint32 // decoded files only
}

// dataID identifies a data set: its size and the CRC-64 of its contents
// (dataHash).
type dataID struct{ rows, nnz, dim, hash uint64 }

func idOf(data *sparsevec.CSR) dataID {
	return dataID{uint64(data.Rows()), uint64(data.NNZ()), uint64(data.Dim), dataHash(data)}
}

func (d dataID) String() string {
	return fmt.Sprintf("%d rows, %d nonzeros, dimension %d, CRC-64 %#016x", d.rows, d.nnz, d.dim, d.hash)
}

// newFingerprint describes a run of cfg (completed by withDefaults) on data
// (before the training shuffle) with the given label map and tasks.
func newFingerprint(cfg Config, data *sparsevec.CSR, classes []float32, ovo bool, tasks int) (*fingerprint, error) {
	fp := &fingerprint{
		learner: "cpm", k: uint32(cfg.K), iterations: cfg.Iterations,
		lambda: cfg.Lambda, entropy: cfg.Entropy, costRatio: cfg.CostRatio, bias: cfg.Bias,
		seed: cfg.Seed, data: idOf(data), classes: classes, tasks: uint32(tasks),
	}
	if cfg.DoubleSided {
		fp.flags |= fpDouble
	}
	if ovo {
		fp.flags |= fpOvO
	}
	if cfg.Reshuffle {
		fp.flags |= fpReshuffle
	}
	if v := cfg.Valid; v.Patience > 0 {
		fp.flags |= fpEarly
		fp.validEvery, fp.patience = v.Every, uint32(v.Patience)
		fp.valid = idOf(v.Data)
	}
	if cfg.Init != nil {
		fp.flags |= fpInit
		h := crc64.New(ecma64)
		if err := model.Write(h, cfg.Init); err != nil {
			return nil, fmt.Errorf("sgd: initial model: %w", err)
		}
		fp.initHash = h.Sum64()
	}
	return fp, nil
}

// dataHash returns the CRC-64 (ECMA) of data's labels, row pointers,
// indices and values, little-endian.
func dataHash(data *sparsevec.CSR) uint64 {
	le := binary.LittleEndian
	h := crc64.New(ecma64)
	buf := make([]byte, 0, 32<<10)
	flush := func() {
		if len(buf) >= 32<<10-8 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	for _, y := range data.Labels {
		buf = le.AppendUint32(buf, math.Float32bits(y))
		flush()
	}
	for _, p := range data.Ptr {
		buf = le.AppendUint64(buf, uint64(p))
		flush()
	}
	for i, j := range data.Idx {
		buf = le.AppendUint32(le.AppendUint32(buf, j), math.Float32bits(data.Val[i]))
		flush()
	}
	h.Write(buf)
	return h.Sum64()
}

// matches returns nil if a checkpoint with fingerprint c can continue a
// run with fingerprint f, or an error wrapping ErrCheckpointMismatch that
// lists every difference.
func (f *fingerprint) matches(c *fingerprint, name string) error {
	var diffs []string
	add := func(what string, then, now any) {
		diffs = append(diffs, fmt.Sprintf("%s: checkpoint %v, this run %v", what, then, now))
	}
	flag := func(what string, bit uint32) {
		if c.flags&bit != f.flags&bit {
			add(what, c.flags&bit != 0, f.flags&bit != 0)
		}
	}
	eq := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	if c.learner != f.learner {
		add("learner", c.learner, f.learner)
	}
	if c.k != f.k {
		add("K (faces per polytope)", c.k, f.k)
	}
	if c.iterations != f.iterations {
		add("iterations T", c.iterations, f.iterations)
	}
	if !eq(c.lambda, f.lambda) {
		add("lambda", c.lambda, f.lambda)
	}
	if !eq(c.entropy, f.entropy) {
		add("entropy", c.entropy, f.entropy)
	}
	if !eq(c.costRatio, f.costRatio) {
		add("cost ratio", c.costRatio, f.costRatio)
	}
	if !eq(c.bias, f.bias) {
		add("bias", c.bias, f.bias)
	}
	if c.seed != f.seed {
		add("seed", c.seed, f.seed)
	}
	flag("double-sided", fpDouble)
	flag("one-vs-one", fpOvO)
	flag("reshuffle", fpReshuffle)
	flag("warm start (initial model)", fpInit)
	if c.flags&f.flags&fpInit != 0 && c.initHash != f.initHash {
		add("initial model", fmt.Sprintf("CRC-64 %#016x", c.initHash), fmt.Sprintf("CRC-64 %#016x", f.initHash))
	}
	if c.data != f.data {
		add("training data", c.data, f.data)
	}
	if !slicesEqualBits(c.classes, f.classes) {
		add("labels", c.classes, f.classes)
	}
	flag("early stopping", fpEarly)
	if c.flags&f.flags&fpEarly != 0 {
		if c.validEvery != f.validEvery || c.patience != f.patience {
			add("validation every / patience", fmt.Sprintf("%d steps / %d", c.validEvery, c.patience), fmt.Sprintf("%d steps / %d", f.validEvery, f.patience))
		}
		if c.valid != f.valid {
			add("validation data", c.valid, f.valid)
		}
	}
	if c.tasks != f.tasks {
		add("polytopes", c.tasks, f.tasks)
	}
	if diffs == nil {
		return nil
	}
	return fmt.Errorf("%s: %w (resume with the flags and data of the run that wrote it): %s",
		name, ErrCheckpointMismatch, strings.Join(diffs, "; "))
}

func slicesEqualBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// appendHead appends the magic, version, fingerprint and task count.
func (f *fingerprint) appendHead(b []byte) []byte {
	le := binary.LittleEndian
	b = append(b, ckMagic...)
	v := f.version // a decoded file keeps its version; a new one is written as ckVersion
	if v == 0 {
		v = ckVersion
	}
	b = le.AppendUint32(b, v)
	b = le.AppendUint32(b, uint32(len(f.learner)))
	b = append(b, f.learner...)
	b = le.AppendUint32(b, f.flags)
	b = le.AppendUint32(b, f.k)
	b = le.AppendUint64(b, uint64(f.iterations))
	for _, v := range []float64{f.lambda, f.entropy, f.costRatio, f.bias} {
		b = le.AppendUint64(b, math.Float64bits(v))
	}
	for _, v := range []uint64{f.seed, f.data.rows, f.data.nnz, f.data.dim, f.data.hash, f.initHash} {
		b = le.AppendUint64(b, v)
	}
	b = le.AppendUint32(b, uint32(len(f.classes)))
	for _, c := range f.classes {
		b = le.AppendUint32(b, math.Float32bits(c))
	}
	if f.flags&fpEarly != 0 {
		b = le.AppendUint64(b, uint64(f.validEvery))
		b = le.AppendUint32(b, f.patience)
		for _, v := range []uint64{f.valid.rows, f.valid.nnz, f.valid.dim, f.valid.hash} {
			b = le.AppendUint64(b, v)
		}
	}
	return le.AppendUint32(b, f.tasks)
}

// taskState is one task's snapshot. Snapshots taken during training refer
// to the live polytope and source; decoded ones own their arrays.
type taskState struct {
	done, t int64
	scale   float64
	w       *sparsevec.Matrix
	stats   stepStats
	asg     *assign.Assigner
	src     memState
	early   *stopState // with early stopping (fpEarly) only
}

// memState is the position of a memorySource.
type memState struct {
	n, pos, epoch int64
	perm          []int32 // nil unless reshuffle
	rng           [pcgSize]byte
}

// appendTaskState appends the encoding of st.
func appendTaskState(b []byte, st *taskState) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, uint64(st.done))
	b = le.AppendUint64(b, uint64(st.t))
	b = le.AppendUint64(b, math.Float64bits(st.scale))
	b = le.AppendUint64(b, uint64(st.w.D))
	b = le.AppendUint32(b, uint32(st.w.K))
	b = appendF32s(b, st.w.Data[:st.w.D*st.w.Stride])
	s := &st.stats
	b = le.AppendUint64(b, uint64(s.neg))
	b = le.AppendUint64(b, uint64(s.pos))
	b = le.AppendUint64(b, uint64(s.updates))
	b = le.AppendUint64(b, math.Float64bits(s.negLoss))
	b = le.AppendUint64(b, math.Float64bits(s.posLoss))
	at := len(b)
	b = le.AppendUint64(b, 0)
	b, _ = st.asg.AppendBinary(b) // never fails
	le.PutUint64(b[at:], uint64(len(b)-at-8))
	src := &st.src
	b = le.AppendUint64(b, uint64(src.n))
	b = le.AppendUint64(b, uint64(src.pos))
	b = le.AppendUint64(b, uint64(src.epoch))
	if src.perm == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = slicesGrow(b, 4*len(src.perm))
		for _, v := range src.perm {
			b = le.AppendUint32(b, uint32(v))
		}
	}
	b = append(b, src.rng[:]...)
	if st.early == nil {
		return append(b, 0)
	}
	return appendStopState(append(b, 1), st.early)
}

// appendF32s appends the bits of v, growing b once.
func appendF32s(b []byte, v []float32) []byte {
	b = slicesGrow(b, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// slicesGrow makes room for n more bytes in b, geometrically.
func slicesGrow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
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
			done += t.done
		}
	}
	return done, int64(c.fp.tasks) * c.fp.iterations
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
	head := make([]byte, len(ckMagic)+8) // magic, version and a first field
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	head = head[:n]
	if n < len(head) || string(head[:len(ckMagic)]) != ckMagic {
		return ReadCheckpoint(head, path) // refuses it, or reads a tiny file
	}
	if v := binary.LittleEndian.Uint32(head[len(ckMagic):]); v != 1 && v != ckVersion {
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
	d := &ckDecoder{b: data, name: name}
	switch {
	case len(data) == 0:
		return nil, d.failKind(ErrCheckpointCorrupt, "empty file")
	case len(data) < len(ckMagic) && !bytes.HasPrefix([]byte(ckMagic), data),
		len(data) >= len(ckMagic) && string(data[:len(ckMagic)]) != ckMagic:
		return nil, d.failKind(ErrNotCheckpoint, "file starts with %q, want %q", data[:min(len(data), len(ckMagic))], ckMagic)
	case len(data) < len(ckMagic)+8:
		return nil, d.failKind(ErrCheckpointCorrupt, "truncated: %d bytes", len(data))
	}
	d.off = len(ckMagic)
	version := d.u32("version")
	if version != 1 && version != ckVersion {
		d.off -= 4
		return nil, d.failKind(ErrCheckpointVersion, "file has format version %d, this build reads versions 1 and %d", version, ckVersion)
	}
	body := data[:len(data)-4]
	if got, want := binary.LittleEndian.Uint32(data[len(body):]), crc32.Checksum(body, castagnoli); got != want {
		d.off = len(body)
		return nil, d.failKind(ErrCheckpointCorrupt, "checksum mismatch: stored CRC-32C %#08x, contents give %#08x (file is damaged or truncated)", got, want)
	}
	d.b = body
	c := &Checkpoint{name: name}
	c.fp = d.fingerprint(version)
	if d.err != nil {
		return nil, d.err
	}
	// Each task takes at least one byte.
	if uint64(c.fp.tasks) > uint64(len(d.b)-d.off) {
		return nil, d.fail("%d tasks in %d bytes", c.fp.tasks, len(d.b)-d.off)
	}
	c.tasks = make([]*taskState, c.fp.tasks)
	c.raw = make([][]byte, c.fp.tasks)
	for i := range c.tasks {
		switch d.u8("task state") {
		case 0:
			continue
		case 1:
		default:
			if d.err == nil {
				d.off--
				return nil, d.fail("task %d: state byte %d, want 0 or 1", i, d.b[d.off])
			}
		}
		n := d.u64("snapshot length")
		start := d.off
		sec := d.take(n, "snapshot")
		if d.err != nil {
			return nil, d.err
		}
		sd := &ckDecoder{b: sec, name: name, base: start}
		st := sd.taskState(c.fp, i)
		if sd.err != nil {
			return nil, sd.err
		}
		c.tasks[i], c.raw[i] = st, sec[:len(sec):len(sec)]
	}
	if d.err == nil && d.off != len(d.b) {
		return nil, d.fail("%d trailing bytes after the last task", len(d.b)-d.off)
	}
	if d.err != nil {
		return nil, d.err
	}
	return c, nil
}

// appendTo appends c's encoding, checksum included: ReadCheckpoint of the
// result gives c again.
func (c *Checkpoint) appendTo(b []byte) []byte {
	return appendFile(b, c.fp.appendHead(nil), c.raw)
}

// appendFile appends a checkpoint file made of head (appendHead) and the
// encoded snapshots of every task (nil: none), with its checksum.
func appendFile(b, head []byte, secs [][]byte) []byte {
	start := len(b)
	b = append(b, head...)
	for _, s := range secs {
		if s == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// ckDecoder reads little-endian fields from b with a sticky error.
type ckDecoder struct {
	b    []byte
	off  int
	base int // offset of b in the file, for messages
	name string
	err  error
}

func (d *ckDecoder) failKind(kind error, format string, args ...any) error {
	if d.err == nil {
		d.err = &CheckpointError{Name: d.name, Offset: int64(d.base + d.off), Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
	}
	return d.err
}

func (d *ckDecoder) fail(format string, args ...any) error {
	return d.failKind(ErrCheckpointCorrupt, format, args...)
}

// take consumes n bytes, or fails if fewer remain.
func (d *ckDecoder) take(n uint64, what string) []byte {
	if d.err != nil {
		return nil
	}
	if left := uint64(len(d.b) - d.off); n > left {
		d.fail("%s: need %d bytes, only %d remain", what, n, left)
		return nil
	}
	b := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return b
}

func (d *ckDecoder) u8(what string) uint8 {
	if b := d.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

func (d *ckDecoder) u32(what string) uint32 {
	if b := d.take(4, what); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *ckDecoder) u64(what string) uint64 {
	if b := d.take(8, what); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *ckDecoder) f64(what string) float64 { return math.Float64frombits(d.u64(what)) }

// count reads a uint64 element count and checks that n elements of size
// bytes fit in what remains.
func (d *ckDecoder) count(size uint64, what string) uint64 {
	n := d.u64(what)
	if d.err == nil && n > uint64(len(d.b)-d.off)/size {
		d.fail("%s = %d: needs %d bytes per element, only %d bytes remain", what, n, size, len(d.b)-d.off)
		return 0
	}
	return n
}

// fingerprint decodes and checks the fingerprint and the task count.
func (d *ckDecoder) fingerprint(version uint32) *fingerprint {
	f := &fingerprint{version: version}
	known := uint32(fpKnown)
	if version == 1 {
		known = fpKnownV1
	}
	n := d.u32("learner length")
	if d.err == nil && (n < 1 || n > 64) {
		d.fail("learner name of %d bytes", n)
	}
	f.learner = string(d.take(uint64(n), "learner"))
	f.flags = d.u32("flags")
	if d.err == nil && f.flags&^known != 0 {
		d.fail("unknown flag bits %#x", f.flags&^known)
	}
	f.k = d.u32("K")
	f.iterations = int64(d.u64("iterations"))
	f.lambda, f.entropy, f.costRatio, f.bias = d.f64("lambda"), d.f64("entropy"), d.f64("cost ratio"), d.f64("bias")
	f.seed = d.u64("seed")
	f.data = dataID{d.u64("rows"), d.u64("nonzeros"), d.u64("dimension"), d.u64("data hash")}
	f.initHash = d.u64("init hash")
	c := d.u32("class count")
	if d.err != nil {
		return f
	}
	if uint64(c) > uint64(len(d.b)-d.off)/4 || c > 1<<16 {
		d.fail("%d classes", c)
		return f
	}
	f.classes = make([]float32, c)
	for i := range f.classes {
		f.classes[i] = math.Float32frombits(d.u32("class"))
	}
	if f.flags&fpEarly != 0 {
		f.validEvery, f.patience = int64(d.u64("validation interval")), d.u32("patience")
		f.valid = dataID{d.u64("validation rows"), d.u64("validation nonzeros"), d.u64("validation dimension"), d.u64("validation data hash")}
		if d.err == nil && (f.validEvery < 1 || f.patience < 1 || f.valid.rows < 1) {
			d.fail("early stopping every %d steps, patience %d, %d validation rows: want each >= 1", f.validEvery, f.patience, f.valid.rows)
		}
	}
	f.tasks = d.u32("task count")
	if d.err != nil {
		return f
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	sides := uint64(1)
	if f.flags&fpDouble != 0 {
		sides = 2
	}
	want := sides
	if f.flags&fpOvO != 0 {
		want = sides * uint64(c) * (uint64(c) - 1) / 2
	}
	switch {
	case f.learner != "cpm":
		d.fail("learner %q, want cpm", f.learner)
	case f.k < 1 || f.k > assign.MaxFaces:
		d.fail("K = %d, want 1 to %d", f.k, assign.MaxFaces)
	case f.iterations < 1:
		d.fail("iterations = %d, want >= 1", f.iterations)
	case !(f.lambda > 0) || !finite(f.lambda), !(f.entropy >= 0) || !finite(f.entropy),
		!(f.costRatio > 0) || !finite(f.costRatio), !finite(f.bias):
		d.fail("hyperparameters out of range: lambda %v, entropy %v, cost ratio %v, bias %v", f.lambda, f.entropy, f.costRatio, f.bias)
	case f.flags&fpInit == 0 && f.initHash != 0:
		d.fail("initial model hash without a warm start")
	case c < 2:
		d.fail("%d labels, want at least 2", c)
	case f.tasks > ckMaxTasks || uint64(f.tasks) != want:
		d.fail("%d tasks, the labels and sides call for %d", f.tasks, want)
	}
	return f
}

// taskState decodes the snapshot of task i of a run with fingerprint f.
func (d *ckDecoder) taskState(f *fingerprint, i int) *taskState {
	st := &taskState{}
	st.done = int64(d.u64("done"))
	st.t = int64(d.u64("t"))
	st.scale = d.f64("scale")
	dim := d.u64("D")
	k := d.u32("K")
	if d.err != nil {
		return nil
	}
	switch {
	case st.done < 0 || st.done > f.iterations:
		d.fail("task %d: %d steps done of %d", i, st.done, f.iterations)
	case st.t < st.done || (f.flags&fpInit == 0 && st.t != st.done):
		d.fail("task %d: step counter %d after %d steps", i, st.t, st.done)
	case !(st.scale > 0 && st.scale <= 1):
		d.fail("task %d: lazy scale %v, want in (0, 1]", i, st.scale)
	case k != f.k:
		d.fail("task %d: K = %d, the run has %d", i, k, f.k)
	case dim < 1 || dim > uint64(ckMaxD):
		d.fail("task %d: D = %d, want 1 to %d", i, dim, ckMaxD)
	}
	stride := uint64(sparsevec.StrideFor(int(k)))
	if d.err == nil && dim > uint64(len(d.b)-d.off)/(4*stride) {
		d.fail("task %d: %d×%d weights need %d bytes, only %d remain", i, dim, stride, 4*dim*stride, len(d.b)-d.off)
	}
	if d.err != nil {
		return nil
	}
	w := &sparsevec.Matrix{D: int(dim), K: int(k), Stride: int(stride), Data: make([]float32, dim*stride)}
	raw := d.take(4*dim*stride, "weights")
	for j := range w.Data {
		w.Data[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
	}
	if j, ok := nonFinite(w); !ok {
		d.off -= len(raw) - 4*j
		d.fail("task %d: weight of feature %d, face %d is %v, want a finite value", i, j/w.Stride, j%w.Stride, w.Data[j])
		return nil
	}
	st.w = w
	s := &st.stats
	s.neg, s.pos, s.updates = int64(d.u64("negatives")), int64(d.u64("positives")), int64(d.u64("updates"))
	s.negLoss, s.posLoss = d.f64("negative loss"), d.f64("positive loss")
	switch {
	case d.err != nil:
	case s.neg < 0 || s.pos < 0 || s.updates < 0:
		d.fail("task %d: negative statistics", i)
	case uint64(s.neg)+uint64(s.pos) > uint64(st.done) || s.updates > s.neg+s.pos:
		d.fail("task %d: statistics of %d negative and %d positive rows with %d updates after %d steps", i, s.neg, s.pos, s.updates, st.done)
	case !(s.negLoss >= 0) || !(s.posLoss >= 0) || math.IsInf(s.negLoss, 0) || math.IsInf(s.posLoss, 0):
		d.fail("task %d: loss sums %v and %v, want finite values >= 0", i, s.negLoss, s.posLoss)
	}
	n := d.count(1, "ASSIGN state length")
	at := d.off
	ab := d.take(n, "ASSIGN state")
	if d.err != nil {
		return nil
	}
	st.asg = new(assign.Assigner)
	if err := st.asg.UnmarshalBinary(ab); err != nil {
		d.off = at
		d.fail("task %d: %v", i, err)
		return nil
	}
	if len(st.asg.Counts()) != int(f.k) || math.Float64bits(st.asg.Target()) != math.Float64bits(f.entropy) {
		d.off = at
		d.fail("task %d: ASSIGN state for K = %d, h = %v; the run has K = %d, h = %v", i, len(st.asg.Counts()), st.asg.Target(), f.k, f.entropy)
		return nil
	}
	src := &st.src
	src.n, src.pos, src.epoch = int64(d.u64("rows")), int64(d.u64("position")), int64(d.u64("epoch"))
	hasPerm := d.u8("permutation flag")
	if d.err != nil {
		return nil
	}
	switch {
	case src.n < 1 || src.n > math.MaxInt32:
		d.fail("task %d: %d rows", i, src.n)
	case uint64(src.n) > f.data.rows || (f.flags&fpOvO == 0 && uint64(src.n) != f.data.rows):
		d.fail("task %d: row source of %d rows, the training data has %d", i, src.n, f.data.rows)
	case src.pos < 0 || src.pos > src.n:
		d.fail("task %d: position %d of %d rows", i, src.pos, src.n)
	case src.epoch < 0 || src.pos > st.done || (st.done-src.pos)%src.n != 0 || (st.done-src.pos)/src.n != src.epoch:
		d.fail("task %d: epoch %d, position %d of %d rows after %d steps (one row a step)", i, src.epoch, src.pos, src.n, st.done)
	case hasPerm > 1 || (hasPerm == 1) != (f.flags&fpReshuffle != 0):
		d.fail("task %d: permutation flag %d with reshuffle %v", i, hasPerm, f.flags&fpReshuffle != 0)
	case hasPerm == 1 && uint64(src.n) > uint64(len(d.b)-d.off)/4:
		d.fail("task %d: permutation of %d rows needs %d bytes, only %d remain", i, src.n, 4*src.n, len(d.b)-d.off)
	}
	if d.err != nil {
		return nil
	}
	if hasPerm == 1 {
		at := d.off
		raw := d.take(uint64(4*src.n), "permutation")
		src.perm = make([]int32, src.n)
		seen := make([]bool, src.n)
		for j := range src.perm {
			v := binary.LittleEndian.Uint32(raw[4*j:])
			if int64(v) >= src.n || seen[v] {
				d.off = at + 4*j
				d.fail("task %d: permutation entry %d = %d is out of range or repeated", i, j, v)
				return nil
			}
			seen[v] = true
			src.perm[j] = int32(v)
		}
	}
	rb := d.take(pcgSize, "PCG state")
	if d.err != nil {
		return nil
	}
	if err := new(rand.PCG).UnmarshalBinary(rb); err != nil {
		d.off -= pcgSize
		d.fail("task %d: PCG state: %v", i, err)
		return nil
	}
	copy(src.rng[:], rb)
	if f.version >= 2 {
		switch has := d.u8("early stopping flag"); {
		case d.err != nil:
			return nil
		case has > 1 || (has == 1) != (f.flags&fpEarly != 0):
			d.off--
			d.fail("task %d: early stopping flag %d with early stopping %v", i, has, f.flags&fpEarly != 0)
			return nil
		case has == 1:
			if st.early = d.stopState(f, st, i); st.early == nil {
				return nil
			}
		}
	}
	if d.err == nil && d.off != len(d.b) {
		d.fail("task %d: %d trailing bytes in the snapshot", i, len(d.b)-d.off)
		return nil
	}
	return st
}

// nonFinite returns the index in w.Data of the first weight of a face
// (padding columns excluded) that is NaN or infinite, and false; or 0 and
// true if every weight is finite.
func nonFinite(w *sparsevec.Matrix) (int, bool) {
	for r := range w.D {
		row := w.Data[r*w.Stride : r*w.Stride+w.K]
		for k, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return r*w.Stride + k, false
			}
		}
	}
	return 0, true
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
		path: path, head: fp.appendHead(nil), onErr: onErr,
		secs:  make([][]byte, fp.tasks),
		dirty: true, // the file is written at least once, so it always describes this run
		wake:  make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
	}
	if resume != nil {
		copy(w.secs, resume.raw)
		if resume.fp.version == 1 {
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
	w.file = appendFile(w.file[:0], w.head, w.secs)
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
	st := taskState{done: done, t: p.t, scale: p.scale, w: p.W, stats: p.stats, asg: p.asg, src: src.state(), early: vs.state()}
	c.buf = appendTaskState(c.buf[:0], &st)
	c.buf = c.w.publish(c.i, c.buf)
	c.last, c.lastDone = time.Now(), done
}
