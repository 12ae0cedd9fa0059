package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/polyhedral/cpm/assign"
	"github.com/polyhedral/cpm/internal/binio"
	"github.com/polyhedral/cpm/sparsevec"
)

// Kinds of checkpoint failure; a *Error wraps one of them
// except ErrMismatch. Test with errors.Is.
var (
	// ErrNotCheckpoint means the input does not start with the magic.
	ErrNotCheckpoint = errors.New("not a cpm checkpoint file")
	// ErrVersion means the format version is not one this build
	// reads.
	ErrVersion = errors.New("unsupported checkpoint format version")
	// ErrCorrupt means the file is truncated, fails its checksum
	// or is inconsistent.
	ErrCorrupt = errors.New("corrupt checkpoint")
	// ErrMismatch means a checkpoint was made by a run with other
	// data or config than the one resuming it.
	ErrMismatch = errors.New("checkpoint does not match this run")
	// ErrTooLarge means the file is larger than the size cap of
	// LoadCheckpointLimit.
	ErrTooLarge = errors.New("checkpoint file too large")
)

// Error reports a malformed checkpoint file: which file, where,
// and what.
type Error struct {
	Name   string // the name given to ReadCheckpoint, or the path given to LoadCheckpoint
	Offset int64  // byte offset at which the problem was detected; -1 for a snapshot that does not fit the run resuming it
	Err    error  // wraps ErrNotCheckpoint, ErrVersion, ErrCorrupt or ErrTooLarge
}

func (e *Error) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("%s: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("%s: %v (at byte %d)", e.Name, e.Err, e.Offset)
}

func (e *Error) Unwrap() error { return e.Err }

const (
	Magic   = "CPMCHKPT"
	Version = 2 // written; version 1 (no early stopping) is read too
	// ckMaxTasks caps the declared number of tasks (as model caps its
	// matrices).
	ckMaxTasks = 1 << 24
	// ckMaxD caps a snapshot's feature rows (every uint32 feature index).
	ckMaxD = int64(1) << 32
	// PCGSize is the length of rand.PCG's binary encoding.
	PCGSize = 20
)

// Fingerprint flag bits.
const (
	FlagDouble    = 1 << 0
	FlagOvO       = 1 << 1
	FlagReshuffle = 1 << 2
	FlagInit      = 1 << 3
	FlagEarly     = 1 << 4 // version 2: early stopping (Validation.Patience > 0)
	flagsV1       = FlagDouble | FlagOvO | FlagReshuffle | FlagInit
	flagsV2       = flagsV1 | FlagEarly
)

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	ecma64     = crc64.MakeTable(crc64.ECMA)
)

// Fingerprint is what a resumed run must share with the run that wrote the
// checkpoint.
type Fingerprint struct {
	Learner                          string
	Flags                            uint32 // FlagDouble, FlagOvO, ...
	K                                uint32
	Iterations                       int64
	Lambda, Entropy, CostRatio, Bias float64
	Seed                             uint64
	Data                             DataID
	InitHash                         uint64
	Classes                          []float32
	// With early stopping (FlagEarly): the evaluation interval, the
	// patience and the validation data.
	ValidEvery int64
	Patience   uint32
	Valid      DataID
	Tasks      uint32
	Version    uint32 // decoded files only; 0 is written as Version
}

// DataID identifies a data set: its size and the CRC-64 of its contents
// (dataHash).
type DataID struct{ Rows, NNZ, Dim, Hash uint64 }

func IDOf(data *sparsevec.CSR) DataID {
	return DataID{uint64(data.Rows()), uint64(data.NNZ()), uint64(data.Dim), dataHash(data)}
}

