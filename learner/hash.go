package learner

import (
	"fmt"

	"github.com/polyhedral/cpm/featurehash"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// hashFlag is --hash-bits, read by every learner: feature hashing
// (package featurehash), applied to the training rows before the scaling
// is fitted and stored in the model, so that the model takes raw rows.
var hashFlag = flagDef{Name: "hash-bits", Kind: intFlag, Default: "0",
	Usage: "feature hashing: map feature j to row 1 + (murmur3(j) mod 2^B), summing the features of a row that collide, before scaling; the model then has at most 2^B + 1 rows whatever the indices (B from 1 to 31; 0: off)",
	Check: func(f *Flags) error {
		if b := f.Int("hash-bits"); b < 0 || b > featurehash.MaxBits {
			return fmt.Errorf("--hash-bits %d: want 1 to %d, or 0 for no hashing", b, featurehash.MaxBits)
		}
		return nil
	}}

// hashSeed is the murmur3 seed of the feature hashing Train applies.
const hashSeed = 0

// Hasher returns the feature hashing a run of s on rows applies (nil for
// none): s.HashBits, or, for a warm start (init non-nil), the hashing of
// the initial model, whose weights are in its hashed space; s.HashBits
// naming another number of bits is then an error.
func (s Spec) Hasher(init *model.Model) (*featurehash.Hasher, error) {
	if init == nil {
		if s.HashBits == 0 {
			return nil, nil
		}
		h, err := featurehash.New(s.HashBits, hashSeed)
		if err != nil {
			return nil, fmt.Errorf("learner: --hash-bits: %w", err)
		}
		return h, nil
	}
	have := 0
	if init.Hash != nil {
		have = init.Hash.Bits
	}
	if s.HashBits != 0 && s.HashBits != have {
		return nil, fmt.Errorf("learner: --hash-bits %d: the initial model was trained with --hash-bits %d, and a warm start keeps its hashing", s.HashBits, have)
	}
	return hasherOf(init.Hash)
}

// hasherOf returns the hasher a model stores (nil for none).
func hasherOf(h *model.Hashing) (*featurehash.Hasher, error) {
	if h == nil {
		return nil, nil
	}
	return featurehash.New(h.Bits, h.Seed)
}

// HashingOf returns h as a model stores it (nil for nil).
func HashingOf(h *featurehash.Hasher) *model.Hashing {
	if h == nil {
		return nil
	}
	return &model.Hashing{Bits: h.Bits(), Seed: h.Seed()}
}

// hashing returns the hasher of a run of learner l (nil: none) and the
// rows to train on: data itself without hashing, else a hashed copy.
func (s Spec) hashing(l *registration, data *sparsevec.CSR) (*featurehash.Hasher, *sparsevec.CSR, error) {
	var init *model.Model
	if l.initModel != nil {
		init = l.initModel(s.Config)
	}
	h, err := s.Hasher(init)
	if err != nil || h == nil {
		return nil, data, err
	}
	return h, h.Apply(data), nil
}

// HashInput returns the streamed training input in with every block's rows
// hashed by h (nil: in itself), for sgd.TrainStream. Each polytope hashes
// the blocks of its passes into buffers of its own and gives the source's
// block back at once.
func HashInput(in sgd.Input, h *featurehash.Hasher) sgd.Input {
	if h == nil {
		return in
	}
	return &hashedInput{in: in, h: h}
}

type hashedInput struct {
	in sgd.Input
	h  *featurehash.Hasher
}

func (in *hashedInput) Open(i int) (sgd.Blocks, error) {
	b, err := in.in.Open(i)
	if err != nil {
		return nil, err
	}
	return &hashedBlocks{Blocks: b, h: in.h}, nil
}

func (in *hashedInput) Leave(i int) { in.in.Leave(i) }

// hashedBlocks hashes the blocks of one pass. The block it hands out is
// reused after Release.
type hashedBlocks struct {
	sgd.Blocks
	h    *featurehash.Hasher
	row  featurehash.Row
	free []*sparsevec.CSR
}

func (b *hashedBlocks) Next() (*sparsevec.CSR, error) {
	src, err := b.Blocks.Next()
	if err != nil {
		return nil, err
	}
	dst := &sparsevec.CSR{}
	if n := len(b.free); n > 0 {
		dst, b.free = b.free[n-1], b.free[:n-1]
	}
	b.h.ApplyTo(dst, src, &b.row)
	b.Blocks.Release(src)
	return dst, nil
}

func (b *hashedBlocks) Release(c *sparsevec.CSR) { b.free = append(b.free, c) }
