// Command plane2d writes 2-D LIBSVM data for pictures of decision regions
// (cpm plot regions): points uniform in [-1,1]², labelled +1 inside a
// convex polygon and -1 outside, drawn by package synth with the given
// seed, so the same flags give byte-identical output.
//
// Usage (from the repository root):
//
//	go run ./scripts/plane2d [-shape hexagon|triangle] [-rows N] [-seed S] -o FILE
//
// The hexagon is regular, centred at the origin, with circumradius 0.75
// and a vertex on the x axis; the triangle is equilateral with
// circumradius 0.8 and a vertex pointing up.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/polyhedral/cpm/synth"
)

func main() {
	shape := flag.String("shape", "hexagon", "polygon holding the +1 points: hexagon or triangle")
	rows := flag.Int("rows", 600, "rows to write")
	seed := flag.Uint64("seed", 1, "random seed")
	out := flag.String("o", "", "output `file` (required)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 || *rows < 0 {
		flag.Usage()
		os.Exit(2)
	}
	var region synth.Polyhedron
	switch *shape {
	case "hexagon":
		region = regularPolygon(6, 0.75, 0)
	case "triangle":
		region = regularPolygon(3, 0.8, math.Pi/2)
	default:
		fmt.Fprintf(os.Stderr, "plane2d: unknown shape %q (want hexagon or triangle)\n", *shape)
		os.Exit(2)
	}
	d := synth.Dataset{Name: *shape, Dim: 2, Region: region, Rows: *rows}
	if err := write(*out, d, *rows, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "plane2d:", err)
		os.Exit(1)
	}
}

// regularPolygon returns the n halfspaces whose intersection is the
// regular n-gon with circumradius r and a vertex at angle phase: edge i
// joins the vertices at phase + 2πi/n and phase + 2π(i+1)/n, and its
// outward normal points at their mean angle.
func regularPolygon(n int, r, phase float64) synth.Polyhedron {
	apothem := r * math.Cos(math.Pi/float64(n))
	var p synth.Polyhedron
	for i := range n {
		t := phase + 2*math.Pi*(float64(i)+0.5)/float64(n)
		// -(cos t, sin t)·x + apothem ≥ 0
		p = append(p, synth.Halfspace{W: []float64{-math.Cos(t), -math.Sin(t)}, B: apothem})
	}
	return p
}

func write(path string, d synth.Dataset, rows int, seed uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := d.Write(w, rows, seed); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
