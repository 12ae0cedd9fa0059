package kperceptron

import (
	"sync"
	"unsafe"
)

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
	store      *rowStore // where the rows come from
}

// init sets up an empty cache in the memory of mem, which the cache
// keeps using until mem is released.
func (c *kernelCache) init(n, max int, mem *trainMemory) {
	c.n, c.max = n, max
	c.slot = grow(&mem.slot, n)
	for i := range c.slot {
		c.slot[i] = -1
	}
	c.owner, c.prev, c.next, c.rows = mem.owner[:0], mem.prev[:0], mem.next[:0], mem.rowHdr[:0]
	c.head, c.tail = -1, -1
	c.store = &mem.rows
}

// keep stores in mem the slot arrays the cache has grown since init. The
// row headers are cleared: the store holds the chunks, and a chunk it
// drops must not stay reachable through them.
func (c *kernelCache) keep(mem *trainMemory) {
	mem.owner, mem.prev, mem.next, mem.rowHdr = c.owner, c.prev, c.next, c.rows
	clear(mem.rowHdr[:cap(mem.rowHdr)])
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

// rowChunkFloats is the size in float64s of a new chunk of the row store
// (256 KiB), or one row if a row is longer: small rows come many to a
// chunk.
const rowChunkFloats = 1 << 15

// trainPoolMaxBytes bounds the memory a finished run may hold to be kept
// for a later run (16 MiB): a run small enough for its set-up to matter
// reuses memory, a large one returns it to the garbage collector rather
// than keep it alive.
const trainPoolMaxBytes = 16 << 20

// trainMemory is the memory of one training run that a later one reuses:
// a finished run puts it in trainPool, and the next (such as the next
// fold of a cross-validation) builds its arrays and carves its kernel
// rows in the same memory, instead of allocating, clearing and collecting
// them anew each time. Each user sets every value it reads (grow does not
// clear).
type trainMemory struct {
	rows                        rowStore
	rowHdr                      [][]float64 // the cache's rows
	slot, owner, prev, next     []int32     // the cache's slot arrays
	cls, alpha                  []int32
	sq, f                       []float64
	count, colPtr, full, runOff []int // rowDots
	dense, val                  []float32
	rowOf                       []int32
	runA                        []float64
}

// trainPool holds the memory of finished runs.
var trainPool sync.Pool

// getTrainMemory returns the memory of a finished run, or new memory.
func getTrainMemory() *trainMemory {
	if m, ok := trainPool.Get().(*trainMemory); ok {
		return m
	}
	return new(trainMemory)
}

// putTrainMemory keeps m for a later run if it holds at most
// trainPoolMaxBytes. Nothing built in m may be used afterwards.
func putTrainMemory(m *trainMemory) {
	if m == nil || m.bytes() > trainPoolMaxBytes {
		return
	}
	m.rows.reset()
	trainPool.Put(m)
}

// bytes returns the memory m holds.
func (m *trainMemory) bytes() int {
	return 8*m.rows.floats + sizeOf(m.rowHdr) + sizeOf(m.slot) + sizeOf(m.owner) + sizeOf(m.prev) +
		sizeOf(m.next) + sizeOf(m.cls) + sizeOf(m.alpha) + sizeOf(m.sq) + sizeOf(m.f) +
		sizeOf(m.count) + sizeOf(m.colPtr) + sizeOf(m.full) + sizeOf(m.runOff) +
		sizeOf(m.dense) + sizeOf(m.val) + sizeOf(m.rowOf) + sizeOf(m.runA)
}

// sizeOf returns the bytes of the backing array of s.
func sizeOf[T any](s []T) int {
	var z T
	return cap(s) * int(unsafe.Sizeof(z))
}

// grow returns a slice of n elements over *s's memory, allocating (and
// keeping in *s) a larger array if its capacity is short. The values are
// whatever the memory held: the caller sets every one it reads.
func grow[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	return *s
}

// rowStore is the memory of a kernel cache's rows: chunks of float64s
// carved into rows as slots are first used, and carved again by a later
// run. Reused memory is not cleared: kernelRow writes every value of a
// row before the row is read.
type rowStore struct {
	chunks [][]float64 // every chunk, in the order they are carved
	used   int         // chunks[:used] are carved from
	free   []float64   // the uncarved rest of chunks[used-1]
	floats int         // total length of the chunks
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
