package synth

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/polyhedral/cpm/internal/rng"
)

// Split selects the training or the test part of a generated data set.
// The zero value is Train.
type Split int

// The splits.
const (
	Train Split = iota
	Test
)

// String returns "train" or "test".
func (s Split) String() string {
	switch s {
	case Train:
		return "train"
	case Test:
		return "test"
	}
	return "Split(" + strconv.Itoa(int(s)) + ")"
}

// ErrNoSplit is returned, wrapped, by NewSource for a split the data set does
// not have (mnist8m has no test split: its test set is MNIST's own).
var ErrNoSplit = errors.New("synth: data set has no such split")

// Info describes a large generated data set (NewSource). Each generator's
// doc comment gives the shape it imitates and where the figures come from.
type Info struct {
	Name string
	// Doc is one line for help texts.
	Doc string
	// Dim is the number of features: indices are 1..Dim.
	Dim int
	// TrainRows and TestRows are the default numbers of rows of each
	// split, the sizes of the data set imitated. TestRows is 0 when the
	// data set has no test split.
	TrainRows, TestRows int64
	// MNIST is true when the data set is made from the MNIST training
	// images (NewSource needs Digits).
	MNIST bool
}

// Rows returns the default number of rows of split s (0 if there is no such
// split).
func (in Info) Rows(s Split) int64 {
	switch s {
	case Train:
		return in.TrainRows
	case Test:
		return in.TestRows
	}
	return 0
}

// generated lists the data sets of NewSource.
var generated = []Info{
	{
		Name: "mnist8m", Dim: MNISTPixels, TrainRows: MNIST8mRows, MNIST: true,
		Doc: "generated MNIST8m-like digits (Loosli, Canu & Bottou 2007): each MNIST training image and 134 elastic+affine+thickness deformations of it, labels 0..9",
	},
	{
		Name: "mnist8m-2", Dim: MNISTPixels, TrainRows: MNIST8mRows, MNIST: true,
		Doc: "generated MNIST8m-2: mnist8m labelled +1 for digit 2 and -1 otherwise (the CPM paper's MNIST8m-2 task)",
	},
	{
		Name: "url", Dim: URLDim, TrainRows: URLTrainRows, TestRows: URLTestRows,
		Doc: "generated URL-reputation-like data (Ma et al. 2009, LIBSVM url_combined): 64 real + Zipf binary lexical/host features, ~33% positive, planted 8-face polytope rule, 1% noise",
	},
	{
		Name: "rcv1", Dim: RCV1Dim, TrainRows: RCV1TrainRows, TestRows: RCV1TestRows,
		Doc: "generated RCV1-binary-like documents (Lewis et al. 2004, LIBSVM rcv1.binary): 4 Zipf topics, tf-idf, unit norm, CCAT+ECAT vs GCAT+MCAT, ~52% positive, 2.5% noise",
	},
}

// Generated returns the data sets NewSource makes, in a fixed order.
func Generated() []Info { return append([]Info(nil), generated...) }

// LookupGenerated returns the Info of a data set of NewSource. An unknown
// name gives an error wrapping ErrUnknown.
func LookupGenerated(name string) (Info, error) {
	for _, in := range generated {
		if in.Name == name {
			return in, nil
		}
	}
	var names []string
	for _, in := range generated {
		names = append(names, in.Name)
	}
	return Info{}, fmt.Errorf("%w %q (valid: %s)", ErrUnknown, name, strings.Join(names, ", "))
}

// NewSource returns the generated data set name (see Generated) for the given
// seed and split. digits, the MNIST training images, is needed by the MNIST
// data sets and ignored by the others. Unknown names wrap ErrUnknown, a
// missing split wraps ErrNoSplit.
func NewSource(name string, seed uint64, split Split, digits *Digits) (Source, error) {
	in, err := LookupGenerated(name)
	if err != nil {
		return nil, err
	}
	if split != Train && split != Test {
		return nil, fmt.Errorf("%w: %v", ErrNoSplit, split)
	}
	if in.Rows(split) == 0 {
		return nil, fmt.Errorf("%s: %w %v", name, ErrNoSplit, split)
	}
	switch name {
	case "mnist8m", "mnist8m-2":
		if digits == nil {
			return nil, fmt.Errorf("%s: no MNIST digits given", name)
		}
		return NewMNIST8m(digits, seed, MNIST8mConfig{Binary: name == "mnist8m-2"})
	case "url":
		return NewURL(seed, URLConfig{Split: split})
	case "rcv1":
		return NewRCV1(seed, RCV1Config{Split: split})
	}
	panic("synth: NewSource: generated lists " + name + " but NewSource does not make it")
}

// Stream tags: the second argument of seedPCG, one per kind of random
// numbers, so that no two uses of a seed share a PCG stream.
const (
	tagMNIST8m   = 0x6d6e697374386d // "mnist8m"
	tagURLRule   = 0x75726c72756c65 // "urlrule"
	tagURLTrain  = 0x75726c74726e   // "urltrn"
	tagURLTest   = 0x75726c747374   // "urltst"
	tagRCV1Model = 0x726376316d646c // "rcv1mdl"
	tagRCV1Train = 0x72637631747276 // "rcv1trv"
	tagRCV1Test  = 0x72637631747374 // "rcv1tst"
)

// seedPCG seeds src for item i (a row, or 0 for a data set's parameters) of
// the stream tag under the user's seed:
//
//	src.Seed(SplitMix64(seed ^ SplitMix64(tag)), SplitMix64(i))
//
// with SplitMix64 the output of one SplitMix64 step (rng.SplitMix64). Both
// PCG state words go through it so that consecutive rows start from
// unrelated states.
func seedPCG(src *rand.PCG, seed, tag uint64, i int64) {
	src.Seed(rng.SplitMix64(seed^rng.SplitMix64(tag)), rng.SplitMix64(uint64(i)))
}

// unit32 returns two uniform numbers in [-1, 1) from one draw of src, each
// a multiple of 2^-31.
func unit32(src *rand.PCG) (a, b float32) {
	u := src.Uint64()
	return float32(int32(u)) * 0x1p-31, float32(int32(u>>32)) * 0x1p-31
}

// uniform01 returns a uniform number in [0, 1), a multiple of 2^-53.
func uniform01(src *rand.PCG) float64 {
	return float64(src.Uint64()>>11) * 0x1p-53
}
