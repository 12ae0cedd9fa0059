package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/polyhedral/cpm/featurehash"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sparsevec"
)

const inspectUsage = "cpm inspect MODEL [--top N] [--data FILE] [--json FILE]"

// inspection is what cpm inspect reports about a model, and the schema of
// its --json output.
type inspection struct {
	Model      string            `json:"model"`
	Learner    string            `json:"learner"`
	Form       string            `json:"form"` // "binary", "one-vs-one" or "multiclass"
	K          int               `json:"k"`
	Features   int               `json:"features"` // feature rows excluding the bias row and a lifted feature
	D          int               `json:"d"`        // weight rows, including bias row 0 (and the lifted feature)
	Bias       float64           `json:"bias"`
	Lift       string            `json:"lift,omitempty"`
	Classes    []float32         `json:"classes"`
	Sides      int               `json:"sides"`
	Pairs      [][2]float32      `json:"pairs,omitempty"`
	Params     map[string]string `json:"params,omitempty"`
	Lambda     float64           `json:"lambda,omitempty"`
	Entropy    float64           `json:"entropy,omitempty"`
	Iterations int64             `json:"iterations,omitempty"`
	Seed       uint64            `json:"seed,omitempty"`
	Rule       string            `json:"decision"`
	FaceRule   string            `json:"face_rule"`
	Data       string            `json:"data,omitempty"`
	Rows       int64             `json:"rows,omitempty"`
	Scale      string            `json:"scale,omitempty"`       // the model's scaling; its weights are in the scaled space
	HashBits   int               `json:"hash_bits,omitempty"`   // the model's feature hashing: 2^B hashed rows
	HashSeed   uint32            `json:"hash_seed,omitempty"`   // its murmur3 seed
	StoredRows int               `json:"stored_rows,omitempty"` // a compact model's stored weight rows (bias row included)
	Polytopes  []inspectPolytope `json:"polytopes"`
	desc       *learner.Description
	scaler     *scale.Scaler
	hasher     *featurehash.Hasher
}

// inspectPolytope is one weight matrix: a CPM polytope, or the hyperplanes
// of a linear learner.
type inspectPolytope struct {
	Index       int           `json:"index"` // index into the model's weight matrices
	Name        string        `json:"name"`
	Positive    *float32      `json:"positive_label,omitempty"` // CPM: the label outside this polytope
	Rows        int64         `json:"rows,omitempty"`           // with --data: rows assigned (OvO: rows of the pair's labels)
	ActiveFaces int           `json:"active_faces"`
	Faces       []inspectFace `json:"faces"`
}

type inspectFace struct {
	Face     int              `json:"face"`
	Class    *float32         `json:"class,omitempty"` // multiclass perceptron: the class of this face
	Norm     float64          `json:"norm"`            // ‖w_k‖₂ over the feature rows (not the bias)
	Bias     float64          `json:"bias"`            // b_k = Bias · W[0][k]
	Nonzero  int              `json:"nonzero_weights"`
	Active   bool             `json:"active"`
	Stored   *uint64          `json:"stored_count,omitempty"` // training assignment count stored in the model
	Assigned *int64           `json:"assigned,omitempty"`     // with --data: rows whose face is this one
	Top      []featureWeights `json:"top_features,omitempty"`
}

type featureWeights struct {
	Index  int     `json:"index"` // LIBSVM feature index; the lifted feature has its own row index
	Weight float32 `json:"weight"`
}

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("inspect", stderr, inspectUsage)
	lim := addLimitFlags(fs)
	defer lim.annotate(&err)
	mem := addMemoryFlag(fs)
	defer mem.annotate(&err)
	modelPath := fs.String("m", "", "model `file` (or give it as the argument)")
	top := fs.Int("top", 5, "show the `N` features of largest absolute weight per face (0: none)")
	dataPath := fs.String("data", "", "labelled data `file`: count the rows assigned to each face")
	jsonOut := fs.String("json", "", "also write the report as JSON to `file`")
	// Accept flags after the model path too: cpm inspect MODEL --top 3.
	var pos []string
	rest := args
	for {
		if err := parse(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	switch {
	case *modelPath == "" && len(pos) == 1:
		*modelPath = pos[0]
	case len(pos) > 0:
		return usagef("unexpected argument %q", pos[len(pos)-1])
	case *modelPath == "":
		return usagef("need a MODEL file")
	}
	if *top < 0 {
		return usagef("--top %d: want >= 0", *top)
	}
	if err := checkOutputs(outputPath{flag: "--json", path: *jsonOut, stdout: true, inputs: []string{*modelPath, *dataPath}}); err != nil {
		return err
	}
	m, err := model.LoadLimit(*modelPath, mem.v())
	if err != nil {
		return err
	}
	in, err := inspectModel(ctx, m, *top)
	if err != nil {
		return err
	}
	in.Model = *modelPath
	if *dataPath != "" {
		if err := in.assign(ctx, m, *dataPath, lim.opts(ctx)...); err != nil {
			return err
		}
	}
	bw := bufio.NewWriter(ctxWriter{ctx, reportTo(stdout, stderr, *jsonOut)})
	in.print(bw)
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, in)
	}
	return nil
}

