// Package scale fits a per-feature affine scaling on training rows and
// applies it to any row, so that a model can be trained in a well-scaled
// space and still take raw rows. Every mode is the map
//
//	x'_j = (x_j - shift_j) / div_j
//
// with statistics taken over the training rows, an absent entry counting
// as a zero:
//
//   - maxabs:   shift_j = 0,      div_j = max |x_j|          (zeros stay zeros)
//   - minmax:   shift_j = min x_j, div_j = max x_j - min x_j (x' in [0, 1])
//   - standard: shift_j = mean,   div_j = standard deviation (population, 1/n)
//
// A feature that is constant on the training rows (div_j = 0), or that no
// training row stores, maps to 0: it is dropped, since the training rows
// say nothing about its range. Values of other rows are not clipped.
// The arithmetic is float64, rounded to float32 once per value, so minmax
// maps the training minimum and maximum to exactly 0 and 1. minmax is the
// scaling of the kernel-perceptron paper (Xu and Zhang scale each
// attribute to [0, 1]).
//
// # Sparse data
//
// minmax and standard centre: a feature with shift_j != 0 has the nonzero
// value -shift_j/div_j where a row lacks it, so every row stores it. On
// sparse data that densifies every row; Fit refuses it (ErrDensify) when
// the centred rows would store more than MaxGrowth times the input's
// entries, and names maxabs, which keeps zeros zero. Auto chooses per data
// set:
//
//   - standard when centring at most doubles the stored entries (dense
//     data, typically a table of measurements, where it makes every
//     learner invariant to per-feature affine maps);
//   - none when the data is sparse and every value already lies in
//     [-1, 1] (text features, indicators, pixel intensities: the user's
//     own normalisation is kept);
//   - maxabs for other sparse data.
package scale

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// Mode names a scaling.
type Mode string

// The modes. The zero Mode means None.
const (
	None     Mode = "none"
	MaxAbs   Mode = "maxabs"
	MinMax   Mode = "minmax"
	Standard Mode = "standard"
	Auto     Mode = "auto" // chosen per data set by Fit; see the package doc
)

// Modes lists the modes in the order the CLI lists them.
var Modes = []Mode{None, MaxAbs, MinMax, Standard, Auto}

// MaxGrowth is the factor by which centring (minmax, standard) may grow the
// stored entries of the training rows before Fit refuses it.
const MaxGrowth = 4

// autoGrowth is the growth up to which Auto chooses standard.
const autoGrowth = 2

// ErrDensify is returned by Fit when centring would densify sparse data.
var ErrDensify = errors.New("centring would densify sparse data")

// ErrMode is wrapped by ParseMode's error and by FromModel's for a mode it
// does not know.
var ErrMode = errors.New("unknown scaling mode")

// ParseMode returns the Mode s names ("" is None).
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return None, nil
	}
	m := Mode(strings.ToLower(s))
	if !slices.Contains(Modes, m) {
		return "", fmt.Errorf("scale: %q: %w (want one of %s)", s, ErrMode, joinModes())
	}
	return m, nil
}

