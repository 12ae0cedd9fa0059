package scale

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// entry is one nonzero of a test row, with a 1-based index.
type entry struct {
	j uint32
	v float32
}

// csrOf builds a CSR from rows of entries (ascending indices).
func csrOf(labels []float32, rows [][]entry) *sparsevec.CSR {
	m := new(sparsevec.CSR)
	for r, row := range rows {
		var x sparsevec.Vector
		for _, e := range row {
			x.Idx = append(x.Idx, e.j)
			x.Val = append(x.Val, e.v)
		}
		m.Append(labels[r], x)
	}
	return m
}

// checkCSR fails unless m is well formed with the given rows.
func checkCSR(t *testing.T, m *sparsevec.CSR, labels []float32, rows [][]entry) {
	t.Helper()
	if !slices.Equal(m.Labels, labels) {
		t.Errorf("labels %v, want %v", m.Labels, labels)
	}
	if m.Rows() != len(rows) || len(m.Ptr) != len(rows)+1 {
		t.Fatalf("%d rows, len(Ptr) %d, want %d rows", m.Rows(), len(m.Ptr), len(rows))
	}
	for r, want := range rows {
		if want == nil {
			want = []entry{}
		}
		x := m.Row(r)
		got := []entry{}
		for i, j := range x.Idx {
			got = append(got, entry{j, x.Val[i]})
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("row %d = %v, want %v", r, got, want)
		}
	}
}

// mustFit fits mode on data and fails the test on an error.
func mustFit(t *testing.T, mode Mode, data *sparsevec.CSR) *Scaler {
	t.Helper()
	s, err := Fit(mode, data)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		t.Fatalf("Fit(%s) returned no scaler", mode)
	}
	return s
}

// TestMinMax: minmax as Xu and Zhang scale, every corner case.
func TestMinMax(t *testing.T) {
	third := float32(1.0 / 3.0)
	tests := []struct {
		name        string
		train       [][]entry
		test        [][]entry
		wantTrain   [][]entry
		wantTest    [][]entry
		wantTestDim int
	}{
		{
			// Feature 1: -2, 4, absent → min -2, max 4; its zero scales
			// to 1/3 and appears in every row. Feature 2: 5 everywhere,
			// constant → dropped. Feature 3: 7 once, absent twice →
			// [0,7]. Feature 4: 3, absent, 3 → [0,3]. Features 5 and up:
			// unseen → dropped.
			name: "negative minimum, constant, unseen",
			train: [][]entry{
				{{1, -2}, {2, 5}, {4, 3}},
				{{1, 4}, {2, 5}, {3, 7}},
				{{2, 5}, {4, 3}},
			},
			test: [][]entry{
				{},
				{{1, 10}, {2, 6}, {3, -7}, {5, 9}, {8, 1}},
				{{1, -2}, {4, 1.5}},
				{{1, -5}, {3, 14}},
			},
			wantTrain: [][]entry{
				{{4, 1}},
				{{1, 1}, {3, 1}},
				{{1, third}, {4, 1}},
			},
			wantTest: [][]entry{
				{{1, third}},
				{{1, 2}, {3, -1}}, // not clipped
				{{4, 0.5}},
				{{1, -0.5}, {3, 2}},
			},
			wantTestDim: 9,
		},
		{
			// Feature 2 is in every row with values 2..4: min 2 > 0, so
			// a row lacking it scales its zero to (0-2)/2 = -1.
			name:        "positive minimum",
			train:       [][]entry{{{2, 2}}, {{2, 4}}, {{1, 1}, {2, 3}}},
			test:        [][]entry{{}, {{1, 0.5}}, {{2, 5}}},
			wantTrain:   [][]entry{{}, {{2, 1}}, {{1, 1}, {2, 0.5}}},
			wantTest:    [][]entry{{{2, -1}}, {{1, 0.5}, {2, -1}}, {{2, 1.5}}},
			wantTestDim: 3,
		},
		{
			name:        "all constant",
			train:       [][]entry{{{1, 1}, {2, -3}}, {{1, 1}, {2, -3}}},
			test:        [][]entry{{{1, 2}, {2, -3}, {3, 4}}},
			wantTrain:   [][]entry{{}, {}},
			wantTest:    [][]entry{{}},
			wantTestDim: 4,
		},
		{
			name:        "empty training set",
			train:       nil,
			test:        [][]entry{{{1, 2}}},
			wantTrain:   nil,
			wantTest:    [][]entry{{}},
			wantTestDim: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			trainLabels := make([]float32, len(tc.train))
			for i := range trainLabels {
				trainLabels[i] = float32(i)
			}
			testLabels := make([]float32, len(tc.test))
			for i := range testLabels {
				testLabels[i] = float32(-i)
			}
			train := csrOf(trainLabels, tc.train)
			test := csrOf(testLabels, tc.test)
			s, err := Fit(MinMax, train)
			if err != nil {
				t.Fatal(err)
			}
			dst := s.Apply(train)
			checkCSR(t, dst, trainLabels, tc.wantTrain)
			if dst.Dim != train.Dim {
				t.Errorf("train Dim %d, want %d", dst.Dim, train.Dim)
			}
			dst = s.Apply(test)
			checkCSR(t, dst, testLabels, tc.wantTest)
			if dst.Dim != tc.wantTestDim || test.Dim != tc.wantTestDim {
				t.Errorf("test Dim %d (src %d), want %d", dst.Dim, test.Dim, tc.wantTestDim)
			}
		})
	}
}

