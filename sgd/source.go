package sgd

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/polyhedral/cpm/internal/rng"
	"github.com/polyhedral/cpm/sparsevec"
)

// source yields the rows SGD trains on, one per step, forever: a source
// starts a new epoch when it runs out. The vector returned by Next is valid
// until the next call.
type source interface {
	// Next returns the next row, its label and a row id that is stable
	// across epochs and below Rows() (ASSIGN's dictionary key).
	Next() (x sparsevec.Vector, label float32, id int, err error)
	// Epoch returns the number of completed passes plus the fraction of
	// the current one done, when the number of rows is known.
	Epoch() float64
}

// randIndex returns an index in [0, n) from one draw of r (rng.IndexMod),
// so that the row order of a seed never changes with the Go release.
func randIndex(r *rand.PCG, n int) int { return int(rng.IndexMod(r, uint64(n))) }

// memorySource draws rows of in-memory data, packed (sparsevec.Packed).
// The first epoch visits rows in the order given; every later epoch
// repeats it, or, with reshuffle, follows a fresh permutation from a PCG
// seeded by (seed, stream). Row ids are positions in that first order.
//
// Train and TrainPacked lay the data out in its one shuffled order
// (sparsevec.Pack, sparsevec.Packer.Shuffle) before building sources, so
// the default order reads memory sequentially; for the random order of
// --reshuffle, Next prefetches the next rows while the caller computes on
// the current one. Next returns a row of 4-byte indices and values in
// place and decodes a compact one into the source's buffer, which the
// kernels then read from the L1 cache. Rows of 2-byte indices and value
// codes are read in place by nextCoded and the Coded kernels when those
// run without decoding (coded; task.steps then uses it).
type memorySource struct {
	data      *sparsevec.Packed
	rows      []int32 // data row of each id
	perm      []int32 // ids in epoch order
	pos       int
	epoch     int
	reshuffle bool
	rng       *rand.PCG
	buf       sparsevec.Vector   // the decoded row Next returns
	w         *sparsevec.Matrix  // weights Next prefetches rows of (prefetchWeights)
	coded     bool               // rows are coded and read by nextCoded
	row       sparsevec.CodedRow // the row nextCoded returns
	release   func()             // if set, Close gives data back to its owner
}

// Close gives the source's rows back to their owner (a pair's copy); the
// source must not be used after it.
func (s *memorySource) Close() error {
	if s.release != nil {
		s.release()
		s.release, s.data = nil, nil
	}
	return nil
}

// newMemorySource returns a source over the given rows of data (nil = all,
// in order).
func newMemorySource(data *sparsevec.Packed, rows []int32, seed, stream uint64, reshuffle bool) (*memorySource, error) {
	if rows == nil {
		rows = make([]int32, data.Rows())
		for i := range rows {
			rows[i] = int32(i)
		}
	}
	if len(rows) == 0 {
		return nil, errors.New("sgd: no training rows")
	}
	s := &memorySource{data: data, rows: rows, perm: make([]int32, len(rows)), reshuffle: reshuffle, rng: rand.NewPCG(seed, stream)}
	s.buf = sparsevec.Vector{Idx: make([]uint32, data.MaxRow()), Val: make([]float32, data.MaxRow())}
	s.coded = !data.Wide() && data.Coded() && sparsevec.CodedDirect()
	for i := range s.perm {
		s.perm[i] = int32(i)
	}
	return s, nil
}

// permutation returns a seeded random permutation of 0..n-1.
func permutation(n int, seed, stream uint64) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	rng.ShuffleMod(rand.NewPCG(seed, stream), p)
	return p
}

// Rows returns the number of rows drawn from.
func (s *memorySource) Rows() int { return len(s.rows) }

// Next implements source. It never fails and does not allocate.
func (s *memorySource) Next() (sparsevec.Vector, float32, int, error) {
	r, id := s.advance()
	if s.w != nil && s.pos < len(s.perm) {
		// The next row's nonzeros were prefetched by advance a step ago.
		s.w.Prefetch(s.data.Row(int(s.rows[s.perm[s.pos]]), nil))
	}
	return s.data.Row(r, &s.buf), s.data.Label(r), id, nil
}