// inspectModel describes m's weight matrices. Models that hold no
// hyperplanes (the kernel perceptron's dual form) are refused. It stops
// with ctx's error when ctx is cancelled.
func inspectModel(ctx context.Context, m *model.Model, top int) (*inspection, error) {
	d, err := learner.Describe(m)
	if err != nil {
		return nil, err
	}
	if d.NoHyperplanes != "" {
		return nil, errors.New(d.NoHyperplanes)
	}
	in := &inspection{
		Learner: m.Learner, K: m.K, D: m.D, Bias: m.Bias, Classes: m.Classes, Sides: m.Sides,
		Params: m.Params, Lambda: m.Lambda, Entropy: m.Entropy, Iterations: m.Iterations, Seed: m.Seed,
		Form: "binary", Rule: d.Rule, FaceRule: d.FaceRule, Lift: d.Lift, Pairs: d.Pairs, desc: d,
	}
	if in.scaler, err = scale.FromModel(m.Scale); err != nil {
		return nil, err
	}
	if m.Scale != nil {
		in.Scale = m.Scale.Mode
	}
	if m.Hash != nil {
		in.HashBits, in.HashSeed = m.Hash.Bits, m.Hash.Seed
		if in.hasher, err = featurehash.New(m.Hash.Bits, m.Hash.Seed); err != nil {
			return nil, err
		}
	}
	if m.Rows != nil {
		in.StoredRows = len(m.Rows)
	}
	switch {
	case m.OvO:
		in.Form = "one-vs-one"
	case m.Multiclass:
		in.Form = "multiclass"
	}
	names, positives := d.Matrices, d.Positives
	in.Features = m.D - 1
	if d.LiftIndex > 0 {
		in.Features--
	}
	for i, w := range m.Weights {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := inspectPolytope{Index: i, Name: names[i], Positive: positives[i]}
		for k := range m.K {
			f := inspectFace{Face: k, Bias: m.Bias * float64(w.At(0, k))}
			if in.desc.FaceClasses {
				f.Class = &m.Classes[k]
			}
			var ss float64
			for j := 1; j < w.D; j++ {
				if v := float64(w.At(j, k)); v != 0 {
					ss += v * v
					f.Nonzero++
				}
			}
			f.Norm = math.Sqrt(ss)
			f.Active = f.Nonzero > 0
			if m.Counts != nil {
				f.Stored = &m.Counts[i][k]
			}
			f.Top = topFeatures(m, w, k, top)
			p.Faces = append(p.Faces, f)
		}
		p.count()
		in.Polytopes = append(in.Polytopes, p)
	}
	return in, nil
}

// count sets p.ActiveFaces.
func (p *inspectPolytope) count() {
	p.ActiveFaces = 0
	for _, f := range p.Faces {
		if f.Active {
			p.ActiveFaces++
		}
	}
}

// topFeatures returns the n feature rows (not the bias row) of face k of
// w, a weight matrix of m, with the largest absolute weights, zeros left
// out, by feature index; ties go to the smaller index.
func topFeatures(m *model.Model, w *sparsevec.Matrix, k, n int) []featureWeights {
	if n == 0 {
		return nil
	}
	var top []featureWeights
	for j := 1; j < w.D; j++ {
		v := w.At(j, k)
		if v == 0 || (len(top) == n && abs32(v) <= abs32(top[n-1].Weight)) {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, v, func(e featureWeights, v float32) int {
			return cmp.Compare(abs32(v), abs32(e.Weight)) // descending |weight|; equal goes after
		})
		for i < len(top) && abs32(top[i].Weight) == abs32(v) {
			i++
		}
		top = slices.Insert(top, i, featureWeights{Index: int(m.Feature(j)), Weight: v})
		if len(top) > n {
			top = top[:n]
		}
	}
	return top
}

func abs32(v float32) float32 { return float32(math.Abs(float64(v))) }