// TestScalerDimGrows: a test set of smaller Dim still gets the scaled zeros
// of the training features, and Dim covers them.
func TestScalerDimGrows(t *testing.T) {
	train := csrOf([]float32{1, 1}, [][]entry{{{5, -1}}, {{5, 1}}})
	test := csrOf([]float32{1}, [][]entry{{{1, 3}}})
	dst := mustFit(t, MinMax, train).Apply(test)
	checkCSR(t, dst, []float32{1}, [][]entry{{{5, 0.5}}})
	if dst.Dim != 6 {
		t.Errorf("Dim %d, want 6", dst.Dim)
	}
}

// TestMaxAbs: x/max|x|, zeros stay zeros, unseen features are dropped.
func TestMaxAbs(t *testing.T) {
	train := csrOf([]float32{1, -1, 1}, [][]entry{{{1, -4}, {3, 500}}, {{1, 2}}, {{3, -1000}}})
	s := mustFit(t, MaxAbs, train)
	if s.Centred() {
		t.Error("maxabs is centred")
	}
	checkCSR(t, s.Apply(train), train.Labels, [][]entry{{{1, -1}, {3, 0.5}}, {{1, 0.5}}, {{3, -1}}})
	test := csrOf([]float32{1}, [][]entry{{{1, 8}, {2, 7}, {3, 250}, {9, 1}}})
	checkCSR(t, s.Apply(test), test.Labels, [][]entry{{{1, 2}, {3, 0.25}}})
}

// TestStandard: (x - mean)/std with the population std, absent entries
// counted as zeros, the mean kept exact for large offsets.
func TestStandard(t *testing.T) {
	// Feature 1: 1e6+1, 1e6+3 (mean 1e6+2, std 1); feature 2: 4, absent
	// (mean 2, std 2).
	train := csrOf([]float32{1, -1}, [][]entry{{{1, 1e6 + 1}, {2, 4}}, {{1, 1e6 + 3}}})
	s := mustFit(t, Standard, train)
	checkCSR(t, s.Apply(train), train.Labels, [][]entry{{{1, -1}, {2, 1}}, {{1, 1}, {2, -1}}})
	m := s.Model()
	if m.Mode != "standard" || !slices.Equal(m.Index, []uint32{1, 2}) ||
		!slices.Equal(m.Shift, []float64{1e6 + 2, 2}) || !slices.Equal(m.Div, []float64{1, 2}) {
		t.Errorf("model scaling %+v", m)
	}
}

// TestAuto: standard for dense data, none for sparse data within [-1, 1],
// maxabs for other sparse data.
func TestAuto(t *testing.T) {
	dense := csrOf([]float32{1, -1}, [][]entry{{{1, 5}, {2, 300}}, {{1, 7}, {2, 100}}})
	if s := mustFit(t, Auto, dense); s.Mode() != Standard {
		t.Errorf("dense: %s, want standard", s.Mode())
	}
	var rows [][]entry
	for r := range 20 {
		rows = append(rows, []entry{{uint32(r + 1), 0.5}})
	}
	labels := make([]float32, len(rows))
	if s, err := Fit(Auto, csrOf(labels, rows)); err != nil || s != nil {
		t.Errorf("sparse within [-1,1]: %v, %v; want no scaler", s, err)
	}
	rows[3][0].v = 40
	if s := mustFit(t, Auto, csrOf(labels, rows)); s.Mode() != MaxAbs {
		t.Errorf("sparse with a value 40: %s, want maxabs", s.Mode())
	}
	// minmax keeps zeros zero where every value is >= 0; a negative
	// minimum centres.
	if s := mustFit(t, MinMax, csrOf(labels, rows)); s.Centred() {
		t.Error("minmax of nonnegative sparse data is centred")
	}
	for r := range rows {
		rows[r][0].v = -rows[r][0].v
	}
	for _, mode := range []Mode{MinMax, Standard} {
		_, err := Fit(mode, csrOf(labels, rows))
		if !errors.Is(err, ErrDensify) {
			t.Errorf("%s on sparse data: %v, want ErrDensify", mode, err)
		}
	}
	if s, err := Fit(None, dense); s != nil || err != nil {
		t.Errorf("none: %v, %v", s, err)
	}
	if _, err := Fit("log", dense); !errors.Is(err, ErrMode) {
		t.Errorf("unknown mode: %v", err)
	}
}