func joinModes() string {
	s := make([]string, len(Modes))
	for i, m := range Modes {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

// Scaler is a fitted scaling. Apply and Row do not modify it; a Scaler may
// be shared by goroutines (Row's buffers belong to the caller).
type Scaler struct {
	mode  Mode
	index []uint32 // features kept, ascending
	shift []float64
	div   []float64
	// slot maps a feature to its position in index + 1 (0: dropped), for
	// features below len(slot); nil when index is too spread out for a
	// table (see lookupTable), and then positions are found by binary
	// search.
	slot []int32
	// fill lists, ascending, the features whose scaled zero is not zero;
	// fillVal holds their scaled zero -shift/div.
	fill    []uint32
	fillVal []float32
	// unshifted: every shift is +0 (maxabs; minmax on features whose
	// minimum is 0), so x - shift is x and need not be read; divAt then
	// holds every feature's divisor by feature (0: dropped), next to slot,
	// so that scaling an entry reads one table instead of two.
	unshifted bool
	divAt     []float64
}

// Mode returns the mode the statistics were fitted with (never Auto).
func (s *Scaler) Mode() Mode { return s.mode }

// Features returns the number of features the scaler keeps.
func (s *Scaler) Features() int { return len(s.index) }

// Centred reports whether the scaler gives some feature a nonzero value
// where a row lacks it.
func (s *Scaler) Centred() bool { return len(s.fill) > 0 }

// stats are the per-feature sums of one pass over the training rows, for
// the features the rows store (position k is feature feat[k]), so that
// their memory follows the stored entries, not the largest index.
type stats struct {
	blocks    iter.Seq[*sparsevec.CSR] // the rows, for squares' second pass
	rows, nnz int
	feat      []uint32 // the distinct stored features, ascending
	at        []int32  // feature -> position + 1, when a table is worth it
	acc       []featStats
	maxAbs    float64 // over all values
}

// featStats are one feature's sums, kept together: on wide data (millions
// of features) each stored entry then touches one cache line of them, not
// one per statistic.
type featStats struct {
	lo, hi, sum float64
	count       int
}

// entries returns the stored indices and values of b.
func entries(b *sparsevec.CSR) ([]uint32, []float32) {
	n := b.NNZ()
	return b.Idx[:n], b.Val[:n]
}

// collect makes the passes of stats over the rows of blocks, in order:
// the sums are those of one pass over the rows as one CSR.
func collect(blocks iter.Seq[*sparsevec.CSR]) *stats { return collectAs(blocks, chooseLayout) }

// layout is how collect finds a feature's statistics.
type layout uint8

const (
	denseLayout  layout = iota // indexed by the feature, then compacted
	tableLayout                // by position, through a feature -> position table
	sortedLayout               // by position, found by binary search
)

// chooseLayout returns the layout for features below size in nnz stored
// entries: dense while it takes at most one slot per entry (4 times the
// entries' 8 bytes), a table while lookupTable allows it, else sorted.
func chooseLayout(size int64, nnz int) layout {
	switch {
	case size <= int64(nnz):
		return denseLayout
	case lookupTable(size, nnz):
		return tableLayout
	}
	return sortedLayout
}

// collectAs is collect with the layout that choose returns; every layout
// gives the same statistics.
func collectAs(blocks iter.Seq[*sparsevec.CSR], choose func(size int64, nnz int) layout) *stats {
	st := &stats{blocks: blocks}
	maxIdx := 0
	for b := range blocks {
		idx, _ := entries(b)
		st.rows += b.Rows()
		st.nnz += len(idx)
		for _, j := range idx {
			maxIdx = max(maxIdx, int(j))
		}
	}
	size := int64(maxIdx) + 1
	switch choose(size, st.nnz) {
	case denseLayout:
		// One random access per entry (the table layout makes two), then
		// the stored features are kept in order.
		dense := make([]featStats, size)
		for b := range blocks {
			st.addRows(dense, b)
		}
		// The stored features' statistics move to the front of dense, in
		// place (a feature's position is never above the feature), so
		// that no second array of them is held beside it.
		st.at = make([]int32, size)
		st.feat = make([]uint32, 0, countFunc(dense, func(a *featStats) bool { return a.count > 0 }))
		for j := range dense {
			if dense[j].count > 0 {
				st.feat = append(st.feat, uint32(j))
				st.at[j] = int32(len(st.feat))
				dense[len(st.feat)-1] = dense[j]
			}
		}
		st.acc = dense[:len(st.feat):len(st.feat)]
	case tableLayout:
		st.at = make([]int32, size)
		for b := range blocks {
			idx, _ := entries(b)
			for _, j := range idx {
				st.at[j] = 1
			}
		}
		st.feat = make([]uint32, 0, countFunc(st.at, func(seen *int32) bool { return *seen != 0 }))
		for j, seen := range st.at {
			if seen != 0 {
				st.feat = append(st.feat, uint32(j))
				st.at[j] = int32(len(st.feat))
			}
		}
		st.sumValues(blocks)
	default:
		for b := range blocks {
			idx, _ := entries(b)
			st.feat = slices.Compact(slices.Sorted(slices.Values(append(st.feat, idx...))))
		}
		st.sumValues(blocks)
	}
	for k := range st.acc {
		if a := &st.acc[k]; a.count < st.rows { // some row lacks the feature: a zero takes part
			a.lo = min(a.lo, 0)
			a.hi = max(a.hi, 0)
		}
	}
	return st
}

// countFunc returns the number of elements of s for which f is true.
func countFunc[T any](s []T, f func(*T) bool) int {
	n := 0
	for i := range s {
		if f(&s[i]) {
			n++
		}
	}
	return n
}

// sumValues makes collect's pass over the values into st.acc, by
// feature position (st.feat, st.at).
func (st *stats) sumValues(blocks iter.Seq[*sparsevec.CSR]) {
	st.acc = make([]featStats, len(st.feat))
	m := st.maxAbs
	for b := range blocks {
		idx, val := entries(b)
		for i, j := range idx {
			v := float64(val[i])
			add(&st.acc[st.pos(j)], v)
			m = max(m, math.Abs(v))
		}
	}
	st.maxAbs = m
}

// addRows adds the entries of b to dense, indexed by feature, row by
// row: on wide data dense is hundreds of megabytes read at random, so the
// lines of the row after next are loaded while a row is added.
func (st *stats) addRows(dense []featStats, b *sparsevec.CSR) {
	const ahead = 2
	n, m := b.Rows(), st.maxAbs
	for r := range min(ahead, n) {
		sparsevec.PrefetchIndexed(dense, b.Idx[b.Ptr[r]:b.Ptr[r+1]])
	}
	for r := range n {
		if r+ahead < n {
			sparsevec.PrefetchIndexed(dense, b.Idx[b.Ptr[r+ahead]:b.Ptr[r+ahead+1]])
		}
		lo, hi := b.Ptr[r], b.Ptr[r+1]
		idx, val := b.Idx[lo:hi], b.Val[lo:hi]
		for i, j := range idx {
			v := float64(val[i])
			add(&dense[j], v)
			m = max(m, math.Abs(v))
		}
	}
	st.maxAbs = m
}

// add counts the value v of a feature whose sums are a. (The largest |v|
// is the callers', kept in a local: a field of st would chain every entry
// through memory.)
func add(a *featStats, v float64) {
	if a.count == 0 || v < a.lo {
		a.lo = v
	}
	if a.count == 0 || v > a.hi {
		a.hi = v
	}
	a.sum += v
	a.count++
}

// pos returns the position of stored feature j.
func (st *stats) pos(j uint32) int {
	if st.at != nil {
		return int(st.at[j]) - 1
	}
	k, _ := slices.BinarySearch(st.feat, j)
	return k
}

// growth returns the stored entries of the rows after centring every
// feature (by position) whose shift is nonzero, over the entries before.
func (st *stats) growth(shifted func(k int) bool) float64 {
	add := 0
	for k, a := range st.acc {
		if a.lo != a.hi && shifted(k) {
			add += st.rows - a.count
		}
	}
	return float64(st.nnz+add) / float64(max(st.nnz, 1))
}

// Fit fits mode on the rows of data. It returns nil (and no error) for
// None, and for Auto when Auto chooses none. It returns an error wrapping
// ErrDensify for minmax or standard on data they would densify, and one
// wrapping ErrMode for an unknown mode.
func Fit(mode Mode, data *sparsevec.CSR) (*Scaler, error) {
	return FitBlocks(mode, func(yield func(*sparsevec.CSR) bool) { yield(data) })
}

// FitBlocks is Fit on the rows of the blocks in order, as if they were one
// CSR: the same scaler, bit for bit. blocks is iterated up to four times
// (standard scaling makes a second pass over the values); each block need
// only stay valid until the next is yielded.
func FitBlocks(mode Mode, blocks iter.Seq[*sparsevec.CSR]) (*Scaler, error) {
	if mode == "" || mode == None {
		return nil, nil
	}
	if !slices.Contains(Modes, mode) {
		return nil, fmt.Errorf("scale: %q: %w (want one of %s)", mode, ErrMode, joinModes())
	}
	st := collect(blocks)
	if mode == Auto {
		mode = st.auto()
		if mode == None {
			return nil, nil
		}
	}
	if mode == MinMax || mode == Standard {
		g := st.growth(func(k int) bool { return shiftOf(mode, st, k) != 0 })
		if g > MaxGrowth {
			return nil, fmt.Errorf("scale: --scale %s on %d rows with %d stored entries: %w: the centred rows would store %.1f times as many entries (more than %d times); use --scale maxabs, which keeps zeros zero",
				mode, st.rows, st.nnz, ErrDensify, g, MaxGrowth)
		}
	}
	return st.scaler(mode), nil
}

// auto chooses a mode for the data st describes; see the package doc.
func (st *stats) auto() Mode {
	if st.nnz == 0 {
		return None
	}
	if st.growth(func(int) bool { return true }) <= autoGrowth {
		return Standard
	}
	if st.maxAbs <= 1 {
		return None
	}
	return MaxAbs
}

// shiftOf returns the shift of the feature at position k under mode;
// lo/hi already include the zeros of rows that lack it.
func shiftOf(mode Mode, st *stats, k int) float64 {
	switch mode {
	case MinMax:
		return st.acc[k].lo
	case Standard:
		return st.acc[k].sum / float64(st.rows)
	}
	return 0
}

// scaler computes every kept feature's shift and divisor.
func (st *stats) scaler(mode Mode) *Scaler {
	n := len(st.feat) // at most: constant features are dropped
	s := &Scaler{mode: mode, index: make([]uint32, 0, n), shift: make([]float64, 0, n), div: make([]float64, 0, n)}
	var sq []float64
	if mode == Standard {
		sq = st.squares()
	}
	for k, j := range st.feat {
		var shift, div float64
		a := &st.acc[k]
		switch mode {
		case MaxAbs:
			div = max(math.Abs(a.lo), math.Abs(a.hi))
		case MinMax:
			shift, div = a.lo, a.hi-a.lo
		case Standard:
			shift, div = a.sum/float64(st.rows), math.Sqrt(sq[k]/float64(st.rows))
		}
		if div == 0 || math.IsInf(div, 0) || math.IsNaN(div) {
			continue
		}
		s.index = append(s.index, j)
		s.shift = append(s.shift, shift)
		s.div = append(s.div, div)
	}
	s.index, s.shift, s.div = slices.Clip(s.index), slices.Clip(s.shift), slices.Clip(s.div)
	s.prepare()
	return s
}

// squares returns, per feature position, the sum over all rows of
// (x_j - mean_j)^2, absent entries counting as zeros: the second pass of a
// two-pass variance, which stays accurate when the values are large and
// far from zero.
func (st *stats) squares() []float64 {
	sq := make([]float64, len(st.feat))
	mean := make([]float64, len(st.feat))
	for k, a := range st.acc {
		mean[k] = a.sum / float64(st.rows)
		sq[k] = float64(st.rows-a.count) * mean[k] * mean[k]
	}
	for b := range st.blocks {
		idx, val := entries(b)
		for i, j := range idx {
			k := st.pos(j)
			d := float64(val[i]) - mean[k]
			sq[k] += d * d
		}
	}
	return sq
}

// prepare builds the lookup table and the fill list from index, shift
// and div.
func (s *Scaler) prepare() {
	if n := len(s.index); n > 0 && lookupTable(int64(s.index[n-1])+1, n) {
		s.slot = make([]int32, s.index[n-1]+1)
		for i, j := range s.index {
			s.slot[j] = int32(i + 1)
		}
	}
	s.fill, s.fillVal = nil, nil
	s.unshifted = !slices.ContainsFunc(s.shift, func(v float64) bool { return v != 0 || math.Signbit(v) })
	s.divAt = nil
	if s.unshifted && s.slot != nil {
		s.divAt = make([]float64, len(s.slot))
		for i, j := range s.index {
			s.divAt[j] = s.div[i]
		}
	}
	for i, j := range s.index {
		if z := float32((0 - s.shift[i]) / s.div[i]); z != 0 {
			s.fill = append(s.fill, j)
			s.fillVal = append(s.fillVal, z)
		}
	}
}

// lookupTable reports whether a dense table of size entries for n kept
// features is worth its memory: at most 64 entries per kept feature plus
// 1 MiB of int32. It bounds the memory a model file's scaling can make a
// reader allocate to a multiple of the file's bytes.
func lookupTable(size int64, n int) bool { return size <= 64*int64(n)+1<<18 }

// pos returns feature j's position in index, or -1 if j is dropped.
func (s *Scaler) pos(j uint32) int {
	if s.slot != nil {
		if int(j) < len(s.slot) {
			return int(s.slot[j]) - 1
		}
		return -1
	}
	if i, ok := slices.BinarySearch(s.index, j); ok {
		return i
	}
	return -1
}

// value returns the scaled value of v at feature j (0 for a dropped one).
func (s *Scaler) value(j uint32, v float32) float32 {
	i := s.pos(j)
	if i < 0 {
		return 0
	}
	return float32((float64(v) - s.shift[i]) / s.div[i])
}

// AppendRow appends the scaled entries of x to idx and val and returns
// them. Entries whose scaled value is 0 are omitted, and every feature with
// a nonzero scaled zero gets an entry where x lacks it, so the output is
// sparse exactly where the scaling keeps zeros at zero. It allocates only
// when idx or val must grow.
func (s *Scaler) AppendRow(idx []uint32, val []float32, x sparsevec.Vector) ([]uint32, []float32) {
	xi, xv := x.Idx, x.Val[:len(x.Idx)]
	if len(s.fill) == 0 {
		n := len(idx)
		idx, val = slices.Grow(idx, len(xi)), slices.Grow(val, len(xi))
		m := s.scaleKept(idx[n:n+len(xi)], val[n:n+len(xi)], xi, xv)
		return idx[:n+m], val[:n+m]
	}
	fill, fillVal := s.fill, s.fillVal[:len(s.fill)]
	i, f := 0, 0
	for i < len(xi) || f < len(fill) {
		if f < len(fill) && (i == len(xi) || fill[f] < xi[i]) {
			idx, val = append(idx, fill[f]), append(val, fillVal[f])
			f++
			continue
		}
		j := xi[i]
		if f < len(fill) && fill[f] == j {
			f++
		}
		if v := s.value(j, xv[i]); v != 0 {
			idx, val = append(idx, j), append(val, v)
		}
		i++
	}
	return idx, val
}

// ScaleInPlace scales the row whose entries are idx and val in place: the
// entries whose scaled value is not 0 are written to the front of idx and
// val, in order, and their number is returned. The kept entries are those
// AppendRow gives for the row, bit for bit. It panics if s is Centred
// (a centred scaling adds entries, which does not fit in place).
func (s *Scaler) ScaleInPlace(idx []uint32, val []float32) int {
	if len(s.fill) > 0 {
		panic("scale: ScaleInPlace with a centred scaling")
	}
	return s.scaleKept(idx, val[:len(idx)], idx, val[:len(idx)])
}

// scaleKept writes to oi and ov the scaled entries of xi and xv whose
// value is not 0, for a scaler that keeps zeros zero (no fill), and
// returns how many. oi and ov may be xi and xv: entry m is written after
// entries up to m are read.
func (s *Scaler) scaleKept(oi []uint32, ov []float32, xi []uint32, xv []float32) int {
	oi, ov = oi[:len(xi)], ov[:len(xi)]
	m := 0
	if divAt := s.divAt; divAt != nil {
		// (x - (+0)) / div is x / div for every float64 x, -0 and NaN
		// included, and a kept divisor is never 0; on wide data this
		// saves two cache misses per entry. The row's divisors are
		// asked for first, so that their cache misses overlap.
		sparsevec.PrefetchIndexed(divAt, xi)
		for i, j := range xi {
			if int(j) >= len(divAt) {
				continue
			}
			d := divAt[j]
			if d == 0 {
				continue
			}
			if v := float32(float64(xv[i]) / d); v != 0 {
				oi[m], ov[m] = j, v
				m++
			}
		}
		return m
	}
	if slot := s.slot; slot != nil {
		shift, div := s.shift, s.div
		for i, j := range xi {
			if int(j) >= len(slot) {
				continue
			}
			k := slot[j] - 1
			if k < 0 {
				continue
			}
			if v := float32((float64(xv[i]) - shift[k]) / div[k]); v != 0 {
				oi[m], ov[m] = j, v
				m++
			}
		}
		return m
	}
	for i, j := range xi {
		if v := s.value(j, xv[i]); v != 0 {
			oi[m], ov[m] = j, v
			m++
		}
	}
	return m
}

// Row is a reusable buffer for scaling one row at a time.
type Row struct {
	idx []uint32
	val []float32
}

// Scale returns x scaled by s, in r's buffers: valid until the next call.
func (r *Row) Scale(s *Scaler, x sparsevec.Vector) sparsevec.Vector {
	r.idx, r.val = s.AppendRow(r.idx[:0], r.val[:0], x)
	return sparsevec.Vector{Idx: r.idx, Val: r.val}
}

// Apply returns the scaled rows of src as a new CSR, labels copied. Its
// Dim is src.Dim, or more if a centred feature needs it.
func (s *Scaler) Apply(src *sparsevec.CSR) *sparsevec.CSR {
	dst := &sparsevec.CSR{Dim: src.Dim}
	n := src.NNZ()
	if rows := src.Rows(); len(s.fill) > 0 {
		n += len(s.fill) * rows // an upper bound: no slack from growing
	}
	dst.Idx = make([]uint32, 0, n)
	dst.Val = make([]float32, 0, n)
	dst.Ptr = make([]int, 1, src.Rows()+1)
	dst.Labels = slices.Clone(src.Labels)
	for r := range src.Rows() {
		dst.Idx, dst.Val = s.AppendRow(dst.Idx, dst.Val, src.Row(r))
		dst.Ptr = append(dst.Ptr, len(dst.Idx))
	}
	if len(s.fill) > 0 && src.Rows() > 0 {
		dst.Dim = max(dst.Dim, int(s.fill[len(s.fill)-1])+1)
	}
	return dst
}

// Model returns the scaling as stored in a model file. Its slices are s's,
// as FromModel's scaler shares the model's: neither a Scaler nor a model
// writer modifies them, and on wide data a copy would add tens of
// megabytes to the end of a run (20 bytes per kept feature).
func (s *Scaler) Model() *model.Scaling {
	return &model.Scaling{Mode: string(s.mode), Index: s.index, Shift: s.shift, Div: s.div}
}

// FromModel returns the Scaler a model file stores (nil for nil). m must
// be valid (model.Validate); its mode must be one this package fits.
func FromModel(m *model.Scaling) (*Scaler, error) {
	if m == nil {
		return nil, nil
	}
	mode := Mode(m.Mode)
	if mode != MaxAbs && mode != MinMax && mode != Standard {
		return nil, fmt.Errorf("scale: model scaling %q: %w (this build applies %s, %s and %s)", m.Mode, ErrMode, MaxAbs, MinMax, Standard)
	}
	s := &Scaler{mode: mode, index: m.Index, shift: m.Shift, div: m.Div}
	s.prepare()
	return s, nil
}
