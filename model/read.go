package model

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/polyhedral/cpm/internal/binio"
	"github.com/polyhedral/cpm/sparsevec"
)

// maxBuf bounds the read-ahead buffer: it holds the longest single field
// (a Param value of maxValue bytes) and a decoding chunk.
const maxBuf = max(maxValue, chunkSize)

// Read decodes a model from r, which must hold exactly one model: Read
// consumes r to EOF and refuses trailing bytes. name identifies the input in
// error messages.
//
// If r has a Len() int method (as *bytes.Reader, *bytes.Buffer and
// *strings.Reader do), Read checks every declared size against the bytes
// that remain before allocating; otherwise it allocates only as data
// arrives. A malformed input gives a *FormatError; see the package
// documentation.
func Read(r io.Reader, name string) (*Model, error) {
	return ReadLimit(r, name, 0)
}

// ReadLimit is Read that also refuses, with a *FormatError wrapping
// ErrTooLarge, a model whose weight matrices, counts and steps would take
// more than limit bytes of memory (see Model.MemoryBytes), before
// allocating for them. A limit <= 0 sets none.
func ReadLimit(r io.Reader, name string, limit int64) (*Model, error) {
	size := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok {
		size = int64(l.Len())
	}
	return read(r, name, size, limit)
}

func read(r io.Reader, name string, size, limit int64) (*Model, error) {
	d := &decoder{name: name, limit: limit}
	d.in.Reset(r, size, maxBuf)
	d.in.Checksum(castagnoli)
	m, err := d.model()
	if err != nil {
		return nil, err
	}
	return m, nil
}

// decoder reads the fields of a model through a bounded little-endian
// decoder, keeping the running checksum of the bytes consumed and turning
// short input into *FormatError values at the offset where it was found.
type decoder struct {
	in    binio.Decoder
	name  string
	limit int64 // memory limit of the weight sections, or <= 0 for none
	file  int64 // bytes of the stored rows and weight sections, once read
}

// sized reports whether the input length is known.
func (d *decoder) sized() bool {
	_, ok := d.in.Remaining()
	return ok
}

// fail returns a *FormatError of the given kind at the current offset.
func (d *decoder) fail(kind error, format string, args ...any) error {
	return d.failAt(d.in.Offset(), kind, format, args...)
}

// failAt returns a *FormatError of the given kind at offset off.
func (d *decoder) failAt(off int64, kind error, format string, args ...any) error {
	return &FormatError{Name: d.name, Offset: off, Err: invalidf(kind, format, args...)}
}

// wrap turns a validation error into a *FormatError at the current offset.
func (d *decoder) wrap(err error) error { return d.wrapAt(d.in.Offset(), err) }

// wrapAt turns a validation error into a *FormatError at offset off.
func (d *decoder) wrapAt(off int64, err error) error {
	if err == nil {
		return nil
	}
	return &FormatError{Name: d.name, Offset: off, Err: err}
}

// ioErr wraps a read error that is not a format problem.
func (d *decoder) ioErr(err error) error {
	return fmt.Errorf("%s: read model: %w (at byte %d)", d.name, err, d.in.Offset())
}

// inErr turns an error of the binary decoder while reading what into a
// *FormatError wrapping ErrTruncated (short input) or a read error.
func (d *decoder) inErr(err error, what string) error {
	var se *binio.ShortError
	switch {
	case !errors.As(err, &se):
		return d.ioErr(err)
	case se.Ended:
		return d.fail(ErrTruncated, "input ends inside %s: need %d bytes, only %d remain", what, se.Need, se.Left)
	default:
		return d.fail(ErrTruncated, "%s: need %d bytes, only %d remain", what, se.Need, se.Left)
	}
}

// need fails with ErrTruncated if the input length is known and fewer than
// n bytes remain. what names the section for the message.
func (d *decoder) need(n uint64, what string) error {
	if err := d.in.Need(n); err != nil {
		return d.inErr(err, what)
	}
	return nil
}

// next consumes n <= maxBuf bytes and returns them. The slice aliases the
// read buffer and is valid until the next call.
func (d *decoder) next(n int, what string) ([]byte, error) {
	b, err := d.in.Next(n)
	if err != nil {
		return nil, d.inErr(err, what)
	}
	return b, nil
}

func (d *decoder) u32(what string) (uint32, error) {
	v, err := d.in.U32()
	if err != nil {
		return 0, d.inErr(err, what)
	}
	return v, nil
}

func (d *decoder) u64(what string) (uint64, error) {
	v, err := d.in.U64()
	if err != nil {
		return 0, d.inErr(err, what)
	}
	return v, nil
}

