package sgd

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// sortedStream is the shuffle buffer of streamSource with compact sorting
// the pending rows by offset: the reference for the order compact keeps.
type sortedStream struct {
	data    *sparsevec.CSR
	next    int
	pending []entry
	idx     []uint32
	val     []float32
	live    int
	rng     *rand.PCG
	buffer  int
	pick    int
}

func (s *sortedStream) fill() {
	for len(s.pending) < s.buffer && s.next < s.data.Rows() {
		x := s.data.Row(s.next)
		if len(s.idx)+len(x.Idx) > cap(s.idx) && 3*(len(s.idx)-s.live) >= cap(s.idx) {
			slices.SortFunc(s.pending, func(a, b entry) int { return a.off - b.off })
			w := 0
			for i := range s.pending {
				e := &s.pending[i]
				copy(s.idx[w:], s.idx[e.off:e.off+int(e.n)])
				copy(s.val[w:], s.val[e.off:e.off+int(e.n)])
				e.off = w
				w += int(e.n)
			}
			s.idx, s.val = s.idx[:w], s.val[:w]
		}
		s.pending = append(s.pending, entry{off: len(s.idx), n: int32(len(x.Idx)), id: s.next})
		s.idx = append(s.idx, x.Idx...)
		s.val = append(s.val, x.Val...)
		s.live += len(x.Idx)
		s.next++
	}
}

// draw returns the id of the next row, or -1 at the end of the pass.
func (s *sortedStream) draw() int {
	s.fill()
	if len(s.pending) == 0 {
		return -1
	}
	k := s.pick
	if k < 0 || k >= len(s.pending) {
		k = randIndex(s.rng, len(s.pending))
	}
	e := s.pending[k]
	s.pending[k] = s.pending[len(s.pending)-1]
	s.pending = s.pending[:len(s.pending)-1]
	s.live -= int(e.n)
	s.pick = -1
	if n := len(s.pending); n > 0 {
		s.pick = randIndex(s.rng, n)
	}
	return e.id
}

// The stream source draws the rows in the order of a shuffle buffer whose
// compaction sorts the pending rows by offset, also when rows without
// nonzeros share their offset with the next row.
func TestStreamSourceCompactionOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	data := randomRows(r, 3000, 40, 6)
	var withEmpty sparsevec.CSR
	for i := range data.Rows() {
		if r.IntN(5) == 0 {
			withEmpty.Append(1, sparsevec.Vector{})
		}
		withEmpty.Append(data.Labels[i], data.Row(i))
	}
	for _, d := range []*sparsevec.CSR{data, &withEmpty} {
		for _, buffer := range []int{1, 7, 100, 1000} {
			live := 0
			open := func() (Blocks, error) { return &fakeBlocks{data: d, n: 64, live: &live}, nil }
			s, err := newStreamSource(open, buffer, 5, 6)
			if err != nil {
				t.Fatal(err)
			}
			ref := &sortedStream{data: d, rng: rand.NewPCG(5, 6), buffer: buffer, pick: -1}
			for i := range 3 * d.Rows() {
				want := ref.draw()
				if want < 0 { // the end of a pass
					ref.next, ref.idx, ref.val, ref.live = 0, ref.idx[:0], ref.val[:0], 0
					want = ref.draw()
				}
				_, _, got, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("buffer %d, %d rows: draw %d is row %d, want %d", buffer, d.Rows(), i, got, want)
				}
			}
			s.Close()
		}
	}
}