// prefetchWeights makes Next also prefetch the weight rows of the next
// row's nonzeros from w (sparsevec.Matrix.Prefetch: a no-op below 16 MiB
// of weights, where the caches hold them), so that their memory latency
// overlaps the current step. It applies to rows read in place (4-byte
// indices and values), which wide feature spaces have: on a URL-like
// matrix of 3.2 M features it saves about a sixth of the SGD loop.
func (s *memorySource) prefetchWeights(w *sparsevec.Matrix) {
	if s.data.Wide() && !s.data.Coded() {
		s.w = w
	}
}

// nextCoded is Next for a source whose rows are coded (s.coded): the row
// in its stored encoding, not decoded, in a field of the source that the
// next call overwrites. The row goes to the kernels by pointer: a
// CodedRow is seven words, which as an argument would be copied on every
// call of the step's chain. Its fields are set in place (CodedInto): a
// CodedRow returned by value and stored would be written field by field
// and read back in wider loads, which store forwarding does not serve
// (3-4 % of an MNIST run).
func (s *memorySource) nextCoded() (*sparsevec.CodedRow, float32, int) {
	r, id := s.advance()
	s.data.CodedInto(&s.row, s.data.Start(r), s.data.RowNNZ(r))
	return &s.row, s.data.Label(r), id
}

// advance moves to the next row and returns its data row and id.
func (s *memorySource) advance() (r, id int) {
	if s.pos == len(s.perm) {
		s.pos = 0
		s.epoch++
		if s.reshuffle {
			rng.ShuffleMod(s.rng, s.perm)
		}
	}
	id = int(s.perm[s.pos])
	s.pos++
	// Software pipelining of the memory latency (the order is random
	// under reshuffle): start loading the row offsets two steps ahead and
	// the nonzeros one step ahead, so they arrive while this step computes.
	// Coded rows read in order need none: at 3 bytes a nonzero the hardware
	// prefetcher keeps up, and the prefetches cost more than they save
	// (MNIST one-vs-one: 6 % of the CPU). 4-byte rows read in order still
	// gain from them.
	if s.coded && !s.reshuffle {
		return int(s.rows[id]), id
	}
	if s.pos+1 < len(s.perm) {
		s.data.PrefetchPtr(int(s.rows[s.perm[s.pos+1]]))
	}
	if s.pos < len(s.perm) {
		s.data.PrefetchRow(int(s.rows[s.perm[s.pos]]))
	}
	return int(s.rows[id]), id
}

// state returns the source's position for a checkpoint. The permutation
// is referenced, not copied, and only under reshuffle (otherwise it is the
// identity).
func (s *memorySource) state() memState {
	st := memState{N: int64(len(s.rows)), Pos: int64(s.pos), Epoch: int64(s.epoch)}
	if s.reshuffle {
		st.Perm = s.perm
	}
	s.rng.AppendBinary(st.RNG[:0]) // fills the array: cap is pcgSize
	return st
}

// restore moves a new source to the position st, which must come from a
// source over the same rows with the same reshuffle setting.
func (s *memorySource) restore(st *memState) error {
	if st.N != int64(len(s.rows)) || (st.Perm != nil) != s.reshuffle || st.Pos > st.N {
		return fmt.Errorf("sgd: checkpointed row source of %d rows (reshuffle %v) does not fit %d rows (reshuffle %v)", st.N, st.Perm != nil, len(s.rows), s.reshuffle)
	}
	if err := s.rng.UnmarshalBinary(st.RNG[:]); err != nil {
		return fmt.Errorf("sgd: checkpointed PCG state: %w", err)
	}
	if st.Perm != nil {
		copy(s.perm, st.Perm)
	}
	s.pos, s.epoch = int(st.Pos), int(st.Epoch)
	return nil
}

// Epoch implements source.
func (s *memorySource) Epoch() float64 {
	return float64(s.epoch) + float64(s.pos)/float64(len(s.perm))
}

// Blocks is a stream of row blocks in file order, as libsvm.Stream
// provides: Next returns io.EOF at the end; a block handed out stays valid
// until it is given back with Release.
type Blocks interface {
	Next() (*sparsevec.CSR, error)
	Release(*sparsevec.CSR)
	Close() error
}

// entry is a row of the shuffle buffer: nonzeros off:off+n of its arena
// (in a held pass, where the arena is only counted, the place the row
// would take there) and, in a held pass, nonzeros pos:pos+n of chunk seg
// of the held copy; slot is its place in the arena order
// (stream_order.go). A row's nonzeros fit in an int32 (fill refuses a
// longer row: maxEntryNNZ), so that an entry takes 40 bytes.
type entry struct {
	off   int
	id    int
	pos   int
	n     int32
	label float32
	seg   int32
	slot  int32
}