func (d *decoder) f64(what string) (float64, error) {
	v, err := d.u64(what)
	return math.Float64frombits(v), err
}

// str reads a length-prefixed string of at most limit bytes.
func (d *decoder) str(limit int, what string) (string, error) {
	n, err := d.u32(what + " length")
	if err != nil {
		return "", err
	}
	if uint64(n) > uint64(limit) {
		return "", d.fail(ErrCorrupt, "%s is %d bytes long, more than %d", what, n, limit)
	}
	if err := d.need(uint64(n), what); err != nil {
		return "", err
	}
	b, err := d.next(int(n), what)
	return string(b), err
}

// array reads n elements of sz bytes each (binio.Array). n must be at most
// a cap that keeps n·sz from overflowing.
func array[T any](d *decoder, n uint64, sz int, dec func(dst []T, b []byte), what string) ([]T, error) {
	s, err := binio.Array(&d.in, n, sz, chunkSize, dec)
	if err != nil {
		return nil, d.inErr(err, what)
	}
	return s, nil
}

// model decodes a whole model.
func (d *decoder) model() (*Model, error) {
	// Magic: distinguish a short file that could still be a model from a
	// file that is something else.
	b, err := d.in.Peek(len(magic))
	switch {
	case len(b) < len(magic) && err != nil && !errors.Is(err, io.EOF):
		return nil, d.ioErr(err)
	case len(b) == 0:
		return nil, d.fail(ErrTruncated, "empty input")
	case len(b) < len(magic) && !bytes.HasPrefix([]byte(magic), b),
		len(b) == len(magic) && string(b) != magic:
		return nil, d.fail(ErrNotModel, "input starts with %q, want %q", b, magic)
	}
	if _, err := d.next(len(magic), "magic"); err != nil {
		return nil, err
	}
	version, err := d.u32("format version")
	if err != nil {
		return nil, err
	}
	if version != 1 && version != Version {
		return nil, d.failAt(d.in.Offset()-4, ErrVersion, "file has format version %d, this build reads versions 1 and %d", version, Version)
	}
	h, err := d.header(version)
	if err != nil {
		return nil, err
	}
	m := h.m
	if err := m.checkHeader(ErrCorrupt); err != nil {
		return nil, d.wrap(err)
	}
	if err := d.params(m); err != nil {
		return nil, err
	}
	if version >= 2 {
		if err := d.rows(m); err != nil {
			return nil, err
		}
	}
	if err := d.weights(m, h.counts, h.steps); err != nil {
		return nil, err
	}
	if err := d.extra(m); err != nil {
		return nil, err
	}
	if h.scale {
		if err := d.scale(m); err != nil {
			return nil, err
		}
	}
	if h.hash {
		if err := d.hash(m); err != nil {
			return nil, err
		}
	}
	if h.calib {
		if err := d.calibration(m); err != nil {
			return nil, err
		}
	}

	want := d.in.Sum32()
	got, err := d.u32("checksum")
	if err != nil {
		return nil, err
	}
	if got != want {
		return nil, d.failAt(d.in.Offset()-4, ErrChecksum, "stored CRC-32C %#08x, contents give %#08x", got, want)
	}
	switch b, err := d.in.Peek(1); {
	case len(b) > 0:
		return nil, d.fail(ErrCorrupt, "trailing bytes after the checksum")
	case !errors.Is(err, io.EOF):
		return nil, d.ioErr(err)
	}
	if err := m.validate(ErrCorrupt); err != nil {
		return nil, d.wrap(err)
	}
	if version >= 2 {
		return d.settle(m)
	}
	return m, nil
}

// settle checks that the stored rows of a version-2 model are the ones
// Write stores (row 0 and the rows with a weight that is not +0), so that
// the encoding stays canonical, and returns the model in the form Read
// gives: dense (Rows nil) when every row is stored, or when the dense
// matrices take at most twice the memory of the compact ones (and stay
// within MemoryFactor and the caller's limit); else compact.
func (d *decoder) settle(m *Model) (*Model, error) {
	for r := 1; r < m.rowCount(); r++ {
		if !m.rowNonzero(r) {
			return nil, d.fail(ErrCorrupt, "feature row %d is stored with all its weights +0, which Write never stores", m.feature(r))
		}
	}
	if m.Rows == nil {
		return m, nil // every row is stored
	}
	dense := memoryBytes(int64(len(m.Weights)), m.D, m.K, m.Counts != nil, m.Steps != nil)
	if dense <= 2*m.MemoryBytes() && dense <= MemoryFactor*d.file+MemorySlack && (d.limit <= 0 || dense <= d.limit) {
		return m.Dense(), nil
	}
	return m, nil
}

