package model

import (
	"math"
	"unicode/utf8"

	"github.com/polyhedral/cpm/sparsevec"
)

// Version is the format version Write produces. Read accepts it and
// version 1 (see the package documentation).
const Version = 2

// Caps on declared sizes; see the package documentation. They are int64 so
// that they compile on 32-bit platforms too.
const (
	maxName     = 64
	maxValue    = 1 << 16
	maxParams   = 1 << 12
	maxClasses  = 1 << 16
	maxK        = 1 << 16
	maxD        = int64(1) << 32
	maxMatrices = 1 << 24
	maxWeights  = int64(1) << 36
	maxBlobs    = 1 << 12
	maxBlobLen  = int64(1) << 36
)

// MemoryFactor bounds the memory of a model that Read or Load returns:
// its weight matrices, counts and steps take at most MemoryFactor times
// the bytes that hold them in the file, plus MemorySlack bytes (see
// MemoryBytes). Read refuses a model whose header calls for more with
// ErrTooLarge, before allocating for its weights. The factor covers a
// one-face matrix, whose rows are padded from 1 to sparsevec.Lanes (8)
// floats in memory, with room for the matrix headers; what it refuses is a
// model of very many tiny matrices (a one-vs-one header with millions of
// pairs over one or two feature rows), whose per-matrix overhead dwarfs its
// bytes on disk. The other sections (labels, params, blobs) take at most
// about as much memory as file bytes, except for a per-entry overhead
// bounded by their caps.
const (
	MemoryFactor = 16
	MemorySlack  = 64 << 10
)

// matrixOverhead is the memory of a weight matrix besides its data: the
// sparsevec.Matrix header (three ints and a slice header) and its pointer
// in Weights.
const matrixOverhead = 8 + 48

// countsOverhead is the memory of one matrix's counts besides the counts:
// the slice header in Counts.
const countsOverhead = 24

// MemoryBytes returns the memory that m's weight matrices, counts and
// steps take once read, from its shape alone (Matrices, the rows its
// matrices hold, K, and whether Counts and Steps are set): per matrix,
// R·StrideFor(K) float32 for its R rows (D, or len(Rows) + 1 for a
// compact model: its stored rows and the zero row of ScoringWeights) and
// the matrix header and pointer; with counts, K uint64 and a slice
// header; with steps, one int64; for a compact model also the 4·len(Rows)
// bytes of Rows. It is what Read checks against MemoryFactor and a limit,
// and what a caller can check before building a model of that shape. The
// shape must be within the caps of Validate (at most 2^36 weights), so the
// result does not overflow.
func (m *Model) MemoryBytes() int64 {
	return shapeMemory(m.matrices(), m.D, m.K, m.Rows, m.Counts != nil, m.Steps != nil)
}

// shapeMemory is MemoryBytes of a model with n matrices over d features
// with the stored rows rows (nil: dense).
func shapeMemory(n int64, d, k int, rows []uint32, counts, steps bool) int64 {
	if rows == nil {
		return memoryBytes(n, d, k, counts, steps)
	}
	return memoryBytes(n, len(rows)+1, k, counts, steps) + 4*int64(len(rows))
}

func memoryBytes(n int64, d, k int, counts, steps bool) int64 {
	per := int64(d)*int64(sparsevec.StrideFor(k))*4 + matrixOverhead
	if counts {
		per += int64(k)*8 + countsOverhead
	}
	if steps {
		per += 8
	}
	return n * per
}

// rowCount returns the rows each weight matrix holds: D, or len(Rows) for
// a compact model.
func (m *Model) rowCount() int {
	if m.Rows != nil {
		return len(m.Rows)
	}
	return m.D
}

