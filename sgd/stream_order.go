package sgd

import (
	"math"
	"slices"
)

// The streamSource's shuffle buffer keeps, besides its pending rows, the
// order of the rows in its arena: compact lays the pending rows out at the
// front of the arena in arena order and leaves them in that order in
// pending, which is their order by offset. Walking the arena order gives
// that order in time linear in the rows, without sorting.

// maxBuffer is the most rows a shuffle buffer holds: the order keeps
// indices into pending as int32.
const maxBuffer = math.MaxInt32

// maxOrder is the most rows the arena order holds: an entry's slot is an
// int32. Rows of no nonzeros do not fill the arena, so that, many in a
// row, they could otherwise grow the order past it without a compaction;
// orderFull makes the row's caller compact then. The tests lower it.
var maxOrder = math.MaxInt32

// orderFull reports whether the arena order is full (maxOrder): the row
// about to be pushed needs a compaction first.
func (s *streamSource) orderFull() bool {
	return len(s.pending) > 0 && len(s.order) >= maxOrder
}

// push adds a row just copied to the end of the arena to the pending rows
// and returns its entry, zero but for its slot, for the caller to fill in
// place (an entry built on the stack and copied in would be stored field
// by field and loaded back in wider words, which store forwarding does
// not serve).
func (s *streamSource) push() *entry {
	if len(s.pending) == 0 {
		s.order = s.order[:0] // every row of the arena was taken
	}
	n := len(s.pending)
	if n < cap(s.pending) {
		s.pending = s.pending[:n+1]
	} else {
		s.pending = append(s.pending, entry{})
	}
	e := &s.pending[n]
	*e = entry{slot: int32(len(s.order))}
	s.order = append(s.order, int32(n))
	return e
}

// take removes pending row k, moving the last pending row into its place,
// and returns it in s.taken.
func (s *streamSource) take(k int) *entry {
	e := &s.taken
	*e = s.pending[k]
	last := len(s.pending) - 1
	s.order[e.slot] = -1
	if k != last {
		m := &s.pending[last]
		s.order[m.slot] = int32(k)
		s.pending[k] = *m
	}
	s.pending = s.pending[:last]
	return e
}

// compact moves the pending rows to the front of the arena, in arena
// order, and orders pending the same way: by offset. With the rows held,
// only their offsets and the arena's counted length move. Rows without
// nonzeros share their offset with the row after them; while one is
// pending, the order of equal offsets is the one slices.SortFunc gives.
func (s *streamSource) compact() {
	next, tie := s.spare[:0], false
	for _, p := range s.order {
		if p < 0 {
			continue
		}
		e := s.pending[p]
		if tie = e.n == 0; tie {
			break
		}
		next = append(next, e)
	}
	if tie {
		next = append(s.spare[:0], s.pending...)
		slices.SortFunc(next, func(a, b entry) int { return a.off - b.off })
	}
	w := 0
	s.order = s.order[:0]
	for i := range next {
		e := &next[i]
		if s.held == nil {
			copy(s.idx[w:], s.idx[e.off:e.off+int(e.n)])
			copy(s.val[w:], s.val[e.off:e.off+int(e.n)])
		}
		e.off, e.slot = w, int32(i)
		w += int(e.n)
		s.order = append(s.order, int32(i))
	}
	if s.held == nil {
		s.idx, s.val = s.idx[:w], s.val[:w]
	} else {
		s.alen = w
	}
	s.spare, s.pending = s.pending[:0], next
}
