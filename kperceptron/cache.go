package kperceptron

import "sync"

// kernelCache holds up to max kernel rows of length n, least recently used
// evicted first. A slot's row is carved from the cache's rowStore on first
// use and then reused, so a full cache does not allocate.
type kernelCache struct {
	n, max     int
	slot       []int32 // per training row: its slot, or -1
	owner      []int32 // per slot: its training row
	prev, next []int32 // per slot: the LRU list, head most recent; -1 ends
	head, tail int32
	rows       [][]float64
	store      *rowStore // where the rows come from; nil after release
}

func (c *kernelCache) init(n, max int) {
	c.n, c.max = n, max
	c.slot = make([]int32, n)
	for i := range c.slot {
		c.slot[i] = -1
	}
	c.head, c.tail = -1, -1
	c.store = getRowStore()
}

// release hands the cache's row memory to later caches; the cache must
// not be used afterwards.
func (c *kernelCache) release() {
	putRowStore(c.store)
	c.store, c.rows = nil, nil
}

// get returns the slot of row q and whether it already holds the row; on a
// miss the caller fills it: every value of a new slot's row is garbage
// until then. The slot becomes the most recent.
func (c *kernelCache) get(q int) ([]float64, bool) {
	if s := c.slot[q]; s >= 0 {
		c.unlink(s)
		c.pushFront(s)
		return c.rows[s], true
	}
	var s int32
	if len(c.rows) < c.max {
		s = int32(len(c.rows))
		c.rows = append(c.rows, c.store.take(c.n, c.max-len(c.rows)))
		c.owner = append(c.owner, -1)
		c.prev = append(c.prev, -1)
		c.next = append(c.next, -1)
	} else {
		s = c.tail
		c.unlink(s)
		if o := c.owner[s]; o >= 0 { // -1 after drop
			c.slot[o] = -1
		}
	}
	c.owner[s] = int32(q)
	c.slot[q] = s
	c.pushFront(s)
	return c.rows[s], false
}

// drop forgets row q (its slot stays allocated, at the back of the list).
func (c *kernelCache) drop(q int) {
	s := c.slot[q]
	if s < 0 {
		return
	}
	c.slot[q] = -1
	c.owner[s] = -1
	c.unlink(s)
	// Append at the tail so it is the next slot reused.
	c.prev[s], c.next[s] = c.tail, -1
	if c.tail >= 0 {
		c.next[c.tail] = s
	} else {
		c.head = s
	}
	c.tail = s
}

func (c *kernelCache) unlink(s int32) {
	p, n := c.prev[s], c.next[s]
	if p >= 0 {
		c.next[p] = n
	} else {
		c.head = n
	}
	if n >= 0 {
		c.prev[n] = p
	} else {
		c.tail = p
	}
	c.prev[s], c.next[s] = -1, -1
}

func (c *kernelCache) pushFront(s int32) {
	c.prev[s], c.next[s] = -1, c.head
	if c.head >= 0 {
		c.prev[c.head] = s
	} else {
		c.tail = s
	}
	c.head = s
}

// Sizes of the row store's chunks, in float64s.
const (
	// rowChunkFloats is the size of a new chunk (256 KiB), or one row if
	// a row is longer: small rows come many to a chunk.
	rowChunkFloats = 1 << 15
	// rowPoolMaxFloats bounds the chunks a store may hold to be kept for
	// a later run (16 MiB): a run small enough for its set-up to matter
	// reuses memory, a large one returns it to the garbage collector
	// rather than keep it alive.
	rowPoolMaxFloats = 1 << 21
)

// rowStore is the memory of a kernel cache's rows: chunks of float64s
// carved into rows as slots are first used. A finished training run puts
// its store in rowStores and a later one (such as the next fold of a
// cross-validation) carves its rows from the same chunks, so a run of
// many small trainings does not allocate, clear and collect its kernel
// rows anew each time. Reused memory is not cleared: kernelRow writes
// every value of a row before the row is read.
type rowStore struct {
	chunks [][]float64 // every chunk, in the order they are carved
	used   int         // chunks[:used] are carved from
	free   []float64   // the uncarved rest of chunks[used-1]
	floats int         // total length of the chunks
}

// rowStores holds the stores of finished runs.
var rowStores sync.Pool

// getRowStore returns a store of a finished run, or a new one.
func getRowStore() *rowStore {
	if s, ok := rowStores.Get().(*rowStore); ok {
		return s
	}
	return new(rowStore)
}

// putRowStore keeps s for a later run if it holds at most
// rowPoolMaxFloats values.
func putRowStore(s *rowStore) {
	if s == nil || s.floats > rowPoolMaxFloats {
		return
	}
	s.reset()
	rowStores.Put(s)
}

// reset makes every chunk free to carve again; rows carved before must
// no longer be used.
func (s *rowStore) reset() { s.used, s.free = 0, nil }

// take carves a row of n values. A chunk too short for a row of n is
// dropped; a new chunk holds rowChunkFloats values (at least one row,
// at most maxRows).
func (s *rowStore) take(n, maxRows int) []float64 {
	for len(s.free) < n {
		if s.used < len(s.chunks) {
			if len(s.chunks[s.used]) < n {
				s.floats -= len(s.chunks[s.used])
				s.chunks = append(s.chunks[:s.used], s.chunks[s.used+1:]...)
				continue
			}
		} else {
			rows := min(max(rowChunkFloats/n, 1), max(maxRows, 1))
			s.chunks = append(s.chunks, make([]float64, rows*n))
			s.floats += rows * n
		}
		s.free = s.chunks[s.used]
		s.used++
	}
	row := s.free[:n:n]
	s.free = s.free[n:]
	return row
}
