package tune

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/polyhedral/cpm/learner"
)

// ErrGrid marks a grid that cannot be searched: bad syntax, a flag the
// learner does not read or that takes no number, an expression that fails
// at some point, or too many points.
var ErrGrid = errors.New("bad grid")

// MaxPoints is the number of points a grid may have unless the caller
// raises the limit.
const MaxPoints = 10_000

// Grid is a parsed search grid: axes, each a learner flag and its values,
// over the flags of one learner.
type Grid struct {
	Learner string
	Axes    []Axis
	base    *learner.Flags
}

// Axis is one flag of a grid and its values as written.
type Axis struct {
	Name  string // the flag's canonical name
	Kind  learner.FlagKind
	items []item
}

// item is one value of an axis: an expression, or (string flags) text
// taken literally.
type item struct {
	text string
	e    expr // nil for literal text
}

// Setting is the value of one axis at a point.
type Setting struct {
	Flag  string  // canonical name
	Value string  // the text set on the flag
	Num   float64 // the number (NaN for a string flag)
}

// Point is one setting of every axis. Points number from 0 in grid
// order: axes in the order given, the last axis fastest.
type Point struct {
	Index    int
	Settings []Setting
	// Flags are the base flags with every axis set to its value.
	Flags *learner.Flags
}

// String returns the point as "name=value name=value".
func (p Point) String() string {
	parts := make([]string, len(p.Settings))
	for i, s := range p.Settings {
		parts[i] = s.Flag + "=" + s.Value
	}
	return strings.Join(parts, " ")
}

// Value returns the value of flag (canonical) at p, and whether it is an
// axis.
func (p Point) Value(flag string) (Setting, bool) {
	for _, s := range p.Settings {
		if s.Flag == flag {
			return s, true
		}
	}
	return Setting{}, false
}

// The range forms of a grid axis (compiled on first use).
var (
	logRangeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+)\.\.(.+)x([0-9]+)$`) })
	intRangeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(-?[0-9]+)\.\.(-?[0-9]+)$`) })
)

// ParseGrid parses text, whitespace-separated axes "name=values", over the
// flags learnerName reads; base holds the flags every point starts from.
// values is a comma-separated list of
//
//   - expressions: numbers, + - * /, parentheses, ln, log10, exp, sqrt, and
//     names of flags (any case, aliases too), evaluated per point: an axis's
//     value at that point, else the value in base;
//   - log-ranges lo..hixN: N values spaced evenly in log scale from lo to hi
//     inclusive (lo, hi > 0, N >= 2; expressions too), each rounded to 12
//     significant digits;
//   - for integer flags, ranges lo..hi of consecutive whole numbers;
//   - for string flags, text taken literally.
//
// Errors wrap ErrGrid.
func ParseGrid(text, learnerName string, base *learner.Flags) (*Grid, error) {
	g := &Grid{Learner: learnerName, base: base}
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return nil, fmt.Errorf("%w: no axes (want name=values ...)", ErrGrid)
	}
	for _, f := range fields {
		a, err := g.parseAxis(f)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrGrid, f, err)
		}
		if slices.ContainsFunc(g.Axes, func(b Axis) bool { return b.Name == a.Name }) {
			return nil, fmt.Errorf("%w: %s is given twice", ErrGrid, a.Name)
		}
		g.Axes = append(g.Axes, a)
	}
	return g, nil
}

// parseAxis parses one "name=values".
func (g *Grid) parseAxis(f string) (Axis, error) {
	name, values, ok := strings.Cut(f, "=")
	if !ok || name == "" {
		return Axis{}, fmt.Errorf("want name=values")
	}
	canon, ok := g.base.Canonical(name)
	if !ok || !slices.Contains(g.base.Names(g.Learner), canon) {
		return Axis{}, fmt.Errorf("%s reads no flag %q; its flags that take a number: %s", g.Learner, name, strings.Join(g.NumericFlags(), ", "))
	}
	a := Axis{Name: canon, Kind: g.base.Kind(canon)}
	if !a.Kind.Numeric() && a.Kind != learner.KindString {
		return Axis{}, fmt.Errorf("--%s is a %v flag; an axis takes a flag with a number (%s) or text", canon, a.Kind, strings.Join(g.NumericFlags(), ", "))
	}
	if values == "" {
		return Axis{}, fmt.Errorf("no values")
	}
	for _, v := range strings.Split(values, ",") {
		items, err := parseItem(a.Kind, v)
		if err != nil {
			return Axis{}, err
		}
		a.items = append(a.items, items...)
		if len(a.items) > MaxPoints*10 {
			return Axis{}, fmt.Errorf("more than %d values", MaxPoints*10)
		}
	}
	return a, nil
}

