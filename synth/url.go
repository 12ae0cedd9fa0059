package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/polyhedral/cpm/sparsevec"
)

// Shape of the url data set.
const (
	// URLDim is the number of features of LIBSVM's url_combined.
	URLDim = 3_231_961
	// URLTrainRows and URLTestRows split url_combined's 2,396,130 rows in
	// half; the CPM paper (Kantchelian et al. 2014, section 5) reports
	// "1.1 million training and 1.1 million testing instances".
	URLTrainRows = 1_198_065
	URLTestRows  = 1_198_065
	// URLReal is the number of real-valued features, indices 1..64.
	URLReal = 64
	// URLFaces is the number of hyperplanes of the planted rule.
	URLFaces = 8
	// URLPositive is the target fraction of positive rows before noise.
	URLPositive = 0.33
	// URLNoise is the probability that a row's label is flipped.
	URLNoise = 0.01
	// URLMargin is the margin of the planted rule, in units of the
	// spread of a face's score: rows closer to the boundary are redrawn.
	URLMargin = 0.3
)

// urlGroup is a block of binary features with Zipf-like frequencies.
type urlGroup struct {
	size         int     // features in the block
	drawLo, draw int     // a row draws drawLo..drawLo+draw-1 ranks, uniformly
	s            float64 // Zipf exponent (see zipf)
}

// urlGroups partition the indices URLReal+1..URLDim, in this order.
var urlGroups = [...]urlGroup{
	{size: 400_000, drawLo: 8, draw: 9, s: 1.0},                      // host name tokens
	{size: 2_000_000, drawLo: 32, draw: 33, s: 1.1},                  // path and query tokens
	{size: URLDim - URLReal - 2_400_000, drawLo: 14, draw: 11, s: 1}, // host-based: WHOIS, IP prefix, AS, geography
}

// urlMaxBinary bounds the binary features of one row.
const urlMaxBinary = 8 + 8 + 32 + 32 + 14 + 10

// urlCalibration is the number of rows NewURL draws to calibrate the rule.
const urlCalibration = 1 << 15

// URLConfig selects the rows of NewURL. The zero value is the training split.
type URLConfig struct {
	Split Split
}

// URL is a URL-reputation-like data set in the shape of LIBSVM's url_combined
// (Ma, Saul, Savage and Voelker, "Identifying suspicious URLs: an application
// of large-scale online learning", ICML 2009, and "Beyond blacklists", KDD
// 2009): 2,396,130 rows of 3,231,961 features, about 33% malicious, and on
// the order of 100-120 nonzeros per row. Like theirs, a row has a few dozen
// real-valued features and many sparse binary lexical and host-based ones:
//
//   - indices 1..16: lengths (of the URL, host name, path, tokens, ...):
//     lognormal with medians 12..72 characters, divided by 100 and written in
//     steps of 0.01; 1..6 always present, 7..16 with probability 0.85;
//   - 17..40: counts (dots, slashes, digits, ...): geometric with means
//     0.3..6.05, divided by 10 (omitted when 0);
//   - 41..64: magnitudes (WHOIS dates, TTLs, ...): present with probability
//     0.65, lognormal with medians 0.02..0.17 and log-deviation 1.3, capped
//     at 100, in steps of 0.001;
//   - 65..400,064: host name tokens, 8..16 draws per row, Zipf exponent 1;
//   - 400,065..2,400,064: path and query tokens, 32..64 draws, exponent 1.1;
//   - 2,400,065..3,231,961: host-based features (registrar, IP prefix, AS,
//     geography), 14..24 draws, exponent 1.
//
// Binary features have value 1; within a block the most frequent have the
// lowest indices (url_combined numbers features in order of appearance).
// Repeated draws count once, which leaves about 116 nonzeros per row on
// average, 47 of them real-valued (TestURLShape).
//
// The label is a planted polytope rule: with URLFaces = 8 sparse hyperplanes
// h_k(x) = a_k·x (each on 6 real-valued features, with standard normal
// weights divided by the feature's spread, and on 40 of the 2000 most frequent
// binary features of a block, with weights ±1..3, 70% positive), a row is
// positive, +1, when max_k (h_k(x) - b_k) > 0, that is when it lies outside
// the polytope {h_k ≤ b_k for all k} — exactly the form of a CPM with the
// negative class inside. The thresholds b_k are the same quantile of each
// face's score, chosen on 32,768 calibration rows so that 33% of the rows are
// positive. To make the rule learnable from samples, rows closer to the
// boundary than URLMargin = 0.3 (max_k (h_k - b_k)/ς_k with ς_k the spread
// of h_k: half its 16%-84% range) are redrawn, about 0.5 draws per row.
// Then 1% of the labels are flipped (URLNoise). A CPM of package sgd with
// K = 10 and C = 100 reaches 3.7% test error from 200,000 training rows and
// 2.6% from 300,000 (TestURLLearnable).
//
// The rule and the calibration rows come from PCGs seeded by the seed alone;
// row i of the training and of the test split from PCGs seeded by (seed, i)
// with different stream tags, so the splits are disjoint samples of the same
// distribution.
type URL struct {
	seed uint64
	tag  uint64 // stream tag of the rows of the split
	z    [len(urlGroups)]zipf
	base [len(urlGroups)]uint32 // index of rank 0 of each group, minus 1

	realW  [URLReal][URLFaces]float64 // realW[j-1][k]: weight of feature j in face k
	binIx  []uint32                   // sorted indices of binary features with a weight
	binSet []uint64                   // bit j set when j is in binIx
	binW   [][URLFaces]float64        // their weights
	bias   [URLFaces]float64          // b_k
	spread [URLFaces]float64          // spread of h_k (see plant)
}