// Model is a trained classifier as stored on disk.
type Model struct {
	Learner    string // "cpm" (later "perceptron", "kperceptron", "plume", ...); non-empty, <= 64 bytes
	Sides      int    // 1 or 2 polytopes per binary problem (double-sided CPM)
	K          int    // faces per polytope (>= 1)
	D          int    // feature rows including the bias row 0 (>= 1): the feature space, whether or not Rows is set
	Lambda     float64
	Entropy    float64 // ASSIGN target entropy h, nats
	CostRatio  float64
	Bias       float64 // value of the constant bias feature
	Seed       uint64
	Iterations int64               // SGD steps per polytope
	Classes    []float32           // label map: binary: [positive-score label, other]; OvO and Multiclass: all labels ascending
	OvO        bool                // one-vs-one multiclass: Sides matrices per pair of classes
	Multiclass bool                // all-together multiclass (Kesler): one score per class, Sides matrices in all
	Params     map[string]string   // learner-specific extras; written in sorted key order (deterministic bytes)
	Weights    []*sparsevec.Matrix // each D×K, or len(Rows)×K when Rows is set; binary: Sides matrices; OvO: one per (pair, side), pair-major
	Rows       []uint32            // optional: the feature rows Weights hold (compact model): strictly ascending, Rows[0] = 0, all < D; row i of each matrix is feature Rows[i], every other feature has weight 0; nil: all D rows (dense)
	Counts     [][]uint64          // optional: per matrix, per face training assignment counts (nil or len(Weights) slices of len K)
	Steps      []int64             // optional: per matrix, the SGD step counter t it was trained to; nil: Iterations each (see StepsOf)
	Extra      []Blob              // optional named arrays for other learners
	Scale      *Scaling            // optional: the feature scaling fitted on the training rows; nil: none
	Hash       *Hashing            // optional: the feature hashing applied to raw rows before Scale; nil: none

	Calibration *Calibration // optional: decision values to probabilities (cpm train --calibrate); nil: none
}

// Hashing is the feature hashing a model applies to every raw input row
// before its scaling and weights see it (package featurehash): feature j
// (the index as read, 1-based) goes to row
//
//	1 + (murmur3_x86_32(j as 4 little-endian bytes, Seed) & (2^Bits - 1))
//
// and the values of features of one row that land on the same row are
// summed, so the weights have at most 2^Bits + 1 rows (the bias row 0 and
// the hashed rows 1..2^Bits).
type Hashing struct {
	Bits int    // 1 to 31
	Seed uint32 // murmur3 seed
}

// MaxHashBits is the largest Hashing.Bits.
const MaxHashBits = 31

// Scaling is the per-feature affine map a model applies to every input row
// before its weights see it (package scale fits and applies it):
//
//	x'_j = (x_j - Shift[i]) / Div[i]   for j = Index[i]
//	x'_j = 0                           for every j not in Index
//
// so the weights are in the scaled space and the model takes raw rows.
// Features absent from Index (constant or unseen in training) are dropped.
// Mode names how the statistics were fitted ("maxabs", "minmax" or
// "standard"); the map itself is fully given by the arrays.
type Scaling struct {
	Mode  string    // 1 to 64 bytes of [A-Za-z0-9._+-]
	Index []uint32  // feature indices, strictly ascending
	Shift []float64 // finite
	Div   []float64 // finite and > 0
}

// Blob is a named group of typed arrays for learners whose state is not a
// weight matrix (dual coefficients, support vectors in CSR form, ...). Any
// of the arrays may be empty; Read returns nil for an empty array. A CSR
// block fits one Blob: row pointers in I64, indices in U32, values in F32.
type Blob struct {
	Name string // non-empty, <= 64 bytes of [A-Za-z0-9._+-], unique within Extra
	F32  []float32
	U32  []uint32
	I64  []int64
}

// StepsOf returns the number of SGD steps weight matrix i was trained
// with: Steps[i] if Steps is set, else Iterations. A CPM trained from
// scratch takes Iterations steps per polytope and records no Steps (as
// every file written before the field existed); a warm-started one
// (cpm train --init) continues the step counter of its initial model and
// records the total.
func (m *Model) StepsOf(i int) int64 {
	if m.Steps != nil {
		return m.Steps[i]
	}
	return m.Iterations
}

// Matrices returns the number of weight matrices m's header calls for:
// Sides for a binary model, Sides·C·(C-1)/2 for one-vs-one with C classes.
func (m *Model) Matrices() int { return int(m.matrices()) }