// maxEntryNNZ is the most nonzeros of a row the shuffle buffer takes (an
// entry's n); the tests lower it.
var maxEntryNNZ = math.MaxInt32

// streamSource makes repeated passes over data that does not fit in memory
// through a bounded shuffle buffer: it holds at most Buffer rows, copied
// into its own arena, and at each step emits a uniformly random held row
// and refills from the stream. Only the block being read is held besides
// (plus what the reader keeps in flight), so memory is bounded by the
// buffer, not by the input. Row ids are row ordinals in the file. When a
// pass ends the input is opened again.
//
// The arena is compacted, rather than grown, when it is full and at least a
// third of it is dead rows, so it stays within about 1.5x the live rows and
// each row is moved at most about twice.
//
// Data that fits in the memory of the arena is held instead (held, see
// stream_held.go): the first pass packs the rows as they arrive and the
// buffer's entries point into that copy, the arena being only counted (its
// length and capacity as appends would grow them, alen and acap), so that
// compaction happens at the same steps and leaves the entries in the same
// order; if the copy outgrows its budget it is dropped, its pending rows
// copied into a real arena of that length and capacity, and the pass goes
// on as above. A copy that lasts the first pass holds every row: later
// passes read it in file order instead of the input, which sees the second
// pass opened and closed unread and no pass after it. Either way the rows
// drawn, and so the steps, are the same.
type streamSource struct {
	open    func() (Blocks, error)
	leave   func() // if set, called once the source will open no more passes
	cur     Blocks
	blk     *sparsevec.CSR // block being read, nil if none
	blkRow  int
	buffer  int
	pending []entry
	order   []int32  // the arena's rows in arena order: index into pending, or -1 once taken (stream_order.go)
	spare   []entry  // compact's scratch
	idx     []uint32 // arena
	val     []float32
	live    int // nonzeros of pending rows in the arena

	held    *heldRows         // the rows packed, nil once dropped (then they are in the arena)
	replay  bool              // held has every row: passes read it, not the input
	alen    int               // with held: the arena's length and capacity, in nonzeros, counted
	acap    int               //   (arenaGrow) rather than allocated
	full    bool              // with held: the buffer has been full in this pass
	seg     int               // with replay: the chunk of held that row next is in
	packing sparsevec.Packing // held's encodings (Config.Compact)
	direct  bool              // coded held rows are stepped on without decoding (sparsevec.CodedDirect)
	dec     sparsevec.Vector  // a held row decoded

	rng   *rand.PCG
	next  int // id of the next row to arrive in this pass
	eof   bool
	epoch int
	rows  int                // rows per pass, known after the first pass (0 before)
	done  int                // rows emitted in this pass
	pick  int                // index into pending drawn for the next step, or -1
	taken entry              // the row draw took
	row   sparsevec.CodedRow // with direct: the held row stepsStream steps on
	ahead ahead              // the draw after pick's, peeked (peek)
}

// ahead is the draw after the next step's (streamSource.peek): the index
// randIndex gives for n pending rows from the source's PCG as it is after
// the next step's draw, and the PCG after it; n == 0 when none is peeked.
type ahead struct {
	rng rand.PCG
	n   int
	k   int
}

// newStreamSource returns a source that opens its input with open, keeps a
// shuffle buffer of buffer rows, and draws with a PCG seeded by
// (seed, stream). It holds its rows (stream_held.go) when heldBudget is
// positive, packed by Config.Compact's default encodings.
func newStreamSource(open func() (Blocks, error), buffer int, seed, stream uint64) (*streamSource, error) {
	if buffer < 1 {
		buffer = 1
	}
	if buffer > maxBuffer {
		return nil, fmt.Errorf("sgd: a shuffle buffer of %d rows is over the most it takes, %d", buffer, maxBuffer)
	}
	s := &streamSource{open: open, buffer: buffer, rng: rand.NewPCG(seed, stream), pick: -1,
		packing: CompactAuto.Packing(), direct: sparsevec.CodedDirect()}
	if heldBudget > 0 {
		s.held = &heldRows{start: []int{0}}
	}
	b, err := open()
	if err != nil {
		return nil, err
	}
	s.cur = b
	return s, nil
}

