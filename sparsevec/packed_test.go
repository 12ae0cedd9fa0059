package sparsevec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// greyRows returns n MNIST-shaped rows: about 150 ascending indices in
// [1, d) and values k/255 (at most 256 distinct), labels ±1.
func greyRows(rng *rand.Rand, n, d int) *CSR {
	var m CSR
	for range n {
		var x Vector
		for j := 1 + rng.IntN(8); j < d && len(x.Idx) < 150; j += 1 + rng.IntN(4) {
			x.Idx = append(x.Idx, uint32(j))
			x.Val = append(x.Val, float32(1+rng.IntN(255))/255)
		}
		m.Append(float32(2*rng.IntN(2)-1), x)
	}
	return &m
}

// sameRow reports whether x and y hold the same indices and the same value
// bit patterns.
func sameRow(x, y Vector) bool {
	if !slices.Equal(x.Idx, y.Idx) || len(x.Val) != len(y.Val) {
		return false
	}
	for i := range x.Val {
		if math.Float32bits(x.Val[i]) != math.Float32bits(y.Val[i]) {
			return false
		}
	}
	return true
}

// checkPacked fails unless row i of p is row perm[i] of m, bit for bit.
func checkPacked(t *testing.T, p *Packed, m *CSR, perm []int32) {
	t.Helper()
	if p.Rows() != len(perm) {
		t.Fatalf("%d rows, want %d", p.Rows(), len(perm))
	}
	var buf Vector
	dim, nnz := 0, 0
	for i, r := range perm {
		want := m.Row(int(r))
		if got := p.Row(i, &buf); !sameRow(got, want) || p.Label(i) != m.Labels[r] {
			t.Fatalf("row %d: got %v label %v, want row %d: %v label %v", i, got, p.Label(i), r, want, m.Labels[r])
		}
		if len(want.Idx) > 0 {
			dim = max(dim, int(want.MaxIndex())+1)
		}
		nnz += len(want.Idx)
	}
	if p.Dim() != dim || p.NNZ() != nnz {
		t.Fatalf("Dim %d NNZ %d, want %d %d", p.Dim(), p.NNZ(), dim, nnz)
	}
}

func identityPerm(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	return p
}

// Pack and PermuteInto keep every row bit for bit in each of the four
// encodings: narrow or wide indices, coded or plain values.
func TestPackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	grey := greyRows(rng, 300, 785)
	wide := greyRows(rng, 300, 785)
	for i := range wide.Idx {
		wide.Idx[i] += 70000 // indices beyond 1<<16: 4 bytes
	}
	wide.Dim += 70000
	plain := greyRows(rng, 300, 785)
	for i := range plain.Val {
		plain.Val[i] = rng.Float32() // more than 256 distinct values
	}
	signed := new(CSR)
	signed.Append(1, Vector{Idx: []uint32{1, 2, 65535}, Val: []float32{float32(math.Copysign(0, -1)), 0, -1}})
	signed.Append(-1, Vector{})
	signed.Append(1, Vector{Idx: []uint32{3}, Val: []float32{float32(math.Inf(1))}})
	for _, tc := range []struct {
		name        string
		m           *CSR
		wide, coded bool
	}{
		{"narrow-coded", grey, false, true},
		{"wide-coded", wide, true, true},
		{"narrow-plain", plain, false, false},
		{"signed-zero", signed, false, true},
		{"empty", new(CSR), false, true},
	} {
		for _, mode := range []Packing{0, PackNarrow, PackCodes, PackCompact} {
			t.Run(fmt.Sprintf("%s/mode=%d", tc.name, mode), func(t *testing.T) {
				all := identityPerm(tc.m.Rows())
				p := Pack(tc.m, nil, mode)
				wide, coded := tc.wide || mode&PackNarrow == 0, tc.coded && mode&PackCodes != 0
				if p.Wide() != wide || p.Coded() != coded {
					t.Fatalf("Wide %v Coded %v, want %v %v", p.Wide(), p.Coded(), wide, coded)
				}
				checkPacked(t, p, tc.m, all)
				perm := slices.Clone(all)
				rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
				checkPacked(t, Pack(tc.m, perm, mode), tc.m, perm)
				sub := perm[:len(perm)/2]
				checkPacked(t, Pack(tc.m, sub, mode), tc.m, sub)
				// PermuteInto of the packed rows, into a fresh and a reused buffer.
				q := p.PermuteInto(nil, sub)
				checkPacked(t, q, tc.m, sub)
				checkPacked(t, p.PermuteInto(q, perm), tc.m, perm)
			})
		}
	}
}

