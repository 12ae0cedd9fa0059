package sgd

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"github.com/polyhedral/cpm/sgd/internal/checkpoint"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// ckData returns n random sparse rows over d features with labels
// 1..classes (binary: ±1).
func ckData(seed uint64, n, d, classes int) *sparsevec.CSR {
	rng := rand.New(rand.NewPCG(seed, 99))
	data := randomRows(rng, n, d, 8)
	if classes > 2 {
		for i := range data.Labels {
			data.Labels[i] = float32(1 + rng.IntN(classes))
		}
	}
	return data
}

func modelBytes(t testing.TB, m *model.Model) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := model.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ckCase is a training setup for the checkpoint tests.
type ckCase struct {
	name string
	cfg  Config
	ovo  bool
	data *sparsevec.CSR
}

func ckCases() []ckCase {
	return []ckCase{
		{"single", Config{K: 4, Iterations: 6000, Entropy: 0.8, Reshuffle: true, Seed: 3}, false, ckData(1, 150, 40, 2)},
		{"double", Config{K: 3, Iterations: 6000, DoubleSided: true, Entropy: 0.5, CostRatio: 0.7, Seed: 4}, false, ckData(2, 150, 40, 2)},
		{"ovo", Config{K: 2, Iterations: 5000, DoubleSided: true, Reshuffle: true, Seed: 5, Workers: 2}, true, ckData(3, 180, 30, 3)},
	}
}

func (c ckCase) train(ctx context.Context, cfg Config) (*model.Model, *Report, error) {
	if c.ovo {
		return TrainOvO(ctx, cfg, c.data)
	}
	return Train(ctx, cfg, c.data, nil)
}

