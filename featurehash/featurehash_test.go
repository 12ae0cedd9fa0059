package featurehash

import (
	"encoding/binary"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/sparsevec"
)

// TestMurmur3Vectors checks Murmur3 against the MurmurHash3_x86_32 test
// vectors Ian Boyd published (https://stackoverflow.com/a/31929528, the
// answer to "MurmurHash3 test vectors", stackoverflow.com/q/14747343),
// which the Python mmh3 package also tests, the "Hello, world!" vectors
// of the same collection, and scikit-learn's murmurhash3_32 answers
// (bench/texthash vectorises text with this function, as sklearn's
// FeatureHasher does).
func TestMurmur3Vectors(t *testing.T) {
	for _, c := range []struct {
		key  string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"", 1, 0x514E28B7},
		{"", 0xffffffff, 0x81F16F39},
		{"\xff\xff\xff\xff", 0, 0x76293B50},
		{"\x21\x43\x65\x87", 0, 0xF55B516B},
		{"\x21\x43\x65\x87", 0x5082EDEE, 0x2362F9DE},
		{"\x21\x43\x65", 0, 0x7E4A8634},
		{"\x21\x43", 0, 0xA0F7B07A},
		{"\x21", 0, 0x72661CF4},
		{"\x00\x00\x00\x00", 0, 0x2362F9DE},
		{"\x00\x00\x00", 0, 0x85F0B427},
		{"\x00\x00", 0, 0x30F4C306},
		{"\x00", 0, 0x514E28B7},
		{"aaaa", 0x9747b28c, 0x5A97808A},
		{"aaa", 0x9747b28c, 0x283E0130},
		{"aa", 0x9747b28c, 0x5D211726},
		{"a", 0x9747b28c, 0x7FA09EA6},
		{"abcd", 0x9747b28c, 0xF0478627},
		{"abc", 0x9747b28c, 0xC84A62DD},
		{"ab", 0x9747b28c, 0x74875592},
		{"Hello, world!", 0x9747b28c, 0x24884CBA},
		{"Hello, world!", 1234, 0xfaf6cdb3},
		{"Hello, world!", 4321, 0xbf505788},
		// scikit-learn's test (sklearn/utils/tests/test_murmurhash.py):
		// murmurhash3_32("foo", 0) is -156908512, with seed 42 it is
		// -1322301282.
		{"foo", 0, uint32(0xf6a5c420)},
		{"foo", 42, uint32(0xb12f489e)},
		{"The quick brown fox jumps over the lazy dog", 0, 0x2e4ff723},
	} {
		if got := Murmur3([]byte(c.key), c.seed); got != c.want {
			t.Errorf("Murmur3(%q, %#x) = %#08x, want %#08x", c.key, c.seed, got, c.want)
		}
	}
}

