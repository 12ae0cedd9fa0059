package libsvm

import (
	"bytes"
	"context"
	"io"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
	"golang.org/x/sync/errgroup"
)

// The chunk pipeline behind Load and Stream:
//
//	read (1 goroutine) ──work──▶ parse (N goroutines) ──done──▶ nextChunk (caller)
//	      ▲                                                          │
//	      └───────────────────────── free ◀── recycle ◀──────────────┘
//
// The reader cuts the input into chunks of whole lines; parsers turn each
// chunk into a CSR block, counting its lines; nextChunk puts the chunks back
// in file order and turns line numbers relative to a chunk into absolute
// ones. A fixed set of chunks circulates, so memory is bounded and no
// channel carries more than one value per chunk.

// chunk is one piece of input and, once parsed, its rows.
type chunk struct {
	seq  int
	last bool   // no chunk follows
	buf  []byte // owned and reused
	data []byte // whole lines of buf; only the last chunk's may lack '\n'
	// tail is a read error or ErrLineTooLong met just after data; it is
	// reported at the line after data unless a parse error comes first.
	tail *core.ParseError

	blk   sparsevec.CSR    // rows of data
	lines int              // lines in data
	err   *core.ParseError // first error, Line relative to the chunk
	// errRange is the index of err if err is ErrIndexRange (lineParser's
	// errRange), else 0.
	errRange uint64

	// With a deferring indexMap (indexMap.auto): zero tells whether an
	// index 0 was read before err; limLine (relative to the chunk, 0 for
	// none), limOff and limCol locate the first index equal to MaxIndex,
	// an error if the file turns out 0-based: the line, the offset of the
	// line in data and the offset of the index's token in the line.
	zero                    bool
	limLine, limOff, limCol int

	// The first row of data, if any: its line (relative to the chunk) and
	// the offsets in data of its line and of its qid column
	// (lineParser.qidCol), for the error of a chunk whose rows disagree
	// with the file's earlier rows about qid:N (blk.Qid tells whether
	// they have it).
	firstLine, firstOff, firstCol int
}

// pipeline runs the goroutines. nextChunk and recycle are for one consumer
// goroutine; stop may be called from any.
type pipeline struct {
	r    io.Reader
	path string
	opt  core.Options
	im   indexMap

	free chan *chunk
	work chan *chunk
	done chan *chunk

	parent context.Context // WithContext's, or Background
	ctx    context.Context
	cancel context.CancelFunc
	g      *errgroup.Group

	pending []*chunk // ring indexed by seq % len: out-of-order chunks
	next    int      // seq of the next chunk to hand out
	base    int      // lines before chunk next
	ended   bool
	qids    int8 // 0 before the first row, then 1 if it had no qid, 2 if it had

	// With a deferring indexMap, what the chunks handed out so far found:
	// whether an index 0 occurred, and the error at the first index equal
	// to MaxIndex (nil if none), with its absolute line.
	zero   bool
	limErr *core.ParseError
}

// startPipeline starts reading and parsing r, mapping indices by im.
func startPipeline(r io.Reader, path string, opt core.Options, im indexMap) *pipeline {
	k := 2*opt.Workers + 2 // chunks in flight
	parent := opt.Ctx
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	g, gctx := errgroup.WithContext(ctx)
	p := &pipeline{
		r: r, path: path, opt: opt, im: im,
		free:    make(chan *chunk, k),
		work:    make(chan *chunk, k),
		done:    make(chan *chunk, k),
		parent:  parent,
		ctx:     gctx,
		cancel:  cancel,
		g:       g,
		pending: make([]*chunk, k),
	}
	for range k {
		p.free <- new(chunk)
	}
	g.Go(p.read)
	for range opt.Workers {
		g.Go(p.parse)
	}
	return p
}

