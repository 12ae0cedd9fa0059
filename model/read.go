package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/polyhedral/cpm/sparsevec"
)

// The read buffer starts at minBuf bytes and grows, as larger fields
// arrive, up to maxBuf, which holds the longest single field (a Param value
// of maxValue bytes) and a decoding chunk.
const (
	minBuf = 4 << 10
	maxBuf = max(maxValue, chunkSize)
)

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
	d := &decoder{r: r, name: name, size: size, limit: limit}
	m, err := d.model()
	if err != nil {
		return nil, err
	}
	return m, nil
}

// decoder reads little-endian fields through a checksum, tracking the byte
// offset for error messages.
type decoder struct {
	r     io.Reader
	rerr  error  // sticky error of r
	buf   []byte // read-ahead: buf[pos:end] is read but not consumed
	pos   int
	end   int
	name  string
	size  int64 // total input length, or -1 if unknown
	limit int64 // memory limit of the weight sections, or <= 0 for none
	off   int64 // bytes consumed
	crc   uint32
}

// peek returns the next n <= maxBuf bytes without consuming them, or fewer
// with the error that stopped the read (io.EOF at the end of the input).
// The slice aliases the buffer and is valid until the next peek.
func (d *decoder) peek(n int) ([]byte, error) {
	if d.end-d.pos >= n {
		return d.buf[d.pos : d.pos+n], nil
	}
	if n > len(d.buf) {
		// Grow geometrically, never past maxBuf, nor past the known input.
		c := min(max(2*len(d.buf), minBuf), maxBuf)
		if d.size >= 0 {
			c = min(c, int(min(d.size-d.off, maxBuf)))
		}
		nb := make([]byte, max(c, n))
		d.end = copy(nb, d.buf[d.pos:d.end])
		d.buf, d.pos = nb, 0
	} else if d.pos > 0 {
		d.end = copy(d.buf, d.buf[d.pos:d.end])
		d.pos = 0
	}
	for empty := 0; d.end < n && d.rerr == nil; {
		k, err := d.r.Read(d.buf[d.end:])
		d.end += k
		if err != nil {
			d.rerr = err
		} else if k == 0 {
			if empty++; empty == 100 {
				d.rerr = io.ErrNoProgress
			}
		}
	}
	if d.end < n {
		return d.buf[:d.end], d.rerr
	}
	return d.buf[:n], nil
}

// fail returns a *FormatError of the given kind at the current offset.
func (d *decoder) fail(kind error, format string, args ...any) error {
	return &FormatError{Name: d.name, Offset: d.off, Err: invalidf(kind, format, args...)}
}

// wrap turns a validation error into a *FormatError at the current offset.
func (d *decoder) wrap(err error) error {
	if err == nil {
		return nil
	}
	return &FormatError{Name: d.name, Offset: d.off, Err: err}
}

// ioErr wraps a read error that is not a format problem.
func (d *decoder) ioErr(err error) error {
	return fmt.Errorf("%s: read model: %w (at byte %d)", d.name, err, d.off)
}

// need fails with ErrTruncated if the input length is known and fewer than
// n bytes remain. what names the section for the message.
func (d *decoder) need(n uint64, what string) error {
	if d.size < 0 {
		return nil
	}
	if left := uint64(max(d.size-d.off, 0)); n > left {
		return d.fail(ErrTruncated, "%s: need %d bytes, only %d remain", what, n, left)
	}
	return nil
}

// next consumes n <= maxBuf bytes and returns them. The slice aliases the
// read buffer and is valid until the next call.
func (d *decoder) next(n int, what string) ([]byte, error) {
	var b []byte
	var err error
	if d.size >= 0 && int64(n) > d.size-d.off {
		b = nil // do not wait for, or buffer, bytes that cannot come
	} else {
		b, err = d.peek(n)
	}
	if len(b) < n {
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			left := int64(len(b))
			if d.size >= 0 {
				left = max(d.size-d.off, 0)
			}
			d.off += left
			return nil, d.fail(ErrTruncated, "input ends inside %s: need %d bytes, only %d remain", what, n, left)
		}
		return nil, d.ioErr(err)
	}
	d.crc = crc32.Update(d.crc, castagnoli, b)
	d.pos += n
	d.off += int64(n)
	return b, nil
}

