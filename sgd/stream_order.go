package sgd

import "slices"

// The streamSource's shuffle buffer keeps, besides its pending rows, the
// order of the rows in its arena: compact lays the pending rows out at the
// front of the arena in arena order and leaves them in that order in
// pending, which is their order by offset. Walking the arena order gives
// that order in time linear in the rows, without sorting.

// push adds e, a row just copied to the end of the arena, to the pending
// rows.
func (s *streamSource) push(e entry) {
	if len(s.pending) == 0 {
		s.order = s.order[:0] // every row of the arena was taken
	}
	s.order = append(s.order, int32(len(s.pending)))
	s.slotOf = append(s.slotOf, int32(len(s.order)-1))
	s.pending = append(s.pending, e)
}

// take removes pending row k, moving the last pending row into its place,
// and returns it.
func (s *streamSource) take(k int) entry {
	e := s.pending[k]
	last := len(s.pending) - 1
	s.order[s.slotOf[k]] = -1
	if k != last {
		s.pending[k] = s.pending[last]
		s.slotOf[k] = s.slotOf[last]
		s.order[s.slotOf[k]] = int32(k)
	}
	s.pending, s.slotOf = s.pending[:last], s.slotOf[:last]
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
	for i := range next {
		e := &next[i]
		if s.held == nil {
			copy(s.idx[w:], s.idx[e.off:e.off+e.n])
			copy(s.val[w:], s.val[e.off:e.off+e.n])
		}
		e.off = w
		w += e.n
	}
	if s.held == nil {
		s.idx, s.val = s.idx[:w], s.val[:w]
	} else {
		s.alen = w
	}
	s.spare, s.pending = s.pending[:0], next
	s.order, s.slotOf = s.order[:0], s.slotOf[:0]
	for i := range s.pending {
		s.order = append(s.order, int32(i))
		s.slotOf = append(s.slotOf, int32(i))
	}
}
