package rowcache

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

const (
	cacheVersion   = 2
	cacheHeadBytes = 64 << 10 // bytes of the source hashed into the header
	maxCacheDict   = 256
	// qidFlag, in a block header's dictionary length field, says that the
	// payload ends with the rows' query ids.
	qidFlag = 1 << 31
	// maxCacheBlockRows bounds the rows and nonzeros a block header may
	// claim, so a corrupt header cannot make the reader allocate without
	// limit: 1<<24 rows and 1<<28 nonzeros (1 GiB of indices).
	maxCacheBlockRows = 1 << 24
	maxCacheBlockNNZ  = 1 << 28
)

// Magic is the first eight bytes of every cache file.
const Magic = "CPMCACHE"

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	ecma64     = crc64.MakeTable(crc64.ECMA)
)

// ErrStale is returned, wrapped with the reason, by Check when a
// cache file does not match its source as the source is now.
var ErrStale = errors.New("cache is stale")

// ErrNotCache is wrapped by the error of Replaceable, and so of
// Create, for an existing file that is not a cpm cache.
var ErrNotCache = errors.New("not a cpm cache")

// Replaceable returns nil if a cache may be written over the file at
// path: a file that starts with the cache's magic bytes (a cache, perhaps
// stale or damaged) or is empty. For any other file (training data, a
// model, a cache of a format without the magic) it returns an error
// wrapping ErrNotCache that names path, so that a mistyped --cache does
// not destroy it.
func Replaceable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	magic := make([]byte, len(Magic))
	n, err := io.ReadFull(f, magic)
	switch {
	case n == 0 && err == io.EOF:
		return nil
	case err == nil && string(magic) == Magic:
		return nil
	case err != nil && err != io.ErrUnexpectedEOF:
		return fmt.Errorf("%s: %w", path, err)
	}
	return fmt.Errorf("%s is %w (it does not start with %q); remove it or name another cache file", path, ErrNotCache, Magic)
}

// Error reports a damaged or foreign cache file.
type Error struct {
	Path   string
	Offset int64 // byte offset of the damaged field
	Err    error // wraps ErrCorrupt, or an I/O error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: cache byte %d: %v", e.Path, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// sourceID identifies the version of a source file a cache was built from,
// and the options that shaped its rows.
type sourceID struct {
	size, mtime int64
	head        uint64
	maxIndex    uint32
	zeroBased   core.ZeroBased
}

// identify reads the identity of the file at path, read with o.
func identify(path string, o core.Options) (sourceID, error) {
	f, err := os.Open(path)
	if err != nil {
		return sourceID{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return sourceID{}, err
	}
	buf := make([]byte, cacheHeadBytes)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return sourceID{}, fmt.Errorf("%s: %w", path, err)
	}
	return sourceID{size: st.Size(), mtime: st.ModTime().UnixNano(), head: crc64.Checksum(buf[:n], ecma64), maxIndex: o.MaxIndex, zeroBased: o.ZeroBased}, nil
}

func (id sourceID) appendHeader(b []byte, source string) []byte {
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint32(b, cacheVersion)
	b = binary.LittleEndian.AppendUint32(b, id.maxIndex)
	b = binary.LittleEndian.AppendUint64(b, uint64(id.size))
	b = binary.LittleEndian.AppendUint64(b, uint64(id.mtime))
	b = binary.LittleEndian.AppendUint64(b, id.head)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(source)))
	b = append(b, source...)
	b = append(b, byte(id.zeroBased))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// readCacheHeader reads and checks the header at the start of r.
func readCacheHeader(r io.Reader, path string) (sourceID, string, int64, error) {
	fixed := make([]byte, 8+4+4+8+8+8+4)
	if _, err := io.ReadFull(r, fixed); err != nil {
		return sourceID{}, "", 0, &Error{path, 0, fmt.Errorf("%w: header: %w", core.ErrCorrupt, noEOF(err))}
	}
	if string(fixed[:8]) != Magic {
		return sourceID{}, "", 0, &Error{path, 0, fmt.Errorf("%w: not a cpm cache (bad magic)", core.ErrCorrupt)}
	}
	le := binary.LittleEndian
	if v := le.Uint32(fixed[8:]); v != cacheVersion {
		if v < cacheVersion {
			return sourceID{}, "", 8, &Error{path, 8, fmt.Errorf("%w: %w: cache version %d, written by an earlier build; this build reads %d (rebuild the cache)", ErrStale, core.ErrCorrupt, v, cacheVersion)}
		}
		return sourceID{}, "", 8, &Error{path, 8, fmt.Errorf("%w: cache version %d, this build reads %d", core.ErrCorrupt, v, cacheVersion)}
	}
	id := sourceID{maxIndex: le.Uint32(fixed[12:]), size: int64(le.Uint64(fixed[16:])), mtime: int64(le.Uint64(fixed[24:])), head: le.Uint64(fixed[32:])}
	n := le.Uint32(fixed[40:])
	if n > 1<<16 {
		return sourceID{}, "", 40, &Error{path, 40, fmt.Errorf("%w: source path of %d bytes", core.ErrCorrupt, n)}
	}
	rest := make([]byte, n+1+4)
	if _, err := io.ReadFull(r, rest); err != nil {
		return sourceID{}, "", 44, &Error{path, 44, fmt.Errorf("%w: header: %w", core.ErrCorrupt, noEOF(err))}
	}
	h := crc32.Update(crc32.Checksum(fixed, castagnoli), castagnoli, rest[:n+1])
	if h != le.Uint32(rest[n+1:]) {
		return sourceID{}, "", 45 + int64(n), &Error{path, 45 + int64(n), fmt.Errorf("%w: header checksum mismatch", core.ErrCorrupt)}
	}
	id.zeroBased = core.ZeroBased(rest[n])
	if id.zeroBased.String() == "auto" && id.zeroBased != core.ZeroBasedAuto {
		return sourceID{}, "", 44 + int64(n), &Error{path, 44 + int64(n), fmt.Errorf("%w: zero-based mode %d", core.ErrCorrupt, rest[n])}
	}
	return id, string(rest[:n]), int64(len(fixed)) + int64(len(rest)), nil
}