// fill copies rows from the stream until the buffer is full or the pass
// ends.
func (s *streamSource) fill() error {
	for len(s.pending) < s.buffer {
		if s.replay {
			if s.next == s.rows {
				return nil
			}
			s.replayRow()
			continue
		}
		if s.blk == nil || s.blkRow == s.blk.Rows() {
			if s.blk != nil {
				s.cur.Release(s.blk)
				s.blk = nil
			}
			if s.eof {
				return nil
			}
			b, err := s.cur.Next()
			if err == io.EOF {
				s.eof = true
				return nil
			}
			if err != nil {
				return err
			}
			s.blk, s.blkRow = b, 0
			continue
		}
		x := s.blk.Row(s.blkRow)
		if len(x.Idx) > maxEntryNNZ {
			return fmt.Errorf("sgd: row %d of the training input has %d nonzeros, over the %d a row of the shuffle buffer takes", s.next+1, len(x.Idx), maxEntryNNZ)
		}
		if s.held != nil {
			if s.next == s.held.rows() {
				s.held.add(s.blk, s.blkRow, s.buffer, s.packing)
			}
			s.holdRow(len(x.Idx), s.blk.Labels[s.blkRow])
			s.blkRow++
			s.next++
			continue
		}
		// When the arena is full, compact if at least a third of it is
		// dead rows (each row is then moved at most twice on average),
		// and only otherwise let append grow it.
		if len(s.idx)+len(x.Idx) > cap(s.idx) && 3*(len(s.idx)-s.live) >= cap(s.idx) || s.orderFull() {
			s.compact()
		}
		e := s.push()
		e.off, e.n, e.label, e.id = len(s.idx), int32(len(x.Idx)), s.blk.Labels[s.blkRow], s.next
		s.idx = append(s.idx, x.Idx...)
		s.val = append(s.val, x.Val...)
		s.live += len(x.Idx)
		s.blkRow++
		s.next++
	}
	return nil
}

// Next implements source. The returned vector is valid until the next call.
func (s *streamSource) Next() (sparsevec.Vector, float32, int, error) {
	e, err := s.draw()
	if err != nil {
		return sparsevec.Vector{}, 0, 0, err
	}
	return s.vector(e), e.label, e.id, nil
}

// draw fills the buffer, starting the next pass when this one has ended,
// and takes the next step's row out of it, into s.taken (valid until the
// next call). The entry is returned by pointer: a copy through registers
// and back to the stack, field by field, would stall the wide loads that
// read it on the failed store forwarding.
func (s *streamSource) draw() (*entry, error) {
	if err := s.fill(); err != nil {
		return nil, err
	}
	if len(s.pending) == 0 {
		// End of a pass: start the next one.
		if s.next == 0 {
			return nil, fmt.Errorf("sgd: training input has %w", ErrNoRows)
		}
		if err := s.nextPass(); err != nil {
			return nil, err
		}
	}
	k := s.pick
	if k < 0 || k >= len(s.pending) {
		k = s.drawIndex(len(s.pending))
	}
	e := s.take(k)
	s.live -= int(e.n)
	s.done++
	// Draw the next step's row now, among the rows held after this one
	// leaves, and start loading it: the buffer is tens of megabytes read
	// at random, so without the prefetch every step waits for memory.
	// The row read in by the next fill joins the draw after that.
	s.pick = -1
	if n := len(s.pending); n > 0 {
		s.pick = s.drawIndex(n)
		s.prefetch(&s.pending[s.pick])
		s.peek(n)
	}
	return e, nil
}

// drawIndex returns randIndex(s.rng, n), the peeked draw when there is
// one for n (the same index and PCG state, computed a step earlier).
func (s *streamSource) drawIndex(n int) int {
	a := &s.ahead
	if a.n == n {
		*s.rng = a.rng
		a.n = 0
		return a.k
	}
	a.n = 0
	return randIndex(s.rng, n)
}