// nextChunk returns the next chunk in file order; the caller gives it back
// with recycle. After the chunk marked last it returns nil, nil. When the
// chunk holds the first error in file order, nextChunk returns it too, with
// the error's absolute line; the chunk's block holds the rows before the
// error, and no chunk follows. Once the pipeline is stopped it returns
// stopErr.
func (p *pipeline) nextChunk() (*chunk, error) {
	if p.ended {
		return nil, nil
	}
	k := len(p.pending)
	for {
		if c := p.pending[p.next%k]; c != nil {
			p.pending[p.next%k] = nil
			p.next++
			if err := p.checkQID(c); err != nil {
				c.err, c.errRange = err, 0
			}
			if p.im.auto {
				p.observeAuto(c)
			}
			if c.err != nil {
				p.ended = true
				e := *c.err
				e.Line += p.base
				return c, &e
			}
			p.base += c.lines
			p.ended = c.last
			return c, nil
		}
		select {
		case c := <-p.done:
			p.pending[c.seq%k] = c
		case <-p.ctx.Done():
			p.ended = true
			return nil, p.stopErr()
		}
	}
}

// checkQID checks that the rows of c agree with the rows of the chunks
// before it about qid:N (parseChunk checked the rows within c). It returns
// the error at the first row of c if they do not, emptying c's block, since
// no row of c comes before the error.
func (p *pipeline) checkQID(c *chunk) *core.ParseError {
	if c.blk.Rows() == 0 {
		return nil
	}
	q := int8(1)
	if c.blk.HasQid() {
		q = 2
	}
	if p.qids == 0 {
		p.qids = q
	}
	if q == p.qids {
		return nil
	}
	line := c.data[c.firstOff:]
	if k := bytes.IndexByte(line, '\n'); k >= 0 {
		line = line[:k]
	}
	lp := lineParser{qidCol: c.firstCol}
	lp.qidMismatch(line, p.qids == 2)
	c.blk.Reset()
	return lp.parseError(p.path, c.firstLine)
}

// observeAuto adds what c, the next chunk in file order, found for a
// deferring indexMap: an index 0, and the first index equal to MaxIndex,
// whose error it builds while c.data is at hand (once per file).
func (p *pipeline) observeAuto(c *chunk) {
	p.zero = p.zero || c.zero
	if p.limErr != nil || c.limLine == 0 {
		return
	}
	line := c.data[c.limOff:]
	if k := bytes.IndexByte(line, '\n'); k >= 0 {
		line = line[:k]
	}
	v := uint64(p.opt.MaxIndex) + 1 // the index read 0-based
	lp := lineParser{}
	lp.fail(line, c.limCol, indexMap{shift: 1}.rangeError(p.opt.MaxIndex, v))
	p.limErr = lp.parseError(p.path, p.base+c.limLine)
}

// recycle gives a chunk handed out by nextChunk back to the reader.
func (p *pipeline) recycle(c *chunk) {
	p.free <- c // never blocks: free holds every chunk
}

// stopErr is the error of a stopped pipeline: the error of the WithContext
// context if that was cancelled, else errStopped.
func (p *pipeline) stopErr() error {
	if err := p.parent.Err(); err != nil {
		return err
	}
	return core.ErrStopped
}

// stop cancels the goroutines and waits for them to end. Safe to call more
// than once and from any goroutine.
func (p *pipeline) stop() {
	p.cancel()
	p.g.Wait()
}