// NewURL returns the url data set of the given seed. It returns an error for
// a split other than Train and Test.
func NewURL(seed uint64, cfg URLConfig) (*URL, error) {
	u := &URL{seed: seed}
	switch cfg.Split {
	case Train:
		u.tag = tagURLTrain
	case Test:
		u.tag = tagURLTest
	default:
		return nil, fmt.Errorf("url: %w: %v", ErrNoSplit, cfg.Split)
	}
	b := uint32(URLReal)
	for g, grp := range urlGroups {
		u.z[g] = newZipf(grp.size, grp.s)
		u.base[g] = b
		b += uint32(grp.size)
	}
	u.plant()
	return u, nil
}

// plant draws the rule and calibrates its thresholds.
func (u *URL) plant() {
	// Calibration rows, and the spread of each real-valued feature.
	w := u.newWorker()
	var sum, sq [URLReal]float64
	rows := make([]sparsevec.Vector, urlCalibration)
	for r := range rows {
		seedPCG(&w.src, u.seed, tagURLRule, int64(r)+1)
		x := w.features()
		rows[r] = sparsevec.Vector{Idx: slices.Clone(x.Idx), Val: slices.Clone(x.Val)}
		for k, j := range x.Idx {
			if j > URLReal {
				break
			}
			v := float64(x.Val[k])
			sum[j-1] += v
			sq[j-1] += v * v
		}
	}
	n := float64(len(rows))

	// The faces: 6 real-valued features with standard normal weights
	// divided by the feature's standard deviation, and 40 binary features
	// among the 2000 most frequent of a block (rank log-uniform, so that
	// frequent ones are favoured; blocks 25% host tokens, 60% path tokens,
	// 15% host-based), with weights of size 1..3, 70% of them positive.
	seedPCG(&w.src, u.seed, tagURLRule, 0)
	rng := w.rng
	bin := map[uint32][URLFaces]float64{}
	for k := range URLFaces {
		for _, j := range rng.Perm(URLReal)[:6] {
			sd := math.Sqrt(max(sq[j]/n-(sum[j]/n)*(sum[j]/n), 1e-12))
			u.realW[j][k] = rng.NormFloat64() / sd
		}
		for range 40 {
			g := 1
			switch p := rng.Float64(); {
			case p < 0.25:
				g = 0
			case p >= 0.85:
				g = 2
			}
			rank := int(math.Exp(rng.Float64() * math.Log(2000))) // 1..1999
			j := u.base[g] + uint32(rank)
			wt := bin[j]
			wt[k] = 1 + 2*rng.Float64()
			if rng.Float64() >= 0.7 {
				wt[k] = -wt[k]
			}
			bin[j] = wt
		}
	}
	for j := range bin {
		u.binIx = append(u.binIx, j)
	}
	slices.Sort(u.binIx) // the map's order plays no part
	u.binSet = make([]uint64, URLDim/64+1)
	for _, j := range u.binIx {
		u.binSet[j/64] |= 1 << (j % 64)
	}
	for _, j := range u.binIx {
		u.binW = append(u.binW, bin[j])
	}

	// Spread of each face's score: half its 16%-84% range (the standard
	// deviation for a normal score), the unit of the margin.
	scores := make([][URLFaces]float64, len(rows))
	sorted := make([][]float64, URLFaces)
	for k := range sorted {
		sorted[k] = make([]float64, len(rows))
	}
	for r, x := range rows {
		scores[r] = u.scores(x)
		for k := range URLFaces {
			sorted[k][r] = scores[r][k]
		}
	}
	for k := range sorted {
		slices.Sort(sorted[k])
		m := len(rows)
		u.spread[k] = max((sorted[k][m*84/100]-sorted[k][m*16/100])/2, 1e-9)
	}

	// Thresholds: the (1-q)-quantile of each face's score, with q found by
	// bisection so that a fraction URLPositive of the calibration rows
	// that lie outside the margin are positive.
	thresholds := func(q float64) (t [URLFaces]float64) {
		i := min(int((1-q)*n), len(rows)-1)
		for k := range t {
			t[k] = sorted[k][i]
		}
		return t
	}
	positive := func(q float64) float64 {
		u.bias = thresholds(q)
		pos, kept := 0, 0
		for _, s := range scores {
			m := u.margin(&s)
			if math.Abs(m) < URLMargin {
				continue
			}
			kept++
			if m > 0 {
				pos++
			}
		}
		return float64(pos) / float64(max(kept, 1))
	}
	lo, hi := 0.0, URLPositive
	for range 50 {
		mid := (lo + hi) / 2
		if positive(mid) < URLPositive {
			lo = mid
		} else {
			hi = mid
		}
	}
	u.bias = thresholds(hi)
}