// noEOF turns a bare io.EOF into io.ErrUnexpectedEOF: inside a cache file an
// end of input is always a truncation.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Check reports whether the cache file at cachePath was built from the
// source file as it is now: same size, modification time and first 64 KiB,
// and the same WithMaxIndex and WithZeroBased. It returns nil for a usable
// cache, an error wrapping ErrStale that says what changed (a cache whose
// format version is not this package's is stale too: a *Error wrapping
// ErrStale and ErrCorrupt), an error wrapping os.ErrNotExist when there is no
// cache, or a *Error for a damaged one.
// Only the header is read: block checksums are verified as the cache is
// read.
func Check(cachePath, source string, opts ...core.Option) error {
	f, err := os.Open(cachePath)
	if err != nil {
		return err
	}
	defer f.Close()
	got, recorded, _, err := readCacheHeader(bufio.NewReader(f), cachePath)
	if err != nil {
		return err
	}
	want, err := identify(source, core.BuildOptions(opts))
	if err != nil {
		return err
	}
	switch {
	case recorded == "":
		return fmt.Errorf("%s: %w: the cache records no source file", cachePath, ErrStale)
	case got.size != want.size:
		return fmt.Errorf("%s: %w: source %s is %d bytes, the cache was built from %d", cachePath, ErrStale, source, want.size, got.size)
	case got.mtime != want.mtime:
		return fmt.Errorf("%s: %w: source %s was modified after the cache was built", cachePath, ErrStale, source)
	case got.head != want.head:
		return fmt.Errorf("%s: %w: the first 64 KiB of %s differ from the cached source", cachePath, ErrStale, source)
	case got.maxIndex != want.maxIndex:
		return fmt.Errorf("%s: %w: built with max index %d, asked for %d", cachePath, ErrStale, got.maxIndex, want.maxIndex)
	case got.zeroBased != want.zeroBased:
		return fmt.Errorf("%s: %w: built with zero-based %s, asked for %s", cachePath, ErrStale, got.zeroBased, want.zeroBased)
	}
	return nil
}

// Writer writes a cache file block by block; see Create.
type Writer struct {
	out       *core.OutputFile
	w         *bufio.Writer
	buf       []byte
	codes     []uint8 // dictionary codes of the block being written
	dict      cacheDict
	rows, nnz uint64
	blocks    uint64
	err       error
	nanos     atomic.Int64 // time spent in Write
}

// Create starts a cache at path for the rows of the file source, whose
// identity (size, modification time, first 64 KiB) it records so that
// Check can tell when the source changes. An empty source or "-"
// records no identity (rows from standard input, or from several files):
// Check never matches such a cache to a source, while Open and
// OpenBlocks read it as any other. The rows must have been read with the
// given options (WithMaxIndex and WithZeroBased matter). The cache is written by the rules
// of OutputFile; an existing file at path that is the source itself or not
// a cache (Replaceable) is refused with an error wrapping
// atomicfile.ErrRefused. Nothing appears at path until Close
// succeeds.
func Create(path, source string, opts ...core.Option) (*Writer, error) {
	o := core.BuildOptions(opts)
	id := sourceID{maxIndex: o.MaxIndex, zeroBased: o.ZeroBased}
	if source == "-" {
		source = ""
	}
	if source != "" {
		var err error
		if id, err = identify(source, o); err != nil {
			return nil, err
		}
	}
	if path == "-" {
		return nil, errors.New("reader: a cache must be a file, not standard output")
	}
	if ext := outputCompression(path); ext != "" {
		return nil, fmt.Errorf("%s: a cache file is not compressed (%s); name it *.cpmcache", path, ext)
	}
	out, err := core.CreateCompressed(path, func(o *core.Options) {
		o.File = []atomicfile.Option{atomicfile.NotSameAs(source), atomicfile.ReplaceOnly(Replaceable)}
	})
	if err != nil {
		return nil, err
	}
	c := &Writer{out: out, w: bufio.NewWriterSize(out, 1<<20)}
	if _, err := c.w.Write(id.appendHeader(nil, source)); err != nil {
		out.Abort()
		return nil, err
	}
	return c, nil
}