func (d DataID) String() string {
	return fmt.Sprintf("%d rows, %d nonzeros, dimension %d, CRC-64 %#016x", d.Rows, d.NNZ, d.Dim, d.Hash)
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

// Matches returns nil if a checkpoint with fingerprint c can continue a
// run with fingerprint f, or an error wrapping ErrMismatch that
// lists every difference.
func (f *Fingerprint) Matches(c *Fingerprint, name string) error {
	var diffs []string
	add := func(what string, then, now any) {
		diffs = append(diffs, fmt.Sprintf("%s: checkpoint %v, this run %v", what, then, now))
	}
	flag := func(what string, bit uint32) {
		if c.Flags&bit != f.Flags&bit {
			add(what, c.Flags&bit != 0, f.Flags&bit != 0)
		}
	}
	eq := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	if c.Learner != f.Learner {
		add("learner", c.Learner, f.Learner)
	}
	if c.K != f.K {
		add("K (faces per polytope)", c.K, f.K)
	}
	if c.Iterations != f.Iterations {
		add("iterations T", c.Iterations, f.Iterations)
	}
	if !eq(c.Lambda, f.Lambda) {
		add("lambda", c.Lambda, f.Lambda)
	}
	if !eq(c.Entropy, f.Entropy) {
		add("entropy", c.Entropy, f.Entropy)
	}
	if !eq(c.CostRatio, f.CostRatio) {
		add("cost ratio", c.CostRatio, f.CostRatio)
	}
	if !eq(c.Bias, f.Bias) {
		add("bias", c.Bias, f.Bias)
	}
	if c.Seed != f.Seed {
		add("seed", c.Seed, f.Seed)
	}
	flag("double-sided", FlagDouble)
	flag("one-vs-one", FlagOvO)
	flag("reshuffle", FlagReshuffle)
	flag("warm start (initial model)", FlagInit)
	if c.Flags&f.Flags&FlagInit != 0 && c.InitHash != f.InitHash {
		add("initial model", fmt.Sprintf("CRC-64 %#016x", c.InitHash), fmt.Sprintf("CRC-64 %#016x", f.InitHash))
	}
	if c.Data != f.Data {
		add("training data", c.Data, f.Data)
	}
	if !EqualBits(c.Classes, f.Classes) {
		add("labels", c.Classes, f.Classes)
	}
	flag("early stopping", FlagEarly)
	if c.Flags&f.Flags&FlagEarly != 0 {
		if c.ValidEvery != f.ValidEvery || c.Patience != f.Patience {
			add("validation every / patience", fmt.Sprintf("%d steps / %d", c.ValidEvery, c.Patience), fmt.Sprintf("%d steps / %d", f.ValidEvery, f.Patience))
		}
		if c.Valid != f.Valid {
			add("validation data", c.Valid, f.Valid)
		}
	}
	if c.Tasks != f.Tasks {
		add("polytopes", c.Tasks, f.Tasks)
	}
	if diffs == nil {
		return nil
	}
	return fmt.Errorf("%s: %w (resume with the flags and data of the run that wrote it): %s",
		name, ErrMismatch, strings.Join(diffs, "; "))
}

// EqualBits reports whether a and b hold the same float32 bit patterns.
func EqualBits(a, b []float32) bool {
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

// AppendHead appends the magic, version, fingerprint and task count.
func (f *Fingerprint) AppendHead(b []byte) []byte {
	le := binary.LittleEndian
	b = append(b, Magic...)
	v := f.Version // a decoded file keeps its version; a new one is written as Version
	if v == 0 {
		v = Version
	}
	b = le.AppendUint32(b, v)
	b = le.AppendUint32(b, uint32(len(f.Learner)))
	b = append(b, f.Learner...)
	b = le.AppendUint32(b, f.Flags)
	b = le.AppendUint32(b, f.K)
	b = le.AppendUint64(b, uint64(f.Iterations))
	for _, v := range []float64{f.Lambda, f.Entropy, f.CostRatio, f.Bias} {
		b = le.AppendUint64(b, math.Float64bits(v))
	}
	for _, v := range []uint64{f.Seed, f.Data.Rows, f.Data.NNZ, f.Data.Dim, f.Data.Hash, f.InitHash} {
		b = le.AppendUint64(b, v)
	}
	b = le.AppendUint32(b, uint32(len(f.Classes)))
	for _, c := range f.Classes {
		b = le.AppendUint32(b, math.Float32bits(c))
	}
	if f.Flags&FlagEarly != 0 {
		b = le.AppendUint64(b, uint64(f.ValidEvery))
		b = le.AppendUint32(b, f.Patience)
		for _, v := range []uint64{f.Valid.Rows, f.Valid.NNZ, f.Valid.Dim, f.Valid.Hash} {
			b = le.AppendUint64(b, v)
		}
	}
	return le.AppendUint32(b, f.Tasks)
}

// Task is one task's snapshot. Snapshots taken during training refer
// to the live polytope and source; decoded ones own their arrays.
type Task struct {
	Done, T int64   // steps of Iterations taken; the step counter t
	Scale   float64 // the lazy scale s of W = s·V
	W       *sparsevec.Matrix
	Stats   Stats
	Asg     *assign.Assigner
	Src     Source
	Early   *Stop // with early stopping (FlagEarly) only
}

// Stats are the statistics of the SGD steps since the last progress
// report.
type Stats struct {
	Neg, Pos         int64
	NegLoss, PosLoss float64
	Updates          int64
}

// Kept are the assignment statistics of a kept polytope.
type Kept struct {
	Counts  []int64
	Entropy float64
}

// Source is the position of an in-memory row source.
type Source struct {
	N, Pos, Epoch int64
	Perm          []int32 // nil unless reshuffle
	RNG           [PCGSize]byte
}

// Stop is the early-stopping part of a task's snapshot: the stopper's
// counters and the best polytope seen (W nil before the first evaluation
// with a finite error). Taken from a live stopper it refers to the
// stopper's arrays.
type Stop struct {
	Best     float64 // best validation error
	BestDone int64   // steps done at the best
	Since    uint32  // evaluations since the best
	Last     float64 // last validation error
	W        *sparsevec.Matrix
	Scale    float64
	T        int64
	Kept     Kept
}

// AppendTask appends the encoding of st.
func AppendTask(b []byte, st *Task) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, uint64(st.Done))
	b = le.AppendUint64(b, uint64(st.T))
	b = le.AppendUint64(b, math.Float64bits(st.Scale))
	b = le.AppendUint64(b, uint64(st.W.D))
	b = le.AppendUint32(b, uint32(st.W.K))
	b = appendF32s(b, st.W.Data[:st.W.D*st.W.Stride])
	s := &st.Stats
	b = le.AppendUint64(b, uint64(s.Neg))
	b = le.AppendUint64(b, uint64(s.Pos))
	b = le.AppendUint64(b, uint64(s.Updates))
	b = le.AppendUint64(b, math.Float64bits(s.NegLoss))
	b = le.AppendUint64(b, math.Float64bits(s.PosLoss))
	at := len(b)
	b = le.AppendUint64(b, 0)
	b, _ = st.Asg.AppendBinary(b) // never fails
	le.PutUint64(b[at:], uint64(len(b)-at-8))
	src := &st.Src
	b = le.AppendUint64(b, uint64(src.N))
	b = le.AppendUint64(b, uint64(src.Pos))
	b = le.AppendUint64(b, uint64(src.Epoch))
	if src.Perm == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = slicesGrow(b, 4*len(src.Perm))
		for _, v := range src.Perm {
			b = le.AppendUint32(b, uint32(v))
		}
	}
	b = append(b, src.RNG[:]...)
	if st.Early == nil {
		return append(b, 0)
	}
	return appendStop(append(b, 1), st.Early)
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

