package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/polyhedral/cpm/sparsevec"
)

// Shape of the rcv1 data set.
const (
	// RCV1Dim is the number of features (stemmed words) of LIBSVM's
	// rcv1.binary.
	RCV1Dim = 47_236
	// RCV1TrainRows and RCV1TestRows are the sizes of rcv1.binary's training
	// set (Lewis et al.'s LYRL2004 training split) and test set.
	RCV1TrainRows = 20_242
	RCV1TestRows  = 677_399
	// RCV1Noise is the probability that a document's label is flipped.
	RCV1Noise = 0.025
)

// rcv1Topics are the four top-level RCV1 topics; CCAT and ECAT make the
// positive class of rcv1.binary. The priors give 52% positives.
var rcv1Topics = [4]struct {
	name     string
	prior    float64
	positive bool
}{
	{"CCAT", 0.31, true}, {"ECAT", 0.21, true}, {"GCAT", 0.26, false}, {"MCAT", 0.22, false},
}

// Vocabulary and document model of RCV1 (see the RCV1 doc comment).
const (
	rcv1TopicWords = 2500 // words of each topic's vocabulary
	rcv1GroupWords = 1500 // words shared by the two topics of a class
	rcv1Background = 0.55 // share of background tokens
	rcv1GroupShare = 0.10 // share of class-vocabulary tokens
	rcv1LogLength  = 4.3  // mean of ln(tokens per document)
	rcv1LogSpread  = 0.6  // deviation of ln(tokens per document)
	rcv1MaxTokens  = 1500 // cap on tokens per document
)

// RCV1Config selects the rows of NewRCV1. The zero value is the training
// split.
type RCV1Config struct {
	Split Split
}

// RCV1 is an RCV1-binary-like data set in the shape of LIBSVM's rcv1.binary
// (Lewis, Yang, Rose and Li, "RCV1: A new benchmark collection for text
// categorization research", JMLR 5, 2004): 20,242 training and 677,399 test
// documents over 47,236 features, about 75 nonzeros per row, tf-idf values
// scaled to unit L2 norm, and about 52% positives (CCAT and ECAT against
// GCAT and MCAT, the task of the CPM paper's RCV1-bin).
//
// A document is a bag of tokens from a mixture of vocabularies, each with
// Zipf frequencies (zipf, exponent 1):
//
//   - a topic t ∈ {CCAT, ECAT, GCAT, MCAT} with priors 0.31, 0.21, 0.26,
//     0.22, and a distracting other topic t′ chosen uniformly;
//   - L tokens, ln L normal with mean 4.3 and deviation 0.6 (L in 8..1500);
//   - each token is a background word (all 47,236 words, share 0.55), a word
//     of the vocabulary of t's class (1,500 words shared by the two topics of
//     a class, share 0.10), of t's own vocabulary (2,500 words) with share π
//     uniform in [0.05, 0.35], or else of the vocabulary of t′.
//
// The vocabularies are random sets of words and the background ranks a random
// permutation of all of them, drawn from the seed. Term weights are Lewis et
// al.'s ltc: (1 + ln tf)·idf with idf = ln(1 + 1/df), where df is the
// probability under this model that a document holds the word (computed in
// closed form, not counted), then each row is scaled to unit L2 norm. The
// label is +1 for CCAT and ECAT and -1 otherwise, flipped with probability
// RCV1Noise = 2.5%.
//
// Row i of the training and of the test split come from PCGs seeded by
// (seed, i) with different stream tags; the vocabularies depend on the seed
// alone.
type RCV1 struct {
	seed uint64
	tag  uint64

	zBack, zTopic, zGroup zipf
	back                  []uint32    // background rank -> word (1-based index)
	topic                 [4][]uint32 // topic vocabulary rank -> word
	group                 [2][]uint32 // class vocabulary rank -> word (0: positive)
	idf                   []float64   // idf[word]
}

// NewRCV1 returns the rcv1 data set of the given seed. It returns an error
// for a split other than Train and Test.
func NewRCV1(seed uint64, cfg RCV1Config) (*RCV1, error) {
	d := &RCV1{seed: seed}
	switch cfg.Split {
	case Train:
		d.tag = tagRCV1Train
	case Test:
		d.tag = tagRCV1Test
	default:
		return nil, fmt.Errorf("rcv1: %w: %v", ErrNoSplit, cfg.Split)
	}
	var src rand.PCG
	seedPCG(&src, seed, tagRCV1Model, 0)
	rng := rand.New(&src)
	words := func(n int) []uint32 {
		out := make([]uint32, n)
		for i, p := range rng.Perm(RCV1Dim)[:n] {
			out[i] = uint32(p + 1)
		}
		return out
	}
	d.back = words(RCV1Dim)
	for t := range d.topic {
		d.topic[t] = words(rcv1TopicWords)
	}
	for g := range d.group {
		d.group[g] = words(rcv1GroupWords)
	}
	d.zBack = newZipf(RCV1Dim, 1)
	d.zTopic = newZipf(rcv1TopicWords, 1)
	d.zGroup = newZipf(rcv1GroupWords, 1)
	d.computeIDF()
	return d, nil
}

