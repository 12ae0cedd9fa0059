package synth

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// ErrUnknown is returned, wrapped, by Lookup for a name it does not know.
var ErrUnknown = errors.New("synth: unknown data set")

// Dataset describes a synthetic data set: points uniform in [-1,1]^Dim,
// labelled +1 inside Region and -1 outside.
type Dataset struct {
	Name   string
	Dim    int
	Region Polyhedron
	Rows   int    // rows the paper draws (1000); a default for n
	Doc    string // one line
}

// datasets returns fresh copies of every data set, in Names order.
func datasets() []Dataset {
	return []Dataset{
		{
			Name: "polyceptron-d1", Dim: 10, Region: polyceptronD1(), Rows: 1000,
			Doc: "generated Polyceptron Dataset 1: uniform in [-1,1]^10, +1 inside 3 halfspaces (Manwani & Sastry, sec. 4.1)",
		},
		{
			Name: "polyceptron-d2", Dim: 20, Region: polyceptronD2(), Rows: 1000,
			Doc: "generated Polyceptron Dataset 2: uniform in [-1,1]^20, +1 inside 4 halfspaces (Manwani & Sastry, sec. 4.1, lost minus signs restored)",
		},
	}
}

// Names returns the names Lookup accepts.
func Names() []string {
	var out []string
	for _, d := range datasets() {
		out = append(out, d.Name)
	}
	return out
}

// Lookup returns the data set with the given name, with its own copy of
// the region. An unknown name gives an error wrapping ErrUnknown that lists
// the valid names.
func Lookup(name string) (Dataset, error) {
	for _, d := range datasets() {
		if d.Name == name {
			return d, nil
		}
	}
	return Dataset{}, fmt.Errorf("%w %q (valid: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
}

// stream is the PCG stream (second seed word) of every data set.
const stream = 0x73796e7468 // "synth"

// blockRows is the number of rows Write generates at a time.
const blockRows = 4096

// generator draws the rows of one data set.
type generator struct {
	d   Dataset
	src *rand.PCG
	x   []float64 // the current point, float32 values widened
	row sparsevec.Vector
}

func (d Dataset) generator(seed uint64) *generator {
	for k, h := range d.Region {
		if len(h.W) != d.Dim {
			panic(fmt.Sprintf("synth: %s: halfspace %d has %d weights, Dim is %d", d.Name, k, len(h.W), d.Dim))
		}
	}
	g := &generator{
		d:   d,
		src: rand.NewPCG(seed, stream),
		x:   make([]float64, d.Dim),
		row: sparsevec.Vector{Idx: make([]uint32, d.Dim), Val: make([]float32, d.Dim)},
	}
	for i := range g.row.Idx {
		g.row.Idx[i] = uint32(i + 1)
	}
	return g
}

// coord draws one coordinate: u uniform on the 2^53 points k·2^-52 - 1 of
// [-1,1), exactly, then rounded to float32 (so 1 itself can occur). A
// coordinate that rounds to 0 is drawn again, so rows have no zeros.
func (g *generator) coord() float32 {
	for {
		u := float64(g.src.Uint64()>>11)*0x1p-52 - 1
		if v := float32(u); v != 0 {
			return v
		}
	}
}

// appendRows appends n rows to dst.
func (g *generator) appendRows(dst *sparsevec.CSR, n int) {
	for range n {
		for i := range g.row.Val {
			v := g.coord()
			g.row.Val[i] = v
			g.x[i] = float64(v)
		}
		label := float32(-1)
		if g.d.Region.Contains(g.x) {
			label = 1
		}
		dst.Append(label, g.row)
	}
}

// Generate appends n rows to dst: points uniform in [-1,1]^d.Dim, labelled
// +1 inside d.Region and -1 outside, as sparse rows with indices 1..Dim.
//
// The coordinates come from rand.NewPCG(seed, 0x73796e7468) (never the
// global generator), in row order and coordinate order: each is
// float64(Uint64()>>11)·2^-52 - 1, rounded to float32, and drawn again if
// that is 0, so every coordinate is stored. The label is decided from the
// float32 values as stored (widened to float64), so a written file's labels
// agree exactly with its values.
//
// Generate panics if n < 0 or a halfspace of d.Region does not have d.Dim
// weights.
func (d Dataset) Generate(dst *sparsevec.CSR, n int, seed uint64) {
	if n < 0 {
		panic("synth: Generate with n < 0")
	}
	d.generator(seed).appendRows(dst, n)
}

// Write writes the n rows Generate(dst, n, seed) would append to w as LIBSVM
// text (libsvm.Writer), generating them 4096 at a time so memory does not
// grow with n. It returns the first error of w.
//
// Write panics if n < 0 or a halfspace of d.Region does not have d.Dim
// weights.
func (d Dataset) Write(w io.Writer, n int, seed uint64) error {
	if n < 0 {
		panic("synth: Write with n < 0")
	}
	g := d.generator(seed)
	out := libsvm.NewWriter(w)
	var blk sparsevec.CSR
	for n > 0 {
		m := min(n, blockRows)
		n -= m
		blk.Reset()
		g.appendRows(&blk, m)
		for r, y := range blk.Labels {
			if err := out.Write(y, blk.Row(r)); err != nil {
				return err
			}
		}
	}
	return out.Flush()
}
