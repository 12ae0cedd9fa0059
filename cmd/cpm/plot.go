package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

const plotUsage = `cpm plot regions --model MODEL --data FILE -o OUT.png [--grid N]
       cpm plot curve --log METRICS.jsonl -o OUT.png [--x step|epoch]`

func runPlot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("need a subcommand: regions or curve\nusage: %s", plotUsage)
	}
	switch args[0] {
	case "regions":
		return runPlotRegions(ctx, args[1:], stderr)
	case "curve":
		return runPlotCurve(args[1:], stderr)
	case "-h", "--help", "help":
		fmt.Fprintf(stdout, "usage: %s\n", plotUsage)
		return nil
	}
	return usagef("unknown plot %q (want regions or curve)", args[0])
}

// labelColors are the colours of labels, in the order of the model's
// classes (Tableau 10).
var labelColors = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// labelShapes are the point glyphs of labels, filled first.
var labelShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.PyramidGlyph{}, draw.BoxGlyph{}, draw.RingGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

// lineColors are the colours of the face lines of successive polytopes.
var lineColors = []color.RGBA{
	{0, 0, 0, 255}, {90, 90, 90, 255}, {120, 0, 60, 255}, {0, 70, 120, 255}, {90, 60, 0, 255}, {0, 100, 40, 255},
}

// lighten blends c with white, keeping frac of c.
func lighten(c color.RGBA, frac float64) color.RGBA {
	f := func(v uint8) uint8 { return uint8(255 - frac*(255-float64(v)) + 0.5) }
	return color.RGBA{f(c.R), f(c.G), f(c.B), 255}
}

const plotRegionsUsage = "cpm plot regions --model MODEL --data FILE -o OUT.png [--grid N] [--width W] [--height H] [--title T] [--no-faces]"

func runPlotRegions(ctx context.Context, args []string, stderr io.Writer) (err error) {
	fs := newFlags("plot regions", stderr, plotRegionsUsage)
	lim := addLimitFlags(fs)
	defer lim.annotate(&err)
	mem := addMemoryFlag(fs)
	defer mem.annotate(&err)
	modelPath := fs.String("model", "", "model `file` (any learner); its features must be 1 and 2 at most")
	fs.StringVar(modelPath, "m", "", "same as --model")
	dataPath := fs.String("data", "", "2-D labelled data `file` (features 1 and 2) drawn over the regions")
	out := fs.String("o", "", "output PNG `file` (written atomically)")
	grid := fs.Int("grid", 400, "grid `cells` per axis at which the model is evaluated")
	width := fs.Float64("width", 8, "image width in `inches` (100 dpi)")
	height := fs.Float64("height", 6, "image height in `inches`")
	title := fs.String("title", "", "plot title (default: the learner and its shape)")
	noFaces := fs.Bool("no-faces", false, "do not draw the faces' lines w_k·x + b_k = 0")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case *modelPath == "" || *dataPath == "" || *out == "":
		return usagef("need --model MODEL, --data FILE and -o OUT.png")
	case *grid < 2 || *grid > 4000:
		return usagef("--grid %d: want 2 to 4000", *grid)
	case !(*width >= 1 && *width <= 40) || !(*height >= 1 && *height <= 40):
		return usagef("--width and --height: want 1 to 40 inches")
	}
	if err := checkOutputs(outputPath{flag: "-o", path: *out, inputs: []string{*modelPath, *dataPath}}); err != nil {
		return err
	}
	m, err := model.LoadLimit(*modelPath, mem.v())
	if err != nil {
		return err
	}
	pred, err := learner.NewPredictor(m)
	if err != nil {
		return err
	}
	g, err := modelGeometry(m)
	if err != nil {
		return err
	}
	data, err := loadData(*dataPath, lim.opts(ctx)...)
	if err != nil {
		return err
	}
	if data.Rows() == 0 {
		return fmt.Errorf("%s holds %w", *dataPath, sgd.ErrNoRows)
	}
	if data.Dim > 3 {
		return fmt.Errorf("%s has feature index %d; regions are drawn for 2-D data (features 1 and 2)", *dataPath, data.Dim-1)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The face lines are drawn in the raw space of the data: a scaled
	// model's weights are folded; without a linear fold, no lines.
	// A hashed model's features 1 and 2 are rows elsewhere, possibly
	// shared with others: no lines.
	if folded, err := learner.Fold(m); err == nil && m.Hash == nil {
		m = folded
	} else {
		g.lines = false
	}
	p, legend := regionsPlot(m, g, pred, data, *grid, *noFaces)
	p.Title.Text = *title
	if *title == "" {
		p.Title.Text = g.Title + ": decision regions"
	}
	return savePNG(*out, vg.Length(*width)*vg.Inch, vg.Length(*height)*vg.Inch, func(dc draw.Canvas) {
		lw := legend.Rectangle(dc).Size().X + vg.Inch/4
		p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
		legend.Draw(draw.Crop(draw.Crop(dc, dc.Size().X-lw+vg.Inch/8, 0, 0, 0), 0, 0, 0, -vg.Inch/2))
	})
}

