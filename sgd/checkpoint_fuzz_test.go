package sgd

import (
	"bytes"
	"errors"
	"github.com/polyhedral/cpm/sgd/internal/checkpoint"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// FuzzReadCheckpoint checks that ReadCheckpoint never panics, reports
// every refusal as a *CheckpointError, and accepts only canonical
// encodings: a decoded checkpoint re-encodes to the input, byte for byte.
// Each input is also tried with its checksum recomputed, so that mutations
// reach the structural checks behind it. Accepted snapshots are restored
// into a polytope and a row source and trained a few steps, which must not
// panic either.
//
// The seed corpus is testdata/fuzz/FuzzReadCheckpoint (real checkpoints of
// tiny runs: finished, interrupted with a polytope not started, with and
// without a permutation; format version 1) plus the f.Add seeds below
// (version 2, one with early stopping, and inconsistentCheckpoints: valid
// checksums over a NaN weight, counts that contradict each other).
func FuzzReadCheckpoint(f *testing.F) {
	good := smallCheckpoint(f)
	f.Add(good)
	f.Add(earlyStopCheckpoint(f))
	f.Add(good[:len(good)/2])
	f.Add(fixCRC(good[:len(good)-9]))
	f.Add([]byte(checkpoint.Magic))
	for _, bad := range inconsistentCheckpoints(f) {
		f.Add(bad.b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, fixCRC(b)} {
			ck, err := ReadCheckpoint(in, "fuzz")
			if err != nil {
				var ce *CheckpointError
				if !errors.As(err, &ce) {
					t.Fatalf("error %v is not a *CheckpointError", err)
				}
				continue
			}
			if out := ck.appendTo(nil); !bytes.Equal(out, in) {
				t.Fatalf("accepted a non-canonical encoding:\n in %x\nout %x", in, out)
			}
			for _, st := range ck.tasks {
				if st == nil || st.Src.N > 1000 {
					continue
				}
				fuzzRestore(t, ck.fp, st)
			}
		}
	})
}

// fuzzRestore restores st into a polytope and a source over st.src.n empty
// rows and takes a few steps.
func fuzzRestore(t *testing.T, fp *fingerprint, st *taskState) {
	cfg, err := Config{K: int(fp.K), Entropy: fp.Entropy, Lambda: fp.Lambda, Iterations: fp.Iterations}.withDefaults()
	if err != nil {
		t.Fatalf("decoded fingerprint gives an invalid config: %v", err)
	}
	p, err := newPolytope(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.restore(st); err != nil {
		t.Fatalf("restoring a decoded snapshot: %v", err)
	}
	var data sparsevec.CSR
	for range st.Src.N {
		data.Append(1, sparsevec.Vector{})
	}
	src, err := newMemorySource(sparsevec.Pack(&data, nil, sparsevec.PackCompact), nil, fp.Seed, 1, st.Src.Perm != nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.restore(&st.Src); err != nil {
		t.Fatalf("restoring a decoded source: %v", err)
	}
	for i := range 50 {
		x, y, id, _ := src.Next()
		p.Step(x, y == 1 && i%2 == 0, id)
	}
	if st.Early != nil {
		// Roll back to the decoded best weights and step on from there.
		s := &stopper{patience: int(fp.Patience), every: fp.ValidEvery}
		s.restore(st.Early)
		s.keepBest(p)
		for i := range 10 {
			x, _, id, _ := src.Next()
			p.Step(x, i%2 == 0, id)
		}
	}
}

// earlyStopCheckpoint returns the checkpoint file of a tiny finished run
// with early stopping: every snapshot holds its stopper and best weights.
func earlyStopCheckpoint(t testing.TB) []byte {
	t.Helper()
	data := ckData(12, 12, 6, 2)
	cfg := Config{K: 2, Iterations: 60, Workers: 1, Seed: 2, Valid: Validation{Data: data, Every: 10, Patience: 2}}
	return checkpointOf(t, cfg, data)
}