// Write appends the rows of b to the cache.
func (c *Writer) Write(b *sparsevec.CSR) error {
	if c.err != nil {
		return c.err
	}
	rows := b.Rows()
	if rows == 0 {
		return nil
	}
	if rows > maxCacheBlockRows || b.NNZ() > maxCacheBlockNNZ {
		// Split oversized blocks so that the reader's limits hold.
		half := rows / 2
		var lo, hi sparsevec.CSR
		core.AppendRows(&lo, b, 0, half)
		core.AppendRows(&hi, b, half, rows)
		if err := c.Write(&lo); err != nil {
			return err
		}
		return c.Write(&hi)
	}
	start := time.Now()
	defer func() { c.nanos.Add(int64(time.Since(start))) }()
	var maxIdx uint32
	for r := range rows {
		if x := b.Row(r); len(x.Idx) > 0 {
			maxIdx = max(maxIdx, x.Idx[len(x.Idx)-1])
		}
	}
	codes := c.dict.encode(b.Val, c.codes[:0])
	c.codes = codes
	dict := c.dict.vals
	if codes == nil {
		dict = nil
	}
	p := c.buf[:0]
	for _, y := range b.Labels {
		p = binary.LittleEndian.AppendUint32(p, math.Float32bits(y))
	}
	for r := range rows {
		p = appendUvarint(p, uint64(b.Ptr[r+1]-b.Ptr[r]))
	}
	for r := range rows {
		prev := uint32(0)
		for _, j := range b.Row(r).Idx {
			p = appendUvarint(p, uint64(j-prev))
			prev = j
		}
	}
	if dict != nil {
		for _, v := range dict {
			p = binary.LittleEndian.AppendUint32(p, math.Float32bits(v))
		}
		p = append(p, codes...)
	} else {
		for _, v := range b.Val {
			p = binary.LittleEndian.AppendUint32(p, math.Float32bits(v))
		}
	}
	dictField := uint32(len(dict))
	if b.HasQid() {
		dictField |= qidFlag
		var prev int64
		for _, q := range b.Qid[:rows] {
			p = binary.AppendVarint(p, q-prev)
			prev = q
		}
	}
	c.buf = p
	var h [24]byte
	le := binary.LittleEndian
	le.PutUint32(h[0:], uint32(rows))
	le.PutUint32(h[4:], uint32(b.NNZ()))
	le.PutUint32(h[8:], maxIdx)
	le.PutUint32(h[12:], dictField)
	le.PutUint32(h[16:], uint32(len(p)))
	le.PutUint32(h[20:], crc32.Update(crc32.Checksum(h[:20], castagnoli), castagnoli, p))
	if _, err := c.w.Write(h[:]); err != nil {
		c.err = err
		return err
	}
	if _, err := c.w.Write(p); err != nil {
		c.err = err
		return err
	}
	c.rows += uint64(rows)
	c.nnz += uint64(b.NNZ())
	c.blocks++
	return nil
}

// Close writes the trailer, syncs the file and renames it into place.
func (c *Writer) Close() error {
	if c.err != nil {
		c.out.Abort()
		return c.err
	}
	t := make([]byte, 0, 32)
	t = binary.LittleEndian.AppendUint32(t, 0)
	t = binary.LittleEndian.AppendUint64(t, c.rows)
	t = binary.LittleEndian.AppendUint64(t, c.nnz)
	t = binary.LittleEndian.AppendUint64(t, c.blocks)
	t = binary.LittleEndian.AppendUint32(t, crc32.Checksum(t, castagnoli))
	if _, err := c.w.Write(t); err != nil {
		c.out.Abort()
		return err
	}
	if err := c.w.Flush(); err != nil {
		c.out.Abort()
		return err
	}
	c.err = errors.New("reader: cache writer closed")
	return c.out.Close()
}

// Abort discards the cache; nothing appears at its path. It is a no-op
// after Close.
func (c *Writer) Abort() {
	if c.err == nil {
		c.err = errors.New("reader: cache writer aborted")
	}
	c.out.Abort()
}

// Rows returns the number of rows written so far.
func (c *Writer) Rows() int64 { return int64(c.rows) }

// Seconds returns the time spent encoding and writing blocks so far. It
// may be called from any goroutine.
func (c *Writer) Seconds() float64 { return time.Duration(c.nanos.Load()).Seconds() }

// Bytes returns the number of bytes that have reached the file so far.
func (c *Writer) Bytes() int64 { return c.out.Written() }