// File is a decoded checkpoint file: the fingerprint of the run that wrote
// it and the latest snapshot of each of its tasks.
type File struct {
	Fingerprint *Fingerprint
	Tasks       []*Task  // nil: no snapshot
	Raw         [][]byte // encoded snapshots, capacity clipped; nil: none
}

// AppendTo appends the encoding of f, checksum included: Decode of the
// result gives f again.
func (f *File) AppendTo(b []byte) []byte {
	return AppendFile(b, f.Fingerprint.AppendHead(nil), f.Raw)
}

// Decode decodes a checkpoint file held in data, naming it name in
// errors. A malformed input gives an *Error; Decode never panics and
// allocates at most about the size of data. The result keeps references
// into data; do not modify data afterwards.
func Decode(data []byte, name string) (*File, error) {
	d := &ckDecoder{in: binio.NewBytes(data), name: name}
	switch {
	case len(data) == 0:
		return nil, d.failKind(ErrCorrupt, "empty file")
	case len(data) < len(Magic) && !bytes.HasPrefix([]byte(Magic), data),
		len(data) >= len(Magic) && string(data[:len(Magic)]) != Magic:
		return nil, d.failKind(ErrNotCheckpoint, "file starts with %q, want %q", data[:min(len(data), len(Magic))], Magic)
	case len(data) < len(Magic)+8:
		return nil, d.failKind(ErrCorrupt, "truncated: %d bytes", len(data))
	}
	d.take(uint64(len(Magic)), "magic")
	version := d.u32("version")
	if version != 1 && version != Version {
		return nil, d.failKindAt(d.pos()-4, ErrVersion, "file has format version %d, this build reads versions 1 and %d", version, Version)
	}
	body := data[:len(data)-4]
	if got, want := binary.LittleEndian.Uint32(data[len(body):]), crc32.Checksum(body, castagnoli); got != want {
		return nil, d.failKindAt(len(body), ErrCorrupt, "checksum mismatch: stored CRC-32C %#08x, contents give %#08x (file is damaged or truncated)", got, want)
	}
	at := d.pos()
	d.in, d.base = binio.NewBytes(body[at:]), at
	c := &File{}
	c.Fingerprint = d.fingerprint(version)
	if d.err != nil {
		return nil, d.err
	}
	// Each task takes at least one byte.
	if uint64(c.Fingerprint.Tasks) > uint64(d.left()) {
		return nil, d.fail("%d tasks in %d bytes", c.Fingerprint.Tasks, d.left())
	}
	c.Tasks = make([]*Task, c.Fingerprint.Tasks)
	c.Raw = make([][]byte, c.Fingerprint.Tasks)
	for i := range c.Tasks {
		switch state := d.u8("task state"); state {
		case 0:
			continue
		case 1:
		default:
			if d.err == nil {
				return nil, d.failAt(d.pos()-1, "task %d: state byte %d, want 0 or 1", i, state)
			}
		}
		n := d.u64("snapshot length")
		start := d.pos()
		sec := d.take(n, "snapshot")
		if d.err != nil {
			return nil, d.err
		}
		sd := &ckDecoder{in: binio.NewBytes(sec), name: name, base: start}
		st := sd.taskState(c.Fingerprint, i)
		if sd.err != nil {
			return nil, sd.err
		}
		c.Tasks[i], c.Raw[i] = st, sec[:len(sec):len(sec)]
	}
	if d.err == nil && d.left() != 0 {
		return nil, d.fail("%d trailing bytes after the last task", d.left())
	}
	if d.err != nil {
		return nil, d.err
	}
	return c, nil
}