// TestModelRoundTrip: a scaler read back from its model form (through the
// model file) scales every row bit for bit as the fitted one, with the
// lookup table and with binary search.
func TestModelRoundTrip(t *testing.T) {
	train := csrOf([]float32{1, -1, 1}, [][]entry{{{1, -3}, {2, 0.1}, {7, 9}}, {{1, 2}, {2, 0.3}}, {{2, 0.2}, {7, -1}}})
	test := csrOf([]float32{1, 1}, [][]entry{{{1, 5}, {2, 1}, {3, 4}, {7, 2}}, {}})
	for _, mode := range []Mode{MaxAbs, MinMax, Standard} {
		s := mustFit(t, mode, train)
		back, err := FromModel(s.Model())
		if err != nil {
			t.Fatal(err)
		}
		sparse := *back
		sparse.slot = nil // binary search
		for _, b := range []*Scaler{back, &sparse} {
			if got, want := fmt.Sprint(b.Apply(test)), fmt.Sprint(s.Apply(test)); got != want {
				t.Errorf("%s: read back scales %s, fitted scales %s", mode, got, want)
			}
		}
	}
	if _, err := FromModel(&model.Scaling{Mode: "log"}); !errors.Is(err, ErrMode) {
		t.Errorf("FromModel of mode log: %v", err)
	}
	if s, err := FromModel(nil); s != nil || err != nil {
		t.Errorf("FromModel(nil) = %v, %v", s, err)
	}
}

// TestLookupTableBounded: a model whose one kept feature is 2^32-1 gets no
// table of 2^32 entries.
func TestLookupTableBounded(t *testing.T) {
	s, err := FromModel(&model.Scaling{Mode: "maxabs", Index: []uint32{math.MaxUint32}, Shift: []float64{0}, Div: []float64{2}})
	if err != nil {
		t.Fatal(err)
	}
	if s.slot != nil {
		t.Fatalf("lookup table of %d entries for one feature", len(s.slot))
	}
	var r Row
	x := r.Scale(s, sparsevec.Vector{Idx: []uint32{3, math.MaxUint32}, Val: []float32{1, 4}})
	if !slices.Equal(x.Idx, []uint32{math.MaxUint32}) || !slices.Equal(x.Val, []float32{2}) {
		t.Errorf("scaled row %v", x)
	}
}

