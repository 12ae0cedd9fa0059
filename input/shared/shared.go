// Package shared shares each pass over one block input among several
// consumers that read it at about the same pace, such as the two polytopes
// of a double-sided CPM: the input is read, decompressed and parsed once
// per pass instead of once per consumer, and memory stays bounded by a
// window of blocks.
package shared

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// sharedWindow is the most blocks a shared pass holds for its slowest
// consumer. It stays below reader.StreamBlocks so that the source (a
// libsvm.Stream or a cache reader, which own reader.StreamBlocks blocks)
// always has one to fill.
const sharedWindow = reader.StreamBlocks - 1

// notHeld is the panic of a view's Release given a block the consumer
// does not hold: releasing a block twice would hand it out twice.
const notHeld = "shared: Release of a block that Next did not hand out or that was released already"

// Passes shares passes over one input among n consumers that read it at
// about the same pace, such as the two polytopes of a double-sided CPM:
// pass k is opened once, its blocks go to every consumer in file order, and
// a block is released to the source when every consumer has released it.
// The input is read (parsed, decompressed) once per pass instead of n
// times.
//
// A consumer that runs ahead waits when it is reader.StreamBlocks-1 blocks
// ahead of the slowest one, so memory stays bounded. A consumer that will open no
// more passes must say so with Leave; otherwise the others would wait for
// it forever.
//
// Every wait of a consumer (for a pass being opened, for a slower
// consumer) ends when the context of the passes is cancelled, with the
// context's error.
type Passes struct {
	ctx   context.Context
	open  func(pass int) (reader.BlockReader, error)
	n     int
	mu    sync.Mutex
	next  []int // per consumer: the pass its next Open joins
	left  []bool
	gens  map[int]*pass
	nLeft int
}

// NewPasses returns passes over an input shared by n consumers; open(k)
// opens pass k (1-based) and is called once per pass. Cancelling ctx ends
// every wait of the consumers; open should stop on it too.
func NewPasses(ctx context.Context, n int, open func(pass int) (reader.BlockReader, error)) *Passes {
	return &Passes{ctx: ctx, open: open, n: n, next: make([]int, n), left: make([]bool, n), gens: map[int]*pass{}}
}

// pass is one opened (or opening) pass.
type pass struct {
	ready chan struct{} // closed once bc or err is set
	bc    *broadcast
	err   error
}

// Open returns consumer i's view of its next pass. The view is a
// reader.BlockReader; closing it ends the consumer's part in that pass. The first
// consumer to reach a pass opens it; the others wait for that and join.
func (p *Passes) Open(i int) (reader.BlockReader, error) {
	p.mu.Lock()
	if i < 0 || i >= p.n || p.left[i] {
		p.mu.Unlock()
		return nil, fmt.Errorf("shared: Passes.Open(%d) by a consumer that is not taking part", i)
	}
	p.next[i]++
	k := p.next[i]
	g := p.gens[k]
	if g != nil {
		p.mu.Unlock()
		select {
		case <-g.ready:
		case <-p.ctx.Done():
			return nil, p.ctx.Err()
		}
		if g.err != nil {
			return nil, g.err
		}
		return &view{bc: g.bc}, nil
	}
	g = &pass{ready: make(chan struct{})}
	p.gens[k] = g
	members := p.n - p.nLeft
	p.mu.Unlock()

	src, err := p.open(k)
	p.mu.Lock()
	if err != nil {
		g.err = err
	} else {
		// Consumers that left while the pass was opening will not join.
		bc := newBroadcast(p.ctx, src, members-(p.nLeft-(p.n-members)))
		bc.onEmpty = func() {
			p.mu.Lock()
			delete(p.gens, k)
			p.mu.Unlock()
		}
		g.bc = bc
	}
	close(g.ready)
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &view{bc: g.bc}, nil
}

// Leave tells the passes that consumer i will open no more passes. The
// passes it has not joined stop waiting for it.
func (p *Passes) Leave(i int) {
	p.mu.Lock()
	if i < 0 || i >= p.n || p.left[i] {
		p.mu.Unlock()
		return
	}
	p.left[i] = true
	p.nLeft++
	var absent []*broadcast
	for k, g := range p.gens {
		if k > p.next[i] && g.bc != nil {
			absent = append(absent, g.bc)
		}
	}
	p.mu.Unlock()
	for _, g := range absent {
		g.drop()
	}
}

// broadcast hands the blocks of one source to a fixed number of
// consumers. A consumer waiting in next wakes when ctx is cancelled.
type broadcast struct {
	ctx      context.Context
	stopWake func() bool // unregisters the wake-up on ctx
	mu       sync.Mutex
	cond     *sync.Cond
	srcMu    sync.Mutex // serialises src.Next and src.Release
	src      reader.BlockReader
	members  int // consumers still reading (joined or yet to join)
	blocks   []bcBlock
	base     int // sequence number of blocks[0]
	fetching bool
	err      error // sticky: io.EOF at the end, or the source's error
	onEmpty  func()
	closed   bool
}