// TestIndex checks that the 4-byte fast path is Murmur3 of the index's
// little-endian bytes, masked and shifted past the bias row; the first
// two cases are vectors of TestMurmur3Vectors (0x87654321 is the key
// 21 43 65 87).
func TestIndex(t *testing.T) {
	h, err := New(31, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Index(0x87654321); got != 1+0xF55B516B&(1<<31-1) {
		t.Errorf("Index(0x87654321) = %#x", got)
	}
	if got := h.Index(0xffffffff); got != 1+0x76293B50&(1<<31-1) {
		t.Errorf("Index(0xffffffff) = %#x", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		bits, seed, j := 1+rng.IntN(MaxBits), rng.Uint32(), rng.Uint32()
		h, err := New(bits, seed)
		if err != nil {
			t.Fatal(err)
		}
		want := 1 + Murmur3(binary.LittleEndian.AppendUint32(nil, j), seed)&(1<<bits-1)
		if got := h.Index(j); got != want || got < 1 || int(got) >= h.Dim() {
			t.Fatalf("bits %d seed %#x: Index(%d) = %d, want %d (Dim %d)", bits, seed, j, got, want, h.Dim())
		}
	}
	for _, b := range []int{0, 32, -1} {
		if _, err := New(b, 0); err == nil {
			t.Errorf("New(%d) accepted", b)
		}
	}
}

// TestHashRow checks collisions (summed in original index order), sorting
// and the dropping of sums that cancel, against a direct computation.
func TestHashRow(t *testing.T) {
	h, _ := New(2, 7) // 4 rows: many collisions
	rng := rand.New(rand.NewPCG(3, 4))
	var r Row
	for range 500 {
		n := rng.IntN(12)
		idx := make([]uint32, 0, n)
		for j := uint32(1); len(idx) < n; j += 1 + uint32(rng.IntN(1000)) {
			idx = append(idx, j)
		}
		val := make([]float32, n)
		for i := range val {
			val[i] = float32(rng.NormFloat64())
		}
		if n > 1 && rng.IntN(4) == 0 { // a pair that may cancel
			val[1] = -val[0]
		}
		sum := map[uint32]float64{}
		for i, j := range idx { // ascending original order
			sum[h.Index(j)] += float64(val[i])
		}
		var wantIdx []uint32
		var wantVal []float32
		for _, to := range slices.Sorted(maps.Keys(sum)) {
			if v := float32(sum[to]); v != 0 {
				wantIdx, wantVal = append(wantIdx, to), append(wantVal, v)
			}
		}
		got := r.Hash(h, sparsevec.Vector{Idx: idx, Val: val})
		if !slices.Equal(got.Idx, wantIdx) || !slices.Equal(got.Val, wantVal) {
			t.Fatalf("row %v %v: got %v %v, want %v %v", idx, val, got.Idx, got.Val, wantIdx, wantVal)
		}
	}
}

// TestHashSaturates: colliding values whose sum leaves the float32 range
// give ±MaxFloat32, not an infinity.
func TestHashSaturates(t *testing.T) {
	h, _ := New(1, 0) // 2 rows: 3 features, at least two collide
	var r Row
	for _, sign := range []float32{1, -1} {
		v := sign * math.MaxFloat32
		got := r.Hash(h, sparsevec.Vector{Idx: []uint32{1, 2, 3}, Val: []float32{v, v, v}})
		for _, x := range got.Val {
			if math.IsInf(float64(x), 0) || math.Abs(float64(x)) != math.MaxFloat32 {
				t.Fatalf("hashed values %v", got.Val)
			}
		}
	}
}

// TestApply checks that the CSR transform hashes each row as Row does,
// keeps the labels and sets Dim, and that it is deterministic.
func TestApply(t *testing.T) {
	h, _ := New(10, 42)
	rng := rand.New(rand.NewPCG(5, 6))
	src := &sparsevec.CSR{}
	for range 200 {
		var x sparsevec.Vector
		for j := uint32(1 + rng.IntN(5)); j < 1e7; j += uint32(1 + rng.IntN(2e6)) {
			x.Idx = append(x.Idx, j)
			x.Val = append(x.Val, float32(rng.NormFloat64()))
		}
		src.Append(float32(rng.IntN(2)), x)
	}
	dst := h.Apply(src)
	if !slices.Equal(dst.Labels, src.Labels) || dst.Rows() != src.Rows() {
		t.Fatal("labels or rows differ")
	}
	var r Row
	maxIdx := 0
	for i := range src.Rows() {
		want := r.Hash(h, src.Row(i))
		got := dst.Row(i)
		if !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) {
			t.Fatalf("row %d differs", i)
		}
		if len(got.Idx) > 0 {
			maxIdx = max(maxIdx, int(got.Idx[len(got.Idx)-1]))
		}
	}
	if dst.Dim != maxIdx+1 || dst.Dim > h.Dim() {
		t.Fatalf("Dim %d, want %d (space %d)", dst.Dim, maxIdx+1, h.Dim())
	}
	again := h.Apply(src)
	if !slices.Equal(again.Idx, dst.Idx) || !slices.Equal(again.Val, dst.Val) || !slices.Equal(again.Ptr, dst.Ptr) {
		t.Fatal("Apply is not deterministic")
	}
}

// TestRowAllocs pins the per-row path: no allocation once the buffers
// have grown.
func TestRowAllocs(t *testing.T) {
	h, _ := New(18, 1)
	x := sparsevec.Vector{Idx: []uint32{1, 5, 9, 1 << 20, 1 << 30}, Val: []float32{1, -2, 3, 0.5, math.MaxFloat32}}
	var r Row
	r.Hash(h, x)
	if a := testing.AllocsPerRun(100, func() { r.Hash(h, x) }); a != 0 {
		t.Errorf("Hash made %v allocations per row", a)
	}
}

// TestApplyToAllocs pins the block path of streamed training: hashing a
// block into a reused CSR allocates nothing once its arrays have grown.
func TestApplyToAllocs(t *testing.T) {
	h, _ := New(12, 3)
	src := &sparsevec.CSR{}
	for r := range 50 {
		src.Append(float32(r%2), sparsevec.Vector{Idx: []uint32{1, uint32(10 + r), 1 << 25}, Val: []float32{1, 2, 3}})
	}
	dst, row := &sparsevec.CSR{}, &Row{}
	h.ApplyTo(dst, src, row)
	if a := testing.AllocsPerRun(50, func() { h.ApplyTo(dst, src, row) }); a != 0 {
		t.Errorf("ApplyTo made %v allocations per block", a)
	}
	if want := h.Apply(src); !slices.Equal(dst.Idx, want.Idx) || !slices.Equal(dst.Ptr, want.Ptr) || dst.Dim != want.Dim {
		t.Error("ApplyTo and Apply differ")
	}
}

// sortKeys sorts the keys of a row as slices.Sort does, for every number
// of bits (many collisions at few bits) and rows shorter and longer than
// radixMinKeys.
func TestSortKeysAsSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, bits := range []int{1, 3, 7, 8, 12, 16, 20, 24, 31} {
		h, err := New(bits, 0)
		if err != nil {
			t.Fatal(err)
		}
		var r Row
		for _, n := range []int{0, 1, radixMinKeys - 1, radixMinKeys, 150, 2000} {
			r.keys = r.keys[:0]
			for i := range n {
				r.keys = append(r.keys, uint64(h.Index(rng.Uint32()))<<32|uint64(i))
			}
			want := slices.Clone(r.keys)
			slices.Sort(want)
			r.sortKeys(bits)
			if !slices.Equal(r.keys, want) {
				t.Fatalf("bits %d, %d keys: not sorted as slices.Sort", bits, n)
			}
		}
	}
}
