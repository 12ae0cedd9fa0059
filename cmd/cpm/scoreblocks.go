package main

import (
	"context"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// blockScores is one block of rows scored: each row's predicted label and
// face, its decision values and probabilities when eval's figures read
// them (keep), and the block's lines of the scores file (write). Its
// buffers are reused from block to block.
type blockScores struct {
	b      *sparsevec.CSR
	pred   []float32
	face   []int
	scores []float32 // rows × len(rowOutputs.scores), when kept
	probs  []float64 // rows × len(rowOutputs.probs), when kept and computed
	lines  []byte
	done   chan struct{}
}

// scoreJob says what scoring a block computes besides labels and faces.
type scoreJob struct {
	keep  bool       // each row's decision values and probabilities
	lines *rowFormat // the lines of the scores file; nil: none
}

// score predicts every row of j.b with o. It allocates only while j's
// buffers grow.
func (j *blockScores) score(o *rowOutputs, sj scoreJob) {
	n := j.b.Rows()
	j.pred = slices.Grow(j.pred[:0], n)[:n]
	j.face = slices.Grow(j.face[:0], n)[:n]
	j.scores, j.probs, j.lines = j.scores[:0], j.probs[:0], j.lines[:0]
	for r := range n {
		pred, face := o.predict(j.b.Row(r))
		j.pred[r], j.face[r] = pred, face
		if sj.keep {
			j.scores = append(j.scores, o.scores...)
			j.probs = append(j.probs, o.probs...)
		}
		if sj.lines != nil {
			j.lines = sj.lines.append(j.lines, pred, o.scores, face, o.probs)
		}
	}
}

// row returns row r's decision values and probabilities (nil when none
// were computed), as kept by score.
func (j *blockScores) row(r, nScores, nProbs int) ([]float32, []float64) {
	var p []float64
	if nProbs > 0 {
		p = j.probs[r*nProbs : (r+1)*nProbs]
	}
	return j.scores[r*nScores : (r+1)*nScores], p
}

// scoreWorkers is the number of goroutines scoreBlocks scores on by
// default: GOMAXPROCS.
func scoreWorkers() int { return runtime.GOMAXPROCS(0) }

// scoreBlocks reads the blocks of st, scores each with score(w, j) on
// goroutine w of workers, and hands them to consume in input order, so
// that what consume does (writing lines, adding up counts) comes out the
// same whatever the number of workers. st's Next and Release and consume
// are called on the calling goroutine. Input of one block, or workers
// below 2, is scored on the calling goroutine as w = 0; else workers
// goroutines score at most workers + 1 blocks at a time, within
// reader.StreamBlocks. ctx is checked before every block.
func scoreBlocks(ctx context.Context, st reader.BlockReader, workers int, score func(w int, j *blockScores), consume func(j *blockScores) error) error {
	var free []*blockScores
	next := func() (*blockScores, error) { // nil at the end
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := st.Next()
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		j := &blockScores{done: make(chan struct{}, 1)}
		if n := len(free); n > 0 {
			j, free = free[n-1], free[:n-1]
		}
		j.b = b
		return j, nil
	}
	finish := func(j *blockScores) error {
		err := consume(j)
		st.Release(j.b)
		j.b = nil
		free = append(free, j)
		return err
	}
	j, err := next()
	if err != nil || j == nil {
		return err
	}
	var j2 *blockScores
	if workers > 1 {
		if j2, err = next(); err != nil {
			return err
		}
	}
	if j2 == nil {
		for ; j != nil; j, err = next() {
			score(0, j)
			if err := finish(j); err != nil {
				return err
			}
		}
		return err
	}
	depth := max(2, min(workers+1, reader.StreamBlocks-1))
	work := make(chan *blockScores, depth)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := range work {
				score(w, j)
				j.done <- struct{}{}
			}
		})
	}
	defer func() { close(work); wg.Wait() }()
	queue := []*blockScores{j, j2}
	work <- j
	work <- j2
	for eof := false; len(queue) > 0; {
		for !eof && len(queue) < depth {
			j, err := next()
			if err != nil {
				return err
			}
			if eof = j == nil; !eof {
				queue = append(queue, j)
				work <- j
			}
		}
		j := queue[0]
		queue = append(queue[:0], queue[1:]...)
		<-j.done
		if err := finish(j); err != nil {
			return err
		}
	}
	return nil
}

// rowFormat writes the lines of appendRow with the text of each class
// label made once: binary and multiclass models predict one of their
// classes, whose text is then copied instead of formatted.
type rowFormat struct {
	so      scoreOpts
	classes []float32
	text    [][]byte // text[i]: classes[i] as appendRow writes a label
}

// maxLabelTexts bounds the classes whose text rowFormat keeps: a label is
// looked up among them one by one.
const maxLabelTexts = 16

func newRowFormat(so scoreOpts, classes []float32) *rowFormat {
	f := &rowFormat{so: so}
	if len(classes) <= maxLabelTexts {
		f.classes = classes
		for _, c := range classes {
			f.text = append(f.text, appendLabel(nil, so, c))
		}
	}
	return f
}

// append appends the line appendRow appends.
func (f *rowFormat) append(b []byte, label float32, scores []float32, face int, probs []float64) []byte {
	bits := math.Float32bits(label)
	for i, c := range f.classes {
		if math.Float32bits(c) == bits {
			return appendRowAfterLabel(append(b, f.text[i]...), f.so, scores, face, probs)
		}
	}
	return appendRow(b, f.so, label, scores, face, probs)
}

// appendLabel appends the start of appendRow's line up to its label.
func appendLabel(b []byte, so scoreOpts, label float32) []byte {
	if so.format == formatJSONL {
		return appendJSONNum(append(b, `{"label":`...), label)
	}
	return strconv.AppendFloat(b, float64(label), 'g', -1, 32)
}