type bcBlock struct {
	b    *sparsevec.CSR // nil once given back to the source
	refs int            // members that have not released it
}

func newBroadcast(ctx context.Context, src reader.BlockReader, members int) *broadcast {
	g := &broadcast{ctx: ctx, src: src, members: members}
	g.cond = sync.NewCond(&g.mu)
	g.stopWake = context.AfterFunc(ctx, func() {
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	})
	return g
}

// outstanding counts blocks not yet given back to the source.
func (g *broadcast) outstanding() int {
	n := 0
	for _, e := range g.blocks {
		if e.b != nil {
			n++
		}
	}
	return n
}

// unref drops one reference to entry j, giving the block back to the
// source when it was the last; the caller holds g.mu and calls compact
// afterwards.
func (g *broadcast) unref(j int) {
	e := &g.blocks[j]
	e.refs--
	if e.refs == 0 && e.b != nil {
		g.srcMu.Lock()
		g.src.Release(e.b)
		g.srcMu.Unlock()
		e.b = nil
	}
}

// compact drops the given-back blocks at the front and wakes waiters.
func (g *broadcast) compact() {
	for len(g.blocks) > 0 && g.blocks[0].b == nil {
		g.blocks = g.blocks[1:]
		g.base++
	}
	g.cond.Broadcast()
}

// next returns block number seq for a consumer, or the context's error
// once it is cancelled.
func (g *broadcast) next(seq int) (*sparsevec.CSR, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if err := g.ctx.Err(); err != nil {
			return nil, err
		}
		if seq < g.base {
			return nil, errors.New("shared: pass lost a block (consumer fell behind its own releases)")
		}
		if j := seq - g.base; j < len(g.blocks) {
			return g.blocks[j].b, nil
		}
		if g.err != nil {
			return nil, g.err
		}
		if g.fetching || g.outstanding() >= sharedWindow {
			g.cond.Wait()
			continue
		}
		g.fetching = true
		g.mu.Unlock()
		g.srcMu.Lock()
		b, err := g.src.Next()
		g.srcMu.Unlock()
		g.mu.Lock()
		g.fetching = false
		if err != nil {
			g.err = err
		} else {
			g.blocks = append(g.blocks, bcBlock{b: b, refs: g.members})
		}
		g.cond.Broadcast()
	}
}

// release drops a consumer's reference to block b, which it took as block
// number at most seq-1.
func (g *broadcast) release(b *sparsevec.CSR) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for j := range g.blocks {
		if g.blocks[j].b == b {
			g.unref(j)
			g.compact()
			return true
		}
	}
	return false
}

// leave removes a member that has taken blocks [0, seq) and still holds
// the blocks in held; it releases its references to every block it holds
// or has not taken. The last member to leave closes the source.
func (g *broadcast) leave(seq int, held []*sparsevec.CSR) error {
	g.mu.Lock()
	for _, b := range held {
		for j := range g.blocks {
			if g.blocks[j].b == b {
				g.unref(j)
				break
			}
		}
	}
	for j := max(seq-g.base, 0); j < len(g.blocks); j++ {
		g.unref(j)
	}
	g.compact()
	g.members--
	last := g.members == 0 && !g.closed
	if last {
		g.closed = true
	}
	g.cond.Broadcast()
	g.mu.Unlock()
	if !last {
		return nil
	}
	g.stopWake()
	g.srcMu.Lock()
	err := g.src.Close()
	g.srcMu.Unlock()
	if g.onEmpty != nil {
		g.onEmpty()
	}
	return err
}

// drop removes a member that never joined.
func (g *broadcast) drop() { _ = g.leave(0, nil) }

// view is one consumer's reader.BlockReader over a broadcast.
type view struct {
	bc     *broadcast
	seq    int
	held   []*sparsevec.CSR
	closed bool
	err    error
}

func (v *view) Next() (*sparsevec.CSR, error) {
	if v.closed {
		return nil, reader.ErrClosed
	}
	if v.err != nil {
		return nil, v.err
	}
	if len(v.held) >= sharedWindow {
		return nil, reader.ErrBlocksHeld
	}
	b, err := v.bc.next(v.seq)
	if err != nil {
		if err != io.EOF {
			v.err = err
		}
		return nil, err
	}
	v.seq++
	v.held = append(v.held, b)
	return b, nil
}

// Release gives b back; it panics if the consumer does not hold b.
func (v *view) Release(b *sparsevec.CSR) {
	i := slices.Index(v.held, b)
	if i < 0 {
		panic(notHeld)
	}
	v.held = slices.Delete(v.held, i, i+1)
	v.bc.release(b)
}

func (v *view) Close() error {
	if v.closed {
		return nil
	}
	v.closed = true
	held := v.held
	v.held = nil
	return v.bc.leave(v.seq, held)
}