// A wide packing's bytes: 4 + 4 per nonzero, the narrow coded one 2 + 1.
func TestPackedBytes(t *testing.T) {
	m := greyRows(rand.New(rand.NewPCG(5, 6)), 100, 785)
	p := Pack(m, nil, PackCompact)
	want := int64(4*m.Rows() + 8*(m.Rows()+1) + 3*m.NNZ() + 4*256)
	if got := p.Bytes(); got != want {
		t.Fatalf("Bytes %d, want %d", got, want)
	}
}

// Decoding a row into a buffer of MaxRow does not allocate.
func TestPackedRowAllocs(t *testing.T) {
	p := Pack(greyRows(rand.New(rand.NewPCG(7, 8)), 100, 785), nil, PackCompact)
	buf := Vector{Idx: make([]uint32, p.MaxRow()), Val: make([]float32, p.MaxRow())}
	r := 0
	if a := testing.AllocsPerRun(1000, func() {
		p.Row(r%p.Rows(), &buf)
		p.PrefetchRow(r % p.Rows())
		p.PrefetchPtr(r % p.Rows())
		r++
	}); a != 0 {
		t.Fatalf("Row allocates %v times", a)
	}
}

// BenchmarkPackedRow measures decoding a packed MNIST-shaped row (150
// nonzeros, 2-byte indices, 1-byte codes) into a buffer, reading the
// rows in order as an epoch does; CSR is the same walk over a CSR copy
// for comparison.
func BenchmarkPackedRow(b *testing.B) {
	m := greyRows(rand.New(rand.NewPCG(9, 10)), 20000, 785)
	p := Pack(m, nil, PackCompact)
	buf := Vector{Idx: make([]uint32, p.MaxRow()), Val: make([]float32, p.MaxRow())}
	b.Run("packed", func(b *testing.B) {
		r := 0
		var s uint32
		for b.Loop() {
			x := p.Row(r, &buf)
			s += x.Idx[0]
			if r++; r == p.Rows() {
				r = 0
			}
		}
		_ = s
	})
	b.Run("csr", func(b *testing.B) {
		r := 0
		var s uint32
		for b.Loop() {
			x := m.Row(r)
			s += x.Idx[0]
			if r++; r == m.Rows() {
				r = 0
			}
		}
		_ = s
	})
}

// blocksOf splits m into blocks of at most size rows.
func blocksOf(m *CSR, size int) []*CSR {
	var out []*CSR
	for lo := 0; lo < m.Rows(); lo += size {
		out = append(out, m.Permute(identityPerm(m.Rows())[lo:min(lo+size, m.Rows())]))
	}
	return out
}

// Packer.Shuffle gives the rows of Pack(m, perm) whatever the blocks: the
// blocks' encodings are merged (one wide block makes every index wide;
// values of all blocks beyond 256 make them float32).
func TestPackerShuffle(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	grey := greyRows(rng, 500, 785)
	wideTail := greyRows(rng, 500, 785)
	for i := wideTail.Ptr[400]; i < wideTail.NNZ(); i++ {
		wideTail.Idx[i] += 70000 // only the last rows' block is wide
	}
	wideTail.Dim += 70000
	manyValues := greyRows(rng, 500, 785)
	for i := manyValues.Ptr[250]; i < manyValues.NNZ(); i++ {
		manyValues.Val[i] = float32(1+i%300) / 7 // the blocks fit 256 codes each, not together
	}
	long := longRows(rng, 2000)
	for _, tc := range []struct {
		name        string
		m           *CSR
		wide, coded bool
	}{
		{"grey", grey, false, true},
		{"long", long, false, true},
		{"wide-tail", wideTail, true, true},
		{"many-values", manyValues, false, false},
		{"empty", new(CSR), false, true},
	} {
		for _, mode := range []Packing{0, PackCompact} {
			t.Run(fmt.Sprintf("%s/mode=%d", tc.name, mode), func(t *testing.T) {
				b := NewPacker(mode)
				for _, blk := range blocksOf(tc.m, 64) {
					b.Append(blk)
				}
				if b.Rows() != tc.m.Rows() || b.NNZ() != tc.m.NNZ() {
					t.Fatalf("Packer holds %d rows %d nonzeros, want %d %d", b.Rows(), b.NNZ(), tc.m.Rows(), tc.m.NNZ())
				}
				if got, want := b.DistinctLabels(), tc.m.DistinctLabels(); !slices.Equal(got, want) {
					t.Fatalf("DistinctLabels %v, want %v", got, want)
				}
				perm := identityPerm(tc.m.Rows())
				rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
				p := b.Shuffle(perm)
				wide, coded := tc.wide || mode&PackNarrow == 0, tc.coded && mode&PackCodes != 0
				if p.Wide() != wide || p.Coded() != coded {
					t.Fatalf("Wide %v Coded %v, want %v %v", p.Wide(), p.Coded(), wide, coded)
				}
				checkPacked(t, p, tc.m, perm)
				if b.Rows() != 0 || b.Bytes() != 0 {
					t.Fatalf("the Packer holds %d rows, %d bytes after Shuffle", b.Rows(), b.Bytes())
				}
			})
		}
	}
}

