package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
)

// evalResult accumulates the outcome of scoring a labelled data set.
type evalResult struct {
	classes   []float32
	rows      int
	wrong     int
	confusion [][]int64 // [true][predicted], classes order; an extra last row/col for labels unknown to the model
	faces     []int64   // binary: argmax face of the outer polytope, over rows whose true label is the outer label
	acc       *metricsAcc
}

func (r *evalResult) errorRate() float64 {
	if r.rows == 0 {
		return 0
	}
	return float64(r.wrong) / float64(r.rows)
}

// newEvalResult returns empty counts for the labels and faces of m.
func newEvalResult(m *model.Model) *evalResult {
	ordered := slices.Clone(m.Classes)
	slices.Sort(ordered)
	res := &evalResult{classes: ordered, faces: make([]int64, m.K), acc: newMetricsAcc(m)}
	res.confusion = make([][]int64, len(ordered)+1)
	for i := range res.confusion {
		res.confusion[i] = make([]int64, len(ordered)+1)
	}
	return res
}

func (r *evalResult) classIndex(y float32) int {
	for i, c := range r.classes {
		if c == y {
			return i
		}
	}
	return len(r.classes)
}

// evaluate streams the rows of path through model m, counting errors, the
// confusion matrix, face assignments and what eval's quality figures need
// (res.acc); with scoresPath it writes one line per row as so says
// (appendHeader, appendRow). Blocks are scored on so.workers goroutines
// (scoreBlocks) and counted and written in input order, so the figures and
// the scores file are the same whatever the number of workers.
//
// With --zero-based auto, a source of regular LIBSVM files is first read
// as 1-based (input.Source.OneBasedFirst), without auto's scan for an
// index 0, which for a file without cpm's zstd note is a second read and
// decompression; if that pass fails for any reason (an index 0 among
// others), its scores file is discarded and the source read again with
// opts as given, whose result or error is returned.
func evaluate(ctx context.Context, m *model.Model, path, scoresPath string, so scoreOpts, opts ...reader.Option) (*evalResult, error) {
	src, err := input.Resolve(path)
	if err != nil {
		return nil, err
	}
	if first := src.OneBasedFirst(opts); first != nil {
		res, err := evaluateOnce(ctx, m, src, path, scoresPath, so, first...)
		if err == nil || ctx.Err() != nil {
			return res, err
		}
	}
	return evaluateOnce(ctx, m, src, path, scoresPath, so, opts...)
}

// evaluateOnce is one pass of evaluate over src, the source path names,
// read with opts.
func evaluateOnce(ctx context.Context, m *model.Model, src *input.Source, path, scoresPath string, so scoreOpts, opts ...reader.Option) (*evalResult, error) {
	mk, err := newRowOutputsMaker(m, so.proba || so.metrics, so.proba)
	if err != nil {
		return nil, err
	}
	workers := so.workers
	if workers <= 0 {
		workers = scoreWorkers()
	}
	outs := make([]*rowOutputs, workers)
	for w := range outs {
		if outs[w], err = mk.new(); err != nil {
			return nil, err
		}
		// A multiclass model's class scores are read by the scores file
		// and by a calibration.
		outs[w].noClassScores = scoresPath == "" && (outs[w].probs == nil || outs[w].cal == nil)
	}
	res := newEvalResult(m)
	res.acc.on = so.metrics
	sj := scoreJob{keep: so.metrics}
	var out *bufio.Writer
	var scores *reader.OutputFile
	if scoresPath != "" {
		// A temporary file renamed into place once every row is scored: a
		// bad row leaves no partial scores file.
		scores, err = reader.CreateCompressed(scoresPath)
		if err != nil {
			return nil, fmt.Errorf("creating scores file: %w", err)
		}
		defer scores.Abort() // a no-op after Close
		out = bufio.NewWriterSize(scores, 1<<16)
		if _, err := out.Write(appendHeader(nil, so, m.Classes, len(outs[0].scores))); err != nil {
			return nil, fmt.Errorf("writing scores: %w", err)
		}
		sj.lines = newRowFormat(so, m.Classes)
	}
	st, err := src.OpenBlocks(4096, 0, opts...)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	score := func(w int, j *blockScores) { j.score(outs[w], sj) }
	consume := func(j *blockScores) error {
		res.add(m, j, len(outs[0].scores), len(outs[0].probs))
		if out != nil {
			if _, err := out.Write(j.lines); err != nil {
				return fmt.Errorf("writing scores: %w", err)
			}
		}
		return nil
	}
	if err := scoreBlocks(ctx, st, workers, score, consume); err != nil {
		return nil, err
	}
	if res.rows == 0 {
		return nil, fmt.Errorf("%s: %w to score", path, sgd.ErrNoRows)
	}
	if out != nil {
		if err := out.Flush(); err != nil {
			return nil, fmt.Errorf("writing scores: %w", err)
		}
		if err := scores.Close(); err != nil {
			return nil, fmt.Errorf("writing scores: %w", err)
		}
	}
	return res, nil
}

