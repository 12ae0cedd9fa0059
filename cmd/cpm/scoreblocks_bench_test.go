package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// benchBlock returns a block of n MNIST-like rows: 150 ascending pixel
// indices in 1..784, values in (0, 1], labels ±1.
func benchBlock(rng *rand.Rand, n int) *sparsevec.CSR {
	b := &sparsevec.CSR{Ptr: []int{0}, Dim: 785}
	for range n {
		seen := map[uint32]bool{}
		for len(seen) < 150 {
			seen[1+uint32(rng.IntN(784))] = true
		}
		var x sparsevec.Vector
		for j := uint32(1); j < 785; j++ {
			if seen[j] {
				x.Idx = append(x.Idx, j)
				x.Val = append(x.Val, 1-rng.Float32())
			}
		}
		b.Append(float32(1-2*rng.IntN(2)), x)
	}
	return b
}

// benchModel returns a binary CPM of K = 10 faces with random weights
// over 785 feature rows, the shape of the MNIST-2 model.
func benchModel(rng *rand.Rand) *model.Model {
	m := &model.Model{Learner: "cpm", Sides: 1, K: 10, D: 785, Bias: 1, Iterations: 1, Classes: []float32{1, -1}}
	w := sparsevec.NewMatrix(m.D, m.K)
	for j := range m.D {
		for k := range m.K {
			w.Set(j, k, 200*rng.Float32()-100)
		}
	}
	m.Weights = []*sparsevec.Matrix{w}
	return m
}

// BenchmarkScoreRows scores a block of 4096 rows with the binary K = 10
// model on one goroutine: labels and faces only (eval), and with each
// line of the scores file in every format; rows/s is per core.
func BenchmarkScoreRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, blk := benchModel(rng), benchBlock(rng, 4096)
	for _, c := range []struct {
		name string
		so   *scoreOpts
	}{
		{"eval", nil},
		{"libsvm", &scoreOpts{format: formatLIBSVM}},
		{"libsvm-face", &scoreOpts{format: formatLIBSVM, face: true}},
		{"csv", &scoreOpts{format: formatCSV}},
		{"jsonl", &scoreOpts{format: formatJSONL, face: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			score := benchScorer(b, m, blk, c.so)
			b.ReportAllocs()
			for b.Loop() {
				score()
			}
			b.ReportMetric(float64(b.N)*float64(blk.Rows())/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// benchScorer returns a function scoring blk with m as evaluate does,
// writing lines as so says (nil: none) to a discarding bufio.Writer.
func benchScorer(b *testing.B, m *model.Model, blk *sparsevec.CSR, so *scoreOpts) func() {
	mk, err := newRowOutputsMaker(m, false, false)
	if err != nil {
		b.Fatal(err)
	}
	o, err := mk.new()
	if err != nil {
		b.Fatal(err)
	}
	var sj scoreJob
	if so != nil {
		sj.lines = newRowFormat(*so, m.Classes)
	}
	j := &blockScores{b: blk, hi: blk.Rows(), last: true}
	out := bufio.NewWriterSize(io.Discard, 1<<16)
	score := func() {
		j.score(o, sj)
		out.Write(j.lines)
	}
	score() // grow the buffers
	return score
}

// BenchmarkScoreBlocks scores 16 blocks of 4096 rows held in memory with
// scoreBlocks on 1 and on GOMAXPROCS workers, writing libsvm lines to a
// discarding bufio.Writer in input order: the parallel speed-up of
// predict on input that costs nothing to read. rows/s is per run, all
// cores together.
func BenchmarkScoreBlocks(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, blk := benchModel(rng), benchBlock(rng, 4096)
	so := scoreOpts{format: formatLIBSVM}
	for _, workers := range []int{1, scoreWorkers()} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			mk, err := newRowOutputsMaker(m, false, false)
			if err != nil {
				b.Fatal(err)
			}
			outs := make([]*rowOutputs, workers)
			for w := range outs {
				if outs[w], err = mk.new(); err != nil {
					b.Fatal(err)
				}
			}
			sj := scoreJob{lines: newRowFormat(so, m.Classes)}
			out := bufio.NewWriterSize(io.Discard, 1<<16)
			score := func(w int, j *blockScores) { j.score(outs[w], sj) }
			consume := func(j *blockScores) error { _, err := out.Write(j.lines); return err }
			for b.Loop() {
				st := &memBlocks{b: blk, n: 16}
				if err := scoreBlocks(context.Background(), st, workers, score, consume); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*16*float64(blk.Rows())/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// memBlocks hands out one block n times.
type memBlocks struct {
	b *sparsevec.CSR
	n int
}

func (s *memBlocks) Next() (*sparsevec.CSR, error) {
	if s.n == 0 {
		return nil, io.EOF
	}
	s.n--
	return s.b, nil
}

func (s *memBlocks) Release(*sparsevec.CSR) {}
func (s *memBlocks) Close() error           { return nil }
