package shared

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// countingBlocks is a BlockReader over m in blocks of n rows that counts
// opens and checks the BlockReader contract: at most StreamBlocks held, no
// double release, no use after Close.
type countingBlocks struct {
	m      *sparsevec.CSR
	n, pos int
	mu     sync.Mutex
	held   map[*sparsevec.CSR]bool
	peak   int
	closed bool
	t      *testing.T
}

func (c *countingBlocks) Next() (*sparsevec.CSR, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		c.t.Error("Next after Close")
		return nil, reader.ErrClosed
	}
	if len(c.held) >= reader.StreamBlocks {
		return nil, reader.ErrBlocksHeld
	}
	if c.pos >= c.m.Rows() {
		return nil, io.EOF
	}
	b := &sparsevec.CSR{}
	for r := c.pos; r < min(c.pos+c.n, c.m.Rows()); r++ {
		b.Append(c.m.Labels[r], c.m.Row(r))
	}
	c.pos += c.n
	c.held[b] = true
	c.peak = max(c.peak, len(c.held))
	return b, nil
}

func (c *countingBlocks) Release(b *sparsevec.CSR) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.held[b] {
		c.t.Error("release of a block not held")
	}
	delete(c.held, b)
}

func (c *countingBlocks) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

// Two consumers reading at different paces each see every row of every
// pass in order, each pass is opened once, and the source never has more
// than the window outstanding.
func TestPassesShareEachPass(t *testing.T) {
	data := testRows(5000, 9)
	var opens atomic.Int32
	var srcs []*countingBlocks
	var mu sync.Mutex
	p := NewPasses(context.Background(), 2, func(pass int) (reader.BlockReader, error) {
		opens.Add(1)
		c := &countingBlocks{m: data, n: 97, held: map[*sparsevec.CSR]bool{}, t: t}
		mu.Lock()
		srcs = append(srcs, c)
		mu.Unlock()
		return c, nil
	})
	const passes = 3
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.Leave(i)
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for range passes {
				b, err := p.Open(i)
				if err != nil {
					t.Error(err)
					return
				}
				got := &sparsevec.CSR{Ptr: []int{0}}
				var hold []*sparsevec.CSR
				for {
					blk, err := b.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Error(err)
						return
					}
					got.AppendCSR(blk)
					hold = append(hold, blk)
					if len(hold) == 2 || rng.IntN(2) == 0 { // hold up to two blocks
						for _, h := range hold {
							b.Release(h)
						}
						hold = hold[:0]
					}
					if rng.IntN(4) == 0 {
						time.Sleep(time.Duration(rng.IntN(50)) * time.Microsecond)
					}
				}
				for _, h := range hold {
					b.Release(h)
				}
				if err := b.Close(); err != nil {
					t.Error(err)
				}
				assertSameRows(t, got, data)
			}
		}()
	}
	wg.Wait()
	if opens.Load() != passes {
		t.Errorf("%d opens for %d passes", opens.Load(), passes)
	}
	for k, c := range srcs {
		if !c.closed || len(c.held) != 0 || c.peak > sharedWindow {
			t.Errorf("pass %d: closed %v, %d blocks still held, peak %d", k+1, c.closed, len(c.held), c.peak)
		}
	}
}

// A consumer that stops early and leaves must not stall the other, and a
// consumer that closes mid-pass releases what it held.
func TestPassesLeave(t *testing.T) {
	data := testRows(3000, 10)
	p := NewPasses(context.Background(), 2, func(int) (reader.BlockReader, error) {
		return &countingBlocks{m: data, n: 50, held: map[*sparsevec.CSR]bool{}, t: t}, nil
	})
	// Consumer 0 reads three blocks of pass 1, keeps one, and leaves.
	b0, err := p.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := b0.Next(); err != nil && !errors.Is(err, reader.ErrBlocksHeld) {
			t.Fatal(err)
		}
	}
	b0.Close()
	p.Leave(0)
	done := make(chan error, 1)
	go func() {
		for range 2 {
			b, err := p.Open(1)
			if err != nil {
				done <- err
				return
			}
			got, err := readAll(t, b)
			if err != nil {
				done <- err
				return
			}
			if got.Rows() != data.Rows() {
				done <- errors.New("short pass")
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the remaining consumer stalled after the other left")
	}
}

func TestPassesOpenError(t *testing.T) {
	boom := errors.New("boom")
	p := NewPasses(context.Background(), 2, func(int) (reader.BlockReader, error) { return nil, boom })
	for i := range 2 {
		if _, err := p.Open(i); !errors.Is(err, boom) {
			t.Errorf("consumer %d: %v, want the open error", i, err)
		}
	}
	runtime.Gosched()
}

// A consumer waiting for one that never reads returns the context's error
// once the context is cancelled.
func TestPassesCancelEndsWait(t *testing.T) {
	data := testRows(5000, 9)
	ctx, cancel := context.WithCancel(context.Background())
	p := NewPasses(ctx, 2, func(int) (reader.BlockReader, error) {
		return &countingBlocks{m: data, n: 97, held: map[*sparsevec.CSR]bool{}, t: t}, nil
	})
	v, err := p.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for {
			b, err := v.Next()
			if err != nil {
				done <- err
				return
			}
			v.Release(b) // consumer 1 still holds it: the window fills
		}
	}()
	select {
	case err := <-done:
		t.Fatalf("Next returned %v before the other consumer read", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next still waiting 10s after the context was cancelled")
	}
	if err := v.Close(); err != nil {
		t.Error(err)
	}
	p.Leave(0)
	p.Leave(1)
}

// A view's Release of a block released twice, or never handed out,
// panics with notHeld: a second Release would hand the block out twice.
func TestReleaseNotHeldPanics(t *testing.T) {
	data := testRows(20, 3)
	p := NewPasses(context.Background(), 1, func(int) (reader.BlockReader, error) {
		return &countingBlocks{m: data, n: 5, held: map[*sparsevec.CSR]bool{}, t: t}, nil
	})
	v, err := p.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	b, err := v.Next()
	if err != nil {
		t.Fatal(err)
	}
	v.Release(b)
	for what, blk := range map[string]*sparsevec.CSR{"released twice": b, "never handed out": new(sparsevec.CSR)} {
		func() {
			defer func() {
				if r := recover(); r != notHeld {
					t.Errorf("Release of a block %s: panic %v, want %q", what, r, notHeld)
				}
			}()
			v.Release(blk)
		}()
	}
}