// computeIDF sets d.idf from the model: a token of a document of topic t is
// word w with probability q_t(w) (averaging π over [0.05, 0.35] and t' over
// the other three topics), the document holds w with probability
// 1 - exp(-L̄·q_t(w)) for the mean length L̄, and df(w) averages that over
// the topic priors.
func (d *RCV1) computeIDF() {
	meanLen := math.Exp(rcv1LogLength + rcv1LogSpread*rcv1LogSpread/2)
	const meanPi = 0.2
	rest := 1 - rcv1Background - rcv1GroupShare - meanPi // share of t'
	var groups [2][]float64
	pb := make([]float64, RCV1Dim+1)
	for r, w := range d.back {
		pb[w] = rcv1Background * d.zBack.prob(r)
	}
	pt := make([][]float64, 4)
	for t := range pt {
		pt[t] = make([]float64, RCV1Dim+1)
		for r, w := range d.topic[t] {
			pt[t][w] += d.zTopic.prob(r)
		}
	}
	for g := range groups {
		groups[g] = make([]float64, RCV1Dim+1)
		for r, w := range d.group[g] {
			groups[g][w] += rcv1GroupShare * d.zGroup.prob(r)
		}
	}
	d.idf = make([]float64, RCV1Dim+1)
	for w := 1; w <= RCV1Dim; w++ {
		var df float64
		for t, tp := range rcv1Topics {
			g := 1
			if tp.positive {
				g = 0
			}
			q := pb[w] + groups[g][w] + meanPi*pt[t][w]
			for o := range pt {
				if o != t {
					q += rest / 3 * pt[o][w]
				}
			}
			df += tp.prior * (1 - math.Exp(-meanLen*q))
		}
		d.idf[w] = math.Log(1 + 1/max(df, 1e-12))
	}
}

// Dim returns RCV1Dim.
func (d *RCV1) Dim() int { return RCV1Dim }

// NewWorker returns a worker making rows of d.
func (d *RCV1) NewWorker() Worker { return d.newWorker() }

func (d *RCV1) newWorker() *rcv1Worker {
	w := &rcv1Worker{d: d, tf: make([]uint16, RCV1Dim+1)}
	w.rng = rand.New(&w.src)
	w.idx = make([]uint32, 0, rcv1MaxTokens)
	w.val = make([]float32, 0, rcv1MaxTokens)
	w.wt = make([]float64, 0, rcv1MaxTokens)
	return w
}

// rcv1Worker holds one goroutine's scratch space; nothing is allocated per
// row.
type rcv1Worker struct {
	d       *RCV1
	src     rand.PCG
	rng     *rand.Rand // reads src
	tf      []uint16   // term counts of the current document, all 0 between rows
	idx     []uint32
	val     []float32
	wt      []float64
	topic   int  // topic of the last row
	flipped bool // the last row's label was flipped by noise
}

// Row returns row i of the split.
func (w *rcv1Worker) Row(i int64) (float32, sparsevec.Vector) {
	if i < 0 {
		panic("synth: rcv1: negative row")
	}
	d := w.d
	seedPCG(&w.src, d.seed, d.tag, i)
	rng := w.rng

	// Topic, distractor, topic share and length.
	u := rng.Float64()
	t := len(rcv1Topics) - 1
	for k, tp := range rcv1Topics {
		if u < tp.prior {
			t = k
			break
		}
		u -= tp.prior
	}
	other := rng.IntN(3)
	if other >= t {
		other++
	}
	g := 1
	if rcv1Topics[t].positive {
		g = 0
	}
	pi := 0.05 + 0.3*rng.Float64()
	n := int(math.Round(math.Exp(rcv1LogLength + rcv1LogSpread*rng.NormFloat64())))
	n = min(max(n, 8), rcv1MaxTokens)

	// Tokens.
	idx := w.idx[:0]
	for range n {
		var word uint32
		switch u := rng.Float64(); {
		case u < rcv1Background:
			word = d.back[d.zBack.rank(rng.Float64())]
		case u < rcv1Background+rcv1GroupShare:
			word = d.group[g][d.zGroup.rank(rng.Float64())]
		case u < rcv1Background+rcv1GroupShare+pi:
			word = d.topic[t][d.zTopic.rank(rng.Float64())]
		default:
			word = d.topic[other][d.zTopic.rank(rng.Float64())]
		}
		if w.tf[word] == 0 {
			idx = append(idx, word)
		}
		w.tf[word]++
	}
	slices.Sort(idx)

	// ltc weights, unit norm.
	wt := w.wt[:0]
	var ss float64
	for _, j := range idx {
		v := (1 + math.Log(float64(w.tf[j]))) * d.idf[j]
		w.tf[j] = 0
		wt = append(wt, v)
		ss += v * v
	}
	inv := 1 / math.Sqrt(ss)
	val := w.val[:0]
	for _, v := range wt {
		val = append(val, float32(v*inv))
	}
	w.idx, w.val, w.wt = idx, val, wt

	y := float32(-1)
	if rcv1Topics[t].positive {
		y = 1
	}
	w.topic = t
	w.flipped = uniform01(&w.src) < RCV1Noise
	if w.flipped {
		y = -y
	}
	return y, sparsevec.Vector{Idx: idx, Val: val}
}
