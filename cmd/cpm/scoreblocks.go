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

// blockScores is the rows lo to hi-1 of a block scored: each row's
// predicted label and face, its decision values and probabilities when
// eval's figures read them (keep), and the rows' lines of the scores file
// (write); last marks the block's last range. Its buffers are reused from
// range to range.
type blockScores struct {
	b      *sparsevec.CSR
	lo, hi int
	last   bool
	pred   []float32 // hi-lo values, row lo first
	face   []int
	scores []float32 // (hi-lo) × len(rowOutputs.scores), when kept
	probs  []float64 // (hi-lo) × len(rowOutputs.probs), when kept and computed
	lines  []byte
	done   chan struct{}
}

// scoreJob says what scoring a block computes besides labels and faces.
type scoreJob struct {
	keep  bool       // each row's decision values and probabilities
	lines *rowFormat // the lines of the scores file; nil: none
}

// score predicts rows lo to hi-1 of j.b with o. It allocates only while
// j's buffers grow.
func (j *blockScores) score(o *rowOutputs, sj scoreJob) {
	n := j.hi - j.lo
	j.pred = slices.Grow(j.pred[:0], n)[:n]
	j.face = slices.Grow(j.face[:0], n)[:n]
	j.scores, j.probs, j.lines = j.scores[:0], j.probs[:0], j.lines[:0]
	for r := range n {
		pred, face := o.predict(j.b.Row(j.lo + r))
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

// row returns the decision values and probabilities (nil when none were
// computed) of row lo+r, as kept by score.
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
// below 2, is scored on the calling goroutine as w = 0, a block at a time.
// Else at most reader.StreamBlocks − 1 blocks are held, the reader keeping
// one to fill, and each is cut into as many row ranges as make at least
// workers + 1 jobs of those blocks, of which workers + 1 are scored or
// waiting at a time. ctx is checked before every block.
func scoreBlocks(ctx context.Context, st reader.BlockReader, workers int, score func(w int, j *blockScores), consume func(j *blockScores) error) error {
	p := &blockPipe{ctx: ctx, st: st, consume: consume}
	b, err := p.next()
	if err != nil || b == nil {
		return err
	}
	var b2 *sparsevec.CSR
	if workers > 1 {
		if b2, err = p.next(); err != nil {
			return err
		}
	}
	if b2 != nil {
		return p.parallel(workers, score, b, b2)
	}
	for ; b != nil; b, err = p.next() {
		j := p.job(b, 0, b.Rows(), true)
		score(0, j)
		if err := p.finish(j); err != nil {
			return err
		}
	}
	return err
}

// blockPipe is the reading and consuming side of scoreBlocks, on the
// calling goroutine, with the jobs it reuses.
type blockPipe struct {
	ctx     context.Context
	st      reader.BlockReader
	consume func(j *blockScores) error
	free    []*blockScores
}

// next returns the next block, nil at the end.
func (p *blockPipe) next() (*sparsevec.CSR, error) {
	if err := p.ctx.Err(); err != nil {
		return nil, err
	}
	b, err := p.st.Next()
	if err == io.EOF {
		return nil, nil
	}
	return b, err
}

// job returns a job for rows lo to hi-1 of b, reusing a finished one.
func (p *blockPipe) job(b *sparsevec.CSR, lo, hi int, last bool) *blockScores {
	j := &blockScores{done: make(chan struct{}, 1)}
	if n := len(p.free); n > 0 {
		j, p.free = p.free[n-1], p.free[:n-1]
	}
	j.b, j.lo, j.hi, j.last = b, lo, hi, last
	return j
}

// finish consumes j and releases its block after the block's last range.
func (p *blockPipe) finish(j *blockScores) error {
	err := p.consume(j)
	if j.last {
		p.st.Release(j.b)
	}
	j.b = nil
	p.free = append(p.free, j)
	return err
}

// parallel is scoreBlocks on workers goroutines from blocks b and b2 on.
func (p *blockPipe) parallel(workers int, score func(w int, j *blockScores), b, b2 *sparsevec.CSR) error {
	maxBlocks := reader.StreamBlocks - 1
	parts := (workers + maxBlocks) / maxBlocks // ceil((workers+1)/maxBlocks)
	work := make(chan *blockScores, maxBlocks*parts)
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
	var queue []*blockScores
	held := 0
	add := func(b *sparsevec.CSR) {
		held++
		n := b.Rows()
		step := max(1, (n+parts-1)/parts)
		for lo := 0; lo < n || lo == 0; lo += step {
			j := p.job(b, lo, min(lo+step, n), lo+step >= n)
			queue = append(queue, j)
			work <- j
		}
	}
	add(b)
	add(b2)
	for eof := false; len(queue) > 0; {
		for !eof && held < maxBlocks && len(queue) < workers+1 {
			b, err := p.next()
			if err != nil {
				return err
			}
			if eof = b == nil; !eof {
				add(b)
			}
		}
		j := queue[0]
		queue = append(queue[:0], queue[1:]...)
		<-j.done
		if j.last {
			held--
		}
		if err := p.finish(j); err != nil {
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