// parseItem parses one comma-separated value of an axis of kind k.
func parseItem(k learner.FlagKind, v string) ([]item, error) {
	switch {
	case v == "":
		return nil, fmt.Errorf("an empty value")
	case k == learner.KindString:
		return []item{{text: v}}, nil
	}
	if m := logRangeRE().FindStringSubmatch(v); m != nil {
		lo, err := parseExpr(m[1])
		if err != nil {
			return nil, err
		}
		hi, err := parseExpr(m[2])
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(m[3])
		if err != nil || n < 2 || n > MaxPoints*10 {
			return nil, fmt.Errorf("log-range %s: want from 2 to %d values", v, MaxPoints*10)
		}
		out := make([]item, n)
		for i := range out {
			out[i] = item{text: v, e: logStep{lo, hi, i, n}}
		}
		return out, nil
	}
	if m := intRangeRE().FindStringSubmatch(v); m != nil && k != learner.KindFloat {
		lo, err1 := strconv.Atoi(m[1])
		hi, err2 := strconv.Atoi(m[2])
		if err1 != nil || err2 != nil || hi < lo || hi-lo >= MaxPoints*10 {
			return nil, fmt.Errorf("range %s: want lo..hi with lo <= hi and at most %d values", v, MaxPoints*10)
		}
		var out []item
		for x := lo; x <= hi; x++ {
			out = append(out, item{text: v, e: num(x)})
		}
		return out, nil
	}
	if strings.Contains(v, "..") {
		return nil, fmt.Errorf("range %s: want lo..hixN (log-spaced) or, for a whole-number flag, lo..hi", v)
	}
	e, err := parseExpr(v)
	if err != nil {
		return nil, err
	}
	return []item{{text: v, e: e}}, nil
}

// logStep is value i of the n values of a log-range from lo to hi.
type logStep struct {
	lo, hi expr
	i, n   int
}

func (s logStep) eval(get func(string) (float64, error)) (float64, error) {
	lo, err := s.lo.eval(get)
	if err != nil {
		return 0, err
	}
	hi, err := s.hi.eval(get)
	if err != nil {
		return 0, err
	}
	if !(lo > 0 && hi > 0) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, fmt.Errorf("log-range from %g to %g: want finite bounds > 0", lo, hi)
	}
	switch s.i {
	case 0:
		return lo, nil
	case s.n - 1:
		return hi, nil
	}
	v := math.Exp(math.Log(lo) + float64(s.i)/float64(s.n-1)*(math.Log(hi)-math.Log(lo)))
	return strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
}

// NumericFlags returns the flags of the grid's learner that take a number.
func (g *Grid) NumericFlags() []string {
	var out []string
	for _, n := range g.base.Names(g.Learner) {
		if g.base.Kind(n).Numeric() {
			out = append(out, n)
		}
	}
	return out
}

// Size returns the number of points of g.
func (g *Grid) Size() int {
	n := 1
	for _, a := range g.Axes {
		n *= len(a.items)
		if n > math.MaxInt32 {
			return math.MaxInt32
		}
	}
	return n
}

// Points returns every point of g in grid order, evaluating each axis's
// value at each point and setting it on a copy of the base flags. It
// refuses a grid of more than max points (MaxPoints if max is 0), a value
// that fails to evaluate or to set (the error names the point), and two
// points with the same settings. Errors wrap ErrGrid.
func (g *Grid) Points(max int) ([]Point, error) {
	if max <= 0 {
		max = MaxPoints
	}
	if n := g.Size(); n > max {
		return nil, fmt.Errorf("%w: %d points, more than the limit of %d", ErrGrid, n, max)
	}
	n := g.Size()
	points := make([]Point, 0, n)
	seen := map[string]int{}
	idx := make([]int, len(g.Axes))
	for i := range n {
		for a, rem := len(g.Axes)-1, i; a >= 0; a-- {
			idx[a] = rem % len(g.Axes[a].items)
			rem /= len(g.Axes[a].items)
		}
		p, err := g.point(i, idx)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[p.String()]; dup {
			return nil, fmt.Errorf("%w: points %d and %d are the same setting %s (a value listed twice?)", ErrGrid, j+1, i+1, p)
		}
		seen[p.String()] = i
		points = append(points, p)
	}
	return points, nil
}