// trainUntil trains c with checkpoints to path and cancels training once a
// polytope reports stopAt steps; it returns the checkpoint written.
func (c ckCase) trainUntil(t *testing.T, cfg Config, path string, stopAt int64) *Checkpoint {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Checkpoint.Path = path
	cfg.ProgressEvery = 1000
	var once sync.Once
	cfg.Progress = func(p Progress) {
		if p.Step >= stopAt {
			once.Do(cancel)
		}
	}
	_, _, err := c.train(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted training: %v, want context.Canceled", err)
	}
	ck, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

// Training interrupted (twice) and resumed from its checkpoints writes the
// same model bytes as an uninterrupted run: single-sided, double-sided and
// one-vs-one, with reshuffling and the entropy heuristic.
func TestResumeMatchesUninterrupted(t *testing.T) {
	for _, c := range ckCases() {
		t.Run(c.name, func(t *testing.T) {
			want, _, err := c.train(context.Background(), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			wantB := modelBytes(t, want)
			path := filepath.Join(t.TempDir(), "ck")

			cfg := c.cfg
			cfg.Checkpoint.Every = 700 // not a multiple of ProgressEvery: cancellation snapshots mid-interval
			ck1 := c.trainUntil(t, cfg, path, 2000)
			done, total := ck1.Progress()
			if done == 0 || done >= total {
				t.Fatalf("first interruption: %d of %d steps done; the test interrupts nothing", done, total)
			}
			cfg.Checkpoint.Resume = ck1
			ck2 := c.trainUntil(t, cfg, path, 4000)
			if d2, _ := ck2.Progress(); d2 <= done || d2 >= total {
				t.Fatalf("second interruption: %d steps done after %d, of %d", d2, done, total)
			}

			// Resume to the end, with and without writing checkpoints.
			for _, p := range []string{path, ""} {
				cfg := c.cfg
				cfg.Checkpoint = Checkpointing{Path: p, Every: 1500, Resume: ck2}
				got, rep, err := c.train(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(modelBytes(t, got), wantB) {
					t.Fatalf("resumed model (checkpoint %q) differs from the uninterrupted one", p)
				}
				d2, _ := ck2.Progress()
				if rep.Steps != total-d2 {
					t.Errorf("report: %d steps, want the %d left", rep.Steps, total-d2)
				}
			}
			// The last checkpoint holds every polytope finished; resuming
			// from it only rebuilds the model.
			ck3, err := LoadCheckpoint(path)
			if err != nil {
				t.Fatal(err)
			}
			if d3, _ := ck3.Progress(); d3 != total {
				t.Fatalf("final checkpoint: %d of %d steps", d3, total)
			}
			cfg = c.cfg
			cfg.Checkpoint.Resume = ck3
			got, rep, err := c.train(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(modelBytes(t, got), wantB) || rep.Steps != 0 {
				t.Fatalf("model from a finished checkpoint differs (or took %d steps)", rep.Steps)
			}
		})
	}
}

// Checkpoints taken by wall-clock interval also resume exactly.
func TestResumeAfterIntervalCheckpoints(t *testing.T) {
	c := ckCases()[0]
	want, _, err := c.train(context.Background(), c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ck")
	cfg := c.cfg
	cfg.Checkpoint.Interval = 1 // every chunk boundary
	ck := c.trainUntil(t, cfg, path, 3000)
	cfg = c.cfg
	cfg.Checkpoint.Resume = ck
	got, _, err := c.train(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(modelBytes(t, got), modelBytes(t, want)) {
		t.Fatal("resumed model differs from the uninterrupted one")
	}
}

// snapshotOf trains a fresh polytope and source for steps steps and returns
// them.
func snapshotOf(t *testing.T, cfg Config, data *sparsevec.CSR, steps int) (*polytope, *memorySource) {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPolytope(cfg, data.Dim)
	if err != nil {
		t.Fatal(err)
	}
	p.asg.Reserve(data.Rows())
	src, err := newMemorySource(sparsevec.Pack(data, nil, sparsevec.PackCompact), nil, cfg.Seed, mix(0), cfg.Reshuffle)
	if err != nil {
		t.Fatal(err)
	}
	for range steps {
		x, y, id, _ := src.Next()
		p.Step(x, y == 1, id)
	}
	return p, src
}

// A snapshot decodes to the state it encodes, bit for bit: raw weights and
// lazy scale (not folded), step counter, statistics, ASSIGN state and the
// row source's position, permutation and PCG state; restored into a new
// polytope and source it re-encodes to the same bytes and continues
// exactly as the original.
func TestCheckpointStateRoundTrip(t *testing.T) {
	data := ckData(7, 120, 25, 2)
	cfg := Config{K: 5, Iterations: 1 << 20, Entropy: 1, Reshuffle: true, Seed: 9}
	p, src := snapshotOf(t, cfg, data, 1000)
	if p.scale == 1 {
		t.Fatal("scale is 1: the test does not exercise the lazy scale")
	}
	fcfg, _ := cfg.withDefaults()
	fp, err := newFingerprint(fcfg, data, []float32{1, -1}, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	sec := checkpoint.AppendTask(nil, &taskState{Done: 1000, T: p.t, Scale: p.scale, W: p.W, Stats: p.stats, Asg: p.asg, Src: src.state()})
	file := checkpoint.AppendFile(nil, fp.AppendHead(nil), [][]byte{sec})
	ck, err := ReadCheckpoint(file, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := ck.appendTo(nil); !bytes.Equal(got, file) {
		t.Fatal("decoded checkpoint re-encodes differently")
	}
	st := ck.tasks[0]
	if got := checkpoint.AppendTask(nil, st); !bytes.Equal(got, sec) {
		t.Fatal("decoded snapshot re-encodes differently")
	}

	q, src2 := snapshotOf(t, cfg, data, 0)
	if err := q.restore(st); err != nil {
		t.Fatal(err)
	}
	if err := src2.restore(&st.Src); err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(q.scale) != math.Float64bits(p.scale) || q.t != p.t || q.stats != p.stats {
		t.Fatalf("restored scale %v t %d stats %+v, want %v %d %+v", q.scale, q.t, q.stats, p.scale, p.t, p.stats)
	}
	if again := checkpoint.AppendTask(nil, &taskState{Done: 1000, T: q.t, Scale: q.scale, W: q.W, Stats: q.stats, Asg: q.asg, Src: src2.state()}); !bytes.Equal(again, sec) {
		t.Fatal("restored state encodes differently")
	}
	// Continue both for a few epochs (reshuffles and folds included).
	for range 3000 {
		x, y, id, _ := src.Next()
		p.Step(x, y == 1, id)
		x, y, id, _ = src2.Next()
		q.Step(x, y == 1, id)
	}
	for i := range p.W.Data {
		if math.Float32bits(p.W.Data[i]) != math.Float32bits(q.W.Data[i]) {
			t.Fatalf("weights diverge at %d after resuming: %v vs %v", i, p.W.Data[i], q.W.Data[i])
		}
	}
	if math.Float64bits(q.scale) != math.Float64bits(p.scale) || q.asg.Entropy() != p.asg.Entropy() {
		t.Fatal("scale or ASSIGN state diverge after resuming")
	}
	// The restored state is a copy: training q did not touch the checkpoint.
	if again := checkpoint.AppendTask(nil, st); !bytes.Equal(again, sec) {
		t.Fatal("training a restored polytope modified the checkpoint")
	}
}

// Once its buffers have grown, taking a snapshot does not allocate.
func TestSnapshotDoesNotAllocate(t *testing.T) {
	data := ckData(7, 120, 25, 2)
	cfg := Config{K: 5, Iterations: 1 << 20, Reshuffle: true}
	p, src := snapshotOf(t, cfg, data, 500)
	w := &ckWriter{secs: make([][]byte, 1), wake: make(chan struct{}, 1)}
	ck := &taskCk{w: w}
	ck.snapshot(p, src, nil, 1)
	ck.snapshot(p, src, nil, 2)
	if a := testing.AllocsPerRun(100, func() { ck.snapshot(p, src, nil, 3) }); a != 0 {
		t.Fatalf("a snapshot allocates %v times", a)
	}
}

// Resuming with other data or flags fails and names what differs.
func TestResumeMismatch(t *testing.T) {
	c := ckCases()[1]
	path := filepath.Join(t.TempDir(), "ck")
	cfg := c.cfg
	ck := c.trainUntil(t, cfg, path, 2000)
	other := ckData(2, 150, 40, 2)
	other.Labels[7] = -other.Labels[7]
	tests := []struct {
		name string
		edit func(*Config, *ckCase)
		want string
	}{
		{"K", func(c *Config, _ *ckCase) { c.K++ }, "K (faces per polytope): checkpoint 3, this run 4"},
		{"iterations", func(c *Config, _ *ckCase) { c.Iterations++ }, "iterations T"},
		{"lambda", func(c *Config, _ *ckCase) { c.Lambda = 1e-3 }, "lambda"},
		{"C", func(c *Config, _ *ckCase) { c.C = 2 }, "lambda"},
		{"entropy", func(c *Config, _ *ckCase) { c.Entropy = 0 }, "entropy"},
		{"cost ratio", func(c *Config, _ *ckCase) { c.CostRatio = 1 }, "cost ratio"},
		{"bias", func(c *Config, _ *ckCase) { c.NoBias = true }, "bias"},
		{"seed", func(c *Config, _ *ckCase) { c.Seed++ }, "seed: checkpoint 4, this run 5"},
		{"sides", func(c *Config, _ *ckCase) { c.DoubleSided = false }, "double-sided: checkpoint true, this run false"},
		{"reshuffle", func(c *Config, _ *ckCase) { c.Reshuffle = true }, "reshuffle"},
		{"data", func(_ *Config, cc *ckCase) { cc.data = other }, "training data"},
		{"ovo", func(_ *Config, cc *ckCase) { cc.ovo = true }, "one-vs-one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := c
			cfg := c.cfg
			tt.edit(&cfg, &cc)
			cfg.Checkpoint.Resume = ck
			_, _, err := cc.train(context.Background(), cfg)
			if !errors.Is(err, ErrCheckpointMismatch) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("resume with other %s: %v, want ErrCheckpointMismatch naming %q and the file", tt.name, err, tt.want)
			}
		})
	}
	// Stream training cannot be checkpointed.
	cfg.Checkpoint = Checkpointing{Path: path}
	if _, _, err := TrainStream(context.Background(), cfg, OpenFunc(func() (Blocks, error) { return nil, errors.New("unused") }), 10, [2]float32{1, -1}); err == nil || !strings.Contains(err.Error(), "in-memory") {
		t.Fatalf("TrainStream with checkpoints: %v", err)
	}
}

// smallCheckpoint returns the bytes of a real checkpoint of a short
// interrupted double-sided run with reshuffling.
func smallCheckpoint(t testing.TB) []byte {
	t.Helper()
	cfg := Config{K: 2, Iterations: 40, DoubleSided: true, Reshuffle: true, Entropy: 0.5, Workers: 1}
	return checkpointOf(t, cfg, ckData(11, 12, 6, 2))
}

// checkpointOf trains cfg on data, with a checkpoint every 25 steps, and
// returns the final checkpoint file.
func checkpointOf(t testing.TB, cfg Config, data *sparsevec.CSR) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ck")
	cfg.Checkpoint = Checkpointing{Path: path, Every: 25}
	if _, _, err := Train(context.Background(), cfg, data, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixCRC returns b with its trailing checksum recomputed.
func fixCRC(b []byte) []byte {
	if len(b) < 4 {
		return b
	}
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint32(c[len(c)-4:], crc32.Checksum(c[:len(c)-4], crc32.MakeTable(crc32.Castagnoli)))
	return c
}

// Damaged checkpoints are refused with the right kind of error, never a
// panic: every truncation, every single-byte change (checksum), a wrong
// magic or version, and structural damage behind a valid checksum.
func TestReadCheckpointRefusesDamage(t *testing.T) {
	good := smallCheckpoint(t)
	if _, err := ReadCheckpoint(good, "good"); err != nil {
		t.Fatal(err)
	}
	for n := range len(good) {
		if _, err := ReadCheckpoint(good[:n], "short"); err == nil {
			t.Fatalf("truncated to %d bytes: accepted", n)
		}
	}
	for i := len(checkpoint.Magic) + 4; i < len(good); i++ {
		b := bytes.Clone(good)
		b[i] ^= 0x10
		if _, err := ReadCheckpoint(b, "flip"); !errors.Is(err, ErrCheckpointCorrupt) {
			t.Fatalf("byte %d changed: %v, want ErrCheckpointCorrupt", i, err)
		}
		// Behind a valid checksum: refused or canonical, never a panic.
		if ck, err := ReadCheckpoint(fixCRC(b), "flip"); err == nil && !bytes.Equal(ck.appendTo(nil), fixCRC(b)) {
			t.Fatalf("byte %d changed: accepted a non-canonical file", i)
		}
	}
	var ce *CheckpointError
	b := bytes.Clone(good)
	b[0] = 'X'
	if _, err := ReadCheckpoint(b, "magic"); !errors.Is(err, ErrNotCheckpoint) || !errors.As(err, &ce) || ce.Name != "magic" {
		t.Fatalf("wrong magic: %v", err)
	}
	b = bytes.Clone(good)
	b[len(checkpoint.Magic)] = 9
	if _, err := ReadCheckpoint(b, "version"); !errors.Is(err, ErrCheckpointVersion) {
		t.Fatalf("wrong version: %v", err)
	}
	if _, err := ReadCheckpoint([]byte("CPMMODEL\x01\x00\x00\x00"), "model"); !errors.Is(err, ErrNotCheckpoint) {
		t.Fatalf("a model file: %v", err)
	}
}

// The training loop allocates nothing per step, with or without
// checkpoints: a run of 100 times the steps makes no more allocations
// (beyond the checkpoint file writes, which Every bounds).
func TestRunAllocsDoNotGrowWithSteps(t *testing.T) {
	data := ckData(8, 200, 30, 2)
	cfg, err := Config{K: 4, Entropy: 1, Reshuffle: true}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tk := memTask(cfg, packedRows(sparsevec.Pack(data, nil, sparsevec.PackCompact)), nil, "outer", 1, 0)
	allocs := func(steps int64, ck *taskCk) float64 {
		cfg := cfg
		cfg.Iterations = steps
		return testing.AllocsPerRun(3, func() {
			if _, _, err := tk.run(context.Background(), cfg, ck, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	if few, many := allocs(1000, nil), allocs(100_000, nil); many > few {
		t.Errorf("without checkpoints: %v allocations for 1000 steps, %v for 100000", few, many)
	}
	// Snapshots every 10000 steps into a writer that does not write.
	w := &ckWriter{secs: make([][]byte, 1), wake: make(chan struct{}, 1)}
	ck := &taskCk{w: w, every: 10_000}
	if few, many := allocs(10_000, ck), allocs(100_000, ck); many > few {
		t.Errorf("with snapshots every 10000 steps: %v allocations for 10000 steps, %v for 100000", few, many)
	}
}

// A checkpoint that cannot be written stops training with an error that
// says so.
func TestCheckpointWriteFailure(t *testing.T) {
	c := ckCases()[1]
	cfg := c.cfg
	cfg.Checkpoint = Checkpointing{Path: filepath.Join(t.TempDir(), "missing", "ck"), Every: 500}
	_, _, err := c.train(context.Background(), cfg)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "checkpoint") {
		t.Fatalf("training with an unwritable checkpoint: %v", err)
	}
}

// A checkpoint in format version 1 (written before early stopping existed)
// still resumes exactly, and the resumed run writes version 2.
func TestResumeFromVersion1(t *testing.T) {
	c := ckCases()[1]
	want, _, err := c.train(context.Background(), c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ck")
	cfg := c.cfg
	cfg.Checkpoint.Every = 700
	ck := c.trainUntil(t, cfg, path, 2000)
	// Version 1 is version 2 without the early-stopping byte.
	ck.fp.Version = 1
	var secs [][]byte
	for _, sec := range ck.raw {
		if sec != nil {
			if sec[len(sec)-1] != 0 {
				t.Fatal("snapshot without early stopping does not end in 0")
			}
			sec = sec[:len(sec)-1]
		}
		secs = append(secs, sec)
	}
	v1 := checkpoint.AppendFile(nil, ck.fp.AppendHead(nil), secs)
	if binary.LittleEndian.Uint32(v1[len(checkpoint.Magic):]) != 1 {
		t.Fatal("not a version 1 file")
	}
	old, err := ReadCheckpoint(v1, "v1")
	if err != nil {
		t.Fatal(err)
	}
	cfg = c.cfg
	cfg.Checkpoint = Checkpointing{Path: path, Resume: old}
	got, _, err := c.train(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(modelBytes(t, got), modelBytes(t, want)) {
		t.Fatal("model resumed from a version 1 checkpoint differs")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint32(b[len(checkpoint.Magic):]); v != checkpoint.Version {
		t.Fatalf("resumed run wrote version %d", v)
	}
	if _, err := ReadCheckpoint(b, path); err != nil {
		t.Fatal(err)
	}
}

// badCheckpoint is a checkpoint file and what ReadCheckpoint must say of it.
type badCheckpoint struct {
	want string
	b    []byte
}

// inconsistentCheckpoints returns checkpoints with a valid checksum whose
// contents are not finite or contradict themselves: each is
// smallCheckpoint with one field of its first snapshot changed.
func inconsistentCheckpoints(t testing.TB) []badCheckpoint {
	t.Helper()
	ck, err := ReadCheckpoint(smallCheckpoint(t), "good")
	if err != nil {
		t.Fatal(err)
	}
	var out []badCheckpoint
	edit := func(want string, change func(st *taskState)) {
		st := *ck.tasks[0]
		w := *st.W
		w.Data = slices.Clone(w.Data)
		st.W = &w
		change(&st)
		secs := slices.Clone(ck.raw)
		secs[0] = checkpoint.AppendTask(nil, &st)
		out = append(out, badCheckpoint{want, checkpoint.AppendFile(nil, ck.fp.AppendHead(nil), secs)})
	}
	edit("weight of feature 1, face 1 is NaN", func(st *taskState) { st.W.Data[st.W.Stride+1] = float32(math.NaN()) })
	edit("weight of feature 0, face 0 is +Inf", func(st *taskState) { st.W.Data[0] = float32(math.Inf(1)) })
	edit("loss sums", func(st *taskState) { st.Stats.PosLoss = math.NaN() })
	edit("loss sums", func(st *taskState) { st.Stats.NegLoss = -1 })
	edit("statistics of", func(st *taskState) { st.Stats.Neg = st.Done + 1 })
	edit("statistics of", func(st *taskState) { st.Stats.Updates = st.Stats.Neg + st.Stats.Pos + 1 })
	edit("row source of 13 rows", func(st *taskState) {
		st.Src.N++
		st.Src.Perm = append(slices.Clone(st.Src.Perm), int32(st.Src.N-1))
	})
	edit("epoch 4, position 4 of 12 rows after 40 steps", func(st *taskState) { st.Src.Epoch++ })
	edit("epoch 3, position 5 of 12 rows after 40 steps", func(st *taskState) { st.Src.Pos = (st.Src.Pos + 1) % st.Src.N })
	return out
}

// A checkpoint whose checksum is valid but whose contents are not finite
// or contradict each other is refused at load, naming the field.
func TestReadCheckpointRefusesInconsistent(t *testing.T) {
	for _, tc := range inconsistentCheckpoints(t) {
		want := tc.want
		_, err := ReadCheckpoint(tc.b, "bad")
		var ce *CheckpointError
		if !errors.Is(err, ErrCheckpointCorrupt) || !errors.As(err, &ce) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "task 0") {
			t.Errorf("%s: got %v, want ErrCheckpointCorrupt naming it", want, err)
		}
	}
}