// read is the reading goroutine: it fills chunks with whole lines.
func (p *pipeline) read() error {
	defer close(p.work)
	maxLine := p.opt.MaxLineBytes
	var carry []byte // the partial line after the last '\n' of a chunk
	empties := 0
	for seq := 0; ; seq++ {
		var c *chunk
		select {
		case c = <-p.free:
		case <-p.ctx.Done():
			return p.ctx.Err()
		}
		c.seq, c.last, c.data, c.tail = seq, false, nil, nil
		size := max(p.opt.ChunkBytes, len(carry))
		if cap(c.buf) < size || cap(c.buf) > 2*size {
			c.buf = make([]byte, size)
		}
		buf := c.buf[:cap(c.buf)]
		n := copy(buf, carry)
		carry = carry[:0]
		if cap(carry) > p.opt.ChunkBytes {
			carry = nil // the tail of a long line: do not keep its room
		}
		var rerr error
		for {
			for n < len(buf) && rerr == nil {
				m, err := p.r.Read(buf[n:])
				if m < 0 || m > len(buf)-n {
					m, err = 0, core.ErrBadRead
				}
				n += m
				rerr = err
				if m > 0 {
					empties = 0
				} else if empties++; empties >= 100 && rerr == nil {
					rerr = io.ErrNoProgress
				}
			}
			if rerr != nil {
				break
			}
			if k := bytes.LastIndexByte(buf[:n], '\n'); k >= 0 {
				c.data = buf[:k+1]
				carry = append(carry, buf[k+1:n]...)
				break
			}
			if n > maxLine {
				c.last = true
				c.tail = &core.ParseError{Path: p.path, Col: maxLine + 1, Err: core.LineTooLongError(maxLine)}
				break
			}
			// A line longer than the buffer: grow, up to maxLine+1.
			nb := make([]byte, growLine(len(buf), maxLine))
			copy(nb, buf[:n])
			buf = nb
			c.buf = nb
		}
		if rerr != nil && p.ctx.Err() != nil {
			// A read cut short by the cancellation: the bytes read so far
			// are not the end of the input and are not handed out.
			return p.ctx.Err()
		}
		switch {
		case rerr == io.EOF:
			c.last = true
			c.data = buf[:n]
		case rerr != nil:
			c.last = true
			c.data = buf[:bytes.LastIndexByte(buf[:n], '\n')+1]
			c.tail = core.ReadError(p.path, 0, rerr).(*core.ParseError)
		}
		select {
		case p.work <- c:
		case <-p.ctx.Done():
			return p.ctx.Err()
		}
		if c.last {
			return nil
		}
	}
}

// parse is a parser goroutine.
func (p *pipeline) parse() error {
	lp := lineParser{maxIndex: p.opt.MaxIndex, im: p.im}
	var d density
	for {
		select {
		case c, ok := <-p.work:
			if !ok {
				return nil
			}
			d.reserve(&c.blk, len(c.data))
			parseChunk(c, &lp, p.path, p.opt.MaxLineBytes)
			d.observe(&c.blk, len(c.data))
			select {
			case p.done <- c:
			case <-p.ctx.Done():
				return p.ctx.Err()
			}
		case <-p.ctx.Done():
			return p.ctx.Err()
		}
	}
}