// assign streams the rows of path and counts, for every weight matrix, the
// rows assigned to each face by the learner's rule; a face with no row is
// then inactive. For one-vs-one models a pair's polytopes see only the
// rows of the pair's two labels.
func (in *inspection) assign(ctx context.Context, m *model.Model, path string, opts ...reader.Option) error {
	st, err := openBlocks(path, 4096, opts...)
	if err != nil {
		return err
	}
	defer st.Close()
	counts := make([][]int64, len(m.Weights))
	rows := make([]int64, len(m.Weights))
	for i := range counts {
		counts[i] = make([]int64, m.K)
	}
	raw := make([]float32, sparsevec.StrideFor(m.K))
	limit := m.D
	if in.desc.LiftIndex > 0 {
		limit = in.desc.LiftIndex
	}
	bias := float32(m.Bias)
	var scaled scale.Row
	var hashed featurehash.Row
	// A compact model scores rows mapped into its stored rows and a zero
	// row, as its predictors do.
	weights, rm := m.ScoringWeights(), m.RowMap()
	var cidx []uint32
	var cval []float32
	liftRow, lifted := m.RowOf(uint32(in.desc.LiftIndex))
	lifted = lifted && in.desc.LiftIndex > 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := st.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		for r := 0; r < b.Rows(); r++ {
			in.Rows++
			x := b.Row(r)
			if in.hasher != nil {
				x = hashed.Hash(in.hasher, x)
			}
			if in.scaler != nil {
				x = scaled.Scale(in.scaler, x)
			}
			x = x.Below(limit)
			var z float32 // the lifted feature ‖x‖²
			if in.desc.LiftIndex > 0 {
				for _, v := range x.Val[:len(x.Idx)] {
					z += v * v
				}
			}
			if rm != nil {
				cidx, cval = rm.AppendRow(cidx[:0], cval[:0], x)
				x = sparsevec.Vector{Idx: cidx, Val: cval}
			}
			for i, w := range weights {
				if m.OvO {
					if pr := in.Pairs[i/m.Sides]; b.Labels[r] != pr[0] && b.Labels[r] != pr[1] {
						continue
					}
				}
				w.Scores(raw, x)
				row0 := w.Row(0)
				var lift []float32
				if lifted {
					lift = w.Row(liftRow)
				}
				best := 0
				for k := range m.K {
					s := raw[k] + bias*row0[k]
					if lift != nil {
						s += z * lift[k]
					}
					raw[k] = s
					if (in.desc.FaceArgmin && s < raw[best]) || (!in.desc.FaceArgmin && s > raw[best]) {
						best = k
					}
				}
				counts[i][best]++
				rows[i]++
			}
		}
		st.Release(b)
	}
	in.Data = path
	for i := range in.Polytopes {
		p := &in.Polytopes[i]
		p.Rows = rows[i]
		for k := range p.Faces {
			f := &p.Faces[k]
			f.Assigned = &counts[i][k]
			f.Active = f.Nonzero > 0 && counts[i][k] > 0
		}
		p.count()
	}
	return nil
}

// print writes the report as text.
func (in *inspection) print(w io.Writer) {
	in.printHeader(w)
	hasTop := in.hasTop()
	for _, p := range in.Polytopes {
		in.printPolytope(w, &p, hasTop)
	}
}