// cacheDict builds the value dictionary of a block: at most maxCacheDict
// distinct float32 bit patterns, found with a small open-addressing table.
type cacheDict struct {
	keys  [1024]uint32 // bit pattern + 1; 0 = empty slot
	codes [1024]uint8
	vals  []float32
}

func dictSlot(bits uint32) uint32 { return (bits * 0x9e3779b1) >> 22 }

// encode appends to dst the dictionary code of every value of val and
// returns it, with the distinct values in d.vals in order of first
// appearance; it returns nil when val has more than maxCacheDict distinct
// values. One hash probe per value: the codes are found while the
// dictionary is built.
func (d *cacheDict) encode(val []float32, dst []uint8) []uint8 {
	clear(d.keys[:])
	d.vals = d.vals[:0]
	dst = grow(dst, len(val))[:len(val)]
	for i, v := range val {
		bits := math.Float32bits(v)
		s := dictSlot(bits)
		for {
			k := d.keys[s]
			if k == bits+1 {
				dst[i] = d.codes[s]
				break
			}
			if k == 0 {
				if len(d.vals) == maxCacheDict || bits == math.MaxUint32 {
					return nil
				}
				d.keys[s] = bits + 1
				d.codes[s] = uint8(len(d.vals))
				dst[i] = uint8(len(d.vals))
				d.vals = append(d.vals, v)
				break
			}
			s = (s + 1) & 1023
		}
	}
	return dst
}

// appendUvarint is binary.AppendUvarint with the one-byte case (most index
// gaps and row lengths below 128) first.
func appendUvarint(p []byte, v uint64) []byte {
	if v < 0x80 {
		return append(p, byte(v))
	}
	return binary.AppendUvarint(p, v)
}