// parseChunk parses c.data into c.blk, counting lines, and records the
// first error with its line relative to the chunk. The first row decides
// whether the chunk's rows have qid:N; a later row that disagrees is an
// error.
func parseChunk(c *chunk, lp *lineParser, path string, maxLine int) {
	blk := &c.blk
	blk.Reset()
	c.err, c.errRange = nil, 0
	c.firstLine = 0
	c.limLine = 0
	lp.zero = false
	labels, ptr, qids := blk.Labels, append(blk.Ptr, 0), blk.Qid
	lp.idx, lp.val = blk.Idx, blk.Val
	var maxIdx uint32
	// lim is the index whose first place a deferring indexMap records;
	// 0, which no other indexMap stores, records none.
	var lim uint32
	if lp.im.auto {
		lim = lp.maxIndex
	}
	data := c.data
	line := 0
	for len(data) > 0 {
		off := len(c.data) - len(data)
		var l []byte
		if k := bytes.IndexByte(data, '\n'); k >= 0 {
			l, data = data[:k], data[k+1:]
		} else {
			l, data = data, nil
		}
		line++
		if len(l) > maxLine {
			c.err = &core.ParseError{Path: path, Line: line, Col: maxLine + 1, Err: core.LineTooLongError(maxLine)}
			break
		}
		r := lp.parse(l)
		if r == lineRow && lim != 0 && c.limLine == 0 {
			// The row's last index is its largest.
			if n, s := len(lp.idx), ptr[len(ptr)-1]; n > s && lp.idx[n-1] == lim {
				t := n - s // the label is token 0
				if lp.hasQID {
					t++
				}
				c.limLine, c.limOff, c.limCol = line, off, tokenStart(l, t)
			}
		}
		if r == lineRow {
			switch {
			case len(labels) == 0:
				c.firstLine, c.firstOff, c.firstCol = line, off, lp.qidCol
			case lp.hasQID != (len(qids) > 0):
				lp.idx, lp.val = lp.idx[:ptr[len(ptr)-1]], lp.val[:ptr[len(ptr)-1]]
				r = lp.qidMismatch(l, len(qids) > 0)
			}
		}
		switch r {
		case lineRow:
			if lp.hasQID {
				qids = append(qids, lp.qid)
			}
			labels = append(labels, lp.label)
			if n := len(lp.idx); n > ptr[len(ptr)-1] {
				maxIdx = max(maxIdx, lp.idx[n-1])
			}
			ptr = append(ptr, len(lp.idx))
		case lineErr:
			c.err, c.errRange = lp.parseError(path, line), lp.errRange
			if lim != 0 && c.limLine == 0 {
				// An index equal to lim before the error, or at its
				// token, is the error if the file is 0-based.
				if col, ok := limitToken(l, lp.errCol-1, lim); ok {
					c.limLine, c.limOff, c.limCol = line, off, col
				}
			}
		}
		if c.err != nil {
			break
		}
	}
	if c.err == nil && c.tail != nil {
		e := *c.tail
		e.Line = line + 1
		c.err = &e
	}
	c.zero = lp.zero
	blk.Labels, blk.Ptr, blk.Idx, blk.Val, blk.Qid = labels, ptr, lp.idx, lp.val, qids
	if len(blk.Idx) > 0 {
		blk.Dim = int(maxIdx) + 1
	}
	c.lines = line
}

// density tracks rows and nonzeros per input byte of the chunks a parser
// has seen, to size the arrays of a block whose arrays were taken (Load
// keeps them) so that they are allocated once rather than grown.
type density struct {
	rowsPerKB, nnzPerKB float64
}

// reserve gives blk room for about the rows and nonzeros of n bytes, plus
// 1/16, if it has no arrays.
func (d *density) reserve(blk *sparsevec.CSR, n int) {
	if cap(blk.Idx) > 0 || d.nnzPerKB == 0 {
		return
	}
	kb := float64(n) / 1024 * (1 + 1.0/16)
	rows, nnz := int(kb*d.rowsPerKB)+16, int(kb*d.nnzPerKB)+64
	blk.Labels = make([]float32, 0, rows)
	blk.Ptr = make([]int, 0, rows+1)
	blk.Idx = make([]uint32, 0, nnz)
	blk.Val = make([]float32, 0, nnz)
}

// observe records the density of a parsed chunk of n bytes.
func (d *density) observe(blk *sparsevec.CSR, n int) {
	if n >= 4096 && blk.NNZ() > 0 {
		d.rowsPerKB = float64(blk.Rows()) * 1024 / float64(n)
		d.nnzPerKB = float64(blk.NNZ()) * 1024 / float64(n)
	}
}

// growLine returns the next size of a line buffer of n bytes that a
// partial line of at most maxLine bytes fills: twice n, but maxLine+1
// straight away once that reaches maxLine, so that a buffer of maxLine
// bytes is never copied into one of maxLine+1. Growing a buffer to its
// limit L+1 thus allocates at most about 2L+1 bytes in all (L/2 + L/4 +
// ... + L+1), and holds at most L/2 + L+1 at once, while it copies.
func growLine(n, maxLine int) int {
	if 2*n >= maxLine {
		return maxLine + 1
	}
	return 2 * n
}