func (m *Model) matrices() int64 {
	if !m.OvO {
		return int64(m.Sides) // binary and all-together multiclass
	}
	c := int64(len(m.Classes))
	return int64(m.Sides) * (c * (c - 1) / 2)
}

// Validate reports whether m is well formed, with an error wrapping
// ErrInvalid that says what is wrong. It checks:
//
//   - Learner: 1 to 64 bytes of ASCII letters, digits and ._+-
//   - Sides is 1 or 2, 1 <= K <= 65536, 1 <= D <= 2^32, Iterations >= 0
//   - Classes: finite; binary: two distinct labels; OvO and Multiclass:
//     2 to 65536 labels, strictly ascending; not both OvO and Multiclass
//   - Params: at most 4096; keys like Learner; values valid UTF-8 of at
//     most 65536 bytes
//   - Rows: nil, or 1 to D feature rows, strictly ascending, Rows[0] = 0,
//     every one < D
//   - len(Weights) == Matrices() (at most 2^24), every matrix non-nil and
//     R×K (R = D, or len(Rows) when Rows is set) with Stride ==
//     sparsevec.StrideFor(K), len(Data) == R·Stride, finite weights and
//     zero padding; at most 2^36 weights in all
//   - Counts: nil, or len(Weights) slices of length K
//   - Steps: nil, or len(Weights) values >= 0
//   - Extra: at most 4096 blobs with valid unique names, each array at most
//     2^36 long
//   - Scale: nil, or a Mode like Learner and Index, Shift and Div of one
//     length of at most 2^32, Index strictly ascending, Shift finite, Div
//     finite and > 0
//   - Hash: nil, or 1 <= Bits <= 31
//   - Calibration: nil, or Method "platt", A and B of length 1 for a
//     binary model and len(Classes) for a multiclass (OvO or Multiclass)
//     one, finite; Rows >= 0; LogLoss finite and >= 0
//
// Write never writes padding, so a -0 padding entry reads back as +0.
func (m *Model) Validate() error { return m.validate(ErrInvalid) }

func (m *Model) validate(kind error) error {
	if m == nil {
		return invalidf(kind, "nil model")
	}
	for _, f := range []func(error) error{m.checkHeader, m.checkParams, m.checkRows, m.checkWeights, m.checkCounts, m.checkSteps, m.checkExtra, m.checkScale, m.checkHash, m.checkCalibration} {
		if err := f(kind); err != nil {
			return err
		}
	}
	return nil
}

// checkHeader checks the scalar fields and the label map.
func (m *Model) checkHeader(kind error) error {
	if !validName(m.Learner) {
		return invalidf(kind, "learner name %q: want 1 to %d bytes of [A-Za-z0-9._+-]", m.Learner, maxName)
	}
	if m.Sides != 1 && m.Sides != 2 {
		return invalidf(kind, "sides = %d, want 1 or 2", m.Sides)
	}
	if m.K < 1 || m.K > maxK {
		return invalidf(kind, "K = %d, want 1 to %d", m.K, maxK)
	}
	if m.D < 1 || int64(m.D) > maxD {
		return invalidf(kind, "D = %d, want 1 to %d", m.D, maxD)
	}
	if m.Iterations < 0 {
		return invalidf(kind, "iterations = %d, want >= 0", m.Iterations)
	}
	for i, c := range m.Classes {
		if !finite(c) {
			return invalidf(kind, "class label %d is %v", i, c)
		}
	}
	if m.OvO && m.Multiclass {
		return invalidf(kind, "model is both one-vs-one and all-together multiclass")
	}
	if !m.OvO && !m.Multiclass {
		if len(m.Classes) != 2 {
			return invalidf(kind, "binary model has %d class labels, want 2 ([outer, inner])", len(m.Classes))
		}
		if m.Classes[0] == m.Classes[1] {
			return invalidf(kind, "binary model has outer label == inner label == %v", m.Classes[0])
		}
	} else {
		if len(m.Classes) < 2 || len(m.Classes) > maxClasses {
			return invalidf(kind, "multiclass model has %d class labels, want 2 to %d", len(m.Classes), maxClasses)
		}
		for i := 1; i < len(m.Classes); i++ {
			if m.Classes[i-1] >= m.Classes[i] {
				return invalidf(kind, "multiclass labels not strictly ascending at %d: %v then %v", i, m.Classes[i-1], m.Classes[i])
			}
		}
	}
	if n := m.matrices(); n > maxMatrices {
		return invalidf(kind, "%d weight matrices, more than %d", n, maxMatrices)
	}
	return nil
}

