package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/polyhedral/cpm/assign"
	"github.com/polyhedral/cpm/sparsevec"
)

// file encodes a checkpoint of a run of K = 2 faces over 3 feature rows
// and 4 training rows with the given flags: one task per side, each with
// a snapshot after 6 steps (epoch 1, position 2), the early-stopping state
// when flags has FlagEarly, a permutation with FlagReshuffle.
func file(t testing.TB, flags uint32) []byte {
	t.Helper()
	fp := &Fingerprint{
		Learner: "cpm", Flags: flags, K: 2, Iterations: 100, Lambda: 0.01, Entropy: 0.5, CostRatio: 1, Bias: 1, Seed: 7,
		Data: DataID{Rows: 4, NNZ: 8, Dim: 3, Hash: 0x1234}, Classes: []float32{1, -1}, Tasks: 1,
	}
	if flags&FlagDouble != 0 {
		fp.Tasks = 2
	}
	if flags&FlagEarly != 0 {
		fp.ValidEvery, fp.Patience, fp.Valid = 5, 2, DataID{Rows: 2, NNZ: 4, Dim: 3, Hash: 0x5678}
	}
	secs := make([][]byte, fp.Tasks)
	for i := range secs {
		secs[i] = AppendTask(nil, task(t, flags, i))
	}
	return AppendFile(nil, fp.AppendHead(nil), secs)
}

// task returns the snapshot of task i for file.
func task(t testing.TB, flags uint32, i int) *Task {
	asg, err := assign.New(2, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	w := sparsevec.NewMatrix(3, 2)
	for j := range w.D {
		w.Set(j, 0, float32(j+i))
		w.Set(j, 1, -0.5*float32(j))
	}
	st := &Task{Done: 6, T: 6, Scale: 0.25, W: w, Asg: asg,
		Stats: Stats{Neg: 2, Pos: 3, NegLoss: 1.5, PosLoss: 0.25, Updates: 4},
		Src:   Source{N: 4, Pos: 2, Epoch: 1}}
	rng, _ := rand.NewPCG(uint64(i), 9).MarshalBinary()
	copy(st.Src.RNG[:], rng)
	if flags&FlagReshuffle != 0 {
		st.Src.Perm = []int32{2, 0, 3, 1}
	}
	if flags&FlagEarly != 0 {
		st.Early = &Stop{Best: 0.25, BestDone: 5, Since: 0, Last: 0.25, W: w, Scale: 0.5, T: 5,
			Kept: Kept{Counts: []int64{3, 1}, Entropy: 0.5}}
	}
	return st
}

// fixCRC returns b with its checksum recomputed.
func fixCRC(b []byte) []byte {
	if len(b) < 4 {
		return b
	}
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint32(c[len(c)-4:], crc32.Checksum(c[:len(c)-4], castagnoli))
	return c
}

// The files the tests encode decode, and re-encode byte for byte.
func TestRoundTrip(t *testing.T) {
	for _, flags := range []uint32{0, FlagDouble, FlagReshuffle, FlagEarly, FlagDouble | FlagReshuffle | FlagEarly} {
		in := file(t, flags)
		f, err := Decode(in, "test")
		if err != nil {
			t.Fatalf("flags %#x: %v", flags, err)
		}
		if out := f.AppendTo(nil); !bytes.Equal(out, in) {
			t.Errorf("flags %#x: re-encoding differs", flags)
		}
		if got := f.Tasks[0]; got.Done != 6 || got.Src.Pos != 2 || (flags&FlagEarly != 0) != (got.Early != nil) {
			t.Errorf("flags %#x: decoded task %+v", flags, got)
		}
	}
	if _, err := Decode(fixCRC(file(t, 0)[:60]), "short"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated file: err = %v, want ErrCorrupt", err)
	}
}

// FuzzDecode checks that Decode never panics, reports every refusal as an
// *Error, and accepts only canonical encodings: a decoded file re-encodes
// to its input, byte for byte. Each input is also tried with its checksum
// recomputed, so that mutations reach the structural checks behind it.
//
// The seed corpus is testdata/fuzz/FuzzDecode (checkpoints of tiny real
// runs of package sgd: finished, interrupted with a polytope not started,
// with and without a permutation; format version 1) plus the files this
// test encodes (version 2, with and without early stopping).
func FuzzDecode(f *testing.F) {
	for _, flags := range []uint32{0, FlagDouble | FlagReshuffle, FlagEarly} {
		b := file(f, flags)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, fixCRC(b)} {
			d, err := Decode(in, "fuzz")
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v is not an *Error", err)
				}
				continue
			}
			if out := d.AppendTo(nil); !bytes.Equal(out, in) {
				t.Fatalf("accepted a non-canonical encoding:\n in %x\nout %x", in, out)
			}
		}
	})
}