// TestRowAllocs: scaling a row into a sized buffer allocates nothing.
func TestRowAllocs(t *testing.T) {
	train := csrOf([]float32{1, -1}, [][]entry{{{1, -1}, {2, 3}}, {{2, 1}, {3, 2}}})
	for _, mode := range []Mode{MaxAbs, MinMax, Standard} {
		s := mustFit(t, mode, train)
		var r Row
		x := train.Row(1)
		r.Scale(s, x) // size the buffer
		if n := testing.AllocsPerRun(100, func() { r.Scale(s, x) }); n != 0 {
			t.Errorf("%s: %v allocations per row, want 0", mode, n)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": None, "none": None, "MaxAbs": MaxAbs, "standard": Standard, "auto": Auto, "minmax": MinMax} {
		if got, err := ParseMode(in); got != want || err != nil {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("zscore"); !errors.Is(err, ErrMode) {
		t.Errorf("ParseMode(zscore): %v", err)
	}
}

// TestFitWideIndex: statistics take memory for the stored features, not
// the largest index: a feature at 2^24 fits like a small one.
func TestFitWideIndex(t *testing.T) {
	train := csrOf([]float32{1, -1}, [][]entry{{{3, -2}, {1 << 24, 8}}, {{1 << 24, -4}}})
	s := mustFit(t, Standard, train)
	m := s.Model()
	if !slices.Equal(m.Index, []uint32{3, 1 << 24}) || !slices.Equal(m.Shift, []float64{-1, 2}) || !slices.Equal(m.Div, []float64{1, 6}) {
		t.Errorf("scaling %+v", m)
	}
	checkCSR(t, s.Apply(train), train.Labels, [][]entry{{{3, -1}, {1 << 24, 1}}, {{3, 1}, {1 << 24, -1}}})
}

// spreadRows returns n rows, label 1, storing each of the features 1 to
// 59 with probability 1/3, with values of every sign and of magnitudes up
// to about a thousand.
func spreadRows(rng *rand.Rand, n int) *sparsevec.CSR {
	var rows [][]entry
	var labels []float32
	for range n {
		var row []entry
		for j := uint32(1); j < 60; j++ {
			if rng.IntN(3) == 0 {
				row = append(row, entry{j, float32(rng.NormFloat64()) * float32(1+rng.IntN(1000))})
			}
		}
		rows, labels = append(rows, row), append(labels, 1)
	}
	return csrOf(labels, rows)
}

// The one-pass AppendRow of a scaler that keeps zeros zero gives the rows
// of the merge with the (empty) fill list, found by binary search: the
// same entries, bit for bit, including dropped features, features past
// the table and values that scale to 0.
func TestAppendRowKeptZeroAsMerge(t *testing.T) {
	train := spreadRows(rand.New(rand.NewPCG(9, 10)), 200)
	for _, mode := range []Mode{MaxAbs, MinMax} {
		s := mustFit(t, mode, train)
		if len(s.fill) > 0 && mode == MaxAbs {
			t.Fatalf("%s: fill %v", mode, s.fill)
		}
		if s.unshifted != (mode == MaxAbs) { // minmax: these features' minima are below 0
			t.Fatalf("%s: unshifted %v", mode, s.unshifted)
		}
		ref := *s
		ref.slot = nil // binary search and the merge
		for r := range train.Rows() {
			x := train.Row(r)
			x.Idx = append(slices.Clone(x.Idx), 70, 1000) // past the table
			x.Val = append(slices.Clone(x.Val), 5, 0)
			if len(x.Idx) > 2 { // a -0 and a NaN among the entries
				x.Val[r%2] = float32(math.Copysign(0, -1))
				x.Val[2] = float32(math.NaN())
			}
			gi, gv := s.AppendRow([]uint32{7}, []float32{7}, x)
			wi, wv := ref.AppendRow([]uint32{7}, []float32{7}, x)
			bits := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
			if !slices.Equal(gi, wi) || !slices.EqualFunc(gv, wv, bits) {
				t.Fatalf("%s row %d: %v %v, want %v %v", mode, r, gi, gv, wi, wv)
			}
		}
	}
}

// ScaleInPlace keeps the entries AppendRow gives, bit for bit, through
// the divisor table, the feature table and binary search, on rows with
// dropped features, features past the table, -0, NaN and values that
// scale to 0; a centred scaler refuses it.
func TestScaleInPlaceAsAppendRow(t *testing.T) {
	train := spreadRows(rand.New(rand.NewPCG(15, 16)), 100)
	s := mustFit(t, MaxAbs, train)
	noDiv, search := *s, *s
	noDiv.divAt = nil
	search.divAt, search.slot = nil, nil
	bits := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	for name, sc := range map[string]*Scaler{"divisors": s, "table": &noDiv, "search": &search} {
		for r := range train.Rows() {
			x := train.Row(r)
			x.Idx = append(slices.Clone(x.Idx), 70, 1000)
			x.Val = append(slices.Clone(x.Val), 5, 1e-45)
			if len(x.Idx) > 3 {
				x.Val[0] = float32(math.Copysign(0, -1))
				x.Val[1] = float32(math.NaN())
				x.Val[2] = 1e-45 // scales to 0
			}
			wi, wv := s.AppendRow(nil, nil, x)
			gi, gv := slices.Clone(x.Idx), slices.Clone(x.Val)
			n := sc.ScaleInPlace(gi, gv)
			if !slices.Equal(gi[:n], wi) || !slices.EqualFunc(gv[:n], wv, bits) {
				t.Fatalf("%s row %d: %v %v, want %v %v", name, r, gi[:n], gv[:n], wi, wv)
			}
		}
	}
	centred := mustFit(t, Standard, csrOf([]float32{1, 1}, [][]entry{{{1, 1}}, {{1, 3}}}))
	if !centred.Centred() {
		t.Fatal("standard scaling of a stored feature should centre")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("ScaleInPlace with a centred scaler did not panic")
		}
	}()
	centred.ScaleInPlace([]uint32{1}, []float32{2})
}

// FitBlocks over the rows cut into blocks fits the scaler Fit fits on
// them as one CSR, bit for bit, in every mode, with and without the
// feature table (a wide index).
func TestFitBlocksMatchesFit(t *testing.T) {
	for _, wide := range []bool{false, true} {
		var rows [][]entry
		labels := make([]float32, 40)
		for r := range labels {
			var row []entry
			for j := uint32(1 + r%3); j < 30; j += uint32(1 + (r*7+int(j))%5) {
				row = append(row, entry{j, float32(r*int(j)%17) - 6.5})
			}
			if wide && r%9 == 0 {
				row = append(row, entry{1 << 28, float32(r)})
			}
			rows = append(rows, row)
		}
		data := csrOf(labels, rows)
		for _, mode := range []Mode{MaxAbs, MinMax, Standard, Auto} {
			want, werr := Fit(mode, data)
			got, gerr := FitBlocks(mode, func(yield func(*sparsevec.CSR) bool) {
				for lo := 0; lo < data.Rows(); lo += 7 {
					perm := make([]int32, 0, 7)
					for r := lo; r < min(lo+7, data.Rows()); r++ {
						perm = append(perm, int32(r))
					}
					if !yield(data.Permute(perm)) {
						return
					}
				}
			})
			if (werr == nil) != (gerr == nil) || (want == nil) != (got == nil) {
				t.Fatalf("wide %v, %s: FitBlocks gives %v, %v; Fit %v, %v", wide, mode, got, gerr, want, werr)
			}
			if want != nil && fmt.Sprint(want.Model()) != fmt.Sprint(got.Model()) {
				t.Errorf("wide %v, %s: FitBlocks %+v, Fit %+v", wide, mode, got.Model(), want.Model())
			}
		}
	}
}

// Every layout of collect's statistics gives the same statistics, bit for
// bit, on data where each would be chosen (dense, a table, sorted) and on
// rows with -0, repeated values and features stored in some rows only.
func TestCollectLayoutsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, maxIdx := range []uint32{40, 5000, 1 << 22} {
		var rows [][]entry
		var labels []float32
		for range 300 {
			var row []entry
			for j := uint32(1); j < 40; j++ {
				if rng.IntN(4) != 0 {
					continue
				}
				v := float32(rng.IntN(7)) - 3
				if rng.IntN(10) == 0 {
					v = float32(math.Copysign(0, -1))
				}
				row = append(row, entry{j * (maxIdx / 40), v})
			}
			rows, labels = append(rows, row), append(labels, 1)
		}
		data := csrOf(labels, rows)
		blocks := func(yield func(*sparsevec.CSR) bool) { yield(data) }
		want := collectAs(blocks, func(int64, int) layout { return sortedLayout })
		for _, l := range []layout{denseLayout, tableLayout} {
			got := collectAs(blocks, func(int64, int) layout { return l })
			if !slices.Equal(got.feat, want.feat) || got.maxAbs != want.maxAbs || got.rows != want.rows || got.nnz != want.nnz {
				t.Fatalf("max index %d, layout %d: features %v (max |x| %v), want %v (%v)", maxIdx, l, got.feat, got.maxAbs, want.feat, want.maxAbs)
			}
			for k := range want.acc {
				g, w := got.acc[k], want.acc[k]
				same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
				if g.count != w.count || !same(g.lo, w.lo) || !same(g.hi, w.hi) || !same(g.sum, w.sum) {
					t.Fatalf("max index %d, layout %d, feature %d: %+v, want %+v", maxIdx, l, want.feat[k], g, w)
				}
			}
			if k := len(got.feat) / 2; got.pos(got.feat[k]) != k {
				t.Fatalf("layout %d: pos(%d) = %d, want %d", l, got.feat[k], got.pos(got.feat[k]), k)
			}
		}
		if got := chooseLayout(int64(maxIdx)+1, data.NNZ()); got != [...]layout{denseLayout, tableLayout, sortedLayout}[slices.Index([]uint32{40, 5000, 1 << 22}, maxIdx)] {
			t.Errorf("max index %d, %d entries: layout %d chosen", maxIdx, data.NNZ(), got)
		}
	}
}