// peek draws, from a copy of the PCG, the index the step after next takes
// among the rows the buffer will hold then, and starts loading that entry,
// so that when the next step prefetches its row (prefetch) the entry is
// in the cache rather than tens of nanoseconds away in a buffer of
// megabytes read at random. Those are the n rows it holds now while the
// pass has rows to come (each step takes one and fill puts one back), one
// fewer once the input is all read and the buffer drains, until the pass
// ends. The PCG itself moves on only when drawIndex uses the peeked draw,
// so the indices drawn, and the rows, are those of drawing each when
// needed; a peek for the wrong number of rows only costs its prefetch.
func (s *streamSource) peek(n int) {
	if s.replay && s.next == s.rows || !s.replay && s.eof {
		if n--; n == 0 {
			return
		}
	}
	a := &s.ahead
	a.rng = *s.rng
	a.k = randIndex(&a.rng, n)
	a.n = n
	sparsevec.PrefetchElem(s.pending, a.k)
}

// nextPass starts the next pass, by opening the input again or, when the
// rows are held, by reading the held copy from its start.
func (s *streamSource) nextPass() error {
	if s.held != nil && !s.replay && s.overBudget() {
		s.dropHeld()
	}
	if s.held != nil {
		if !s.replay {
			if err := s.cur.Close(); err != nil {
				return err
			}
			// The second pass is opened as without the copy, so that the
			// input sees it start (it checks its files, puts an optional
			// cache in place), and closed unread.
			s.cur = nil
			b, err := s.open()
			if err != nil {
				return fmt.Errorf("reopening for pass %d: %w", s.epoch+2, err)
			}
			if err := b.Close(); err != nil {
				return err
			}
			s.replay = true
			s.held.done(&s.dec)
			if s.leave != nil {
				s.leave()
			}
		}
	} else {
		if err := s.cur.Close(); err != nil {
			return err
		}
		b, err := s.open()
		if err != nil {
			return fmt.Errorf("reopening for pass %d: %w", s.epoch+2, err)
		}
		s.cur = b
	}
	s.rows = s.next
	s.next, s.done, s.eof = 0, 0, false
	s.idx, s.val, s.live = s.idx[:0], s.val[:0], 0
	s.alen, s.seg = 0, 0
	s.epoch++
	if err := s.fill(); err != nil {
		return err
	}
	if len(s.pending) == 0 {
		return fmt.Errorf("sgd: training input has %w on a later pass", ErrNoRows)
	}
	return nil
}

// vector returns the row of entry e, a held row decoded into s.dec.
func (s *streamSource) vector(e *entry) sparsevec.Vector {
	if s.held != nil {
		return s.held.segs[e.seg].RowAt(e.pos, int(e.n), &s.dec)
	}
	hi := e.off + int(e.n)
	return sparsevec.Vector{Idx: s.idx[e.off:hi:hi], Val: s.val[e.off:hi:hi]}
}

// prefetch starts loading the nonzeros of entry e and its place in the
// arena order, which take writes.
func (s *streamSource) prefetch(e *entry) {
	sparsevec.PrefetchElem(s.order, int(e.slot))
	if s.held != nil {
		s.held.segs[e.seg].PrefetchAt(e.pos, int(e.n))
		return
	}
	hi := e.off + int(e.n)
	sparsevec.Vector{Idx: s.idx[e.off:hi], Val: s.val[e.off:hi]}.Prefetch()
}

// Epoch implements source; before the first pass ends the fraction is
// unknown and only whole passes are counted.
func (s *streamSource) Epoch() float64 {
	if s.rows == 0 {
		return float64(s.epoch)
	}
	return float64(s.epoch) + float64(s.done)/float64(s.rows)
}

// Close stops the underlying stream and lets the held rows go.
func (s *streamSource) Close() error {
	if s.held != nil {
		s.held.release()
		s.held = nil
	}
	if s.cur == nil {
		return nil
	}
	if s.blk != nil {
		s.cur.Release(s.blk)
		s.blk = nil
	}
	err := s.cur.Close()
	s.cur = nil
	return err
}

// stepsCoded is task.steps on a memory source of coded rows, read by
// nextCoded and polytope.stepCoded without decoding.
func (t *task) stepsCoded(cfg Config, p *polytope, src *memorySource, n int64) error {
	for range n {
		x, y, id := src.nextCoded()
		if k := len(x.Idx); k > 0 {
			if err := t.fit(&cfg, p, uint32(x.Idx[k-1])); err != nil {
				return fmt.Errorf("%s: step %d: %w", t.name, p.t+1, err)
			}
		}
		p.stepCoded(x, y == t.outer, id)
	}
	return nil
}