// point evaluates point i, whose item of axis a is idx[a].
func (g *Grid) point(i int, idx []int) (Point, error) {
	ev := &evaluator{g: g, idx: idx, vals: make([]*Setting, len(g.Axes)), busy: make([]bool, len(g.Axes))}
	p := Point{Index: i, Settings: make([]Setting, len(g.Axes)), Flags: g.base.Clone()}
	for a := range g.Axes {
		s, err := ev.axis(a)
		if err != nil {
			return Point{}, fmt.Errorf("%w: point %d (%s): %w", ErrGrid, i+1, g.describe(idx), err)
		}
		p.Settings[a] = s
		if err := p.Flags.Set(s.Flag, s.Value); err != nil {
			return Point{}, fmt.Errorf("%w: point %d: %w", ErrGrid, i+1, err)
		}
	}
	return p, nil
}

// describe names the items of a point as written, for errors.
func (g *Grid) describe(idx []int) string {
	parts := make([]string, len(g.Axes))
	for a, ax := range g.Axes {
		parts[a] = ax.Name + "=" + ax.items[idx[a]].text
	}
	return strings.Join(parts, " ")
}

// evaluator evaluates the axes of one point, each once, following
// references between them.
type evaluator struct {
	g    *Grid
	idx  []int
	vals []*Setting
	busy []bool
}

// axis returns the setting of axis a at the point.
func (ev *evaluator) axis(a int) (Setting, error) {
	if s := ev.vals[a]; s != nil {
		return *s, nil
	}
	ax := ev.g.Axes[a]
	if ev.busy[a] {
		return Setting{}, fmt.Errorf("%s refers to itself", ax.Name)
	}
	ev.busy[a] = true
	defer func() { ev.busy[a] = false }()
	it := ax.items[ev.idx[a]]
	s := Setting{Flag: ax.Name, Value: it.text, Num: math.NaN()}
	if it.e != nil {
		v, err := it.e.eval(ev.ref)
		if err != nil {
			return Setting{}, fmt.Errorf("%s=%s: %w", ax.Name, it.text, err)
		}
		if s.Value, err = format(ax.Kind, v); err != nil {
			return Setting{}, fmt.Errorf("%s=%s: %w", ax.Name, it.text, err)
		}
		s.Num = v
	}
	ev.vals[a] = &s
	return s, nil
}

// ref returns the value of the flag name at the point: its axis's value,
// else its value in the base flags.
func (ev *evaluator) ref(name string) (float64, error) {
	c, ok := ev.g.base.Canonical(name)
	if !ok {
		return 0, fmt.Errorf("%q is neither a function nor a flag", name)
	}
	for a, ax := range ev.g.Axes {
		if ax.Name == c {
			s, err := ev.axis(a)
			if err == nil && math.IsNaN(s.Num) {
				err = fmt.Errorf("%s is not a number", c)
			}
			return s.Num, err
		}
	}
	k := ev.g.base.Kind(c)
	if !k.Numeric() {
		return 0, fmt.Errorf("%s is not a number", c)
	}
	v, err := strconv.ParseFloat(ev.g.base.Get(c), 64)
	if err != nil {
		return 0, fmt.Errorf("%s has no single value (%q): make it an axis or give it one value", c, ev.g.base.Get(c))
	}
	return v, nil
}

// format returns v as the text set on a flag of kind k.
func format(k learner.FlagKind, v float64) (string, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "", fmt.Errorf("value %v is not finite", v)
	}
	if k == learner.KindFloat {
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	}
	if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return "", fmt.Errorf("value %v is not a whole number", v)
	}
	return strconv.FormatInt(int64(v), 10), nil
}
