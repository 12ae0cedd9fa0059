package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// writeManyBlocks writes n rows of the LIBSVM file from, repeated with a
// little noise so that lines differ, to a LIBSVM file in dir.
func writeManyBlocks(t *testing.T, from, dir string, n int) string {
	t.Helper()
	base, err := reader.Load(from)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var buf bytes.Buffer
	for r := range n {
		i := r % base.Rows()
		fmt.Fprintf(&buf, "%g", base.Labels[i])
		x := base.Row(i)
		for k, j := range x.Idx {
			fmt.Fprintf(&buf, " %d:%g", j, x.Val[k]*(1+0.1*rng.Float32()))
		}
		buf.WriteByte('\n')
	}
	p := filepath.Join(dir, fmt.Sprintf("%s.%d.libsvm", filepath.Base(from), n))
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Scoring on 1 to 4 workers writes the same scores file and counts the
// same figures as on one, for every line format, over input of many
// blocks (and one block), binary and multiclass, with probabilities.
func TestEvaluateWorkersSameOutput(t *testing.T) {
	dir := t.TempDir()
	models := map[string][]string{
		"binary-calibrated": {"-k", "3", "-i", "20000", "--calibrate", "--double-sided", "-t", heart},
		"ovo-calibrated":    {"-k", "2", "-i", "20000", "--ovo", "--calibrate", "-t", iris},
	}
	for name, args := range models {
		mp := filepath.Join(dir, name+".model")
		mustRun(t, append([]string{"train", "-q", "--seed", "1", "-o", mp}, args...)...)
		m, err := model.Load(mp)
		if err != nil {
			t.Fatal(err)
		}
		from := args[len(args)-1]
		for _, data := range []string{writeManyBlocks(t, from, dir, 5*4096+123), writeManyBlocks(t, from, dir, 100)} {
			for _, so := range []scoreOpts{
				{format: formatLIBSVM}, {format: formatCSV, face: true, proba: true},
				{format: formatJSONL, face: true, proba: true, metrics: true}, {metrics: true},
			} {
				var want []byte
				var wantRes *evalResult
				for workers := 1; workers <= 4; workers++ {
					so.workers = workers
					sp := filepath.Join(dir, "scores")
					res, err := evaluate(context.Background(), m, data, sp, so)
					if err != nil {
						t.Fatalf("%s %+v: %v", name, so, err)
					}
					got, err := os.ReadFile(sp)
					if err != nil {
						t.Fatal(err)
					}
					if workers == 1 {
						want, wantRes = got, res
						continue
					}
					if !bytes.Equal(got, want) {
						t.Errorf("%s %s %+v: scores differ from one worker's", name, filepath.Base(data), so)
					}
					res.acc.m, wantRes.acc.m = nil, nil
					if !reflect.DeepEqual(res, wantRes) {
						t.Errorf("%s %s %+v: figures differ from one worker's", name, filepath.Base(data), so)
					}
				}
			}
		}
	}
}

// Scoring a block, and writing its lines, allocates nothing once the
// block's buffers have grown.
func TestScoreBlockAllocs(t *testing.T) {
	dir := t.TempDir()
	mp := filepath.Join(dir, "m")
	mustRun(t, "train", "-q", "-k", "3", "-i", "20000", "--calibrate", "-t", heart, "-o", mp)
	m, _ := model.Load(mp)
	data, _ := reader.Load(heart)
	mk, err := newRowOutputsMaker(m, true, true)
	if err != nil {
		t.Fatal(err)
	}
	o, err := mk.new()
	if err != nil {
		t.Fatal(err)
	}
	so := scoreOpts{format: formatCSV, proba: true, face: true}
	sj := scoreJob{keep: true, lines: newRowFormat(so, m.Classes)}
	j := &blockScores{b: data, hi: data.Rows(), last: true}
	j.score(o, sj)
	if a := testing.AllocsPerRun(20, func() { j.score(o, sj) }); a != 0 {
		t.Errorf("%v allocations a block of %d rows", a, data.Rows())
	}
}

// rowFormat writes appendRow's lines: with a class's text kept, for a
// label that is no class, and for -0 beside a class 0.
func TestRowFormatAsAppendRow(t *testing.T) {
	classes := []float32{0, 1, 2.5, -3}
	for _, so := range []scoreOpts{{format: formatLIBSVM, face: true}, {format: formatCSV, proba: true}, {format: formatJSONL, face: true, proba: true}} {
		f := newRowFormat(so, classes)
		for _, y := range []float32{0, float32(negZero()), 1, 2.5, -3, 7} {
			scores := []float32{1.5, -2}
			probs := []float64{0.25, 0.75}
			got := f.append(nil, y, scores, 3, probs)
			want := appendRow(nil, so, y, scores, 3, probs)
			if !bytes.Equal(got, want) {
				t.Errorf("%+v label %v: %q, want %q", so, y, got, want)
			}
		}
	}
}

func negZero() float64 { z := 0.0; return -z }

// scoreBlocks hands consume every row once, in input order, in ranges
// that cover each block, for every number of workers and block sizes of
// 0 to 5 rows.
func TestScoreBlocksOrder(t *testing.T) {
	for _, blocks := range []int{1, 2, 3, 10, 37} {
		for workers := 1; workers <= 8; workers++ {
			st := &countingBlocks{n: blocks}
			var got []float32
			ends := 0
			err := scoreBlocks(context.Background(), st, workers,
				func(w int, j *blockScores) { j.pred = append(j.pred[:0], j.b.Labels[j.lo:j.hi]...) },
				func(j *blockScores) error {
					got = append(got, j.pred...)
					if j.last {
						if j.hi != j.b.Rows() {
							t.Fatalf("last range ends at row %d of %d", j.hi, j.b.Rows())
						}
						ends++
					}
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
			if ends != blocks || st.held != 0 {
				t.Fatalf("%d blocks, %d workers: %d ends consumed, %d held", blocks, workers, ends, st.held)
			}
			if len(got) != st.rows {
				t.Fatalf("%d blocks, %d workers: %d rows consumed, want %d", blocks, workers, len(got), st.rows)
			}
			for i, v := range got {
				if v != float32(i) {
					t.Fatalf("%d blocks, %d workers: row %v came %d-th", blocks, workers, v, i)
				}
			}
		}
	}
}

// countingBlocks hands out n blocks of 0 to 5 rows labelled 0, 1, ... in
// input order, and refuses to hand out more than reader.StreamBlocks at a
// time.
type countingBlocks struct {
	n, next, held, rows int
}

func (c *countingBlocks) Next() (*sparsevec.CSR, error) {
	if c.held >= reader.StreamBlocks {
		return nil, fmt.Errorf("more than %d blocks held", reader.StreamBlocks)
	}
	if c.next == c.n {
		return nil, io.EOF
	}
	b := &sparsevec.CSR{Ptr: []int{0}}
	for range (c.next * 7) % 6 {
		b.Append(float32(c.rows), sparsevec.Vector{})
		c.rows++
	}
	c.next++
	c.held++
	return b, nil
}

func (c *countingBlocks) Release(*sparsevec.CSR) { c.held-- }
func (c *countingBlocks) Close() error           { return nil }