func (m *Model) checkParams(kind error) error {
	if len(m.Params) > maxParams {
		return invalidf(kind, "%d params, more than %d", len(m.Params), maxParams)
	}
	for k, v := range m.Params {
		if !validName(k) {
			return invalidf(kind, "param key %q: want 1 to %d bytes of [A-Za-z0-9._+-]", k, maxName)
		}
		if len(v) > maxValue || !utf8.ValidString(v) {
			return invalidf(kind, "param %s: value is not valid UTF-8 of at most %d bytes", k, maxValue)
		}
	}
	return nil
}

func (m *Model) checkWeights(kind error) error {
	if want := m.matrices(); int64(len(m.Weights)) != want {
		return invalidf(kind, "%d weight matrices, want %d", len(m.Weights), want)
	}
	rows := m.rowCount()
	if !fits(int64(len(m.Weights)), int64(rows)*int64(m.K), maxWeights) {
		return invalidf(kind, "%d×%d×%d weights, more than %d", len(m.Weights), rows, m.K, maxWeights)
	}
	stride := sparsevec.StrideFor(m.K)
	for i, w := range m.Weights {
		if w == nil {
			return invalidf(kind, "weight matrix %d is nil", i)
		}
		if w.D != rows || w.K != m.K {
			return invalidf(kind, "weight matrix %d is %d×%d, want %d×%d", i, w.D, w.K, rows, m.K)
		}
		if w.Stride != stride || len(w.Data) != w.D*stride {
			return invalidf(kind, "weight matrix %d has stride %d and %d floats, want stride %d and %d", i, w.Stride, len(w.Data), stride, w.D*stride)
		}
		for j := range w.D {
			row := w.Data[j*stride : (j+1)*stride]
			for k, v := range row[:w.K] {
				if !finite(v) {
					return invalidf(kind, "weight matrix %d: feature %d face %d is %v", i, j, k, v)
				}
			}
			for _, v := range row[w.K:] {
				if v != 0 {
					return invalidf(kind, "weight matrix %d: feature %d has nonzero padding %v", i, j, v)
				}
			}
		}
	}
	return nil
}

// checkRows checks the feature rows of a compact model.
func (m *Model) checkRows(kind error) error {
	if m.Rows == nil {
		return nil
	}
	if len(m.Rows) == 0 || int64(len(m.Rows)) > int64(m.D) {
		return invalidf(kind, "%d stored feature rows, want 1 to D = %d", len(m.Rows), m.D)
	}
	if m.Rows[0] != 0 {
		return invalidf(kind, "stored feature rows start at %d, want the bias row 0", m.Rows[0])
	}
	for i := 1; i < len(m.Rows); i++ {
		if m.Rows[i-1] >= m.Rows[i] {
			return invalidf(kind, "stored feature rows not strictly ascending at %d: %d then %d", i, m.Rows[i-1], m.Rows[i])
		}
	}
	if last := m.Rows[len(m.Rows)-1]; int64(last) >= int64(m.D) {
		return invalidf(kind, "stored feature row %d is not below D = %d", last, m.D)
	}
	return nil
}

func (m *Model) checkHash(kind error) error {
	if h := m.Hash; h != nil && (h.Bits < 1 || h.Bits > MaxHashBits) {
		return invalidf(kind, "feature hashing with %d bits, want 1 to %d", h.Bits, MaxHashBits)
	}
	return nil
}