type header struct {
	m      *Model
	counts bool
	steps  bool
	scale  bool
	hash   bool
	calib  bool
}

// header reads the fixed header, the learner name and the classes of a
// file of the given format version.
func (d *decoder) header(version uint32) (header, error) {
	var h header
	m := &Model{}
	h.m = m
	flags, err := d.u32("flags")
	if err != nil {
		return h, err
	}
	known := uint32(flagsKnown)
	if version == 1 {
		known = flagsKnownV1
	}
	if flags&^known != 0 {
		return h, d.failAt(d.in.Offset()-4, ErrCorrupt, "unknown flag bits %#x", flags&^known)
	}
	m.OvO = flags&flagOvO != 0
	m.Multiclass = flags&flagMulti != 0
	h.counts = flags&flagCounts != 0
	h.steps = flags&flagSteps != 0
	h.scale = flags&flagScale != 0
	h.hash = flags&flagHash != 0
	h.calib = flags&flagCalib != 0

	// Each size is checked against its cap before it is converted to int.
	sides, err := d.u32("sides")
	if err != nil {
		return h, err
	}
	if sides != 1 && sides != 2 {
		return h, d.fail(ErrCorrupt, "sides = %d, want 1 or 2", sides)
	}
	k, err := d.u32("K")
	if err != nil {
		return h, err
	}
	if k < 1 || k > maxK {
		return h, d.fail(ErrCorrupt, "K = %d, want 1 to %d", k, maxK)
	}
	dim, err := d.u64("D")
	if err != nil {
		return h, err
	}
	if dim < 1 || dim > uint64(maxD) {
		return h, d.fail(ErrCorrupt, "D = %d, want 1 to %d", dim, maxD)
	}
	m.Sides, m.K, m.D = int(sides), int(k), int(dim)

	for _, f := range []struct {
		p    *float64
		what string
	}{{&m.Lambda, "lambda"}, {&m.Entropy, "entropy"}, {&m.CostRatio, "cost ratio"}, {&m.Bias, "bias"}} {
		if *f.p, err = d.f64(f.what); err != nil {
			return h, err
		}
	}
	if m.Seed, err = d.u64("seed"); err != nil {
		return h, err
	}
	it, err := d.u64("iterations")
	if err != nil {
		return h, err
	}
	m.Iterations = int64(it)
	if m.Learner, err = d.str(maxName, "learner name"); err != nil {
		return h, err
	}

	c, err := d.u32("class count")
	if err != nil {
		return h, err
	}
	if c > maxClasses {
		return h, d.fail(ErrCorrupt, "%d classes, more than %d", c, maxClasses)
	}
	if m.Classes, err = array(d, uint64(c), 4, binio.DecF32, "class labels"); err != nil {
		return h, err
	}
	return h, nil
}

// params reads the Params section, which must be in strictly ascending key
// order (the only order Write produces).
func (d *decoder) params(m *Model) error {
	n, err := d.u32("param count")
	if err != nil {
		return err
	}
	if n > maxParams {
		return d.fail(ErrCorrupt, "%d params, more than %d", n, maxParams)
	}
	if n == 0 {
		return nil
	}
	// Each param takes at least 9 bytes (two lengths, a 1-byte key).
	if err := d.need(uint64(n)*9, "params"); err != nil {
		return err
	}
	m.Params = make(map[string]string)
	prev := ""
	for i := range n {
		at := d.in.Offset()
		k, err := d.str(maxName, "param key")
		if err != nil {
			return err
		}
		if i > 0 && k <= prev {
			return d.failAt(at, ErrCorrupt, "param key %q after %q: keys must be strictly ascending", k, prev)
		}
		v, err := d.str(maxValue, "value of param "+k)
		if err != nil {
			return err
		}
		m.Params[k] = v
		prev = k
	}
	return d.wrap(m.checkParams(ErrCorrupt))
}

// rows reads the stored feature rows of a version-2 file into m.Rows.
func (d *decoder) rows(m *Model) error {
	at := d.in.Offset()
	n, err := d.u64("stored row count")
	if err != nil {
		return err
	}
	if n < 1 || n > uint64(m.D) {
		return d.failAt(at, ErrCorrupt, "%d stored feature rows, want 1 to D = %d", n, m.D)
	}
	// 4 bytes per row, then the matrix count and the checksum.
	if err := d.need(n*4+8, "stored feature rows"); err != nil {
		return err
	}
	if m.Rows, err = array(d, n, 4, binio.DecU32, "stored feature rows"); err != nil {
		return err
	}
	if err := m.checkRows(ErrCorrupt); err != nil {
		return d.wrapAt(at, err)
	}
	if n == uint64(m.D) {
		m.Rows = nil // every row is stored: the matrices are dense
	}
	return nil
}