// add counts the rows of j, rows of a block scored by model m with
// nScores decision values and nProbs probabilities a row.
func (r *evalResult) add(m *model.Model, j *blockScores, nScores, nProbs int) {
	multi := learner.IsMulticlass(m)
	for i, y := range j.b.Labels[j.lo:j.hi] {
		pred, face := j.pred[i], j.face[i]
		if r.acc.on {
			s, p := j.row(i, nScores, nProbs)
			r.acc.add(y, s, p)
		}
		r.rows++
		if pred != y {
			r.wrong++
		}
		r.confusion[r.classIndex(y)][r.classIndex(pred)]++
		if !multi && y == m.Classes[0] && face >= 0 && face < m.K {
			r.faces[face]++
		}
	}
}

const predictUsage = "cpm predict -m MODEL -c DATA [-s SCORES [--format libsvm|csv|jsonl] [--proba] [--face]]"

func runPredict(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("predict", stderr, predictUsage)
	modelPath := fs.String("m", "", "model `file`")
	dataPath := fs.String("c", "", "`data` to score (a file in any input format, - for standard input, a directory or a glob; labels are used for the error report)")
	scores := fs.String("s", "", "write one line per row to `file` (- for standard output; the error report then goes to standard error): the predicted label, then the decision value (binary models) or one decision value per class in the model's class order (multiclass models)")
	var so scoreOpts
	fs.StringVar(&so.format, "format", formatLIBSVM, "with -s: line `format`: libsvm (space-separated; with --proba a first line \"labels\" and the classes, as LIBLINEAR's predict -b 1), csv (a header line, then comma-separated), jsonl (one JSON object a row: {\"label\":…,\"scores\":[…],\"face\":…,\"proba\":[…]})")
	fs.BoolVar(&so.proba, "proba", false, "with -s: append the probability of each class, in the model's class order (plume, spla1, and models trained with --calibrate)")
	fs.BoolVar(&so.face, "face", false, "with -s: append the index of the face (or expert, or class) the prediction went through, -1 where there is none")
	prof := addProfileFlag(fs)
	lim := addLimitFlags(fs)
	defer lim.annotate(&err)
	mem := addMemoryFlag(fs)
	defer mem.annotate(&err)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := so.check(); err != nil {
		return err
	}
	if *scores == "" && (so.proba || so.face || flagSet(fs, "format")) {
		return usagef("--proba, --face and --format need -s SCORES")
	}
	if *dataPath == "" && fs.NArg() == 1 {
		*dataPath = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *modelPath == "" || *dataPath == "" {
		return usagef("need -m MODEL and -c DATA")
	}
	if err := checkOutputs(outputPath{flag: "-s", path: *scores, stdout: true, inputs: []string{*modelPath, *dataPath}},
		outputPath{flag: "--cpuprofile", path: *prof, inputs: []string{*modelPath, *dataPath}}); err != nil {
		return err
	}
	noteData(stderr, "-c", *dataPath, lim.opts(ctx))
	return withCPUProfile(*prof, func() error {
		return scoreWithModel(ctx, reportTo(stdout, stderr, *scores), *modelPath, *dataPath, *scores, so, mem.v(), lim.opts(ctx)...)
	})
}

// scoreWithModel loads a model, scores a labelled file with it (writing
// per-row scores if scoresPath is set) and prints the error rate. A model
// whose weights would take more than maxMemory bytes is refused.
func scoreWithModel(ctx context.Context, stdout io.Writer, modelPath, dataPath, scoresPath string, so scoreOpts, maxMemory int64, opts ...reader.Option) error {
	m, err := model.LoadLimit(modelPath, maxMemory)
	if err != nil {
		return err
	}
	res, err := evaluate(ctx, m, dataPath, scoresPath, so, opts...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "test error %.4f%% (%d/%d) on %s\n", 100*res.errorRate(), res.wrong, res.rows, dataPath)
	return nil
}

type evalMetrics struct {
	Command    string    `json:"command"`
	Model      string    `json:"model"`
	Data       string    `json:"data"`
	Rows       int       `json:"rows"`
	Errors     int       `json:"errors"`
	Error      float64   `json:"error"`
	Labels     []float32 `json:"labels"`
	Confusion  [][]int64 `json:"confusion"`
	FaceCounts []int64   `json:"face_assignment_counts,omitempty"`
	Unknown    int64     `json:"rows_with_unknown_label,omitempty"`
	qualityMetrics
}

const evalUsage = "cpm eval -m MODEL [--json FILE] DATA"

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("eval", stderr, evalUsage)
	flagsHelp := fs.Usage
	fs.Usage = func() { flagsHelp(); fmt.Fprint(stderr, evalJSONHelp) }
	modelPath := fs.String("m", "", "model `file`")
	jsonOut := fs.String("json", "", "write error, confusion matrix, face counts, precision, recall, F1, ROC AUC and log-loss as JSON to `file` (- for standard output; the report then goes to standard error; fields: see cpm eval -h)")
	prof := addProfileFlag(fs)
	lim := addLimitFlags(fs)
	defer lim.annotate(&err)
	mem := addMemoryFlag(fs)
	defer mem.annotate(&err)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *modelPath == "" || fs.NArg() != 1 {
		return usagef("need -m MODEL and one DATA file")
	}
	if err := checkOutputs(outputPath{flag: "--json", path: *jsonOut, stdout: true, inputs: []string{*modelPath, fs.Arg(0)}},
		outputPath{flag: "--cpuprofile", path: *prof, inputs: []string{*modelPath, fs.Arg(0)}}); err != nil {
		return err
	}
	m, err := model.LoadLimit(*modelPath, mem.v())
	if err != nil {
		return err
	}
	noteData(stderr, "", fs.Arg(0), lim.opts(ctx))
	var res *evalResult
	err = withCPUProfile(*prof, func() (err error) {
		res, err = evaluate(ctx, m, fs.Arg(0), "", scoreOpts{metrics: *jsonOut != ""}, lim.opts(ctx)...)
		return err
	})
	if err != nil {
		return err
	}
	printEval(reportTo(stdout, stderr, *jsonOut), m, res)
	if *jsonOut == "" {
		return nil
	}
	n := len(res.classes)
	met := evalMetrics{Command: "eval", Model: *modelPath, Data: fs.Arg(0), Rows: res.rows, Errors: res.wrong,
		Error: res.errorRate(), Labels: res.classes, Confusion: make([][]int64, n), qualityMetrics: quality(m, res, res.acc)}
	for i := 0; i < n; i++ {
		met.Confusion[i] = res.confusion[i][:n]
		met.Unknown += res.confusion[i][n]
	}
	for _, v := range res.confusion[n] {
		met.Unknown += v
	}
	if hasFaces(m) {
		met.FaceCounts = res.faces
	}
	return writeJSON(*jsonOut, met)
}