func (m *Model) checkCalibration(kind error) error {
	c := m.Calibration
	if c == nil {
		return nil
	}
	if c.Method != "platt" {
		return invalidf(kind, "calibration method %q, want platt", c.Method)
	}
	want := 1
	if m.OvO || m.Multiclass {
		want = len(m.Classes)
	}
	if len(c.A) != want || len(c.B) != want {
		return invalidf(kind, "calibration has %d slopes and %d offsets, want %d of each (1 for a binary model, one per class otherwise)", len(c.A), len(c.B), want)
	}
	for i := range c.A {
		if !finite64(c.A[i]) || !finite64(c.B[i]) {
			return invalidf(kind, "calibration pair %d is (%v, %v), want finite values", i, c.A[i], c.B[i])
		}
	}
	if c.Rows < 0 {
		return invalidf(kind, "calibration fitted on %d rows, want >= 0", c.Rows)
	}
	if !finite64(c.LogLoss) || c.LogLoss < 0 {
		return invalidf(kind, "calibration log-loss %v, want a finite value >= 0", c.LogLoss)
	}
	return nil
}

func (m *Model) checkCounts(kind error) error {
	if m.Counts == nil {
		return nil
	}
	if len(m.Counts) != len(m.Weights) {
		return invalidf(kind, "counts for %d matrices, want %d", len(m.Counts), len(m.Weights))
	}
	for i, c := range m.Counts {
		if len(c) != m.K {
			return invalidf(kind, "counts of matrix %d have length %d, want K = %d", i, len(c), m.K)
		}
	}
	return nil
}

func (m *Model) checkSteps(kind error) error {
	if m.Steps == nil {
		return nil
	}
	if len(m.Steps) != len(m.Weights) {
		return invalidf(kind, "steps for %d matrices, want %d", len(m.Steps), len(m.Weights))
	}
	for i, t := range m.Steps {
		if t < 0 {
			return invalidf(kind, "steps of matrix %d = %d, want >= 0", i, t)
		}
	}
	return nil
}

func (m *Model) checkExtra(kind error) error {
	if len(m.Extra) > maxBlobs {
		return invalidf(kind, "%d blobs, more than %d", len(m.Extra), maxBlobs)
	}
	seen := make(map[string]bool, len(m.Extra))
	for i, b := range m.Extra {
		if !validName(b.Name) {
			return invalidf(kind, "blob %d name %q: want 1 to %d bytes of [A-Za-z0-9._+-]", i, b.Name, maxName)
		}
		if seen[b.Name] {
			return invalidf(kind, "duplicate blob name %q", b.Name)
		}
		seen[b.Name] = true
		if int64(len(b.F32)) > maxBlobLen || int64(len(b.U32)) > maxBlobLen || int64(len(b.I64)) > maxBlobLen {
			return invalidf(kind, "blob %s: array longer than %d", b.Name, maxBlobLen)
		}
	}
	return nil
}

func (m *Model) checkScale(kind error) error {
	s := m.Scale
	if s == nil {
		return nil
	}
	if !validName(s.Mode) {
		return invalidf(kind, "scaling mode %q: want 1 to %d bytes of [A-Za-z0-9._+-]", s.Mode, maxName)
	}
	if len(s.Shift) != len(s.Index) || len(s.Div) != len(s.Index) {
		return invalidf(kind, "scaling has %d indices, %d shifts and %d divisors, want one length", len(s.Index), len(s.Shift), len(s.Div))
	}
	if int64(len(s.Index)) > maxD {
		return invalidf(kind, "scaling of %d features, more than %d", len(s.Index), maxD)
	}
	for i, j := range s.Index {
		if i > 0 && s.Index[i-1] >= j {
			return invalidf(kind, "scaling indices not strictly ascending at %d: %d then %d", i, s.Index[i-1], j)
		}
		if !finite64(s.Shift[i]) || !finite64(s.Div[i]) || s.Div[i] <= 0 {
			return invalidf(kind, "scaling of feature %d: shift %v, divisor %v; want finite values and a divisor > 0", j, s.Shift[i], s.Div[i])
		}
	}
	return nil
}

// validName reports whether s is 1 to maxName bytes of [A-Za-z0-9._+-].
func validName(s string) bool {
	if len(s) == 0 || len(s) > maxName {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '_', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}

func finite(v float32) bool {
	f := float64(v)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

func finite64(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// fits reports whether a·b <= limit for a, b >= 0, without overflow.
func fits(a, b, limit int64) bool { return a == 0 || b <= limit/a }