// printHeader writes the model-wide lines of the report.
func (in *inspection) printHeader(w io.Writer) {
	fmt.Fprintf(w, "model     %s\n", in.Model)
	fmt.Fprintf(w, "learner   %s (%s", in.Learner, in.Form)
	if in.desc.Polytopes {
		fmt.Fprintf(w, ", %s", []string{"single-sided", "double-sided"}[in.Sides-1])
	}
	fmt.Fprintf(w, ")\nK         %d %s", in.K, in.desc.FaceNoun)
	if in.K != 1 {
		fmt.Fprint(w, "s")
	}
	if in.desc.Polytopes {
		fmt.Fprint(w, " per polytope")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "features  %d (weight rows D = %d: bias row 0", in.Features, in.D)
	if in.desc.LiftIndex > 0 {
		fmt.Fprintf(w, ", lifted feature %s at row %d", in.Lift, in.desc.LiftIndex)
	}
	fmt.Fprintf(w, "); bias value %g\n", in.Bias)
	if in.hasher != nil {
		fmt.Fprintf(w, "hashing   %d bits, seed %d: feature j is row 1 + (murmur3(j) mod 2^%d) (colliding features summed); the feature indices below are hashed rows\n", in.HashBits, in.HashSeed, in.HashBits)
	}
	if in.scaler != nil {
		fmt.Fprintf(w, "scaling   %s on %d features: the weights below are in the scaled space x' = (x - shift)/div (cpm export --raw-space folds it into them)\n", in.Scale, in.scaler.Features())
	}
	if in.StoredRows > 0 {
		fmt.Fprintf(w, "stored    %d of the %d weight rows (the others are 0)\n", in.StoredRows, in.D)
	}
	fmt.Fprintf(w, "classes   %s\n", in.classText())
	fmt.Fprintf(w, "sides     %d\n", in.Sides)
	if len(in.Pairs) > 0 {
		var ps []string
		for _, p := range in.Pairs {
			ps = append(ps, fmt.Sprintf("%v/%v", p[0], p[1]))
		}
		fmt.Fprintf(w, "pairs     %d: %s\n", len(in.Pairs), strings.Join(ps, " "))
	}
	fmt.Fprintf(w, "decision  %s\n", in.Rule)
	var hp []string
	if in.Lambda != 0 {
		hp = append(hp, fmt.Sprintf("lambda %g", in.Lambda))
	}
	if in.desc.Polytopes {
		hp = append(hp, fmt.Sprintf("entropy %g", in.Entropy), fmt.Sprintf("iterations %d", in.Iterations), fmt.Sprintf("seed %d", in.Seed))
	} else if in.Iterations != 0 {
		hp = append(hp, fmt.Sprintf("iterations %d", in.Iterations))
	}
	for _, k := range sortedKeys(in.Params) {
		hp = append(hp, k+" "+in.Params[k])
	}
	if len(hp) > 0 {
		fmt.Fprintf(w, "training  %s\n", strings.Join(hp, ", "))
	}
	if in.Data != "" {
		fmt.Fprintf(w, "data      %s: %d rows, assigned by %s\n", in.Data, in.Rows, in.FaceRule)
	}
}

// printPolytope writes the lines of one weight matrix and its faces.
func (in *inspection) printPolytope(w io.Writer, p *inspectPolytope, hasTop bool) {
	fmt.Fprintln(w)
	if in.desc.Polytopes {
		fmt.Fprintf(w, "polytope %d: ", p.Index)
	}
	fmt.Fprint(w, p.Name)
	if p.Positive != nil {
		fmt.Fprintf(w, " (label %v outside)", *p.Positive)
	}
	fmt.Fprintf(w, ": %d of %d %ss active", p.ActiveFaces, len(p.Faces), in.desc.FaceNoun)
	if in.Data != "" {
		fmt.Fprintf(w, " over %d rows", p.Rows)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %4s %-6s %10s %10s %8s", "face", "active", "norm", "bias", "nonzero")
	if in.desc.FaceClasses {
		fmt.Fprintf(w, " %8s", "class")
	}
	stored := len(p.Faces) > 0 && p.Faces[0].Stored != nil
	if stored {
		fmt.Fprintf(w, " %10s", "stored")
	}
	if in.Data != "" {
		fmt.Fprintf(w, " %10s", "assigned")
	}
	if len(p.Faces) > 0 && hasTop {
		fmt.Fprintf(w, "  top features (index:weight)")
	}
	fmt.Fprintln(w)
	for _, f := range p.Faces {
		fmt.Fprintf(w, "  %4d %-6s %10.4g %10.4g %8d", f.Face, map[bool]string{true: "yes", false: "no"}[f.Active], f.Norm, f.Bias, f.Nonzero)
		if f.Class != nil {
			fmt.Fprintf(w, " %8v", *f.Class)
		}
		if stored {
			fmt.Fprintf(w, " %10d", *f.Stored)
		}
		if f.Assigned != nil {
			fmt.Fprintf(w, " %10d", *f.Assigned)
		}
		if len(f.Top) > 0 {
			fmt.Fprint(w, " ")
			for _, t := range f.Top {
				fmt.Fprintf(w, " %s:%.4g", in.featureName(t.Index), t.Weight)
			}
		}
		fmt.Fprintln(w)
	}
}

// hasTop reports whether any face of any polytope lists top features.
func (in *inspection) hasTop() bool {
	for _, p := range in.Polytopes {
		for _, f := range p.Faces {
			if len(f.Top) > 0 {
				return true
			}
		}
	}
	return false
}

// featureName names weight row j: its LIBSVM index, or the lifted feature.
func (in *inspection) featureName(j int) string {
	if in.desc.LiftIndex > 0 && j == in.desc.LiftIndex {
		return "|x|^2"
	}
	return strconv.Itoa(j)
}

// classText describes the label map.
func (in *inspection) classText() string {
	var ls []string
	for _, c := range in.Classes {
		ls = append(ls, strconv.FormatFloat(float64(c), 'g', -1, 32))
	}
	if in.Form != "binary" {
		return fmt.Sprintf("%d: %s", len(ls), strings.Join(ls, " "))
	}
	return in.desc.Classes
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