// longRows returns n rows of 500 to 999 nonzeros (blocks of 64 of them
// fill Shuffle's chunks) and one, row 3n/4, of 65,000, longer than such a
// block.
func longRows(rng *rand.Rand, n int) *CSR {
	var m CSR
	for r := range n {
		var x Vector
		k := 500 + rng.IntN(500)
		if r == 3*n/4 {
			k = 65000
		}
		for j := range k {
			x.Idx = append(x.Idx, uint32(1+j))
			x.Val = append(x.Val, float32(1+rng.IntN(255))/255)
		}
		m.Append(float32(2*rng.IntN(2)-1), x)
	}
	return &m
}

// Shuffle's groups go on in the memory of the blocks they have emptied:
// besides the result it allocates about its first chunks, not a second
// copy of the rows.
func TestPackerShuffleReusesBlocks(t *testing.T) {
	m := longRows(rand.New(rand.NewPCG(31, 32)), 4000)
	b := NewPacker(0)
	for _, blk := range blocksOf(m, 64) {
		b.Append(blk)
	}
	data := b.Bytes()
	perm := identityPerm(m.Rows())
	slices.Reverse(perm)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p := b.Shuffle(perm)
	runtime.ReadMemStats(&after)
	extra := int64(after.TotalAlloc-before.TotalAlloc) - p.Bytes()
	if extra > data/2 {
		t.Fatalf("Shuffle allocated %d bytes besides its result, for %d bytes of rows", extra, data)
	}
	checkPacked(t, p, m, perm)
}

// Shuffle panics on a permutation that does not cover the rows once.
func TestPackerShuffleBadPerm(t *testing.T) {
	for _, perm := range [][]int32{{0, 1}, {0, 0, 1}, {0, 1, 3}} {
		b := NewPacker(PackCompact)
		b.Append(greyRows(rand.New(rand.NewPCG(1, 1)), 3, 20))
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Shuffle(%v) of 3 rows did not panic", perm)
				}
			}()
			b.Shuffle(perm)
		}()
	}
}

// Blocks gives back the appended rows, and Map replaces them block by
// block (here doubling every value, which doubles the distinct values
// past 256 codes only when the blocks are put together).
func TestPackerBlocksAndMap(t *testing.T) {
	for _, mode := range []Packing{0, PackCompact} {
		m := greyRows(rand.New(rand.NewPCG(13, 14)), 300, 785)
		b := NewPacker(mode)
		for _, blk := range blocksOf(m, 50) {
			b.Append(blk)
		}
		for range 2 {
			var got CSR
			for blk := range b.Blocks() {
				got.AppendCSR(blk)
			}
			if got.Rows() != m.Rows() || !slices.Equal(got.Idx, m.Idx) || !slices.Equal(got.Val, m.Val) || !slices.Equal(got.Labels, m.Labels) || got.Dim != m.Dim {
				t.Fatalf("mode %d: Blocks does not give back the appended rows", mode)
			}
		}
		b.Map(func(blk *CSR) *CSR {
			for i := range blk.Val {
				blk.Val[i] *= 2
			}
			return blk
		})
		want := m.Permute(identityPerm(m.Rows()))
		for i := range want.Val {
			want.Val[i] *= 2
		}
		perm := identityPerm(m.Rows())
		slices.Reverse(perm)
		checkPacked(t, b.Shuffle(perm), want, perm)
	}
}