func (d *decoder) u32(what string) (uint32, error) {
	b, err := d.next(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	b, err := d.next(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
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

// growTo returns s extended to length at least n, keeping its contents and zeroing
// the new elements. Capacity grows geometrically but never beyond limit,
// so a slice that ends at length limit was allocated at most twice its
// final size in total and ends with no slack beyond limit.
func growTo[T any](s []T, n, limit int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		return s[:n]
	}
	c := min(max(2*cap(s), n), limit)
	ns := make([]T, n, c)
	copy(ns, s)
	return ns
}

// array reads n elements of sz bytes each, decoding chunk by chunk with dec
// into a slice grown only as the bytes arrive. It returns nil for n == 0.
// n must be at most a cap that keeps n·sz from overflowing.
func array[T any](d *decoder, n uint64, sz int, dec func(dst []T, b []byte), what string) ([]T, error) {
	if n == 0 {
		return nil, nil
	}
	if err := d.need(n*uint64(sz), what); err != nil {
		return nil, err
	}
	var s []T
	if d.size >= 0 {
		s = make([]T, 0, n) // the bytes are known to be present
	}
	for left := int(n); left > 0; {
		c := min(left, chunkSize/sz)
		b, err := d.next(c*sz, what)
		if err != nil {
			return nil, err
		}
		l := len(s)
		s = growTo(s, l+c, int(n))
		dec(s[l:], b)
		left -= c
	}
	return s, nil
}

func decF32(dst []float32, b []byte) {
	b = b[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func decU32(dst []uint32, b []byte) {
	b = b[:4*len(dst)]
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
}

func decU64(dst []uint64, b []byte) {
	b = b[:8*len(dst)]
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
}

func decI64(dst []int64, b []byte) {
	b = b[:8*len(dst)]
	for i := range dst {
		dst[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
}

// model decodes a whole model.
func (d *decoder) model() (*Model, error) {
	// Magic: distinguish a short file that could still be a model from a
	// file that is something else.
	b, err := d.peek(len(magic))
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
	if version != Version {
		d.off -= 4
		return nil, d.fail(ErrVersion, "file has format version %d, this build reads version %d", version, Version)
	}
	h, err := d.header()
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
	if err := d.weights(m, h.counts, h.steps); err != nil {
		return nil, err
	}
	if err := d.extra(m); err != nil {
		return nil, err
	}

	want := d.crc
	got, err := d.u32("checksum")
	if err != nil {
		return nil, err
	}
	if got != want {
		d.off -= 4
		return nil, d.fail(ErrChecksum, "stored CRC-32C %#08x, contents give %#08x", got, want)
	}
	switch b, err := d.peek(1); {
	case len(b) > 0:
		return nil, d.fail(ErrCorrupt, "trailing bytes after the checksum")
	case !errors.Is(err, io.EOF):
		return nil, d.ioErr(err)
	}
	if err := m.validate(ErrCorrupt); err != nil {
		return nil, d.wrap(err)
	}
	return m, nil
}

type header struct {
	m      *Model
	counts bool
	steps  bool
}

// header reads the fixed header, the learner name and the classes.
func (d *decoder) header() (header, error) {
	var h header
	m := &Model{}
	h.m = m
	flags, err := d.u32("flags")
	if err != nil {
		return h, err
	}
	if flags&^flagsKnown != 0 {
		d.off -= 4
		return h, d.fail(ErrCorrupt, "unknown flag bits %#x", flags&^flagsKnown)
	}
	m.OvO = flags&flagOvO != 0
	m.Multiclass = flags&flagMulti != 0
	h.counts = flags&flagCounts != 0
	h.steps = flags&flagSteps != 0

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
	if m.Classes, err = array(d, uint64(c), 4, decF32, "class labels"); err != nil {
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
		at := d.off
		k, err := d.str(maxName, "param key")
		if err != nil {
			return err
		}
		if i > 0 && k <= prev {
			d.off = at
			return d.fail(ErrCorrupt, "param key %q after %q: keys must be strictly ascending", k, prev)
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

// weights reads the matrix count, the matrices and, if present, the counts
// and the steps.
func (d *decoder) weights(m *Model, counts, steps bool) error {
	n, err := d.u32("matrix count")
	if err != nil {
		return err
	}
	if want := m.matrices(); int64(n) != want {
		d.off -= 4
		return d.fail(ErrCorrupt, "%d weight matrices, header calls for %d", n, want)
	}
	dk := uint64(m.D) * uint64(m.K) // < 2^48
	if !fits(int64(n), int64(dk), maxWeights) {
		return d.fail(ErrCorrupt, "%d×%d×%d weights, more than %d", n, m.D, m.K, maxWeights)
	}
	total := uint64(n) * dk * 4
	if counts {
		total += uint64(n) * uint64(m.K) * 8
	}
	if steps {
		total += uint64(n) * 8
	}
	mem := memoryBytes(int64(n), m.D, m.K, counts, steps)
	if mem > MemoryFactor*int64(total)+MemorySlack {
		d.off -= 4
		return d.fail(ErrTooLarge, "%d weight matrices of %d×%d would take %d bytes of memory, more than %d times their %d bytes in the file (plus %d)", n, m.D, m.K, mem, MemoryFactor, total, MemorySlack)
	}
	if err := d.need(total+8, "weights"); err != nil { // +8: blob count and checksum
		return err
	}
	if d.limit > 0 && mem > d.limit {
		d.off -= 4
		return d.fail(ErrTooLarge, "%d weight matrices of %d×%d would take %d bytes of memory, more than the limit of %d: %w", n, m.D, m.K, mem, d.limit, ErrMemoryLimit)
	}
	c := min(int(n), 1024)
	if d.size >= 0 {
		c = int(n) // the bytes are known to be present
	}
	m.Weights = make([]*sparsevec.Matrix, 0, c)
	for i := range int(n) {
		w, err := d.matrix(m.D, m.K, i)
		if err != nil {
			return err
		}
		m.Weights = append(m.Weights, w)
	}
	if counts {
		m.Counts = make([][]uint64, 0, c)
		for i := range int(n) {
			c, err := array(d, uint64(m.K), 8, decU64, fmt.Sprintf("counts of matrix %d", i))
			if err != nil {
				return err
			}
			m.Counts = append(m.Counts, c)
		}
	}
	if steps {
		// n >= 1 for a valid header; array returns nil only for n == 0.
		at := d.off
		s, err := array(d, uint64(n), 8, decI64, "steps")
		if err != nil {
			return err
		}
		m.Steps = s
		if err := m.checkSteps(ErrCorrupt); err != nil {
			d.off = at
			return d.wrap(err)
		}
	}
	return nil
}

// matrix reads one D×K matrix of feature-major float32 into a padded
// sparsevec.Matrix. When the input length is unknown, Data grows as rows
// arrive.
func (d *decoder) matrix(rows, k, i int) (*sparsevec.Matrix, error) {
	stride := sparsevec.StrideFor(k)
	w := &sparsevec.Matrix{D: rows, K: k, Stride: stride}
	full := rows * stride
	if d.size >= 0 {
		w.Data = make([]float32, full) // the bytes are known to be present
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
		w.Data = growTo(w.Data, (last+1)*stride, full)
		for len(b) > 0 {
			n := min(k-f, len(b)/4)
			at := j*stride + f
			decF32(w.Data[at:at+n], b[:4*n])
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
		if b.F32, err = array(d, l, 4, decF32, "blob "+b.Name+" f32"); err != nil {
			return err
		}
		if l, err = length("u32"); err != nil {
			return err
		}
		if b.U32, err = array(d, l, 4, decU32, "blob "+b.Name+" u32"); err != nil {
			return err
		}
		if l, err = length("i64"); err != nil {
			return err
		}
		if b.I64, err = array(d, l, 8, decI64, "blob "+b.Name+" i64"); err != nil {
			return err
		}
		m.Extra = append(m.Extra, b)
	}
	return d.wrap(m.checkExtra(ErrCorrupt))
}