// outputCompression names the compression CreateCompressed would apply to
// path, or "".
func outputCompression(path string) string {
	for _, ext := range []string{".zst", ".gz", ".bz2"} {
		if len(path) > len(ext) && equalFold(path[len(path)-len(ext):], ext) {
			return ext
		}
	}
	return ""
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// cacheReader reads a cache file as a BlockReader. One goroutine reads,
// checks and decodes blocks ahead of the caller into a fixed pool of
// StreamBlocks blocks, so decoding overlaps the caller's work. Blocks are
// the ones the cache was written with (blockRows of the first pass).
type cacheReader struct {
	path     string
	maxIndex uint32 // WithMaxIndex
	f        *os.File
	pool     chan *sparsevec.CSR
	out      chan *sparsevec.CSR
	stop     chan struct{}
	done     chan struct{}
	ctxDone  <-chan struct{} // WithContext's Done; nil: none
	ctxErr   func() error
	finalErr error
	held     []*sparsevec.CSR
	err      error
	closed   atomic.Bool
	once     sync.Once
	closeErr error
	// Rows, NNZ: totals from the trailer, set once the last block is read.
	rows, nnz int64
}

// Open opens a cache file written by Writer. blockRows is ignored
// (the blocks are the ones written); it is there so Open fits
// OpenBlocks. Of the options only WithMaxIndex, WithOpener and WithContext apply: a row
// with a larger index is a *RowError wrapping ErrIndexRange, as in the other
// formats, whatever limit the cache was built with.
func Open(path string, blockRows int, opts ...core.Option) (core.BlockReader, error) {
	o := core.BuildOptions(opts)
	r, err := openCache(path, o.MaxIndex, o.OpenFile)
	if err != nil {
		return nil, err
	}
	if o.Ctx != nil {
		r.ctxDone, r.ctxErr = o.Ctx.Done(), o.Ctx.Err
	}
	go r.produce()
	return r, nil
}

func openCache(path string, maxIndex uint32, open func(string) (*os.File, error)) (*cacheReader, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	r := &cacheReader{
		path: path, f: f, maxIndex: maxIndex,
		pool: make(chan *sparsevec.CSR, core.StreamBlocks),
		out:  make(chan *sparsevec.CSR, core.StreamBlocks),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	for range core.StreamBlocks {
		b, _ := blockPool.Get().(*sparsevec.CSR)
		if b == nil {
			b = new(sparsevec.CSR)
		}
		r.pool <- b
	}
	return r, nil
}

// blockPool keeps the blocks of closed cache readers, with their arrays,
// for the next reader: a training run opens one per pass, and blocks
// decoded into arrays of the right size already skip the allocation and
// zeroing of a few megabytes per pass.
var blockPool sync.Pool

// recycle puts the blocks that neither the caller nor the producer holds
// any more into blockPool; it runs once the producer has ended.
func (r *cacheReader) recycle() {
	for {
		select {
		case b := <-r.pool:
			blockPool.Put(b)
		case b, ok := <-r.out:
			if !ok {
				r.out = nil // closed: stop selecting it
				continue
			}
			blockPool.Put(b)
		default:
			return
		}
	}
}

func (r *cacheReader) produce() {
	defer close(r.done)
	defer close(r.out)
	size := 1 << 20
	fileSize := int64(-1) // unknown
	if st, err := r.f.Stat(); err == nil && st.Mode().IsRegular() {
		fileSize = st.Size()
		if fileSize < int64(size) {
			size = int(fileSize) + 16 // bufio's minimum is 16
		}
	}
	br := bufio.NewReaderSize(r.f, size)
	id, _, off, err := readCacheHeader(br, r.path)
	if err != nil {
		r.finalErr = err
		return
	}
	var (
		h       [24]byte
		payload []byte
		rows    uint64
		nnz     uint64
		blocks  uint64
		le      = binary.LittleEndian
	)
	fail := func(at int64, format string, args ...any) {
		r.finalErr = &Error{r.path, at, fmt.Errorf("%w: "+format, append([]any{core.ErrCorrupt}, args...)...)}
	}
	for {
		if _, err := io.ReadFull(br, h[:4]); err != nil {
			fail(off, "block header: %v", noEOF(err))
			return
		}
		n := le.Uint32(h[:4])
		if n == 0 {
			var t [32]byte
			le.PutUint32(t[:4], 0)
			if _, err := io.ReadFull(br, t[4:]); err != nil {
				fail(off, "trailer: %v", noEOF(err))
				return
			}
			if crc32.Checksum(t[:28], castagnoli) != le.Uint32(t[28:]) {
				fail(off, "trailer checksum mismatch")
				return
			}
			if le.Uint64(t[4:]) != rows || le.Uint64(t[12:]) != nnz || le.Uint64(t[20:]) != blocks {
				fail(off, "trailer counts %d rows, %d nonzeros, %d blocks; read %d, %d, %d", le.Uint64(t[4:]), le.Uint64(t[12:]), le.Uint64(t[20:]), rows, nnz, blocks)
				return
			}
			if _, err := br.ReadByte(); err != io.EOF {
				fail(off+32, "data after the trailer")
				return
			}
			r.rows, r.nnz = int64(rows), int64(nnz)
			return
		}
		if _, err := io.ReadFull(br, h[4:]); err != nil {
			fail(off, "block header: %v", noEOF(err))
			return
		}
		bnnz, maxIdx, dictLen, plen := le.Uint32(h[4:]), le.Uint32(h[8:]), le.Uint32(h[12:]), le.Uint32(h[16:])
		hasQid := dictLen&qidFlag != 0
		dictLen &^= qidFlag
		if n > maxCacheBlockRows || bnnz > maxCacheBlockNNZ || dictLen > maxCacheDict || uint64(plen) > 19*uint64(n)+9*uint64(bnnz)+4*maxCacheDict {
			fail(off, "block header claims %d rows, %d nonzeros, %d dictionary values, %d bytes", n, bnnz, dictLen, plen)
			return
		}
		if maxIdx > id.maxIndex {
			fail(off, "block's largest index %d is above the cache's maximum %d", maxIdx, id.maxIndex)
			return
		}
		if fileSize >= 0 && off+24+int64(plen) > fileSize {
			// Checked before the payload is allocated: a header cannot
			// make the reader reserve more than the file holds.
			fail(off, "block payload of %d bytes runs past the end of the file (%d bytes)", plen, fileSize)
			return
		}
		if cap(payload) < int(plen) {
			payload = make([]byte, plen)
		}
		payload = payload[:plen]
		if _, err := io.ReadFull(br, payload); err != nil {
			fail(off, "block payload: %v", noEOF(err))
			return
		}
		if crc32.Update(crc32.Checksum(h[:20], castagnoli), castagnoli, payload) != le.Uint32(h[20:]) {
			fail(off, "block checksum mismatch")
			return
		}
		var blk *sparsevec.CSR
		select {
		case blk = <-r.pool:
		case <-r.stop:
			return
		case <-r.ctxDone:
			r.finalErr = r.ctxErr()
			return
		}
		if msg := decodeCacheBlock(blk, payload, int(n), int(bnnz), maxIdx, int(dictLen), hasQid); msg != "" {
			fail(off, "%s", msg)
			return
		}
		if maxIdx > r.maxIndex {
			r.finalErr = r.indexRange(blk, int64(rows))
			return
		}
		off += 24 + int64(plen)
		rows += uint64(n)
		nnz += uint64(bnnz)
		blocks++
		select {
		case r.out <- blk:
		case <-r.stop:
			return
		case <-r.ctxDone:
			r.finalErr = r.ctxErr()
			return
		}
	}
}

// indexRange returns the *RowError of the first row of blk, which follows
// rows rows, with an index above r.maxIndex.
func (r *cacheReader) indexRange(blk *sparsevec.CSR, rows int64) error {
	for i := range blk.Rows() {
		for _, j := range blk.Row(i).Idx {
			if j > r.maxIndex {
				return &core.RowError{Path: r.path, Row: rows + int64(i) + 1, Column: core.FeaturesColumn,
					Err: fmt.Errorf("%w: index %d above the maximum %d", core.ErrIndexRange, j, r.maxIndex)}
			}
		}
	}
	return &Error{r.path, 0, fmt.Errorf("%w: block without the index its header claims", core.ErrCorrupt)} // unreachable: decodeCacheBlock checked it
}

// decodeCacheBlock decodes a checked payload into blk and returns "" or
// what is wrong with it. maxIdx must be the largest index of the block's
// rows (0 if it has none), as Writer writes it; hasQid says that the
// payload ends with the rows' query ids.
func decodeCacheBlock(blk *sparsevec.CSR, p []byte, rows, nnz int, maxIdx uint32, dictLen int, hasQid bool) string {
	le := binary.LittleEndian
	// Every row takes at least 5 bytes (label, length) and every nonzero 2
	// (gap, value code): check before allocating for what the header claims.
	if len(p) < 5*rows+2*nnz {
		return fmt.Sprintf("payload of %d bytes too short for %d rows and %d nonzeros", len(p), rows, nnz)
	}
	blk.Labels = grow(blk.Labels, rows)
	blk.Ptr = grow(blk.Ptr, rows+1)
	blk.Idx = grow(blk.Idx, nnz)
	blk.Val = grow(blk.Val, nnz)
	if len(p) < 4*rows {
		return "payload too short for its labels"
	}
	for i := range blk.Labels {
		blk.Labels[i] = math.Float32frombits(le.Uint32(p[4*i:]))
		if !core.Finite32(blk.Labels[i]) {
			return "non-finite label"
		}
	}
	i := 4 * rows
	blk.Ptr[0] = 0
	for r := 1; r <= rows; r++ {
		if i >= len(p) {
			return "payload too short for its row lengths"
		}
		n, next := uvarintAt(p, i)
		if next < 0 {
			return "bad row length"
		}
		i = next
		if n > uint64(nnz-blk.Ptr[r-1]) {
			return "row lengths exceed the block's nonzeros"
		}
		blk.Ptr[r] = blk.Ptr[r-1] + int(n)
	}
	if blk.Ptr[rows] != nnz {
		return "row lengths do not add up to the block's nonzeros"
	}
	idx := blk.Idx
	var top uint64
	for r := range rows {
		prev := uint64(0)
		for j, hi := blk.Ptr[r], blk.Ptr[r+1]; ; {
			k, last := smallGaps(idx[j:hi], p[i:], prev)
			j, i, prev = j+k, i+k, last
			if prev > uint64(maxIdx) {
				return "index gap of 0 or an index above the block's maximum"
			}
			if j == hi {
				break
			}
			if i >= len(p) {
				return "payload too short for its indices"
			}
			d, next := uvarintAt(p, i)
			if next < 0 {
				return "bad index gap"
			}
			i = next
			prev += d
			if d == 0 || prev > uint64(maxIdx) {
				return "index gap of 0 or an index above the block's maximum"
			}
			idx[j] = uint32(prev)
			j++
		}
		top = max(top, prev)
	}
	if top != uint64(maxIdx) {
		return fmt.Sprintf("block header claims largest index %d, its rows' largest is %d", maxIdx, top)
	}
	blk.Qid = blk.Qid[:0]
	if hasQid {
		end := i + 4*nnz
		if dictLen > 0 {
			end = i + 4*dictLen + nnz
		}
		q, msg := decodeQids(blk.Qid, p, end, rows)
		if msg != "" {
			return msg
		}
		blk.Qid, p = q, p[:end]
	}
	val := blk.Val
	if dictLen > 0 {
		if len(p)-i != 4*dictLen+nnz {
			return "payload size does not match its dictionary-coded values"
		}
		var dict [maxCacheDict]float32
		for k := range dictLen {
			dict[k] = math.Float32frombits(le.Uint32(p[i+4*k:]))
			if !core.Finite32(dict[k]) {
				return "non-finite value"
			}
		}
		codes := p[i+4*dictLen:]
		codes = codes[:nnz]
		val = val[:len(codes)]
		var top uint8
		for j, c := range codes {
			val[j] = dict[c] // entries from dictLen on are 0, refused below
			top = max(top, c)
		}
		if nnz > 0 && int(top) >= dictLen {
			return "value code beyond the dictionary"
		}
	} else {
		if len(p)-i != 4*nnz {
			return "payload size does not match its values"
		}
		for j := range val {
			val[j] = math.Float32frombits(le.Uint32(p[i+4*j:]))
			if !core.Finite32(val[j]) {
				return "non-finite value"
			}
		}
	}
	blk.Dim = 0
	if nnz > 0 {
		blk.Dim = int(maxIdx) + 1
	}
	return ""
}

// decodeQids decodes p[start:], the rows' query ids at the end of a
// payload: rows zigzag varints, each the difference from the previous
// row's query id (the first from 0), which must fill it exactly. It
// returns dst, resized to rows, holding them.
func decodeQids(dst []int64, p []byte, start, rows int) ([]int64, string) {
	if start < 0 || start > len(p) || len(p)-start < rows {
		return dst, "payload too short for its query ids"
	}
	dst = grow(dst, rows)
	var prev int64
	i := start
	for r := range rows {
		if i >= len(p) {
			return dst, "payload too short for its query ids"
		}
		d, k := binary.Varint(p[i:])
		if k <= 0 {
			return dst, "bad query id"
		}
		i += k
		prev += d
		dst[r] = prev
	}
	if i != len(p) {
		return dst, "payload size does not match its query ids"
	}
	return dst, ""
}

// smallGaps decodes the leading index gaps of a row that are one-byte
// varints of 1 to 127, the common case, with one test per byte: from
// prev, the index before them, it sets idx[k] to prev plus the gaps
// p[0..k], stopping at the end of idx or p or at a byte that is 0 or has
// its top bit set. It returns how many gaps it decoded and the last index
// (prev if none).
func smallGaps(idx []uint32, p []byte, prev uint64) (int, uint64) {
	n := min(len(idx), len(p))
	idx, p = idx[:n], p[:n]
	for k, b := range p {
		if b-1 >= 0x7f { // b == 0 wraps to 255
			return k, prev
		}
		prev += uint64(b)
		idx[k] = uint32(prev)
	}
	return n, prev
}

// uvarintAt decodes the varint at p[i] (i < len(p)) and returns it with
// the offset after it, or next < 0 if it is malformed. One-byte varints,
// the common case, take the inlined fast path.
func uvarintAt(p []byte, i int) (v uint64, next int) {
	if b := p[i]; b < 0x80 {
		return uint64(b), i + 1
	}
	v, k := binary.Uvarint(p[i:])
	if k <= 0 {
		return 0, -1
	}
	return v, i + k
}

// grow returns s resized to n elements, reusing its array when it can.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// Next returns the next block, or io.EOF after the last one; see
// BlockReader. Like Stream.Next it returns ErrBlocksHeld rather than
// blocking when the caller holds all StreamBlocks blocks.
func (r *cacheReader) Next() (*sparsevec.CSR, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.closed.Load() {
		r.err = core.ErrClosed
		return nil, r.err
	}
	if len(r.held) >= core.StreamBlocks {
		return nil, core.ErrBlocksHeld
	}
	b, ok := <-r.out
	if !ok {
		r.err = r.finalErr
		if r.err == nil {
			if r.closed.Load() {
				r.err = core.ErrClosed
			} else {
				r.err = io.EOF
			}
		}
		return nil, r.err
	}
	r.held = append(r.held, b)
	return b, nil
}

// Release gives a block back for reuse. It panics if b is not held.
func (r *cacheReader) Release(b *sparsevec.CSR) {
	r.held = core.Unhold(r.held, b)
	r.pool <- b
}

// Close stops the reading goroutine and closes the file.
func (r *cacheReader) Close() error {
	r.once.Do(func() {
		r.closed.Store(true)
		close(r.stop)
		<-r.done
		r.recycle()
		r.closeErr = r.f.Close()
	})
	return r.closeErr
}

// Tee returns a BlockReader that hands out the blocks of src and
// writes each to w as it passes. Writing runs in its own goroutine, off the
// path between src and the caller: a block goes back to src only when both
// the caller has released it and the writer is done with it, and when src
// has no block left to fill, Next waits for the writer. When src ends, the
// writes are finished and w is closed, so the cache appears complete under
// its name before the reader returns io.EOF. Closing the reader before the
// end, or an error of src or w, aborts w: a cache exists only whole.
func Tee(src core.BlockReader, w *Writer) core.BlockReader {
	t := &teeCache{
		src:     src,
		w:       w,
		work:    make(chan *sparsevec.CSR, teeInflight),
		written: make(chan teeWritten, teeInflight),
		quit:    make(chan struct{}),
		exited:  make(chan struct{}),
	}
	go t.write()
	return t
}

// TeeOptional is Tee for a cache the pass can do without and whose
// caller decides when to put it in place. An error of w aborts w and stops
// the writes, but not the pass: src's blocks go on being handed out. At
// the end of src the writes are finished but w is left open: the caller
// then closes w to put the cache in place, or aborts it. Closing the
// reader before the end aborts w. The function returned reports, once the
// reader has returned io.EOF, nil if every block reached w, or the error
// that made the tee abort it.
func TeeOptional(src core.BlockReader, w *Writer) (core.BlockReader, func() error) {
	t := Tee(src, w).(*teeCache)
	t.optional = true
	return t, func() error { return t.werr }
}

// teeInflight bounds the blocks handed to the writer and not yet written,
// so that work and written never fill.
const teeInflight = 2 * core.StreamBlocks

type teeCache struct {
	src core.BlockReader
	w   *Writer

	// Owned by the goroutine that calls Next and Release.
	held     []*sparsevec.CSR // released by the caller, or not, ...
	writing  []*sparsevec.CSR // ... and not yet written
	err      error            // sticky
	finished bool             // w closed or aborted by Next
	optional bool             // TeeOptional
	complete bool             // optional: src ended with every block in w, left open

	werr error // the writer's error, as reported with a block

	work    chan *sparsevec.CSR // to the writer
	written chan teeWritten     // back from the writer
	quit    chan struct{}       // closed by Close
	exited  chan struct{}       // closed when write returns
	once    sync.Once
	cerr    error
}

// teeWritten is a block the writer is done with, and its first error so
// far.
type teeWritten struct {
	b   *sparsevec.CSR
	err error
}

// write is the writer goroutine. After an error it aborts w and passes the
// remaining blocks straight back.
func (t *teeCache) write() {
	defer close(t.exited)
	var werr error
	for {
		select {
		case b, ok := <-t.work:
			if !ok {
				return
			}
			if werr == nil {
				if werr = t.w.Write(b); werr != nil {
					t.w.Abort()
				}
			}
			t.written <- teeWritten{b, werr} // never blocks: at most teeInflight in flight
		case <-t.quit:
			return
		}
	}
}

// done notes that the writer has finished b, releasing it to src if the
// caller has too.
func (t *teeCache) done(d teeWritten) {
	b := d.b
	if d.err != nil {
		t.werr = d.err
	}
	t.writing = removeBlock(t.writing, b)
	if !slices.Contains(t.held, b) {
		t.src.Release(b)
	}
}

// collect takes in what the writer has finished, without waiting, or
// waiting for one block when wait is set and a write is in flight.
func (t *teeCache) collect(wait bool) {
	if wait && len(t.writing) > 0 {
		t.done(<-t.written)
	}
	for {
		select {
		case b := <-t.written:
			t.done(b)
		default:
			return
		}
	}
}

func (t *teeCache) Next() (*sparsevec.CSR, error) {
	if t.err != nil {
		return nil, t.err
	}
	t.collect(len(t.writing) >= teeInflight)
	if t.werr != nil && !t.finished {
		if !t.optional {
			return nil, t.fail(fmt.Errorf("writing the cache: %w", t.werr))
		}
		t.stopWriter() // the writer has aborted w; the pass goes on
	}
	for {
		b, err := t.src.Next()
		if errors.Is(err, core.ErrBlocksHeld) && len(t.writing) > 0 {
			t.collect(true) // src's blocks are waiting on the writer
			continue
		}
		if err == io.EOF {
			if t.finished {
				return nil, err
			}
			return nil, t.finish()
		}
		if err != nil {
			return nil, t.fail(err)
		}
		t.held = append(t.held, b)
		if !t.finished {
			t.writing = append(t.writing, b)
			t.work <- b // never blocks: len(t.writing) <= teeInflight
		}
		return b, nil
	}
}

// finish ends the writes at the end of src and closes w: io.EOF, or the
// error that kept the cache from being written.
func (t *teeCache) finish() error {
	t.stopWriter()
	if t.optional {
		t.complete = t.werr == nil
		return t.setErr(io.EOF)
	}
	if t.werr != nil {
		return t.setErr(fmt.Errorf("writing the cache: %w", t.werr))
	}
	if err := t.w.Close(); err != nil {
		return t.setErr(fmt.Errorf("writing the cache: %w", err))
	}
	return t.setErr(io.EOF)
}

// stopWriter ends the writer goroutine once it has written (or passed
// back) every block handed to it.
func (t *teeCache) stopWriter() {
	if t.finished {
		return
	}
	t.finished = true
	close(t.work)
	<-t.exited
	t.collect(false)
}

// fail stops the writer, aborts w and makes err sticky.
func (t *teeCache) fail(err error) error {
	if !t.finished {
		t.stopWriter()
		t.w.Abort()
	}
	return t.setErr(err)
}

func (t *teeCache) setErr(err error) error {
	t.err = err
	return err
}

func (t *teeCache) Release(b *sparsevec.CSR) {
	t.held = core.Unhold(t.held, b)
	if !slices.Contains(t.writing, b) {
		t.src.Release(b)
	}
}

// Close stops the writer, discarding an unfinished cache, and closes src.
// Blocks the caller holds stay valid.
func (t *teeCache) Close() error {
	t.once.Do(func() {
		close(t.quit)
		<-t.exited
		if !t.complete {
			t.w.Abort() // a no-op after Close or after the writer's own Abort
		}
		t.cerr = t.src.Close()
	})
	return t.cerr
}

// removeBlock removes b from s, if there.
func removeBlock(s []*sparsevec.CSR, b *sparsevec.CSR) []*sparsevec.CSR {
	if i := slices.Index(s, b); i >= 0 {
		return slices.Delete(s, i, i+1)
	}
	return s
}