// geometry is what plot regions needs to know about a model's
// hyperplanes: the learner's description of the model.
type geometry struct {
	*learner.Description
	lines bool // the model has weight-matrix faces to draw
}

// modelGeometry checks that m uses features 1 and 2 at most.
func modelGeometry(m *model.Model) (geometry, error) {
	d, err := learner.Describe(m)
	if err != nil {
		return geometry{}, err
	}
	g := geometry{Description: d, lines: d.NoHyperplanes == ""}
	if g.Features > 2 {
		return g, fmt.Errorf("the model has %d features; regions are drawn for 2-D models (features 1 and 2)", g.Features)
	}
	return g, nil
}

// regionsPlot draws the predicted label of every grid cell, the data
// points by label and the faces' lines, and returns the plot and its
// legend (drawn beside it).
func regionsPlot(m *model.Model, g geometry, pred learner.Predictor, data *sparsevec.CSR, n int, noFaces bool) (*plot.Plot, plot.Legend) {
	// Label order: the model's classes ascending, then labels only the
	// data has.
	labels := slices.Clone(m.Classes)
	slices.Sort(labels)
	for _, y := range data.Labels {
		if !slices.Contains(labels, y) {
			labels = append(labels, y)
		}
	}
	colorOf := func(y float32) color.RGBA { return labelColors[slices.Index(labels, y)%len(labelColors)] }
	xs, b := dataBox(data)

	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = "feature 1", "feature 2"
	p.Add(plotter.NewImage(regionImage(pred, n, b, colorOf), b.xmin, b.ymin, b.xmax, b.ymax))
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	for li, y := range labels {
		var pts plotter.XYs
		for r, l := range data.Labels {
			if l == y {
				pts = append(pts, plotter.XY{X: xs[r][0], Y: xs[r][1]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		s, _ := plotter.NewScatter(pts)
		s.GlyphStyle = draw.GlyphStyle{Color: colorOf(y), Radius: vg.Points(2.2), Shape: labelShapes[li%len(labelShapes)]}
		p.Add(s)
		legend.Add(fmt.Sprintf("label %v (%d rows)", y, len(pts)), s)
	}
	if g.lines && !noFaces {
		for i, w := range m.Weights {
			if segs := addFaceLines(p, m, g, i, w, b); len(segs) > 0 {
				legend.Add(g.Legends[i], segs[0])
			}
		}
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = b.xmin, b.xmax, b.ymin, b.ymax
	p.X.Padding, p.Y.Padding = 0, 0
	return p, legend
}

// box is the plotted area.
type box struct{ xmin, xmax, ymin, ymax float64 }

// dataBox returns the points of data's rows (features 1 and 2) and the
// box around them, padded by 5% (by 1 when they span no width).
func dataBox(data *sparsevec.CSR) ([][2]float64, box) {
	xs := make([][2]float64, data.Rows())
	b := box{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
	for r := range data.Rows() {
		x := data.Row(r)
		for i, j := range x.Idx {
			xs[r][j-1] = float64(x.Val[i])
		}
		b.xmin, b.xmax = min(b.xmin, xs[r][0]), max(b.xmax, xs[r][0])
		b.ymin, b.ymax = min(b.ymin, xs[r][1]), max(b.ymax, xs[r][1])
	}
	pad := func(lo, hi float64) (float64, float64) {
		if hi-lo < 1e-9 {
			return lo - 1, hi + 1
		}
		d := 0.05 * (hi - lo)
		return lo - d, hi + d
	}
	b.xmin, b.xmax = pad(b.xmin, b.xmax)
	b.ymin, b.ymax = pad(b.ymin, b.ymax)
	return xs, b
}

// regionImage colours an n×n grid over b by the label pred gives the
// centre of each cell; image row 0 is the top (ymax).
func regionImage(pred learner.Predictor, n int, b box, colorOf func(float32) color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	v := sparsevec.Vector{Idx: []uint32{1, 2}, Val: make([]float32, 2)}
	for i := range n {
		v.Val[1] = float32(b.ymax - (float64(i)+0.5)*(b.ymax-b.ymin)/float64(n))
		for j := range n {
			v.Val[0] = float32(b.xmin + (float64(j)+0.5)*(b.xmax-b.xmin)/float64(n))
			y, _, _ := pred.Predict(v)
			img.SetRGBA(j, i, lighten(colorOf(y), 0.3))
		}
	}
	return img
}

// addFaceLines draws the faces of weight matrix i (w) on p, numbered near
// one end when the model has at most two matrices, and returns the lines.
func addFaceLines(p *plot.Plot, m *model.Model, g geometry, i int, w *sparsevec.Matrix, b box) []*plotter.Line {
	var segs []*plotter.Line
	var marks plotter.XYLabels // face numbers near one end of each line
	for k := range m.K {
		ls := faceLines(m, g, w, k, b.xmin, b.xmax, b.ymin, b.ymax)
		segs = append(segs, ls...)
		if len(ls) != 1 || len(ls[0].XYs) != 2 || len(m.Weights) > 2 {
			continue
		}
		if a, c, ok := clipSegment(ls[0].XYs[0], ls[0].XYs[1], b.xmin, b.xmax, b.ymin, b.ymax); ok {
			name := strconv.Itoa(k)
			if len(m.Weights) == 2 {
				name = []string{"o", "i"}[i] + name
			}
			marks.XYs = append(marks.XYs, plotter.XY{X: a.X + 0.06*(c.X-a.X), Y: a.Y + 0.06*(c.Y-a.Y)})
			marks.Labels = append(marks.Labels, name)
		}
	}
	if len(segs) == 0 {
		return nil
	}
	style := draw.LineStyle{Color: lineColors[i%len(lineColors)], Width: vg.Points(1.3)}
	if m.Sides == 2 && i%2 == 1 {
		style.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	for _, l := range segs {
		l.LineStyle = style
		p.Add(l)
	}
	if len(marks.XYs) > 0 {
		if lb, err := plotter.NewLabels(marks); err == nil {
			for j := range lb.TextStyle {
				lb.TextStyle[j].Color = style.Color
				lb.TextStyle[j].XAlign, lb.TextStyle[j].YAlign = draw.XCenter, draw.YCenter
			}
			lb.Offset = vg.Point{X: vg.Points(7), Y: vg.Points(0)}
			p.Add(lb)
		}
	}
	return segs
}

// faceLines returns the curve where face k of w is zero inside the box: a
// line w1·x + w2·y + b = 0, or with the quadratic lift the circle
// q·(x² + y²) + w1·x + w2·y + b = 0 (as polyline segments). Lines are
// clipped by the plot.
func faceLines(m *model.Model, g geometry, w *sparsevec.Matrix, k int, xmin, xmax, ymin, ymax float64) []*plotter.Line {
	at := func(j int) float64 {
		r, ok := m.RowOf(uint32(j))
		if !ok {
			return 0
		}
		return float64(w.At(r, k))
	}
	a, b, c := at(1), 0.0, m.Bias*at(0)
	if g.Features >= 2 {
		b = at(2)
	}
	var q float64
	if g.LiftIndex > 0 {
		q = at(g.LiftIndex)
	}
	var curves []plotter.XYs
	switch {
	case q != 0:
		cx, cy := -a/(2*q), -b/(2*q)
		r2 := cx*cx + cy*cy - c/q
		if !(r2 > 0) || math.IsInf(r2, 0) {
			return nil
		}
		r := math.Sqrt(r2)
		var pts plotter.XYs
		for i := range 241 {
			t := 2 * math.Pi * float64(i) / 240
			pts = append(pts, plotter.XY{X: cx + r*math.Cos(t), Y: cy + r*math.Sin(t)})
		}
		curves = append(curves, pts)
	case a == 0 && b == 0:
		return nil
	case math.Abs(b) >= math.Abs(a):
		f := func(x float64) float64 { return -(a*x + c) / b }
		curves = append(curves, plotter.XYs{{X: xmin, Y: f(xmin)}, {X: xmax, Y: f(xmax)}})
	default:
		f := func(y float64) float64 { return -(b*y + c) / a }
		curves = append(curves, plotter.XYs{{X: f(ymin), Y: ymin}, {X: f(ymax), Y: ymax}})
	}
	var out []*plotter.Line
	for _, pts := range curves {
		if l, err := plotter.NewLine(pts); err == nil {
			out = append(out, l)
		}
	}
	return out
}

// clipSegment returns the part of the segment a–b inside the box
// (Liang–Barsky), and false if none of it is.
func clipSegment(a, b plotter.XY, xmin, xmax, ymin, ymax float64) (plotter.XY, plotter.XY, bool) {
	t0, t1 := 0.0, 1.0
	dx, dy := b.X-a.X, b.Y-a.Y
	for _, e := range [4][2]float64{{-dx, a.X - xmin}, {dx, xmax - a.X}, {-dy, a.Y - ymin}, {dy, ymax - a.Y}} {
		p, q := e[0], e[1]
		switch {
		case p == 0:
			if q < 0 {
				return a, b, false
			}
		case p < 0:
			t0 = max(t0, q/p)
		default:
			t1 = min(t1, q/p)
		}
	}
	if t0 >= t1 {
		return a, b, false
	}
	return plotter.XY{X: a.X + t0*dx, Y: a.Y + t0*dy}, plotter.XY{X: a.X + t1*dx, Y: a.Y + t1*dy}, true
}

const plotCurveUsage = "cpm plot curve --log METRICS.jsonl -o OUT.png [--x step|epoch] [--width W] [--height H] [--title T]"

func runPlotCurve(args []string, stderr io.Writer) error {
	fs := newFlags("plot curve", stderr, plotCurveUsage)
	logPath := fs.String("log", "", "metrics log `file` written by cpm train --metrics-log (JSON Lines)")
	out := fs.String("o", "", "output PNG `file` (written atomically)")
	xAxis := fs.String("x", "step", "horizontal axis: step or epoch")
	width := fs.Float64("width", 7, "image width in `inches` (100 dpi)")
	height := fs.Float64("height", 0, "image height in `inches` (default 2.6 per panel)")
	title := fs.String("title", "", "title (default: the learner and the log's name)")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case *logPath == "" || *out == "":
		return usagef("need --log METRICS.jsonl and -o OUT.png")
	case *xAxis != "step" && *xAxis != "epoch":
		return usagef("--x %q: want step or epoch", *xAxis)
	case !(*width >= 1 && *width <= 40) || !(*height == 0 || *height >= 1 && *height <= 40):
		return usagef("--width and --height: want 1 to 40 inches")
	}
	if err := checkOutputs(outputPath{flag: "-o", path: *out, inputs: []string{*logPath}}); err != nil {
		return err
	}
	recs, err := readMetricsLog(*logPath)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return fmt.Errorf("%s holds no records", *logPath)
	}
	panels, legend := curvePanels(recs, *xAxis == "epoch")
	if len(panels) == 0 {
		return fmt.Errorf("%s has no loss, violation or validation_error fields to draw", *logPath)
	}
	t := *title
	if t == "" {
		t = fmt.Sprintf("%s training curve (%s)", recs[0].Learner, filepath.Base(*logPath))
	}
	h := *height
	if h == 0 {
		h = 0.4 + 2.6*float64(len(panels))
	}
	return savePNG(*out, vg.Length(*width)*vg.Inch, vg.Length(h)*vg.Inch, func(dc draw.Canvas) {
		col := make([][]*plot.Plot, len(panels))
		for i, p := range panels {
			col[i] = []*plot.Plot{p}
		}
		// The title spans the figure; the panels share the rest, less the
		// legend's strip on the right.
		title := panels[0].Title.TextStyle
		th := title.Height(t) + vg.Points(10)
		title.XAlign, title.YAlign = draw.XCenter, draw.YTop
		dc.FillText(title, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - vg.Points(4)}, t)
		lw := legend.Rectangle(dc).Size().X + vg.Inch/4
		tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(10)}
		cs := plot.Align(col, tiles, draw.Crop(dc, 0, -lw, 0, -th))
		legend.Draw(draw.Crop(draw.Crop(dc, dc.Size().X-lw+vg.Inch/8, 0, 0, 0), 0, 0, 0, -th-vg.Points(8)))
		for i, p := range panels {
			p.Draw(cs[i][0])
		}
	})
}

// readMetricsLog reads a JSON Lines metrics log; a line that is not a
// JSON object is bad input with its line number.
func readMetricsLog(path string) ([]metricsRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []metricsRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var r metricsRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, &reader.ParseError{Path: path, Line: line, Err: fmt.Errorf("%w: %w", reader.ErrSyntax, err)}
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, &reader.ParseError{Path: path, Err: err}
	}
	return recs, nil
}

// curveSeries is one quantity of the metrics records, drawn per task.
type curveSeries struct {
	name string
	get  func(metricsRecord) *float64
	dash bool
}

// curvePanel is one plot of plot curve: a y axis and its series.
type curvePanel struct {
	ylabel string
	series []curveSeries
	log    bool // log scale when every value is > 0
}

// curvePanels returns one plot per quantity the records hold: loss (CPM:
// positive and negative rows' hinge loss; PLUME: negative log-likelihood
// per row), violation rate and validation error, each with one line per
// task.
func curvePanels(recs []metricsRecord, byEpoch bool) ([]*plot.Plot, plot.Legend) {
	tasks, xLabel, xOf := curveAxis(recs, byEpoch)
	defs, hasCPMLoss := curveDefs(recs)
	var plots []*plot.Plot
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	var inLegend []string
	for pi, d := range defs {
		p := plot.New()
		p.Y.Label.Text = d.ylabel
		if pi == len(defs)-1 {
			p.X.Label.Text = xLabel
		}
		// A log scale needs positive values: zeros (a polytope that made
		// no update) are left out, breaking the line there.
		logY := d.log && slices.ContainsFunc(recs, func(r metricsRecord) bool {
			return slices.ContainsFunc(d.series, func(s curveSeries) bool { v := s.get(r); return v != nil && *v > 0 })
		})
		for ti, task := range tasks {
			for _, s := range d.series {
				style := draw.LineStyle{Color: labelColors[ti%len(labelColors)], Width: vg.Points(1.4)}
				if s.dash {
					style.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				}
				runs := seriesRuns(recs, task, s, xOf, logY)
				if addRuns(p, runs, style) && !slices.Contains(inLegend, task) {
					inLegend = append(inLegend, task)
					legend.Add(task, &plotter.Line{XYs: runs[0][:1], LineStyle: draw.LineStyle{Color: style.Color, Width: style.Width}})
				}
			}
		}
		if logY {
			p.Y.Tick.Marker = decadeTicks{}
			p.Y.Label.Text += " (log scale)"
			p.Y.Min, p.Y.Max = math.Floor(p.Y.Min), math.Ceil(p.Y.Max)
		} else {
			p.Y.Min = min(p.Y.Min, 0)
		}
		plots = append(plots, p)
	}
	if hasCPMLoss {
		for _, s := range defs[0].series {
			st := draw.LineStyle{Color: color.Black, Width: vg.Points(1.4)}
			if s.dash {
				st.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			legend.Add("loss of "+s.name, &plotter.Line{XYs: plotter.XYs{{}}, LineStyle: st})
		}
	}
	return plots, legend
}

// curveAxis returns the tasks of the records in a fixed order, the x
// axis label and the x value of a record.
func curveAxis(recs []metricsRecord, byEpoch bool) ([]string, string, func(metricsRecord) float64) {
	var tasks []string
	maxStep := int64(0)
	for _, r := range recs {
		if !slices.Contains(tasks, r.Task) {
			tasks = append(tasks, r.Task)
		}
		maxStep = max(maxStep, r.Step)
	}
	// Concurrent polytopes interleave their records: order the tasks by
	// name, a pair's outer polytope before its inner one, so colours do
	// not depend on scheduling.
	slices.SortFunc(tasks, compareTasks)
	xScale, xLabel := 1.0, "step"
	switch {
	case byEpoch:
		xLabel = "epoch"
	case !slices.ContainsFunc(recs, func(r metricsRecord) bool { return r.Of > 0 }):
		xLabel = "pass or iteration" // not SGD steps: a learner without a step budget
	case maxStep >= 1_000_000:
		xScale, xLabel = 1e-6, "step (millions)"
	}
	return tasks, xLabel, func(r metricsRecord) float64 {
		if byEpoch {
			return r.Epoch
		}
		return float64(r.Step) * xScale
	}
}

// curveDefs returns the panels the records have values for, and whether
// the first is CPM's two hinge losses.
func curveDefs(recs []metricsRecord) ([]curvePanel, bool) {
	has := func(get func(metricsRecord) *float64) bool {
		return slices.ContainsFunc(recs, func(r metricsRecord) bool { return get(r) != nil })
	}
	pos := func(r metricsRecord) *float64 { return r.PosLoss }
	neg := func(r metricsRecord) *float64 { return r.NegLoss }
	loss := func(r metricsRecord) *float64 { return r.Loss }
	viol := func(r metricsRecord) *float64 { return r.Violation }
	val := func(r metricsRecord) *float64 { return r.ValError }
	hasCPMLoss := has(pos) || has(neg)
	var defs []curvePanel
	if hasCPMLoss {
		defs = append(defs, curvePanel{"hinge loss", []curveSeries{{"positive rows", pos, false}, {"negative rows", neg, true}}, true})
	} else if has(loss) {
		defs = append(defs, curvePanel{"loss (-log-likelihood per row)", []curveSeries{{"", loss, false}}, false})
	}
	if has(viol) {
		defs = append(defs, curvePanel{"violation rate", []curveSeries{{"", viol, false}}, false})
	}
	if has(val) {
		defs = append(defs, curvePanel{"validation error", []curveSeries{{"", val, false}}, false})
	}
	return defs, hasCPMLoss
}

// seriesRuns returns the finite points of series s of task, ordered by x;
// with logY, as log10 of the positive values, in runs broken at the
// others.
func seriesRuns(recs []metricsRecord, task string, s curveSeries, xOf func(metricsRecord) float64, logY bool) []plotter.XYs {
	var pts plotter.XYs
	for _, r := range recs {
		if v := s.get(r); r.Task == task && v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
			pts = append(pts, plotter.XY{X: xOf(r), Y: *v})
		}
	}
	slices.SortStableFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	if !logY {
		return []plotter.XYs{pts}
	}
	var runs []plotter.XYs
	for len(pts) > 0 {
		i := slices.IndexFunc(pts, func(q plotter.XY) bool { return q.Y <= 0 })
		if i < 0 {
			i = len(pts)
		}
		if i > 0 {
			runs = append(runs, pts[:i])
		}
		pts = pts[min(i+1, len(pts)):]
	}
	// Plot log10 of the values on a linear axis with decade ticks
	// (gonum's LogScale places the axis label by the arithmetic mean of
	// the range).
	for _, run := range runs {
		for i := range run {
			run[i].Y = math.Log10(run[i].Y)
		}
	}
	return runs
}

// addRuns draws the runs of one series on p in style, with point marks
// when they hold at most 40 points, and reports whether it drew any (the
// first run then belongs in the legend).
func addRuns(p *plot.Plot, runs []plotter.XYs, style draw.LineStyle) bool {
	n := 0
	for _, run := range runs {
		n += len(run)
	}
	drew := false
	for _, run := range runs {
		if len(run) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(run)
		if err != nil {
			continue
		}
		l.LineStyle = style
		p.Add(l)
		if n <= 40 {
			sc.Color, sc.Radius = style.Color, vg.Points(1.8)
			p.Add(sc)
		}
		drew = true
	}
	return drew
}

// decadeTicks marks an axis that holds log10 of the values: a labelled
// tick at every power of ten, unlabelled ones at 2..9 times it.
type decadeTicks struct{}

func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(lo); e <= hi; e++ {
		if e >= lo {
			ticks = append(ticks, plot.Tick{Value: e, Label: strconv.FormatFloat(math.Pow(10, e), 'g', -1, 64)})
		}
		for i := 2; i < 10; i++ {
			if v := e + math.Log10(float64(i)); v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

var _ plot.Ticker = decadeTicks{}

// compareTasks orders task names: by the part before the last "/" (a
// one-vs-one pair), then "outer" before "inner", then by name.
func compareTasks(a, b string) int {
	split := func(t string) (string, int, string) {
		pair, side := "", t
		if i := strings.LastIndexByte(t, '/'); i >= 0 {
			pair, side = t[:i], t[i+1:]
		}
		rank := 2
		switch side {
		case "outer":
			rank = 0
		case "inner":
			rank = 1
		}
		return pair, rank, side
	}
	pa, ra, sa := split(a)
	pb, rb, sb := split(b)
	return cmp.Or(cmp.Compare(pa, pb), cmp.Compare(ra, rb), cmp.Compare(sa, sb))
}

// savePNG renders a width×height image at 100 dpi with draw and writes it
// to path by the rules of package internal/atomicfile (a regular file is
// replaced atomically once complete).
func savePNG(path string, width, height vg.Length, drawFn func(draw.Canvas)) error {
	c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(100), vgimg.UseBackgroundColor(color.White))
	drawFn(draw.New(c))
	err := atomicfile.WriteFile(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("writing PNG: %w", err)
	}
	return nil
}