func printEval(w io.Writer, m *model.Model, res *evalResult) {
	fmt.Fprintf(w, "rows %d  errors %d  error %.4f%%\n", res.rows, res.wrong, 100*res.errorRate())
	fmt.Fprintf(w, "confusion (rows: true label, columns: predicted):\n%8s", "")
	for _, c := range res.classes {
		fmt.Fprintf(w, " %8v", c)
	}
	fmt.Fprintln(w)
	for i, c := range res.classes {
		fmt.Fprintf(w, "%8v", c)
		for j := range res.classes {
			fmt.Fprintf(w, " %8d", res.confusion[i][j])
		}
		fmt.Fprintln(w)
	}
	if n := len(res.classes); sum(res.confusion[n]) > 0 {
		fmt.Fprintf(w, "rows with a label the model does not know: %d\n", sum(res.confusion[n]))
	}
	if hasFaces(m) {
		fmt.Fprintf(w, "face assignment of rows labelled %v (%s):", m.Classes[0], faceRule(m))
		for _, c := range res.faces {
			fmt.Fprintf(w, " %d", c)
		}
		fmt.Fprintln(w)
	}
}

// hasFaces reports whether m is a binary model whose predictions name a
// face (CPM, Polyceptron, perceptron, PLUME).
func hasFaces(m *model.Model) bool { return faceRule(m) != "" }

// faceRule says which face a prediction of m names, "" when its
// predictions name none (multiclass models, models without hyperplanes).
func faceRule(m *model.Model) string {
	if learner.IsMulticlass(m) {
		return ""
	}
	d, err := learner.Describe(m)
	if err != nil || d.NoHyperplanes != "" {
		return ""
	}
	return d.EvalRule
}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

const exportUsage = "cpm export -m MODEL [--raw-space] [-o TEXT]"

// runExport implements "cpm export". Once ctx is cancelled its writes
// fail with ctx's error, which it returns.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("export", stderr, exportUsage)
	modelPath := fs.String("m", "", "model `file`")
	out := fs.String("o", "", "write the text to `file`, replaced atomically (default, or -, standard output)")
	rawSpace := fs.Bool("raw-space", false, "for a model trained with --scale: fold the scaling into the weights, so that they apply to raw rows (learners with linear faces)")
	mem := addMemoryFlag(fs)
	defer mem.annotate(&err)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *modelPath == "" && fs.NArg() == 1 {
		*modelPath = fs.Arg(0)
	}
	if *modelPath == "" {
		return usagef("need -m MODEL")
	}
	if err := checkOutputs(outputPath{flag: "-o", path: *out, stdout: true, inputs: []string{*modelPath}}); err != nil {
		return err
	}
	m, err := model.LoadLimit(*modelPath, mem.v())
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if *rawSpace {
		if m, err = learner.Fold(m); err != nil {
			return fmt.Errorf("--raw-space: %w", err)
		}
	}
	if *out == "" {
		*out = "-"
	}
	// Atomically for a file: a failed export leaves the old text.
	return atomicfile.WriteFile(*out, func(w io.Writer) error {
		bw := bufio.NewWriter(ctxWriter{ctx, w})
		if err := m.ExportText(bw); err != nil {
			return err
		}
		return bw.Flush()
	}, atomicfile.Stdout(stdout))
}

// ctxWriter is w whose writes fail with ctx's error once ctx is cancelled,
// so that a command writing a long report stops at its next write.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