// margin returns max_k (s_k - b_k)/spread_k: positive outside the polytope,
// and at least URLMargin in size for every row of the data set.
func (u *URL) margin(s *[URLFaces]float64) float64 {
	m := math.Inf(-1)
	for k := range s {
		m = max(m, (s[k]-u.bias[k])/u.spread[k])
	}
	return m
}

// scores returns h_k(x) for every face.
func (u *URL) scores(x sparsevec.Vector) (s [URLFaces]float64) {
	val := x.Val[:len(x.Idx)]
	for i, j := range x.Idx {
		v := float64(val[i])
		if j <= URLReal {
			w := &u.realW[j-1]
			for k := range s {
				s[k] += w[k] * v
			}
			continue
		}
		if u.binSet[j/64]&(1<<(j%64)) == 0 {
			continue
		}
		if p, ok := slices.BinarySearch(u.binIx, j); ok {
			w := &u.binW[p]
			for k := range s {
				s[k] += w[k] * v
			}
		}
	}
	return s
}

// Dim returns URLDim.
func (u *URL) Dim() int { return URLDim }

// NewWorker returns a worker making rows of u.
func (u *URL) NewWorker() Worker { return u.newWorker() }

func (u *URL) newWorker() *urlWorker {
	w := &urlWorker{u: u}
	w.rng = rand.New(&w.src)
	w.idx = make([]uint32, 0, URLReal+urlMaxBinary)
	w.val = make([]float32, 0, URLReal+urlMaxBinary)
	return w
}

// urlWorker holds one goroutine's scratch space; nothing is allocated per
// row.
type urlWorker struct {
	u       *URL
	src     rand.PCG
	rng     *rand.Rand // reads src
	idx     []uint32
	val     []float32
	flipped bool  // the last row's label was flipped by noise
	redrawn int64 // rows redrawn for lying within the margin, in all
}

// Row returns row i of the split.
func (w *urlWorker) Row(i int64) (float32, sparsevec.Vector) {
	if i < 0 {
		panic("synth: url: negative row")
	}
	seedPCG(&w.src, w.u.seed, w.u.tag, i)
	var x sparsevec.Vector
	var m float64
	for {
		x = w.features()
		s := w.u.scores(x)
		if m = w.u.margin(&s); math.Abs(m) >= URLMargin {
			break
		}
		w.redrawn++
	}
	y := float32(-1)
	if m > 0 {
		y = 1
	}
	w.flipped = uniform01(&w.src) < URLNoise
	if w.flipped {
		y = -y
	}
	return y, x
}

// features draws the features of one row from w.src.
func (w *urlWorker) features() sparsevec.Vector {
	rng := w.rng
	idx, val := w.idx[:0], w.val[:0]
	add := func(j int, v float64, step float64) {
		v = math.Round(v*step) / step
		if v > 0 {
			idx = append(idx, uint32(j))
			val = append(val, float32(v))
		}
	}
	for j := 1; j <= 16; j++ { // lengths
		present := j <= 6 || rng.Float64() < 0.85
		if present {
			median := 8 + 4*float64(j)
			add(j, median*math.Exp(0.45*rng.NormFloat64())/100, 100)
		}
	}
	for j := 17; j <= 40; j++ { // counts
		mean := 0.3 + 0.25*float64(j-17)
		p := mean / (1 + mean)
		k := math.Floor(math.Log(1-rng.Float64()) / math.Log(p))
		add(j, min(k, 1000)/10, 10)
	}
	for j := 41; j <= 64; j++ { // magnitudes
		if rng.Float64() < 0.65 {
			median := 0.02 * (1 + float64(j-41)/3)
			add(j, min(median*math.Exp(1.3*rng.NormFloat64()), 100), 1000)
		}
	}
	nreal := len(idx)
	for g := range urlGroups {
		grp := &urlGroups[g]
		n := grp.drawLo + rng.IntN(grp.draw)
		for range n {
			idx = append(idx, w.u.base[g]+1+uint32(w.u.z[g].rank(rng.Float64())))
		}
	}
	bin := idx[nreal:]
	slices.Sort(bin)
	bin = slices.Compact(bin)
	idx = idx[:nreal+len(bin)]
	for range bin {
		val = append(val, 1)
	}
	w.idx, w.val = idx, val
	return sparsevec.Vector{Idx: idx, Val: val}
}
