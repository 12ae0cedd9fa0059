// Package checkpoint encodes and decodes the checkpoint files of package
// sgd's CPM training: a fingerprint of the run (what a resumed run must
// share with it) and the latest snapshot of every task (polytope). What a
// snapshot means and when it is taken is package sgd's (see
// sgd.Checkpointing); this package is the byte layout and its checks.
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
// byte; Decode reads both, and a run resumed from a version 1 file
// writes version 2.
//
// Decode refuses every byte string this encoding cannot produce,
// never panics, and checks every declared size against the bytes that
// remain before allocating for it. Behind a valid checksum it also checks
// that the contents are possible: every weight (of the snapshot and of the
// best polytope) and loss sum finite, the statistics within the steps
// done, the row source one row a step (done = epoch × rows + position)
// over the fingerprint's rows (all of them, or at most all of them for a
// one-vs-one pair).
package checkpoint