// weights reads the matrix count, the matrices and, if present, the counts
// and the steps. Each matrix has the rows m.Rows lists, or D without it.
func (d *decoder) weights(m *Model, counts, steps bool) error {
	n, err := d.u32("matrix count")
	if err != nil {
		return err
	}
	if want := m.matrices(); int64(n) != want {
		return d.failAt(d.in.Offset()-4, ErrCorrupt, "%d weight matrices, header calls for %d", n, want)
	}
	rows := m.rowCount()
	dk := uint64(rows) * uint64(m.K) // < 2^48
	if !fits(int64(n), int64(dk), maxWeights) {
		return d.fail(ErrCorrupt, "%d×%d×%d weights, more than %d", n, rows, m.K, maxWeights)
	}
	total := uint64(n) * dk * 4
	if counts {
		total += uint64(n) * uint64(m.K) * 8
	}
	if steps {
		total += uint64(n) * 8
	}
	mem := shapeMemory(int64(n), m.D, m.K, m.Rows, counts, steps)
	if m.Rows != nil { // the stored rows, read already
		total += 4 * uint64(len(m.Rows))
	}
	d.file = int64(total)
	if mem > MemoryFactor*int64(total)+MemorySlack {
		return d.failAt(d.in.Offset()-4, ErrTooLarge, "%d weight matrices of %d×%d would take %d bytes of memory, more than %d times their %d bytes in the file (plus %d)", n, rows, m.K, mem, MemoryFactor, total, MemorySlack)
	}
	if err := d.need(total-4*uint64(len(m.Rows))+8, "weights"); err != nil { // +8: blob count and checksum
		return err
	}
	if d.limit > 0 && mem > d.limit {
		return d.failAt(d.in.Offset()-4, ErrTooLarge, "%d weight matrices of %d×%d would take %d bytes of memory, more than the limit of %d: %w", n, rows, m.K, mem, d.limit, ErrMemoryLimit)
	}
	c := min(int(n), 1024)
	if d.sized() {
		c = int(n) // the bytes are known to be present
	}
	m.Weights = make([]*sparsevec.Matrix, 0, c)
	for i := range int(n) {
		w, err := d.matrix(rows, m.K, i, m.Rows != nil)
		if err != nil {
			return err
		}
		m.Weights = append(m.Weights, w)
	}
	if counts {
		m.Counts = make([][]uint64, 0, c)
		for i := range int(n) {
			c, err := array(d, uint64(m.K), 8, binio.DecU64, fmt.Sprintf("counts of matrix %d", i))
			if err != nil {
				return err
			}
			m.Counts = append(m.Counts, c)
		}
	}
	if steps {
		// n >= 1 for a valid header; array returns nil only for n == 0.
		at := d.in.Offset()
		s, err := array(d, uint64(n), 8, binio.DecI64, "steps")
		if err != nil {
			return err
		}
		m.Steps = s
		if err := m.checkSteps(ErrCorrupt); err != nil {
			return d.wrapAt(at, err)
		}
	}
	return nil
}

// matrix reads one rows×K matrix of feature-major float32 into a padded
// sparsevec.Matrix; a compact one gets room for the zero row of
// ScoringWeights. When the input length is unknown, Data grows as rows
// arrive.
func (d *decoder) matrix(rows, k, i int, compact bool) (*sparsevec.Matrix, error) {
	stride := sparsevec.StrideFor(k)
	w := &sparsevec.Matrix{D: rows, K: k, Stride: stride}
	full, room := rows*stride, rows*stride
	if compact {
		room += stride
	}
	if d.sized() {
		w.Data = make([]float32, full, room) // the bytes are known to be present
	}
	j, f := 0, 0 // next feature row and face to fill
	what := fmt.Sprintf("weight matrix %d", i)
	for left := rows * k; left > 0; {
		c := min(left, chunkSize/4)
		b, err := d.next(4*c, what)
		if err != nil {
			return nil, err
		}
		last := j + (f+c-1)/k // row of the last element of this chunk
		w.Data = binio.GrowTo(w.Data, (last+1)*stride, room)
		for len(b) > 0 {
			n := min(k-f, len(b)/4)
			at := j*stride + f
			binio.DecF32(w.Data[at:at+n], b[:4*n])
			b = b[4*n:]
			if f += n; f == k {
				j, f = j+1, 0
			}
		}
		left -= c
	}
	return w, nil
}

