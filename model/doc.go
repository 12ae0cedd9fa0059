// Package model is the versioned binary model file shared by every learner
// of the cpm tool: CPM (Kantchelian et al., "Large-Margin Convex Polytope
// Machine", NIPS 2014) first, and later perceptrons, kernel perceptrons and
// PLUME. A Model holds the hyperparameters a prediction needs, the label map,
// one D×K weight matrix per polytope (dense, or compact: only the feature
// rows listed in Rows, every other feature having weight 0), optional
// per-face training counts, learner-specific string parameters, optional
// typed arrays (Blob) for learners whose state is not a weight matrix, and
// optionally the feature scaling, the feature hashing and the probability
// calibration that apply to its inputs and outputs.
//
// Write, Read, Save and Load move a Model to and from bytes. ExportText
// writes a readable dump for inspection (cpm export).
//
// # Determinism
//
// The encoding is canonical: the same Model always gives the same bytes.
// Params are written in ascending byte order of their keys, floats are
// written through math.Float32bits / math.Float64bits, so -0 and NaN
// payloads survive a round trip bit for bit, and nothing depends on map
// order, time or the host. Read refuses every byte string Write cannot
// produce, so for any version-2 input that Read accepts, Write reproduces
// the input exactly. The stored feature rows are a function of the weights
// (row 0 and every row with a weight that is not +0, bit pattern 0, in
// some matrix), so a dense Model and its Compact form give the same bytes.
// Read accepts version 1 too; Write of a version-1 model gives the
// version-2 bytes of the same model.
//
// # File layout, format version 2
//
// Version 2 is version 1 (below) with two changes: the weight section
// holds only the stored feature rows, behind the list of their indices; and
// two optional sections follow the scaling. All integers are little-endian
// and unsigned unless stated otherwise; strings, f32 and f64 as in version
// 1.
//
//	offset size  field
//	     0    8  magic "CPMMODEL"
//	     8    4  format version, uint32 = 2
//	    12    4  flags, uint32: bits 0 to 4 as in version 1, bit 5 Hash
//	             present, bit 6 Calibration present; other bits 0
//	    16   64  Sides to Iterations as in version 1 (D is the feature
//	             space: every feature index is below D)
//	    80       Learner, Classes and Params as in version 1
//	             R, uint64 (1 <= R <= D), then R × uint32: the stored
//	               feature rows, strictly ascending, the first 0 (the bias
//	               row), every one < D, and every one but 0 with a weight
//	               that is not +0 in some matrix; every feature row not
//	               listed has weight +0 for every face of every matrix
//	             M, uint32 = len(Weights), then M × R × K f32: Weights. The
//	               weight of the i-th stored row for face k of matrix m is
//	               element (m·R + i)·K + k
//	             Counts, Steps, Blobs and Scale as in version 1
//	             if flag bit 5: Hash: Bits, uint32 (1 to 31), Seed, uint32
//	             if flag bit 6: Calibration: Method string, n, uint32,
//	               n × f64: A, n × f64: B, Rows, int64, LogLoss, f64
//	             CRC-32C (Castagnoli), uint32, of every preceding byte
//
// A model whose weights touch a few features of a large index space
// (two rows with feature index 10^7) stores a few rows, not D of them.
//
// Flag bit 5 and the Hash section serve models trained with feature
// hashing (cpm train --hash-bits): every predictor maps a raw row's
// features to hashed rows first (see Hashing), then applies Scale.
// Flag bit 6 and the Calibration section serve models whose decision
// values map to probabilities (cpm train --calibrate; see Calibration):
// Method "platt", n = 1 for a binary model and len(Classes) for a
// multiclass one, A and B finite, Rows >= 0, LogLoss finite and >= 0.
//
// # In memory
//
// Read returns a version-2 model compact (Rows set, each matrix holding
// len(Rows) rows) when its dense matrices would take more than twice the
// memory of the compact ones, and dense (Rows nil) otherwise; a version-1
// model reads dense. Model.Dense gives the dense form of any model (warm
// starts, and whatever indexes Weights by feature), Model.Compact the
// compact one, and Model.RowMap and Model.ScoringWeights what predictors
// score raw rows of a compact model with: each feature of a row maps to
// its stored row, a feature below D that is not stored to a zero row that
// follows the stored rows (Read and Compact leave room for it after each
// matrix's data), so that the kernels see the entries a dense model's
// matrices see, in the same order, and give the same scores bit for bit.
//
// A file of version 2 takes fewer bytes than the dense matrices, so the
// memory rule below applies to fewer bytes: a model whose matrices store
// next to nothing (a one-vs-one model of thousands of all-zero one-face
// polytopes: 4 bytes a polytope on disk) is refused as too large for its
// file.
//
// # File layout, format version 1
//
// All integers are little-endian and unsigned unless stated otherwise. A
// string is a uint32 byte length followed by that many bytes of UTF-8. An
// f32 is the IEEE-754 bits of a float32 as a uint32, an f64 the bits of a
// float64 as a uint64.
//
//	offset size  field
//	     0    8  magic "CPMMODEL"
//	     8    4  format version, uint32 = 1
//	    12    4  flags, uint32: bit 0 OvO, bit 1 Counts present,
//	             bit 2 Multiclass, bit 3 Steps present, bit 4 Scale
//	             present; other bits 0
//	    16    4  Sides, uint32 (1 or 2)
//	    20    4  K, uint32 (faces per polytope)
//	    24    8  D, uint64 (feature rows including the bias row 0)
//	    32    8  Lambda, f64
//	    40    8  Entropy, f64
//	    48    8  CostRatio, f64
//	    56    8  Bias, f64
//	    64    8  Seed, uint64
//	    72    8  Iterations, int64 (two's complement)
//	    80       Learner, string
//	             C, uint32, then C × f32: Classes
//	             P, uint32, then P × (key string, value string): Params,
//	               keys strictly ascending in byte order
//	             M, uint32 = len(Weights), then M × D × K f32: Weights. The
//	               weight of feature j for face k of matrix m is element
//	               (m·D + j)·K + k: matrix-major, then feature-major, only
//	               the K real columns (no Stride padding)
//	             if flag bit 1: M × K uint64: Counts, matrix-major
//	             if flag bit 3: M × int64: Steps, the SGD step counter t
//	               of each matrix (absent: Iterations each)
//	             B, uint32, then B × Blob: Extra, in slice order; a Blob is
//	               name string,
//	               n, uint64, then n × f32: F32
//	               n, uint64, then n × uint32: U32
//	               n, uint64, then n × int64: I64
//	             if flag bit 4: Scale: mode string, n, uint64, then
//	               n × uint32: Index, n × f64: Shift, n × f64: Div
//	             CRC-32C (Castagnoli), uint32, of every preceding byte
//
// Nothing follows the checksum; Read consumes its input to EOF and refuses
// trailing bytes.
//
// Flag bit 3 and the Steps section, part of version 1, serve
// warm-started CPM models (cpm train --init): such a model continues the
// Pegasos step counter of its initial model, so its polytopes have taken
// more steps than Iterations, the steps of the last run. Files without the
// bit, among them every model trained from scratch, read with Steps nil
// (Iterations steps per matrix, see Model.StepsOf). A reader that does not
// know the bit refuses a file that has it, as an unknown flag bit
// (ErrCorrupt), rather than misreading it.
//
// Flag bit 4 and the Scale section serve models trained with feature
// scaling (cpm train --scale): the weights are in the scaled space and
// every predictor applies Scale to a raw row first. A reader that does not
// know the bit refuses such a file (unknown flag bit, ErrCorrupt) rather
// than predict raw rows with weights meant for scaled ones.
//
// # Label map and matrix order
//
// A binary model (OvO and Multiclass false) has two labels and Sides
// matrices; it predicts Classes[0] when its decision score is > 0 (for
// CPM, Classes = [outer, inner]). An all-together multiclass model
// (Multiclass, as the Kesler-construction perceptrons) has the C labels in
// Classes, strictly ascending, and Sides matrices whose columns or blobs
// the learner lays out by class index. A one-vs-one model has the C class labels in Classes, strictly
// ascending, and Sides matrices per unordered pair of classes, pair-major:
// matrix p·Sides + s is side s of pair p, where pairs (i, j), i < j, index
// into Classes and are numbered in lexicographic order (0,1), (0,2), …,
// (0,C-1), (1,2), …, (C-2,C-1), as LIBSVM orders them.
//
// # Refusals
//
// Read and Load never panic and return a *FormatError, which names the file
// and the byte offset and wraps one of ErrNotModel, ErrVersion,
// ErrTruncated, ErrChecksum, ErrCorrupt or ErrTooLarge; I/O errors are
// returned wrapped as they are.
//
// A header that lies about sizes cannot make Read allocate more than the
// input holds. Declared sizes are checked against fixed caps first (beyond a
// cap is ErrCorrupt):
//
//	Learner, Param keys, Blob names    64 bytes
//	a Param value                      65536 bytes
//	Params                             4096
//	Classes                            65536
//	K                                  65536
//	D, stored rows                     2^32 (every uint32 feature index)
//	matrices                           2^24
//	weights over all matrices          2^36
//	Blobs                              4096
//	elements of one Blob array         2^36
//	features of Scale                  2^32
//	scores of Calibration              65536
//
// When the input length is known (Load, and Read of an r with a Len method
// such as *bytes.Reader) every section is also checked against the bytes
// that remain before anything is allocated for it (short is ErrTruncated).
// When it is not known, Read reads in bounded chunks and grows its arrays
// only as data arrives, so memory stays proportional to the bytes actually
// present.
//
// The checksum is verified before the decoded model is validated
// (finite weights and the other rules of Model.Validate), so damage to the
// weights reports ErrChecksum.
//
// # Memory
//
// A model in memory takes at most MemoryFactor (16) times its file size,
// plus MemorySlack (64 KiB): its weight matrices, counts, steps and stored
// row list, whose memory Model.MemoryBytes computes from the header (a
// matrix's rows are padded to a multiple of sparsevec.Lanes floats, and
// each matrix carries a 56-byte header and pointer), take at most
// MemoryFactor times the bytes of their sections (the stored row list
// included), and Read refuses a header that calls for more with
// ErrTooLarge before allocating for them. Read makes a compact model dense
// only when that stays within the same bound (and the caller's limit). ReadLimit and LoadLimit also
// refuse, with ErrTooLarge, a model whose weights would exceed a caller's
// limit in bytes.
package model