// PackDirect keeps 1-byte codes only beside 2-byte indices, in Pack and in
// a Packer's Shuffle, and the rows come back the same.
func TestPackDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	narrowRows := greyRows(rng, 50, 785)
	var wideRows CSR
	for r := range 50 {
		x := greyRows(rng, 1, 785).Row(0)
		x.Idx, x.Val = append(x.Idx, 70000+uint32(r)), append(x.Val, 1)
		wideRows.Append(1, x)
	}
	identity := make([]int32, 50)
	for i := range identity {
		identity[i] = int32(i)
	}
	for _, c := range []struct {
		name        string
		m           *CSR
		mode        Packing
		wide, coded bool
	}{
		{"narrow direct", narrowRows, PackCompact | PackDirect, false, true},
		{"wide direct", &wideRows, PackCompact | PackDirect, true, false},
		{"wide compact", &wideRows, PackCompact, true, true},
	} {
		p := Pack(c.m, nil, c.mode)
		b := NewPacker(c.mode)
		b.Append(narrowRows.Permute(nil)) // an empty block
		b.Append(c.m)
		s := b.Shuffle(identity)
		for _, got := range []*Packed{p, s} {
			if got.Wide() != c.wide || got.Coded() != c.coded {
				t.Errorf("%s: wide %v coded %v, want %v %v", c.name, got.Wide(), got.Coded(), c.wide, c.coded)
			}
			var buf Vector
			for r := range c.m.Rows() {
				x, want := got.Row(r, &buf), c.m.Row(r)
				if !slices.Equal(x.Idx, want.Idx) || !slices.Equal(x.Val, want.Val) {
					t.Fatalf("%s: row %d differs", c.name, r)
				}
			}
		}
	}
}

// MapEntries gives the blocks Map gives for the same row map, bit for bit
// and in the same encodings: on narrow coded blocks (decoded and packed
// again), on wide blocks rewritten in place, and on wide blocks whose
// rewritten rows fit 2-byte indices or codes (packed again). Entries are
// dropped, so rows shrink and some become empty.
func TestPackerMapEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	narrowRows := greyRows(rng, 120, 785)
	var wideRows CSR
	for r := range 120 {
		x := greyRows(rng, 1, 785).Row(0)
		for i := range x.Val {
			x.Val[i] = float32(rng.NormFloat64()) // many distinct values
		}
		x.Idx, x.Val = append(x.Idx, 70000+uint32(r)), append(x.Val, 3)
		wideRows.Append(1, x)
	}
	drop := func(j uint32) bool { return j%5 == 0 }
	maps := map[string]func(j uint32, v float32) (float32, bool){
		"halve":     func(j uint32, v float32) (float32, bool) { return v / 2, !drop(j) },
		"drop-wide": func(j uint32, v float32) (float32, bool) { return v * 3, !drop(j) && j < 70000 },
		"to-codes":  func(j uint32, v float32) (float32, bool) { return float32(j % 7), !drop(j) },
		"drop-all":  func(j uint32, v float32) (float32, bool) { return v, false },
	}
	inPlace := func(g func(uint32, float32) (float32, bool)) func([]uint32, []float32) int {
		return func(idx []uint32, val []float32) int {
			m := 0
			for i, j := range idx {
				if v, keep := g(j, val[i]); keep {
					idx[m], val[m] = j, v
					m++
				}
			}
			return m
		}
	}
	asCSR := func(g func(uint32, float32) (float32, bool)) func(*CSR) *CSR {
		return func(blk *CSR) *CSR {
			var out CSR
			for r := range blk.Rows() {
				var y Vector
				x := blk.Row(r)
				for i, j := range x.Idx {
					if v, keep := g(j, x.Val[i]); keep {
						y.Idx, y.Val = append(y.Idx, j), append(y.Val, v)
					}
				}
				out.Append(blk.Labels[r], y)
			}
			return &out
		}
	}
	for _, mode := range []Packing{0, PackNarrow, PackCompact, PackCompact | PackDirect} {
		for _, data := range []*CSR{narrowRows, &wideRows} {
			for name, g := range maps {
				want, got := NewPacker(mode), NewPacker(mode)
				for _, blk := range blocksOf(data, 25) {
					want.Append(blk)
					got.Append(blk)
				}
				want.Map(asCSR(g))
				got.MapEntries(inPlace(g))
				if got.Rows() != want.Rows() || got.NNZ() != want.NNZ() || got.Dim() != want.Dim() || got.Bytes() != want.Bytes() {
					t.Fatalf("mode %d %s: rows %d nnz %d dim %d bytes %d, want %d %d %d %d", mode, name,
						got.Rows(), got.NNZ(), got.Dim(), got.Bytes(), want.Rows(), want.NNZ(), want.Dim(), want.Bytes())
				}
				var all CSR
				for blk := range want.Blocks() {
					all.AppendCSR(blk)
				}
				perm := identityPerm(data.Rows())
				slices.Reverse(perm)
				w, p := want.Shuffle(perm), got.Shuffle(perm)
				checkPacked(t, p, &all, perm)
				if p.Wide() != w.Wide() || p.Coded() != w.Coded() || p.MaxRow() != w.MaxRow() {
					t.Fatalf("mode %d %s: wide %v coded %v maxRow %d, want %v %v %d", mode, name, p.Wide(), p.Coded(), p.MaxRow(), w.Wide(), w.Coded(), w.MaxRow())
				}
			}
		}
	}
}