// extra reads the blobs.
func (d *decoder) extra(m *Model) error {
	n, err := d.u32("blob count")
	if err != nil {
		return err
	}
	if n > maxBlobs {
		return d.fail(ErrCorrupt, "%d blobs, more than %d", n, maxBlobs)
	}
	if n == 0 {
		return nil
	}
	// Each blob takes at least 29 bytes (name length, 1-byte name, three
	// array lengths), plus the checksum.
	if err := d.need(uint64(n)*29+4, "blobs"); err != nil {
		return err
	}
	m.Extra = make([]Blob, 0, min(n, 64))
	for i := range n {
		var b Blob
		if b.Name, err = d.str(maxName, fmt.Sprintf("name of blob %d", i)); err != nil {
			return err
		}
		length := func(kind string) (uint64, error) {
			l, err := d.u64(fmt.Sprintf("length of blob %s %s", b.Name, kind))
			if err == nil && l > uint64(maxBlobLen) {
				err = d.fail(ErrCorrupt, "blob %s %s array has %d elements, more than %d", b.Name, kind, l, maxBlobLen)
			}
			return l, err
		}
		l, err := length("f32")
		if err != nil {
			return err
		}
		if b.F32, err = array(d, l, 4, binio.DecF32, "blob "+b.Name+" f32"); err != nil {
			return err
		}
		if l, err = length("u32"); err != nil {
			return err
		}
		if b.U32, err = array(d, l, 4, binio.DecU32, "blob "+b.Name+" u32"); err != nil {
			return err
		}
		if l, err = length("i64"); err != nil {
			return err
		}
		if b.I64, err = array(d, l, 8, binio.DecI64, "blob "+b.Name+" i64"); err != nil {
			return err
		}
		m.Extra = append(m.Extra, b)
	}
	return d.wrap(m.checkExtra(ErrCorrupt))
}

// scale reads the scaling section.
func (d *decoder) scale(m *Model) error {
	s := &Scaling{}
	var err error
	if s.Mode, err = d.str(maxName, "scaling mode"); err != nil {
		return err
	}
	n, err := d.u64("scaling length")
	if err != nil {
		return err
	}
	if n > uint64(maxD) {
		return d.fail(ErrCorrupt, "scaling of %d features, more than %d", n, maxD)
	}
	// Each feature takes 20 bytes (index, shift, divisor), plus the checksum.
	if err := d.need(n*20+4, "scaling"); err != nil {
		return err
	}
	at := d.in.Offset()
	if s.Index, err = array(d, n, 4, binio.DecU32, "scaling indices"); err != nil {
		return err
	}
	if s.Shift, err = array(d, n, 8, binio.DecF64, "scaling shifts"); err != nil {
		return err
	}
	if s.Div, err = array(d, n, 8, binio.DecF64, "scaling divisors"); err != nil {
		return err
	}
	m.Scale = s
	return d.wrapAt(at, m.checkScale(ErrCorrupt))
}

// hash reads the feature hashing section.
func (d *decoder) hash(m *Model) error {
	at := d.in.Offset()
	bits, err := d.u32("hashing bits")
	if err != nil {
		return err
	}
	seed, err := d.u32("hashing seed")
	if err != nil {
		return err
	}
	if bits < 1 || bits > MaxHashBits {
		return d.failAt(at, ErrCorrupt, "feature hashing with %d bits, want 1 to %d", bits, MaxHashBits)
	}
	m.Hash = &Hashing{Bits: int(bits), Seed: seed}
	return nil
}

// calibration reads the calibration section.
func (d *decoder) calibration(m *Model) error {
	c := &Calibration{}
	var err error
	if c.Method, err = d.str(maxName, "calibration method"); err != nil {
		return err
	}
	n, err := d.u32("calibration length")
	if err != nil {
		return err
	}
	if n > maxClasses {
		return d.fail(ErrCorrupt, "calibration of %d scores, more than %d", n, maxClasses)
	}
	// 16 bytes per score, rows, log-loss and the checksum.
	if err := d.need(uint64(n)*16+20, "calibration"); err != nil {
		return err
	}
	if c.A, err = array(d, uint64(n), 8, binio.DecF64, "calibration slopes"); err != nil {
		return err
	}
	if c.B, err = array(d, uint64(n), 8, binio.DecF64, "calibration offsets"); err != nil {
		return err
	}
	rows, err := d.u64("calibration rows")
	if err != nil {
		return err
	}
	c.Rows = int64(rows)
	if c.LogLoss, err = d.f64("calibration log-loss"); err != nil {
		return err
	}
	m.Calibration = c // checked with the whole model, after the checksum
	return nil
}
