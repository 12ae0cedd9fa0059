package tune

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/sparsevec"
)

// PaperC are the C of section 5.1 of Kantchelian et al. (NIPS 2014): λ =
// 1/(C·T) over {1, 10, ..., 10⁴}/T.
var PaperC = []float64{1, 0.1, 0.01, 0.001, 0.0001}

// PaperH returns section 5.1's entropy targets after h = 0, "log K/10,
// log 2K/10, ..., log 9K/10", read as ln(iK/10): the entropy (nats) of
// assignments spread evenly over iK/10 faces, the form in which the
// authors' tool reports its target (exp h, an effective number of faces).
// Targets that are not positive (ln 1 = 0 for K = 10) are left out; the
// rest increase strictly with i. The other reading, (i/10)·ln K, would stop
// at 0.9 ln 20 = 2.70 for K = 20 and spend most points on targets below the
// entropy plain argmax already reaches.
func PaperH(k int) []float64 {
	var g []float64
	for i := 1; i <= 9; i++ {
		h := math.Log(float64(i*k) / 10)
		if h > 0 {
			g = append(g, h)
		}
	}
	return g
}

// Paper is the result of the section 5.1 search.
type Paper struct {
	Rows   []Row // the C stage, then the h stage
	Chosen int   // index in Rows
	// Stage1 is the number of rows of the C stage.
	Stage1 int
}

// paperK returns the K of the paper's search with base flags.
func paperK(base *learner.Flags) (int, error) {
	ks := base.Get("k")
	if ks == "" {
		return 10, nil
	}
	k, err := strconv.Atoi(ks)
	if err != nil {
		return 0, fmt.Errorf("%w: -k %s: the paper's search takes one K", ErrGrid, ks)
	}
	return k, nil
}

// PaperPoints returns the number of points PaperSearch with base flags
// scores over both of its stages, the most it may score.
func PaperPoints(base *learner.Flags) (int, error) {
	k, err := paperK(base)
	if err != nil {
		return 0, err
	}
	return len(PaperC) + len(PaperH(k)), nil
}

// PaperSearch runs the CPM's parameter search of section 5.1 of
// Kantchelian et al. (NIPS 2014), a one-round coordinate descent: with h =
// 0, C over PaperC; then, at the best C, h over PaperH(K) (K from base, 10
// if not given). The best C's h = 0 row competes with the h stage as the
// first point; the choice is Best over those points. build turns a point's
// flags into the learner to train (the caller's seed and label).
func PaperSearch(ctx context.Context, cfg Config, data *sparsevec.CSR, base *learner.Flags, build func(*learner.Flags) (learner.Spec, error)) (*Paper, error) {
	if base.Get("lambda") != "0" {
		return nil, fmt.Errorf("%w: the paper's search chooses C (λ = 1/(C·T)); drop --lambda", ErrGrid)
	}
	k, err := paperK(base)
	if err != nil {
		return nil, err
	}
	stage1 := "C=" + joinFloats(PaperC) + " entropy=0"
	rows, err := runGrid(ctx, cfg, data, base, stage1, 0, build)
	if err != nil {
		return nil, err
	}
	best := Choose(rows, Best, nil)
	out := &Paper{Rows: rows, Stage1: len(rows), Chosen: best}
	hs := PaperH(k)
	if len(hs) == 0 {
		return out, nil
	}
	c := rows[best].Point.Settings[0].Value
	stage2, err := runGrid(ctx, cfg, data, base, "C="+c+" entropy="+joinFloats(hs), len(rows), build)
	if err != nil {
		return nil, err
	}
	out.Rows = append(out.Rows, stage2...)
	among := []int{best}
	for i := range stage2 {
		among = append(among, out.Stage1+i)
	}
	out.Chosen = Choose(out.Rows, Best, among)
	return out, nil
}

// runGrid parses and searches one grid of cpm flags, numbering its points
// from first.
func runGrid(ctx context.Context, cfg Config, data *sparsevec.CSR, base *learner.Flags, grid string, first int, build func(*learner.Flags) (learner.Spec, error)) ([]Row, error) {
	g, err := ParseGrid(grid, learner.CPM, base)
	if err != nil {
		return nil, err
	}
	cands, err := Candidates(g, 0, build)
	if err != nil {
		return nil, err
	}
	for i := range cands {
		cands[i].Point.Index += first
	}
	return Search(ctx, cfg, data, cands)
}

// Candidates returns the points of g (at most max, see Grid.Points) with
// the learner build makes of each point's flags; an error names the point.
func Candidates(g *Grid, max int, build func(*learner.Flags) (learner.Spec, error)) ([]Candidate, error) {
	points, err := g.Points(max)
	if err != nil {
		return nil, err
	}
	out := make([]Candidate, len(points))
	for i, p := range points {
		s, err := build(p.Flags)
		if err != nil {
			return nil, fmt.Errorf("point %d (%s): %w", i+1, p, err)
		}
		out[i] = Candidate{Point: p, Spec: s}
	}
	return out, nil
}

// joinFloats lists xs as a grid's values, each in full precision.
func joinFloats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}