// AppendFile appends a checkpoint file made of head (AppendHead) and the
// encoded snapshots of every task (nil: none), with its checksum.
func AppendFile(b, head []byte, secs [][]byte) []byte {
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

// ckDecoder reads little-endian fields through a bounded binio decoder
// with a sticky error that names the file and the offset at fault.
type ckDecoder struct {
	in   *binio.Decoder
	base int // offset in the file of in's first byte, for messages
	name string
	err  error
}

// pos returns the offset in the file of the next byte.
func (d *ckDecoder) pos() int { return d.base + int(d.in.Offset()) }

// left returns the number of bytes that remain.
func (d *ckDecoder) left() int {
	n, _ := d.in.Remaining()
	return int(n)
}

// failKindAt sets the sticky error, of class kind, at file offset at.
func (d *ckDecoder) failKindAt(at int, kind error, format string, args ...any) error {
	if d.err == nil {
		d.err = &Error{Name: d.name, Offset: int64(at), Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
	}
	return d.err
}

func (d *ckDecoder) failKind(kind error, format string, args ...any) error {
	return d.failKindAt(d.pos(), kind, format, args...)
}

func (d *ckDecoder) failAt(at int, format string, args ...any) error {
	return d.failKindAt(at, ErrCorrupt, format, args...)
}

func (d *ckDecoder) fail(format string, args ...any) error {
	return d.failKind(ErrCorrupt, format, args...)
}

// take consumes n bytes, or fails if fewer remain.
func (d *ckDecoder) take(n uint64, what string) []byte {
	if d.err != nil {
		return nil
	}
	if err := d.in.Need(n); err != nil {
		d.fail("%s: need %d bytes, only %d remain", what, n, d.left())
		return nil
	}
	b, err := d.in.Next(int(n))
	if err != nil {
		d.fail("%s: %v", what, err)
		return nil
	}
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
	if d.err == nil && n > uint64(d.left())/size {
		d.fail("%s = %d: needs %d bytes per element, only %d bytes remain", what, n, size, d.left())
		return 0
	}
	return n
}

// fingerprint decodes and checks the fingerprint and the task count.
func (d *ckDecoder) fingerprint(version uint32) *Fingerprint {
	f := &Fingerprint{Version: version}
	known := uint32(flagsV2)
	if version == 1 {
		known = flagsV1
	}
	n := d.u32("learner length")
	if d.err == nil && (n < 1 || n > 64) {
		d.fail("learner name of %d bytes", n)
	}
	f.Learner = string(d.take(uint64(n), "learner"))
	f.Flags = d.u32("flags")
	if d.err == nil && f.Flags&^known != 0 {
		d.fail("unknown flag bits %#x", f.Flags&^known)
	}
	f.K = d.u32("K")
	f.Iterations = int64(d.u64("iterations"))
	f.Lambda, f.Entropy, f.CostRatio, f.Bias = d.f64("lambda"), d.f64("entropy"), d.f64("cost ratio"), d.f64("bias")
	f.Seed = d.u64("seed")
	f.Data = DataID{d.u64("rows"), d.u64("nonzeros"), d.u64("dimension"), d.u64("data hash")}
	f.InitHash = d.u64("init hash")
	c := d.u32("class count")
	if d.err != nil {
		return f
	}
	if uint64(c) > uint64(d.left())/4 || c > 1<<16 {
		d.fail("%d classes", c)
		return f
	}
	f.Classes = make([]float32, c)
	for i := range f.Classes {
		f.Classes[i] = math.Float32frombits(d.u32("class"))
	}
	if f.Flags&FlagEarly != 0 {
		f.ValidEvery, f.Patience = int64(d.u64("validation interval")), d.u32("patience")
		f.Valid = DataID{d.u64("validation rows"), d.u64("validation nonzeros"), d.u64("validation dimension"), d.u64("validation data hash")}
		if d.err == nil && (f.ValidEvery < 1 || f.Patience < 1 || f.Valid.Rows < 1) {
			d.fail("early stopping every %d steps, patience %d, %d validation rows: want each >= 1", f.ValidEvery, f.Patience, f.Valid.Rows)
		}
	}
	f.Tasks = d.u32("task count")
	if d.err != nil {
		return f
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	sides := uint64(1)
	if f.Flags&FlagDouble != 0 {
		sides = 2
	}
	want := sides
	if f.Flags&FlagOvO != 0 {
		want = sides * uint64(c) * (uint64(c) - 1) / 2
	}
	switch {
	case f.Learner != "cpm":
		d.fail("learner %q, want cpm", f.Learner)
	case f.K < 1 || f.K > assign.MaxFaces:
		d.fail("K = %d, want 1 to %d", f.K, assign.MaxFaces)
	case f.Iterations < 1:
		d.fail("iterations = %d, want >= 1", f.Iterations)
	case !(f.Lambda > 0) || !finite(f.Lambda), !(f.Entropy >= 0) || !finite(f.Entropy),
		!(f.CostRatio > 0) || !finite(f.CostRatio), !finite(f.Bias):
		d.fail("hyperparameters out of range: lambda %v, entropy %v, cost ratio %v, bias %v", f.Lambda, f.Entropy, f.CostRatio, f.Bias)
	case f.Flags&FlagInit == 0 && f.InitHash != 0:
		d.fail("initial model hash without a warm start")
	case c < 2:
		d.fail("%d labels, want at least 2", c)
	case f.Tasks > ckMaxTasks || uint64(f.Tasks) != want:
		d.fail("%d tasks, the labels and sides call for %d", f.Tasks, want)
	}
	return f
}

// taskState decodes the snapshot of task i of a run with fingerprint f.
func (d *ckDecoder) taskState(f *Fingerprint, i int) *Task {
	st := &Task{}
	st.Done = int64(d.u64("done"))
	st.T = int64(d.u64("t"))
	st.Scale = d.f64("scale")
	dim := d.u64("D")
	k := d.u32("K")
	if d.err != nil {
		return nil
	}
	switch {
	case st.Done < 0 || st.Done > f.Iterations:
		d.fail("task %d: %d steps done of %d", i, st.Done, f.Iterations)
	case st.T < st.Done || (f.Flags&FlagInit == 0 && st.T != st.Done):
		d.fail("task %d: step counter %d after %d steps", i, st.T, st.Done)
	case !(st.Scale > 0 && st.Scale <= 1):
		d.fail("task %d: lazy scale %v, want in (0, 1]", i, st.Scale)
	case k != f.K:
		d.fail("task %d: K = %d, the run has %d", i, k, f.K)
	case dim < 1 || dim > uint64(ckMaxD):
		d.fail("task %d: D = %d, want 1 to %d", i, dim, ckMaxD)
	}
	stride := uint64(sparsevec.StrideFor(int(k)))
	if d.err == nil && dim > uint64(d.left())/(4*stride) {
		d.fail("task %d: %d×%d weights need %d bytes, only %d remain", i, dim, stride, 4*dim*stride, d.left())
	}
	if d.err != nil {
		return nil
	}
	if st.W = d.weights(int(dim), int(k), int(stride), i, "weight"); st.W == nil {
		return nil
	}
	d.stats(st, i)
	if !d.assigner(f, st, i) || !d.source(f, st, i) {
		return nil
	}
	if f.Version >= 2 {
		switch has := d.u8("early stopping flag"); {
		case d.err != nil:
			return nil
		case has > 1 || (has == 1) != (f.Flags&FlagEarly != 0):
			d.failAt(d.pos()-1, "task %d: early stopping flag %d with early stopping %v", i, has, f.Flags&FlagEarly != 0)
			return nil
		case has == 1:
			if st.Early = d.stop(f, st, i); st.Early == nil {
				return nil
			}
		}
	}
	if d.err == nil && d.left() != 0 {
		d.fail("task %d: %d trailing bytes in the snapshot", i, d.left())
		return nil
	}
	return st
}

// stats decodes the step statistics of task i's snapshot st.
func (d *ckDecoder) stats(st *Task, i int) {
	s := &st.Stats
	s.Neg, s.Pos, s.Updates = int64(d.u64("negatives")), int64(d.u64("positives")), int64(d.u64("updates"))
	s.NegLoss, s.PosLoss = d.f64("negative loss"), d.f64("positive loss")
	switch {
	case d.err != nil:
	case s.Neg < 0 || s.Pos < 0 || s.Updates < 0:
		d.fail("task %d: negative statistics", i)
	case uint64(s.Neg)+uint64(s.Pos) > uint64(st.Done) || s.Updates > s.Neg+s.Pos:
		d.fail("task %d: statistics of %d negative and %d positive rows with %d updates after %d steps", i, s.Neg, s.Pos, s.Updates, st.Done)
	case !(s.NegLoss >= 0) || !(s.PosLoss >= 0) || math.IsInf(s.NegLoss, 0) || math.IsInf(s.PosLoss, 0):
		d.fail("task %d: loss sums %v and %v, want finite values >= 0", i, s.NegLoss, s.PosLoss)
	}
}

// assigner decodes the ASSIGN state of task i's snapshot st and reports
// whether it fits the run.
func (d *ckDecoder) assigner(f *Fingerprint, st *Task, i int) bool {
	n := d.count(1, "ASSIGN state length")
	at := d.pos()
	ab := d.take(n, "ASSIGN state")
	if d.err != nil {
		return false
	}
	st.Asg = new(assign.Assigner)
	if err := st.Asg.UnmarshalBinary(ab); err != nil {
		d.failAt(at, "task %d: %v", i, err)
		return false
	}
	if len(st.Asg.Counts()) != int(f.K) || math.Float64bits(st.Asg.Target()) != math.Float64bits(f.Entropy) {
		d.failAt(at, "task %d: ASSIGN state for K = %d, h = %v; the run has K = %d, h = %v", i, len(st.Asg.Counts()), st.Asg.Target(), f.K, f.Entropy)
		return false
	}
	return true
}

// source decodes the row source position of task i's snapshot st and
// reports whether it is possible.
func (d *ckDecoder) source(f *Fingerprint, st *Task, i int) bool {
	src := &st.Src
	src.N, src.Pos, src.Epoch = int64(d.u64("rows")), int64(d.u64("position")), int64(d.u64("epoch"))
	hasPerm := d.u8("permutation flag")
	if d.err != nil {
		return false
	}
	switch {
	case src.N < 1 || src.N > math.MaxInt32:
		d.fail("task %d: %d rows", i, src.N)
	case uint64(src.N) > f.Data.Rows || (f.Flags&FlagOvO == 0 && uint64(src.N) != f.Data.Rows):
		d.fail("task %d: row source of %d rows, the training data has %d", i, src.N, f.Data.Rows)
	case src.Pos < 0 || src.Pos > src.N:
		d.fail("task %d: position %d of %d rows", i, src.Pos, src.N)
	case src.Epoch < 0 || src.Pos > st.Done || (st.Done-src.Pos)%src.N != 0 || (st.Done-src.Pos)/src.N != src.Epoch:
		d.fail("task %d: epoch %d, position %d of %d rows after %d steps (one row a step)", i, src.Epoch, src.Pos, src.N, st.Done)
	case hasPerm > 1 || (hasPerm == 1) != (f.Flags&FlagReshuffle != 0):
		d.fail("task %d: permutation flag %d with reshuffle %v", i, hasPerm, f.Flags&FlagReshuffle != 0)
	case hasPerm == 1 && uint64(src.N) > uint64(d.left())/4:
		d.fail("task %d: permutation of %d rows needs %d bytes, only %d remain", i, src.N, 4*src.N, d.left())
	}
	if d.err != nil {
		return false
	}
	if hasPerm == 1 {
		at := d.pos()
		raw := d.take(uint64(4*src.N), "permutation")
		src.Perm = make([]int32, src.N)
		seen := make([]bool, src.N)
		for j := range src.Perm {
			v := binary.LittleEndian.Uint32(raw[4*j:])
			if int64(v) >= src.N || seen[v] {
				d.failAt(at+4*j, "task %d: permutation entry %d = %d is out of range or repeated", i, j, v)
				return false
			}
			seen[v] = true
			src.Perm[j] = int32(v)
		}
	}
	rb := d.take(PCGSize, "PCG state")
	if d.err != nil {
		return false
	}
	if err := new(rand.PCG).UnmarshalBinary(rb); err != nil {
		d.failAt(d.pos()-PCGSize, "task %d: PCG state: %v", i, err)
		return false
	}
	copy(src.RNG[:], rb)
	return d.err == nil
}

// weights decodes a dim×k weight matrix of the given stride (whose size
// the caller has checked against the bytes that remain) of task i, or
// returns nil after failing on a weight that is not finite; what names
// the weights in the message ("weight", "best weight").
func (d *ckDecoder) weights(dim, k, stride, i int, what string) *sparsevec.Matrix {
	w := &sparsevec.Matrix{D: dim, K: k, Stride: stride, Data: make([]float32, dim*stride)}
	raw := d.take(uint64(4*dim*stride), what+"s")
	for j := range w.Data {
		w.Data[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
	}
	if j, ok := nonFinite(w); !ok {
		d.failAt(d.pos()-len(raw)+4*j, "task %d: %s of feature %d, face %d is %v, want a finite value", i, what, j/w.Stride, j%w.Stride, w.Data[j])
		return nil
	}
	return w
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

// appendStop appends the encoding of st (see Checkpointing):
// best error, step of the best, evaluations since, last error, then a
// byte 1 and the best polytope (t, s, D, weights, entropy, K counts) or 0.
func appendStop(b []byte, st *Stop) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, math.Float64bits(st.Best))
	b = le.AppendUint64(b, uint64(st.BestDone))
	b = le.AppendUint32(b, st.Since)
	b = le.AppendUint64(b, math.Float64bits(st.Last))
	if st.W == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = le.AppendUint64(b, uint64(st.T))
	b = le.AppendUint64(b, math.Float64bits(st.Scale))
	b = le.AppendUint64(b, uint64(st.W.D))
	b = appendF32s(b, st.W.Data[:st.W.D*st.W.Stride])
	b = le.AppendUint64(b, math.Float64bits(st.Kept.Entropy))
	for _, c := range st.Kept.Counts {
		b = le.AppendUint64(b, uint64(c))
	}
	return b
}

// Stop decodes the early-stopping state of task i, whose snapshot so
// far is st, of a run with fingerprint f.
func (d *ckDecoder) stop(f *Fingerprint, st *Task, i int) *Stop {
	es := &Stop{}
	es.Best, es.BestDone = d.f64("best validation error"), int64(d.u64("best step"))
	es.Since, es.Last = d.u32("evaluations since the best"), d.f64("last validation error")
	has := d.u8("best weights flag")
	if d.err != nil {
		return nil
	}
	rate := func(v float64) bool { return v >= 0 && v <= 1 }
	switch {
	case !rate(es.Best) && !math.IsInf(es.Best, 1):
		d.fail("task %d: best validation error %v", i, es.Best)
	case !rate(es.Last) && !math.IsNaN(es.Last):
		d.fail("task %d: last validation error %v", i, es.Last)
	case es.BestDone < 0 || es.BestDone > st.Done || es.Since > f.Patience:
		d.fail("task %d: best after step %d, %d evaluations since, after %d steps with patience %d", i, es.BestDone, es.Since, st.Done, f.Patience)
	case has > 1 || (has == 1) != rate(es.Best):
		d.fail("task %d: best weights flag %d with best error %v", i, has, es.Best)
	}
	if d.err != nil {
		return nil
	}
	if has == 0 {
		return es
	}
	es.T, es.Scale = int64(d.u64("best step counter")), d.f64("best lazy scale")
	dim := d.u64("best D")
	if d.err != nil {
		return nil
	}
	stride := uint64(st.W.Stride)
	switch {
	case es.T < 0 || es.T > st.T:
		d.fail("task %d: best step counter %d after %d", i, es.T, st.T)
	case !(es.Scale > 0 && es.Scale <= 1):
		d.fail("task %d: best lazy scale %v, want in (0, 1]", i, es.Scale)
	case dim < 1 || dim > uint64(st.W.D):
		d.fail("task %d: best weights have D = %d, the snapshot %d", i, dim, st.W.D)
	case dim > uint64(d.left())/(4*stride):
		d.fail("task %d: %d×%d best weights need %d bytes, only %d remain", i, dim, stride, 4*dim*stride, d.left())
	}
	if d.err != nil {
		return nil
	}
	if es.W = d.weights(int(dim), st.W.K, int(stride), i, "best weight"); es.W == nil {
		return nil
	}
	es.Kept.Entropy = d.f64("best entropy")
	es.Kept.Counts = make([]int64, st.W.K)
	for k := range es.Kept.Counts {
		es.Kept.Counts[k] = int64(d.u64("best counts"))
	}
	if d.err != nil {
		return nil
	}
	if e := es.Kept.Entropy; !(e >= 0) || math.IsInf(e, 0) || slices.ContainsFunc(es.Kept.Counts, func(c int64) bool { return c < 0 }) {
		d.fail("task %d: best assignment entropy %v or counts %v out of range", i, e, es.Kept.Counts)
		return nil
	}
	return es
}
